//! ChemNet (Preuer et al., J. Chem. Inf. Model. 58, 1736 (2018)), the network behind the
//! Fréchet ChemNet Distance (FCD) of MOSES, as `fcd_torch` 1.0.7 runs it
//! (`utils.py: load_imported_model`, `torch_layers.py`; weights
//! `ChemNet_v0.13_pretrained.pt`, the Keras model converted by fcd_torch):
//!
//! 1. input `[B, 350, 35]`: [`mol_featurize::chemnet_input::chemnet_one_hot`];
//! 2. two `Conv1d` (kernel 4, stride 2, no bias, Keras "same" padding: 1 + 1 zero columns
//!    before the first, 1 + 2 before the second), each followed by SELU: `[B, 32, 88]`;
//! 3. two LSTMs (hidden 128, then 512), each reading the sequence reversed
//!    (`Reverse` flips the time axis before each);
//! 4. the second LSTM's output at the last step: `[B, 512]`, the activations whose mean and
//!    covariance the FCD compares.
//!
//! Only inference is needed (no training, no dropout).

use std::path::Path;

use burn::module::Param;
use burn::nn::conv::{Conv1d, Conv1dConfig};
use burn::nn::{Lstm, LstmConfig};
use burn::prelude::*;
use burn::tensor::activation::selu;
use burn::tensor::ops::PadMode;

use crate::load::LoadError;

/// Channels of the one-hot input (ChemNet's alphabet).
pub const CHEMNET_CHANNELS: usize = 35;
/// Width of ChemNet's activations.
pub const CHEMNET_WIDTH: usize = 512;

/// ChemNet (see the module docs).
#[derive(Module, Debug)]
pub struct ChemNet {
    /// 35 -> 32 channels.
    pub conv1: Conv1d,
    /// 32 -> 32 channels.
    pub conv2: Conv1d,
    /// 32 -> 128.
    pub lstm1: Lstm,
    /// 128 -> 512.
    pub lstm2: Lstm,
}

impl ChemNet {
    /// An uninitialised-weights ChemNet on `device` (load the weights with
    /// [`ChemNet::load_fcd_torch`]).
    pub fn new(device: &Device) -> Self {
        let conv = |c_in| {
            Conv1dConfig::new(c_in, 32, 4)
                .with_stride(2)
                .with_bias(false)
                .init(device)
        };
        ChemNet {
            conv1: conv(CHEMNET_CHANNELS),
            conv2: conv(32),
            lstm1: LstmConfig::new(32, 128, true).init(device),
            lstm2: LstmConfig::new(128, CHEMNET_WIDTH, true).init(device),
        }
    }

    /// The activations `[B, 512]` of a one-hot batch `x: [B, 350, 35]`.
    pub fn forward(&self, x: Tensor<3>) -> Tensor<2> {
        let x = x.swap_dims(1, 2);
        let x = selu(self.conv1.forward(x.pad([(1, 1)], PadMode::Constant(0.0))));
        let x = selu(self.conv2.forward(x.pad([(1, 2)], PadMode::Constant(0.0))));
        let x = x.swap_dims(1, 2).flip([1]);
        let (h, _) = self.lstm1.forward(x, None);
        let (h, _) = self.lstm2.forward(h.flip([1]), None);
        let [b, t, d] = h.dims();
        h.slice([0..b, t - 1..t, 0..d]).reshape([b, d])
    }

    /// Loads the weights of fcd_torch's `ChemNet_v0.13_pretrained.pt`.
    ///
    /// That file is in PyTorch's legacy (pre-zip) format with a list at its root (layer
    /// type, (state dict, kwargs, info)), which burn-store's PyTorch reader does not open
    /// (it needs a dict root). Read by hand, with every assumption checked: the file ends
    /// with its ten float32 storages, each an 8-byte element count and the raw values, and
    /// each tensor of ChemNet has its own contiguous storage of a distinct size (4,480 and
    /// 4,096 for the convolutions; 16,384 / 65,536 and 262,144 / 1,048,576 for the two
    /// LSTMs' input / hidden weights) except the two biases of one LSTM (512 or 2,048
    /// each), which only enter as their sum. The whole network is then checked against
    /// fcd_torch's activations (`fixtures/moses_metrics/chemnet.json`).
    ///
    /// # Errors
    /// [`LoadError::Read`] naming the file when it is not that file.
    pub fn load_fcd_torch(mut self, path: &Path) -> Result<Self, LoadError> {
        let bytes = std::fs::read(path).map_err(|e| read_error(path, e.to_string()))?;
        let mut storages = legacy_storages(&bytes).ok_or_else(|| {
            read_error(
                path,
                "not fcd_torch 1.0.7's ChemNet_v0.13_pretrained.pt (its storages do not fit)",
            )
        })?;
        let device = self.conv1.weight.device();
        let mut take = |numel: usize, shape: &[usize]| -> TensorData {
            let k = storages
                .iter()
                .position(|s| s.len() == numel)
                .expect("legacy_storages checked every size");
            TensorData::new(storages.swap_remove(k), shape.to_vec())
        };
        let conv1 = take(32 * 35 * 4, &[32, 35, 4]);
        let conv2 = take(32 * 32 * 4, &[32, 32, 4]);
        self.conv1.weight = Param::from_tensor(Tensor::from_data(conv1, &device));
        self.conv2.weight = Param::from_tensor(Tensor::from_data(conv2, &device));
        for (lstm, d_in, d_h) in [
            (&mut self.lstm1, 32, 128),
            (&mut self.lstm2, 128, CHEMNET_WIDTH),
        ] {
            let w_ih = Tensor::<2>::from_data(take(4 * d_h * d_in, &[4 * d_h, d_in]), &device);
            let w_hh = Tensor::<2>::from_data(take(4 * d_h * d_h, &[4 * d_h, d_h]), &device);
            let b_ih = Tensor::<1>::from_data(take(4 * d_h, &[4 * d_h]), &device);
            let b_hh = Tensor::<1>::from_data(take(4 * d_h, &[4 * d_h]), &device);
            // PyTorch stacks the gates as input, forget, cell (g), output.
            let forget = lstm
                .forget_gate
                .as_mut()
                .ok_or_else(|| read_error(path, "LSTM without a forget gate"))?;
            let gates = [
                &mut lstm.input_gate,
                forget,
                &mut lstm.cell_gate,
                &mut lstm.output_gate,
            ];
            for (k, gate) in gates.into_iter().enumerate() {
                let rows = k * d_h..(k + 1) * d_h;
                gate.input_transform.weight =
                    Param::from_tensor(w_ih.clone().slice([rows.clone(), 0..d_in]).transpose());
                gate.input_transform.bias =
                    Some(Param::from_tensor(b_ih.clone().slice([rows.clone()])));
                gate.hidden_transform.weight =
                    Param::from_tensor(w_hh.clone().slice([rows.clone(), 0..d_h]).transpose());
                gate.hidden_transform.bias = Some(Param::from_tensor(b_hh.clone().slice([rows])));
            }
        }
        Ok(self)
    }
}

/// Element counts of ChemNet's ten storages (see [`ChemNet::load_fcd_torch`]).
const STORAGE_SIZES: [usize; 10] = [
    32 * 35 * 4,
    32 * 32 * 4,
    512 * 32,
    512 * 128,
    512,
    512,
    2048 * 128,
    2048 * 512,
    2048,
    2048,
];

/// The float32 storages at the end of a legacy PyTorch file, if they are exactly ChemNet's
/// ten (as a multiset of sizes, ending at the end of the file).
fn legacy_storages(bytes: &[u8]) -> Option<Vec<Vec<f32>>> {
    let total: usize = STORAGE_SIZES.iter().map(|n| 8 + 4 * n).sum();
    let mut pos = bytes.len().checked_sub(total)?;
    let mut out = Vec::new();
    let mut left = STORAGE_SIZES.to_vec();
    while pos < bytes.len() {
        let numel = i64::from_le_bytes(bytes.get(pos..pos + 8)?.try_into().ok()?);
        let numel = usize::try_from(numel).ok()?;
        let k = left.iter().position(|&n| n == numel)?;
        left.swap_remove(k);
        let data = bytes.get(pos + 8..pos + 8 + 4 * numel)?;
        out.push(
            data.chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
        );
        pos += 8 + 4 * numel;
    }
    (left.is_empty() && pos == bytes.len()).then_some(out)
}

fn read_error(path: &Path, reason: impl Into<String>) -> LoadError {
    LoadError::Read {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}
