//! MAT input embedding: `Linear(d_atom -> d_model)` then dropout (reference
//! `Embeddings`; no lookup table despite the reference's name `lut`).

use burn::nn::{Dropout, DropoutConfig, Initializer, Linear, LinearConfig};
use burn::prelude::*;

/// Atom-feature embedding `[B, N, d_atom] -> [B, N, d_model]`.
#[derive(Module, Debug)]
pub struct Embedding {
    /// Reference key `src_embed.lut`.
    pub lut: Linear,
    /// Dropout after the projection.
    pub dropout: Dropout,
}

impl Embedding {
    /// Xavier-uniform initialised embedding.
    pub fn new(d_atom: usize, d_model: usize, dropout: f64, device: &Device) -> Self {
        Self {
            lut: LinearConfig::new(d_atom, d_model)
                .with_initializer(Initializer::XavierUniform { gain: 1.0 })
                .init(device),
            dropout: DropoutConfig::new(dropout).init(),
        }
    }

    /// `[B, N, d_atom] -> [B, N, d_model]`.
    pub fn forward(&self, node_features: Tensor<3>) -> Tensor<3> {
        attn_core::dropout(&self.dropout, attn_core::linear(&self.lut, node_features))
    }
}
