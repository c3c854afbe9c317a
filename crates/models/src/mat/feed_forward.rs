//! MAT position-wise feed-forward network (reference `PositionwiseFeedForward`).

use burn::nn::{Dropout, DropoutConfig, Initializer, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::{leaky_relu, relu, tanh};

use super::config::OutputNonlinearity;

/// LeakyReLU with `slope`, computed as ReLU at slope 0 (MAT's default). The same values
/// (any shape), but under autodiff Burn 0.22.1 builds `leaky_relu` from `lower_elem`,
/// `mul_scalar` and `mask_where` (three graph nodes and two masked passes backward: 5% of
/// MAT's training epoch in `perf`), while `relu` is one fused op each way on flex. The
/// gradient at exactly 0 is then 0, as PyTorch's `leaky_relu` with slope 0 gives.
pub(crate) fn leaky_relu_or_relu<const D: usize>(y: Tensor<D>, slope: f64) -> Tensor<D> {
    if slope == 0.0 {
        relu(y)
    } else {
        leaky_relu(y, slope)
    }
}

/// `n_dense` Linear(d, d) layers with LeakyReLU(slope) between them, the output
/// nonlinearity after the last, dropout after each. `n_dense = 0` is the identity.
/// Shapes: `[B, N, d_model]` in and out.
#[derive(Module, Debug)]
pub struct FeedForward {
    /// Reference keys `feed_forward.linears.{j}`.
    pub linears: Vec<Linear>,
    /// One dropout per layer.
    pub dropout: Vec<Dropout>,
    /// LeakyReLU negative slope.
    pub leaky_relu_slope: f64,
    /// [`OutputNonlinearity::code`] of the last layer's nonlinearity (read it with
    /// [`FeedForward::output`]).
    pub output_nonlinearity: usize,
}

impl FeedForward {
    /// Xavier-uniform initialised FFN.
    pub fn new(
        d_model: usize,
        n_dense: usize,
        dropout: f64,
        leaky_relu_slope: f64,
        output: OutputNonlinearity,
        device: &Device,
    ) -> Self {
        let linears = (0..n_dense)
            .map(|_| {
                LinearConfig::new(d_model, d_model)
                    .with_initializer(Initializer::XavierUniform { gain: 1.0 })
                    .init(device)
            })
            .collect();
        let output_nonlinearity = output.code();
        Self {
            linears,
            dropout: (0..n_dense)
                .map(|_| DropoutConfig::new(dropout).init())
                .collect(),
            leaky_relu_slope,
            output_nonlinearity,
        }
    }

    /// The nonlinearity after the last layer.
    pub fn output(&self) -> OutputNonlinearity {
        OutputNonlinearity::from_code(self.output_nonlinearity)
    }

    /// `[B, N, d_model] -> [B, N, d_model]`.
    pub fn forward(&self, mut x: Tensor<3>) -> Tensor<3> {
        let last = self.linears.len().saturating_sub(1);
        for (i, (linear, dropout)) in self.linears.iter().zip(&self.dropout).enumerate() {
            // One 2D GEMM over all B * N rows (attn_core::linear).
            let y = attn_core::linear(linear, x);
            let y = if i < last {
                leaky_relu_or_relu(y, self.leaky_relu_slope)
            } else {
                match self.output() {
                    OutputNonlinearity::Relu => leaky_relu_or_relu(y, self.leaky_relu_slope),
                    OutputNonlinearity::Tanh => tanh(y),
                    OutputNonlinearity::None => y,
                }
            };
            x = attn_core::dropout(dropout, y);
        }
        x
    }
}
