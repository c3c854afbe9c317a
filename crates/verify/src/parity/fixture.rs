//! Reading a safetensors fixture into named f32 tensors.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result, anyhow};
use burn::prelude::*;
use safetensors::{Dtype, SafeTensors};

/// Every tensor of a fixture file, widened to f32 (`u8` masks included).
pub struct Fixture {
    /// Name -> (shape, values).
    tensors: HashMap<String, (Vec<usize>, Vec<f32>)>,
    /// The file's `__metadata__` strings.
    metadata: HashMap<String, String>,
}

impl Fixture {
    /// Reads `path`.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).with_context(|| path.display().to_string())?;
        let st =
            SafeTensors::deserialize(&bytes).map_err(|e| anyhow!("{}: {e:?}", path.display()))?;
        let (_, header) =
            SafeTensors::read_metadata(&bytes).map_err(|e| anyhow!("{}: {e:?}", path.display()))?;
        let metadata = header.metadata().clone().unwrap_or_default();
        let mut tensors = HashMap::new();
        for (name, view) in st.tensors() {
            let values: Vec<f32> = match view.dtype() {
                Dtype::F32 => view
                    .data()
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
                Dtype::U8 => view.data().iter().map(|&b| b as f32).collect(),
                other => return Err(anyhow!("{name}: unsupported dtype {other:?}")),
            };
            tensors.insert(name, (view.shape().to_vec(), values));
        }
        Ok(Self { tensors, metadata })
    }

    /// Shape and values of `name`.
    pub fn get(&self, name: &str) -> Result<&(Vec<usize>, Vec<f32>)> {
        self.tensors
            .get(name)
            .ok_or_else(|| anyhow!("fixture lacks {name}"))
    }

    /// `name` as a tensor on `device`.
    pub fn tensor<const D: usize>(&self, name: &str, device: &Device) -> Result<Tensor<D>> {
        let (shape, values) = self.get(name)?;
        let shape: [usize; D] = shape
            .clone()
            .try_into()
            .map_err(|_| anyhow!("{name}: rank"))?;
        Ok(Tensor::from_data(
            TensorData::new(values.clone(), shape),
            device,
        ))
    }

    /// The metadata string `key`.
    pub fn meta(&self, key: &str) -> Result<&str> {
        self.metadata
            .get(key)
            .map(String::as_str)
            .ok_or_else(|| anyhow!("fixture metadata lacks {key}"))
    }

    /// The names of every tensor (in no order).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(String::as_str)
    }

    /// Values of `name`.
    pub fn values(&self, name: &str) -> Result<&[f32]> {
        Ok(&self.get(name)?.1)
    }
}
