//! The real atoms of a padded batch packed into rows inside an ONNX graph, so that the
//! row-wise work (embeddings, norms, projections, feed-forward) runs on `R = sum(n_b)` rows
//! instead of `B N` (the same saving as `attn_core::PackedBatch` gives Burn's encoder).
//!
//! The graph keeps its padded inputs: the packing is computed from `key_padding_mask`
//! inside the graph, so one file serves every batch and a caller changes nothing.
//! - rows: `NonZero(Not(mask))` over the flattened `[B N]` mask, the flat index of each
//!   real atom in batch order (`[R]` int64);
//! - the inverse: `CumSum` of the real flags minus 1 at real atoms and `R` at padded ones,
//!   so that [`RowPacking::unpack`] is one `Gather` from the packed rows with a zero row
//!   appended: padded atoms come back as 0.
//!
//! Ops: `NonZero`, `CumSum`, `Gather`, `Where`, `Concat`, `Shape` (opset 11+), supported by
//! ONNX Runtime, tract and burn-onnx.

use std::collections::HashMap;

use crate::graph::{Attr, GraphBuilder};

/// ONNX `TensorProto.DataType` of float32 (`Cast`'s `to`).
const FLOAT: i64 = 1;
/// ONNX `TensorProto.DataType` of int64 (`Cast`'s `to`).
const INT64: i64 = 7;

/// The packing of one padded batch, built once per graph from its `key_padding_mask`.
pub struct RowPacking {
    /// `[R]` int64: flat `b * N + i` index of each real atom.
    rows: String,
    /// `[B N]` int64: the packed row of each atom, `R` (the zero row) for padding.
    inverse: String,
    /// `[2]` int64: `[B, N]`, the shape of the mask.
    batch_atoms: String,
    /// Zero rows `[1, k]` already emitted, by width `k`.
    zero_rows: HashMap<usize, String>,
}

impl RowPacking {
    /// Emits the packing of `key_padding_mask` (bool `[B, N]`, `true` = padding).
    pub fn new(g: &mut GraphBuilder, key_padding_mask: &str) -> Self {
        let real = g.node("Not", &[key_padding_mask], &[]);
        let flat = g.reshape(&real, &[-1]); // [B N] bool
        let rows = g.node("NonZero", &[&flat], &[]); // [1, R]
        let rows = g.reshape(&rows, &[-1]); // [R]
        // The running count in f32 (exact to 2^24 atoms): tract evaluates an int64
        // `CumSum` on symbolic dims and fails ("TDim is not a number").
        let ones = g.node("Cast", &[&flat], &[("to", Attr::Int(FLOAT))]);
        let axis = g.i64_scalar(0);
        let cum = g.node("CumSum", &[&ones, &axis], &[]);
        let cum = g.node("Cast", &[&cum], &[("to", Attr::Int(INT64))]);
        let one = g.i64s(&[1]);
        let packed_index = g.node("Sub", &[&cum, &one], &[]);
        let count = g.node("Shape", &[&rows], &[]); // [1] = [R]
        let inverse = g.node("Where", &[&flat, &packed_index, &count], &[]);
        let batch_atoms = g.node("Shape", &[key_padding_mask], &[]);
        Self {
            rows,
            inverse,
            batch_atoms,
            zero_rows: HashMap::new(),
        }
    }

    /// `x` `[B, N, k]` -> its real atoms' rows `[R, k]`, in batch order.
    pub fn pack(&self, g: &mut GraphBuilder, x: &str, k: usize) -> String {
        let flat = g.reshape(x, &[-1, k as i64]);
        g.node("Gather", &[&flat, &self.rows], &[("axis", Attr::Int(0))])
    }

    /// Packed rows `x` `[R, k]` -> `[B, N, k]` with 0 at padded atoms.
    pub fn unpack(&mut self, g: &mut GraphBuilder, x: &str, k: usize) -> String {
        let zero = match self.zero_rows.get(&k) {
            Some(z) => z.clone(),
            None => {
                let z = g.f32_tensor(&format!("packing.zero_row_{k}"), &[1, k], &vec![0.0; k]);
                self.zero_rows.insert(k, z.clone());
                z
            }
        };
        let with_zero = g.node("Concat", &[x, &zero], &[("axis", Attr::Int(0))]);
        let flat = g.node(
            "Gather",
            &[&with_zero, &self.inverse],
            &[("axis", Attr::Int(0))],
        );
        let width = g.i64s(&[k as i64]);
        let shape = g.node(
            "Concat",
            &[&self.batch_atoms, &width],
            &[("axis", Attr::Int(0))],
        );
        g.node("Reshape", &[&flat, &shape], &[])
    }
}
