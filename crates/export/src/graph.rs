//! A small typed builder of ONNX graphs on top of `onnx-protobuf`'s generated messages:
//! named values, f32/i64 initializers, nodes with attributes, inputs and outputs with
//! symbolic dimensions, model metadata.

use std::path::Path;

use onnx_protobuf::attribute_proto::AttributeType;
use onnx_protobuf::tensor_proto::DataType;
use onnx_protobuf::tensor_shape_proto::{Dimension, dimension};
use onnx_protobuf::type_proto::{self, Value as TypeValue};
use onnx_protobuf::{
    AttributeProto, GraphProto, Message, ModelProto, NodeProto, OperatorSetIdProto,
    StringStringEntryProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};

use crate::ExportError;

/// The ONNX opset our graphs target (default domain).
pub const OPSET: i64 = 17;

/// IR version written into the model (ONNX 1.13+, opset 17).
pub const IR_VERSION: i64 = 8;

/// Element type of a graph input or output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    /// `tensor(float)`.
    F32,
    /// `tensor(bool)`.
    Bool,
    /// `tensor(int64)`.
    I64,
}

impl Elem {
    fn data_type(self) -> DataType {
        match self {
            Elem::F32 => DataType::FLOAT,
            Elem::Bool => DataType::BOOL,
            Elem::I64 => DataType::INT64,
        }
    }
}

/// One dimension of an input or output: fixed, or a named symbolic axis (`"batch"`,
/// `"atoms"`) that the runtime binds per call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    /// A fixed size.
    Fixed(usize),
    /// A symbolic size, shared by every axis with the same name.
    Symbolic(&'static str),
}

/// An attribute value of a node.
#[derive(Debug, Clone)]
pub enum Attr {
    /// `INT`.
    Int(i64),
    /// `INTS`.
    Ints(Vec<i64>),
    /// `FLOAT`.
    Float(f32),
}

/// Builds one ONNX graph; values are referred to by their (unique) names.
#[derive(Default)]
pub struct GraphBuilder {
    graph: GraphProto,
    counter: usize,
}

fn value_info(name: &str, elem: Elem, dims: &[Dim]) -> ValueInfoProto {
    let shape = TensorShapeProto {
        dim: dims
            .iter()
            .map(|d| Dimension {
                value: Some(match d {
                    Dim::Fixed(n) => dimension::Value::DimValue(*n as i64),
                    Dim::Symbolic(s) => dimension::Value::DimParam((*s).to_string()),
                }),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    ValueInfoProto {
        name: name.to_string(),
        type_: Some(TypeProto {
            value: Some(TypeValue::TensorType(type_proto::Tensor {
                elem_type: elem.data_type() as i32,
                shape: Some(shape).into(),
                ..Default::default()
            })),
            ..Default::default()
        })
        .into(),
        ..Default::default()
    }
}

impl GraphBuilder {
    /// An empty graph called `name`.
    pub fn new(name: &str) -> Self {
        let mut builder = Self::default();
        builder.graph.name = name.to_string();
        builder
    }

    /// A fresh value name `"{prefix}_{k}"`.
    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}_{}", self.counter)
    }

    /// Declares a graph input; returns its name.
    pub fn input(&mut self, name: &str, elem: Elem, dims: &[Dim]) -> String {
        self.graph.input.push(value_info(name, elem, dims));
        name.to_string()
    }

    /// Declares `value` as the graph output `name` (an Identity node renames it).
    pub fn output(&mut self, value: &str, name: &str, elem: Elem, dims: &[Dim]) {
        self.graph.node.push(NodeProto {
            input: vec![value.to_string()],
            output: vec![name.to_string()],
            name: format!("output_{name}"),
            op_type: "Identity".into(),
            ..Default::default()
        });
        self.graph.output.push(value_info(name, elem, dims));
    }

    /// An f32 initializer of `shape` (row-major `values`), named after `name`.
    ///
    /// # Panics
    /// If `values.len()` is not the product of `shape` (a bug in a lowering).
    pub fn f32_tensor(&mut self, name: &str, shape: &[usize], values: &[f32]) -> String {
        assert_eq!(
            shape.iter().product::<usize>(),
            values.len(),
            "initializer {name}: shape {shape:?} vs {} values",
            values.len()
        );
        let name = if self.graph.initializer.iter().any(|t| t.name == name) {
            self.fresh(name)
        } else {
            name.to_string()
        };
        self.graph.initializer.push(TensorProto {
            name: name.clone(),
            dims: shape.iter().map(|&d| d as i64).collect(),
            data_type: DataType::FLOAT as i32,
            raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ..Default::default()
        });
        name
    }

    /// A scalar f32 constant (rank 0).
    pub fn scalar(&mut self, value: f32) -> String {
        let name = self.fresh("const_f32");
        self.f32_tensor(&name, &[], &[value])
    }

    /// A 1-D i64 constant (shapes, axes, slice bounds).
    pub fn i64s(&mut self, values: &[i64]) -> String {
        let name = self.fresh("const_i64");
        self.graph.initializer.push(TensorProto {
            name: name.clone(),
            dims: vec![values.len() as i64],
            data_type: DataType::INT64 as i32,
            raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ..Default::default()
        });
        name
    }

    /// A rank-0 i64 constant (`CumSum`'s axis).
    pub fn i64_scalar(&mut self, value: i64) -> String {
        let name = self.fresh("const_i64");
        self.graph.initializer.push(TensorProto {
            name: name.clone(),
            dims: vec![],
            data_type: DataType::INT64 as i32,
            raw_data: value.to_le_bytes().to_vec(),
            ..Default::default()
        });
        name
    }

    /// Adds a node of `op_type` with one output; returns the output's name.
    pub fn node(&mut self, op_type: &str, inputs: &[&str], attrs: &[(&str, Attr)]) -> String {
        let output = self.fresh(&op_type.to_lowercase());
        self.graph.node.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.clone()],
            name: format!("{output}_node"),
            op_type: op_type.to_string(),
            attribute: attrs
                .iter()
                .map(|(name, value)| {
                    let mut a = AttributeProto {
                        name: name.to_string(),
                        ..Default::default()
                    };
                    match value {
                        Attr::Int(i) => {
                            a.type_ = AttributeType::INT.into();
                            a.i = *i;
                        }
                        Attr::Ints(v) => {
                            a.type_ = AttributeType::INTS.into();
                            a.ints = v.clone();
                        }
                        Attr::Float(f) => {
                            a.type_ = AttributeType::FLOAT.into();
                            a.f = *f;
                        }
                    }
                    a
                })
                .collect(),
            ..Default::default()
        });
        output
    }

    /// `MatMul(a, b)`.
    pub fn matmul(&mut self, a: &str, b: &str) -> String {
        self.node("MatMul", &[a, b], &[])
    }

    /// `Add(a, b)`.
    pub fn add(&mut self, a: &str, b: &str) -> String {
        self.node("Add", &[a, b], &[])
    }

    /// `Sub(a, b)`.
    pub fn sub(&mut self, a: &str, b: &str) -> String {
        self.node("Sub", &[a, b], &[])
    }

    /// `Mul(a, b)`.
    pub fn mul(&mut self, a: &str, b: &str) -> String {
        self.node("Mul", &[a, b], &[])
    }

    /// `Div(a, b)`.
    pub fn div(&mut self, a: &str, b: &str) -> String {
        self.node("Div", &[a, b], &[])
    }

    /// `Reshape(x, shape)` with a constant target shape (`0` copies, `-1` infers).
    pub fn reshape(&mut self, x: &str, shape: &[i64]) -> String {
        let shape = self.i64s(shape);
        self.node("Reshape", &[x, &shape], &[])
    }

    /// `Transpose(x, perm)`.
    pub fn transpose(&mut self, x: &str, perm: &[i64]) -> String {
        self.node("Transpose", &[x], &[("perm", Attr::Ints(perm.to_vec()))])
    }

    /// `ReduceSum(x, axes, keepdims = 1)` (opset 13+: axes as an input).
    pub fn reduce_sum(&mut self, x: &str, axes: &[i64]) -> String {
        let axes = self.i64s(axes);
        self.node("ReduceSum", &[x, &axes], &[("keepdims", Attr::Int(1))])
    }

    /// `ReduceMean(x, axes, keepdims = 1)` (opset < 18: axes as an attribute).
    pub fn reduce_mean(&mut self, x: &str, axes: &[i64]) -> String {
        self.node(
            "ReduceMean",
            &[x],
            &[
                ("axes", Attr::Ints(axes.to_vec())),
                ("keepdims", Attr::Int(1)),
            ],
        )
    }

    /// `Unsqueeze(x, axes)` (opset 13+: axes as an input).
    pub fn unsqueeze(&mut self, x: &str, axes: &[i64]) -> String {
        let axes = self.i64s(axes);
        self.node("Unsqueeze", &[x, &axes], &[])
    }

    /// `Linear` with Burn's `[d_in, d_out]` weight layout: `x W + b`.
    pub fn linear(
        &mut self,
        x: &str,
        name: &str,
        weight: (&[usize], &[f32]),
        bias: Option<&[f32]>,
    ) -> String {
        let w = self.f32_tensor(&format!("{name}.weight"), weight.0, weight.1);
        let y = self.matmul(x, &w);
        match bias {
            Some(b) => {
                let b = self.f32_tensor(&format!("{name}.bias"), &[b.len()], b);
                self.add(&y, &b)
            }
            None => y,
        }
    }

    /// The finished model: opset [`OPSET`], IR [`IR_VERSION`], with `metadata` as
    /// `metadata_props`.
    pub fn finish(self, metadata: &[(String, String)]) -> ModelProto {
        ModelProto {
            ir_version: IR_VERSION,
            opset_import: vec![OperatorSetIdProto {
                domain: String::new(),
                version: OPSET,
                ..Default::default()
            }],
            producer_name: "molattn".into(),
            producer_version: env!("CARGO_PKG_VERSION").into(),
            graph: Some(self.graph).into(),
            metadata_props: metadata
                .iter()
                .map(|(k, v)| StringStringEntryProto {
                    key: k.clone(),
                    value: v.clone(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }
}

/// Serialises `model` to `path`.
///
/// # Errors
/// [`ExportError::Write`] when encoding or writing fails.
pub fn write_model(model: &ModelProto, path: &Path) -> Result<(), ExportError> {
    let bytes = model.write_to_bytes().map_err(|e| ExportError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    std::fs::write(path, bytes).map_err(|e| ExportError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}
