//! One encoder layer (original `TransformerMEncoderLayer`, `sandwich_ln = False`):
//! post-LN by default, pre-LN as a named option ([`super::LayerNormPlacement`]).

use attn_core::BiasedMultiHeadAttention;
use burn::nn::{Dropout, LayerNorm, Linear};
use burn::prelude::*;
use burn::tensor::activation::gelu;

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
        if x.device().is_autodiff() {
            return self.forward_with_weights(x, attn_bias, attn_mask).0;
        }
        // Inference: Burn's fused attention kernel (same math, no dropout; the graph
        // token keeps every query row unmasked).
        let attend = |h: Tensor<3>| {
            self.self_attn
                .forward_heads_first_fused(h, Some(attn_bias), Some(attn_mask))
        };
        self.residual_blocks(x, attend, |h| h)
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
        let x = self.residual_blocks(x, attend, |h| self.dropout.forward(h));
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
            let h = gelu(self.fc1.forward(h));
            self.fc2.forward(self.activation_dropout.forward(h))
        };
        if self.pre_ln {
            let x = x.clone() + drop(attend(self.self_attn_layer_norm.forward(x)));
            x.clone() + drop(ffn(self.final_layer_norm.forward(x)))
        } else {
            let x = self
                .self_attn_layer_norm
                .forward(x.clone() + drop(attend(x)));
            self.final_layer_norm.forward(x.clone() + drop(ffn(x)))
        }
    }
}
