//! One encoder layer (original `TransformerMEncoderLayer`, `sandwich_ln = False`):
//! post-LN by default, pre-LN as a named option ([`super::LayerNormPlacement`]).

use attn_core::gelu;
use attn_core::{BiasedMultiHeadAttention, BiasedMultiHeadAttentionConfig};
use burn::nn::{Dropout, DropoutConfig, LayerNorm, Linear};
use burn::prelude::*;

use super::init::{apply_layer_norm, layer_norm, normal_linear};

/// Configuration of [`EncoderLayer`].
#[derive(Config, Debug)]
pub struct EncoderLayerConfig {
    /// d_model.
    pub d_model: usize,
    /// FFN hidden size.
    pub ffn_dim: usize,
    /// Attention heads H.
    pub num_heads: usize,
    /// Pre-LN (`true`) or the original's post-LN.
    pub pre_ln: bool,
    /// Dropout on both residual branches.
    #[config(default = 0.0)]
    pub dropout: f64,
    /// Dropout on the attention weights.
    #[config(default = 0.1)]
    pub attention_dropout: f64,
    /// Dropout after GELU.
    #[config(default = 0.1)]
    pub activation_dropout: f64,
    /// DropPath probability of this layer (the original's per-layer `droppath_prob`).
    /// When positive it replaces the residual branches' `dropout`, as the original's
    /// layer does (`self.dropout_module = DropPath(droppath_prob)`).
    #[config(default = 0.0)]
    pub drop_path: f64,
}

impl EncoderLayerConfig {
    /// The layer with the original's init (every projection N(0, 0.02), biases 0).
    ///
    /// # Panics
    /// If `d_model` is not divisible by `num_heads`, or `drop_path` is outside `[0, 1)`.
    pub fn init(&self, device: &Device) -> EncoderLayer {
        assert!(
            (0.0..1.0).contains(&self.drop_path),
            "drop-path probability {} outside [0, 1)",
            self.drop_path
        );
        let d = self.d_model;
        let mut self_attn = BiasedMultiHeadAttentionConfig::new(d, self.num_heads)
            .with_dropout(self.attention_dropout)
            .init(device);
        self_attn.q_proj = normal_linear(d, d, device);
        self_attn.k_proj = normal_linear(d, d, device);
        self_attn.v_proj = normal_linear(d, d, device);
        self_attn.out_proj = normal_linear(d, d, device);
        EncoderLayer {
            self_attn_layer_norm: layer_norm(d, device),
            self_attn,
            final_layer_norm: layer_norm(d, device),
            fc1: normal_linear(d, self.ffn_dim, device),
            fc2: normal_linear(self.ffn_dim, d, device),
            dropout: DropoutConfig::new(self.dropout).init(),
            activation_dropout: DropoutConfig::new(self.activation_dropout).init(),
            pre_ln: self.pre_ln,
            drop_path: self.drop_path,
        }
    }
}

/// One encoder layer with biased self-attention and a GELU FFN.
///
/// Post-LN (original): `x = LN1(x + MHA(x, bias))`, `x = LN2(x + FFN(x))`.
/// Pre-LN: `x += MHA(LN1(x), bias)`, `x += FFN(LN2(x))`.
#[derive(Module, Debug)]
pub struct EncoderLayer {
    /// LN of the attention block (original `self_attn_layer_norm`).
    pub self_attn_layer_norm: LayerNorm,
    /// Biased attention.
    pub self_attn: BiasedMultiHeadAttention,
    /// LN of the FFN block (original `final_layer_norm`).
    pub final_layer_norm: LayerNorm,
    /// FFN in.
    pub fc1: Linear,
    /// FFN out.
    pub fc2: Linear,
    /// Dropout on both residual branches.
    pub dropout: Dropout,
    /// Dropout after GELU.
    pub activation_dropout: Dropout,
    /// `true`: pre-LN; `false`: post-LN (original).
    pub pre_ln: bool,
    /// DropPath probability on both residual branches (instead of `dropout`) when
    /// positive; training only ([`attn_core::drop_path`]). A constant, not in the record:
    /// checkpoints from before it load unchanged.
    pub drop_path: f64,
}

impl EncoderLayer {
    /// `x`: `[B, T, d]`; `attn_bias`: `[B, H, T, T]`; `attn_mask`: `[B, T, T]`
    /// (`true` = masked). Returns `[B, T, d]`.
    pub fn forward(
        &self,
        x: Tensor<3>,
        attn_bias: Tensor<4>,
        attn_mask: Tensor<3, Bool>,
    ) -> Tensor<3> {
        // The op picks its path (a fused kernel on the CPU, training included).
        let attend = |h: Tensor<3>| {
            self.self_attn
                .forward_heads_first(h, Some(attn_bias), Some(attn_mask))
        };
        self.residual_blocks(x, attend, |h| self.drop_branch(h))
    }

    /// [`EncoderLayer::forward`] on packed rows `x: [1, R, d]` (the real tokens of
    /// `batch`, graph tokens included) with `attn_bias` laid out by
    /// [`attn_core::PackedBatch::pack_head_pairs`] (`[H sum(t_b^2)]`) -> `[1, R, d]`, each
    /// row that token's row of the padded forward (to f32 rounding). DropPath in training
    /// drops whole positions shared by the batch, which packed rows do not have: callers
    /// run such layers padded ([`EncoderLayer::packs`]).
    ///
    /// # Panics
    /// `x` not f32 on flex, shapes other than documented, or a layer that does not
    /// [`EncoderLayer::packs`].
    pub fn forward_packed(
        &self,
        x: Tensor<3>,
        attn_bias: Tensor<1>,
        batch: &attn_core::PackedBatch,
    ) -> Tensor<3> {
        assert!(
            self.packs(&x.device()),
            "forward_packed: DropPath while training needs the padded batch (EncoderLayer::packs)"
        );
        let attend = |h: Tensor<3>| self.self_attn.forward_packed(h, attn_bias, batch);
        self.residual_blocks(x, attend, |h| self.drop_branch(h))
    }

    /// Whether [`EncoderLayer::forward_packed`] computes what the padded forward does on
    /// `device`: always, except DropPath while training.
    pub fn packs(&self, device: &Device) -> bool {
        self.drop_path == 0.0 || !self.dropout.training.is_enabled() || !device.is_autodiff()
    }

    /// The residual branches' regulariser: DropPath when the layer has a probability,
    /// else dropout (the original's `dropout_module`).
    fn drop_branch(&self, h: Tensor<3>) -> Tensor<3> {
        if self.drop_path > 0.0 {
            attn_core::drop_path(&self.dropout, self.drop_path, h)
        } else {
            attn_core::dropout(&self.dropout, h)
        }
    }

    /// [`EncoderLayer::forward`], also returning the attention weights `[B, H, T, T]`
    /// the layer applied.
    pub fn forward_with_weights(
        &self,
        x: Tensor<3>,
        attn_bias: Tensor<4>,
        attn_mask: Tensor<3, Bool>,
    ) -> (Tensor<3>, Tensor<4>) {
        let mut weights = None;
        let attend = |h: Tensor<3>| {
            let (out, w) = self.self_attn.forward_heads_first_with_weights(
                h,
                Some(attn_bias),
                Some(attn_mask),
            );
            weights = Some(w);
            out
        };
        let x = self.residual_blocks(x, attend, |h| self.drop_branch(h));
        (x, weights.expect("the attention block ran"))
    }

    /// The two residual blocks around `attend`, with `drop` on each branch output.
    fn residual_blocks(
        &self,
        x: Tensor<3>,
        attend: impl FnOnce(Tensor<3>) -> Tensor<3>,
        drop: impl Fn(Tensor<3>) -> Tensor<3>,
    ) -> Tensor<3> {
        let ffn = |h: Tensor<3>| {
            let h = gelu(attn_core::linear(&self.fc1, h));
            attn_core::linear(&self.fc2, attn_core::dropout(&self.activation_dropout, h))
        };
        if self.pre_ln {
            let x = x.clone() + drop(attend(apply_layer_norm(&self.self_attn_layer_norm, x)));
            x.clone() + drop(ffn(apply_layer_norm(&self.final_layer_norm, x)))
        } else {
            let x = apply_layer_norm(&self.self_attn_layer_norm, x.clone() + drop(attend(x)));
            apply_layer_norm(&self.final_layer_norm, x.clone() + drop(ffn(x)))
        }
    }
}
