//! Output heads: the graph-level regression head on the graph token (original
//! `lm_head_transform_weight -> GELU -> layer_norm -> embed_out + lm_output_learned_bias`
//! of `models/transformer_m.py`) and the 3D position-denoising head (original
//! `AtomTaskHead`).

use attn_core::gelu;
use burn::nn::{Dropout, DropoutConfig, LayerNorm, Linear};
use burn::prelude::*;

use super::DENOISING_ATTENTION_DROPOUT;
use super::init::{apply_layer_norm, layer_norm, normal_linear};

/// Configuration of [`RegressionHead`].
#[derive(Config, Debug)]
pub struct RegressionHeadConfig {
    /// d_model.
    pub d_model: usize,
    /// Outputs.
    pub num_targets: usize,
}

impl RegressionHeadConfig {
    /// The head with the original's init.
    pub fn init(&self, device: &Device) -> RegressionHead {
        RegressionHead {
            dense: normal_linear(self.d_model, self.d_model, device),
            layer_norm: layer_norm(self.d_model, device),
            out: normal_linear(self.d_model, self.num_targets, device),
        }
    }
}

/// Configuration of [`DenoisingHead`].
#[derive(Config, Debug)]
pub struct DenoisingHeadConfig {
    /// d_model.
    pub d_model: usize,
    /// Attention heads H.
    pub num_heads: usize,
}

impl DenoisingHeadConfig {
    /// The head with the original's init (attention dropout 0.1, as the original).
    pub fn init(&self, device: &Device) -> DenoisingHead {
        let d = self.d_model;
        DenoisingHead {
            q_proj: normal_linear(d, d, device),
            k_proj: normal_linear(d, d, device),
            v_proj: normal_linear(d, d, device),
            force_proj1: normal_linear(d, 1, device),
            force_proj2: normal_linear(d, 1, device),
            force_proj3: normal_linear(d, 1, device),
            dropout: DropoutConfig::new(DENOISING_ATTENTION_DROPOUT).init(),
            num_heads: self.num_heads,
        }
    }
}

/// Graph-level head on the graph token: `Linear -> GELU -> LN -> Linear`.
#[derive(Module, Debug)]
pub struct RegressionHead {
    /// Transform (original `lm_head_transform_weight`).
    pub dense: Linear,
    /// LN after GELU (original `layer_norm`).
    pub layer_norm: LayerNorm,
    /// Output, `d -> num_targets` (original `embed_out`, its bias the original's
    /// `lm_output_learned_bias`).
    pub out: Linear,
}

impl RegressionHead {
    /// `[B, d]` graph-token states to `[B, num_targets]`.
    pub fn forward(&self, token: Tensor<2>) -> Tensor<2> {
        let hidden = gelu(attn_core::linear(&self.dense, token));
        attn_core::linear(&self.out, apply_layer_norm(&self.layer_norm, hidden))
    }
}

/// The original's position-denoising head (`AtomTaskHead`): attention over the atoms
/// with the full pair bias, each weight times the unit vector between the atoms, then
/// one biased projection per axis. Not rotation-equivariant (the three axes have
/// different projections, and the biases do not rotate), as in the original.
#[derive(Module, Debug)]
pub struct DenoisingHead {
    /// W_q.
    pub q_proj: Linear,
    /// W_k.
    pub k_proj: Linear,
    /// W_v.
    pub v_proj: Linear,
    /// x-axis projection `d -> 1`.
    pub force_proj1: Linear,
    /// y-axis projection `d -> 1`.
    pub force_proj2: Linear,
    /// z-axis projection `d -> 1`.
    pub force_proj3: Linear,
    /// Dropout on the attention weights (0.1 in the original).
    pub dropout: Dropout,
    /// H.
    pub num_heads: usize,
}

impl DenoisingHead {
    /// Predicted noise per atom, `[B, N, 3]` (Angstrom direction; the loss is cosine).
    ///
    /// - `atoms`: `[B, N, d]` encoder output without the graph token.
    /// - `attn_bias`: `[B, H, N, N]` the encoder's pair bias between atoms (2D and 3D
    ///   terms by mode, masked pairs and padded keys at a large negative logit).
    /// - `delta_pos`: `[B, N, N, 3]` unit vectors `(r_j - r_i) / (|r_j - r_i| + 1e-5)`,
    ///   zero for molecules without the 3D channel.
    pub fn forward(
        &self,
        atoms: Tensor<3>,
        attn_bias: Tensor<4>,
        delta_pos: Tensor<4>,
    ) -> Tensor<3> {
        let [b, n, d] = atoms.dims();
        let h = self.num_heads;
        let dk = d / h;
        let heads = |t: Tensor<3>| t.reshape([b, n, h, dk]).swap_dims(1, 2);
        let q = heads(attn_core::linear(&self.q_proj, atoms.clone()))
            .mul_scalar((dk as f64).powf(-0.5));
        let k = heads(attn_core::linear(&self.k_proj, atoms.clone()));
        let v = heads(attn_core::linear(&self.v_proj, atoms));
        let probs = attn_core::dropout(
            &self.dropout,
            attn_core::softmax::softmax_last(attn_core::matmul(q, k.swap_dims(2, 3)) + attn_bias),
        ); // [B,H,N,N]
        // [B, H, 3, N, N]: weights times each component of the unit vectors.
        let rot = probs.reshape([b, h, 1, n, n])
            * delta_pos.permute([0, 3, 1, 2]).reshape([b, 1, 3, n, n]);
        let v = v.reshape([b, h, 1, n, dk]).expand([b, h, 3, n, dk]);
        let out = attn_core::matmul(rot.reshape([b, h * 3, n, n]), v.reshape([b, h * 3, n, dk]))
            .reshape([b, h, 3, n, dk])
            .permute([0, 3, 2, 1, 4])
            .reshape([b, n, 3, d]);
        let axis = |a: usize| {
            out.clone()
                .slice([0..b, 0..n, a..a + 1, 0..d])
                .reshape([b, n, d])
        };
        Tensor::cat(
            vec![
                attn_core::linear(&self.force_proj1, axis(0)),
                attn_core::linear(&self.force_proj2, axis(1)),
                attn_core::linear(&self.force_proj3, axis(2)),
            ],
            2,
        )
    }
}
