//! MAT generator: masked pooling over atoms, then the output projection
//! (reference `Generator`).

use attn_core::MatNorm;
use burn::nn::{Dropout, DropoutConfig, Initializer, Linear, LinearConfig};
use burn::prelude::*;

use super::config::{Aggregation, MatConfig};

/// A hidden block of a multi-layer generator: Linear, LeakyReLU, Norm, Dropout.
#[derive(Module, Debug)]
pub struct GeneratorBlock {
    /// Linear(d_model, d_model).
    pub linear: Linear,
    /// Norm after the activation.
    pub norm: MatNorm,
    /// Dropout.
    pub dropout: Dropout,
}

/// Pools `[B, N, d_model]` into `[B, d_model]` and projects to `[B, num_targets]`.
#[derive(Module, Debug)]
pub struct Generator {
    /// Hidden blocks (`n_generator_layers - 1` of them).
    pub hidden: Vec<GeneratorBlock>,
    /// Reference `generator.proj`: Linear(d_model, num_targets).
    pub proj: Linear,
    /// LeakyReLU slope of the hidden blocks.
    pub leaky_relu_slope: f64,
    /// [`Aggregation::code`] of the pooling (read it with [`Generator::pooling`]).
    pub aggregation: usize,
}

fn xavier(d_in: usize, d_out: usize, device: &Device) -> Linear {
    LinearConfig::new(d_in, d_out)
        .with_initializer(Initializer::XavierUniform { gain: 1.0 })
        .init(device)
}

impl Generator {
    /// Builds the generator of `config`.
    pub fn new(config: &MatConfig, device: &Device) -> Self {
        let hidden = (1..config.n_generator_layers.max(1))
            .map(|_| GeneratorBlock {
                linear: xavier(config.d_model, config.d_model, device),
                norm: MatNorm::new(config.norm, config.d_model, device),
                dropout: DropoutConfig::new(config.dropout).init(),
            })
            .collect();
        Self {
            hidden,
            proj: xavier(config.d_model, config.num_targets, device),
            leaky_relu_slope: config.leaky_relu_slope,
            aggregation: config.aggregation.code(),
        }
    }

    /// How atom states are pooled.
    pub fn pooling(&self) -> Aggregation {
        Aggregation::from_code(self.aggregation)
    }

    /// `x: [B, N, d_model]`, `key_padding_mask: [B, N]` (`true` = padding)
    /// -> `[B, num_targets]`: [`Generator::pool`] then [`Generator::head`].
    pub fn forward(&self, x: Tensor<3>, key_padding_mask: Tensor<2, Bool>) -> Tensor<2> {
        self.head(self.pool(x, key_padding_mask))
    }

    /// The molecule vector `[B, d_model]`: atom states `x: [B, N, d_model]` pooled over
    /// the real nodes of `key_padding_mask: [B, N]` (`true` = padding). The mean divides
    /// by the number of real nodes (dummy included), as the reference
    /// (`Generator.forward` in ardigen/MAT's `src/transformer.py`, before `proj`).
    pub fn pool(&self, x: Tensor<3>, key_padding_mask: Tensor<2, Bool>) -> Tensor<2> {
        let [b, _, d] = x.dims();
        let real = key_padding_mask.bool_not().float().unsqueeze_dim::<3>(2); // [B, N, 1]
        let masked = x * real.clone();
        match self.pooling() {
            Aggregation::Mean => {
                let count = real.sum_dim(1).clamp_min(1.0); // [B, 1, 1]
                (masked.sum_dim(1) / count).reshape([b, d])
            }
            Aggregation::Sum => masked.sum_dim(1).reshape([b, d]),
            Aggregation::DummyNode => masked.slice(s![.., 0..1, ..]).reshape([b, d]),
        }
    }

    /// The head on pooled molecule vectors: `[B, d_model]` -> `[B, num_targets]` (the
    /// hidden blocks, then `proj`).
    pub fn head(&self, pooled: Tensor<2>) -> Tensor<2> {
        let mut pooled = pooled;
        for block in &self.hidden {
            let y = super::feed_forward::leaky_relu_or_relu(
                attn_core::linear(&block.linear, pooled),
                self.leaky_relu_slope,
            );
            pooled = attn_core::dropout(&block.dropout, block.norm.forward(y));
        }
        attn_core::linear(&self.proj, pooled)
    }
}
