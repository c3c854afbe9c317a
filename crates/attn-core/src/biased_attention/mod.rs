//! Biased multi-head self-attention of Graphormer and Transformer-M, with DGL's
//! `BiasedMHA` semantics (docs/SPEC.md 2.1; Ying et al. 2021, arXiv 2106.05234, Eq. 6-7;
//! reference: DGL 2.1 `python/dgl/nn/pytorch/gt/biased_mha.py`).

use burn::module::Param;
use burn::nn::{Dropout, DropoutConfig, Initializer, Linear, LinearConfig};
use burn::prelude::*;

use crate::mask::MASKED_LOGIT;

/// How `attn_bias` enters the attention scores.
#[derive(Config, Debug, Copy, PartialEq, Eq)]
pub enum AttnBiasType {
    /// `scores + attn_bias` (Graphormer; DGL `attn_bias_type="add"`).
    Add,
    /// `scores * attn_bias` (DGL `attn_bias_type="mul"`).
    Mul,
}

/// Configuration of [`BiasedMultiHeadAttention`] (DGL `BiasedMHA(feat_size, num_heads,
/// bias, attn_bias_type, attn_drop)`).
#[derive(Config, Debug)]
pub struct BiasedMultiHeadAttentionConfig {
    /// d_model (DGL `feat_size`).
    pub d_model: usize,
    /// Number of heads H; `d_k = d_model / H`.
    pub num_heads: usize,
    /// Bias terms on the four projections.
    #[config(default = true)]
    pub bias: bool,
    /// Additive or multiplicative bias.
    #[config(default = "AttnBiasType::Add")]
    pub attn_bias_type: AttnBiasType,
    /// Dropout on the attention weights (DGL `attn_drop`).
    #[config(default = 0.1)]
    pub dropout: f64,
}

/// Multi-head self-attention with a per-head pair bias:
///
/// ```text
/// scores[b,h,i,j] = (x W_q + b_q)_i . (x W_k + b_k)_j * d_k^-1/2
/// scores          = scores + attn_bias[b,i,j,h]      (or * attn_bias, Mul)
/// scores[attn_mask[b,i,j]] = masked
/// out = concat_h(softmax_j(scores) (x W_v + b_v)) W_o + b_o
/// ```
///
/// A query row whose keys are all masked (a padded atom) gives output 0 and passes
/// gradient 0, where DGL and PyTorch produce NaN (DGL #5476, PyTorch #41508): masked
/// scores use the finite [`MASKED_LOGIT`] and such rows are zeroed after the output
/// projection.
#[derive(Module, Debug)]
pub struct BiasedMultiHeadAttention {
    /// W_q, `[d_model, d_model]` (Burn layout: input first).
    pub q_proj: Linear,
    /// W_k.
    pub k_proj: Linear,
    /// W_v.
    pub v_proj: Linear,
    /// W_o.
    pub out_proj: Linear,
    /// Dropout on the attention weights.
    pub dropout: Dropout,
    /// H.
    pub num_heads: usize,
    /// d_k.
    pub d_k: usize,
    /// `true` for [`AttnBiasType::Mul`].
    pub multiplicative: bool,
}

impl BiasedMultiHeadAttentionConfig {
    /// Builds the module with DGL's initialisation: Xavier uniform with gain `2^-1/2`
    /// for W_q, W_k, W_v, gain 1 for W_o, output bias 0 (the q/k/v biases keep
    /// `nn.Linear`'s default, as DGL leaves them).
    ///
    /// # Panics
    /// If `d_model` is not divisible by `num_heads` (a configuration error).
    pub fn init(&self, device: &Device) -> BiasedMultiHeadAttention {
        assert_eq!(
            self.d_model % self.num_heads,
            0,
            "d_model must be divisible by num_heads"
        );
        let linear = |gain: f64| {
            LinearConfig::new(self.d_model, self.d_model)
                .with_bias(self.bias)
                .with_initializer(Initializer::XavierUniform { gain })
                .init(device)
        };
        let mut out_proj = linear(1.0);
        // A fresh trainable zero bias (`Param::map` onto a new tensor would freeze it).
        if self.bias {
            out_proj.bias = Some(Param::from_tensor(Tensor::zeros([self.d_model], device)));
        }
        BiasedMultiHeadAttention {
            q_proj: linear(std::f64::consts::FRAC_1_SQRT_2),
            k_proj: linear(std::f64::consts::FRAC_1_SQRT_2),
            v_proj: linear(std::f64::consts::FRAC_1_SQRT_2),
            out_proj,
            dropout: DropoutConfig::new(self.dropout).init(),
            num_heads: self.num_heads,
            d_k: self.d_model / self.num_heads,
            multiplicative: self.attn_bias_type == AttnBiasType::Mul,
        }
    }
}

/// The ways [`BiasedMultiHeadAttention::forward_heads_first`] computes the op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// Our fused kernel (flex, f32, additive bias).
    Fused,
    /// Burn's `attention` module op (inference, additive bias, a mask).
    BurnAttention,
    /// The explicit ops of the formula.
    Explicit,
}

impl BiasedMultiHeadAttention {
    /// Applies biased self-attention.
    ///
    /// - `x`: `[B, N, d_model]` node states (DGL `ndata`).
    /// - `attn_bias`: `[B, N, N, H]`, indexed `[batch, query, key, head]`, or `None`.
    /// - `attn_mask`: `[B, N, N]`, `true` = the key must not be attended to by that
    ///   query, or `None`.
    ///
    /// Returns `[B, N, d_model]`; fully masked query rows are exactly 0.
    pub fn forward(
        &self,
        x: Tensor<3>,
        attn_bias: Option<Tensor<4>>,
        attn_mask: Option<Tensor<3, Bool>>,
    ) -> Tensor<3> {
        let bias = attn_bias.map(|b| b.permute([0, 3, 1, 2]));
        self.forward_heads_first(x, bias, attn_mask)
    }

    /// [`BiasedMultiHeadAttention::forward`] with the bias already laid out
    /// `[B, H, N, N]` (as Graphormer's encoders build it), saving a permute.
    ///
    /// The one entry of this op: it picks the path by backend, dtype and autodiff, and
    /// every path computes the same function (the formula above; fully masked query rows
    /// exactly 0, with gradient 0):
    /// - f32 on the CPU backend (flex) with an additive bias: ours
    ///   ([`crate::fused_attention()`]: one pass per molecule over
    ///   `softmax(QK^T / sqrt(d_k) + bias)` and `V`, forward and backward, with this
    ///   layer's dropout), for training and inference;
    /// - otherwise, without autodiff, an additive bias and a mask: Burn's
    ///   `burn::tensor::module::attention` (inference: no dropout);
    /// - everything else: the explicit ops (dropout included).
    pub fn forward_heads_first(
        &self,
        x: Tensor<3>,
        attn_bias: Option<Tensor<4>>,
        attn_mask: Option<Tensor<3, Bool>>,
    ) -> Tensor<3> {
        let path = self.path(&x, attn_mask.is_some());
        self.forward_on(path, x, attn_bias, attn_mask)
    }

    /// The path [`BiasedMultiHeadAttention::forward_heads_first`] takes for `x`.
    fn path(&self, x: &Tensor<3>, masked: bool) -> Path {
        if self.multiplicative {
            Path::Explicit
        } else if crate::flex_data::on_flex_f32(x) {
            Path::Fused
        } else if masked && !x.is_autodiff() {
            Path::BurnAttention
        } else {
            Path::Explicit
        }
    }

    /// [`BiasedMultiHeadAttention::forward_heads_first`] on a given path (tests compare
    /// the paths), fully masked query rows zeroed on each.
    fn forward_on(
        &self,
        path: Path,
        x: Tensor<3>,
        attn_bias: Option<Tensor<4>>,
        attn_mask: Option<Tensor<3, Bool>>,
    ) -> Tensor<3> {
        let [b, n, d] = x.dims();
        let row_masked = attn_mask.as_ref().map(|mask| mask.clone().all_dim(2));
        let out = match path {
            Path::Explicit => {
                return self
                    .forward_heads_first_with_weights(x, attn_bias, attn_mask)
                    .0;
            }
            Path::Fused => {
                let (cfg, [q, k, v]) = self.fused_projections(x);
                let inputs = crate::FusedAttentionInputs {
                    attn_bias,
                    attn_mask,
                    p_mix: None,
                    dropout: Some(&self.dropout),
                };
                let out = crate::fused_attention(cfg, q, k, v, inputs)
                    .expect("the fused kernel takes f32 on flex");
                crate::linear(&self.out_proj, out)
            }
            Path::BurnAttention => {
                let h = self.num_heads;
                let heads = |t: Tensor<3>| t.reshape([b, n, h, self.d_k]).swap_dims(1, 2);
                let q = heads(crate::linear(&self.q_proj, x.clone()));
                let k = heads(crate::linear(&self.k_proj, x.clone()));
                let v = heads(crate::linear(&self.v_proj, x));
                let mask = attn_mask.map(|m| m.reshape([b, 1, n, n]).expand([b, h, n, n]));
                let out = burn::tensor::module::attention(
                    q,
                    k,
                    v,
                    mask,
                    attn_bias,
                    burn::tensor::ops::AttentionModuleOptions::default(),
                );
                crate::linear(&self.out_proj, out.swap_dims(1, 2).reshape([b, n, d]))
            }
        };
        // A fully masked row: a uniform average on the fused path, NaN in Burn's kernel;
        // 0 here as on the explicit path (the mask_fill also stops its gradient).
        match row_masked {
            Some(rows) => out.mask_fill(rows.expand([b, n, d]), 0.0),
            None => out,
        }
    }

    /// Additive biased self-attention on packed rows `x: [1, R, d_model]` (the real tokens
    /// of `batch`, [`crate::PackedBatch`]) with `attn_bias` laid out by
    /// [`crate::PackedBatch::pack_head_pairs`] (`[H sum(n_b^2)]`) -> `[1, R, d_model]`:
    /// each row equals that token's row of [`BiasedMultiHeadAttention::forward_heads_first`]
    /// on the padded batch with its key padding mask (to f32 rounding; with dropout equal
    /// in distribution, the mask drawn for the packed pairs), gradients included. The
    /// padding is never computed ([`crate::packing`] says why).
    ///
    /// # Panics
    /// A multiplicative bias, `x` not f32 on flex (where [`crate::PackedBatch::for_fused`]
    /// gives `None`), or shapes other than documented.
    pub fn forward_packed(
        &self,
        x: Tensor<3>,
        attn_bias: Tensor<1>,
        batch: &crate::PackedBatch,
    ) -> Tensor<3> {
        assert!(
            !self.multiplicative,
            "forward_packed: additive bias only (a multiplicative bias runs padded)"
        );
        let (cfg, [q, k, v]) = self.fused_projections(x);
        let out = crate::fused_attention_packed_biased(
            cfg,
            q,
            k,
            v,
            batch.lengths(),
            attn_bias,
            Some(&self.dropout),
        )
        .expect("forward_packed: f32 on flex (where PackedBatch::for_fused gives Some)");
        crate::linear(&self.out_proj, out)
    }

    /// The fused kernels' sizes and `Q`, `K`, `V` (`[.., d_model]` each) of `x`.
    fn fused_projections(&self, x: Tensor<3>) -> (crate::FusedAttention, [Tensor<3>; 3]) {
        let cfg = crate::FusedAttention {
            num_heads: self.num_heads,
            scale: (self.d_k as f64).powf(-0.5) as f32,
            softmax_weight: 1.0,
        };
        let q = crate::linear(&self.q_proj, x.clone());
        let k = crate::linear(&self.k_proj, x.clone());
        (cfg, [q, k, crate::linear(&self.v_proj, x)])
    }

    /// [`BiasedMultiHeadAttention::forward_heads_first`], also returning the attention
    /// weights `softmax(QK^T / sqrt(d_k) + bias)` that multiply the values in this call,
    /// `[B, H, N, N]` (before dropout; masked keys get 0).
    pub fn forward_heads_first_with_weights(
        &self,
        x: Tensor<3>,
        attn_bias: Option<Tensor<4>>,
        attn_mask: Option<Tensor<3, Bool>>,
    ) -> (Tensor<3>, Tensor<4>) {
        let [b, n, d] = x.dims();
        let h = self.num_heads;
        let heads = |t: Tensor<3>| t.reshape([b, n, h, self.d_k]).swap_dims(1, 2);
        let q =
            heads(crate::linear(&self.q_proj, x.clone())).mul_scalar((self.d_k as f64).powf(-0.5));
        let k = heads(crate::linear(&self.k_proj, x.clone()));
        let v = heads(crate::linear(&self.v_proj, x));
        let mut scores = crate::matmul(q, k.swap_dims(2, 3));
        if let Some(bias) = attn_bias {
            scores = if self.multiplicative {
                scores * bias
            } else {
                scores + bias
            };
        }
        let row_masked = attn_mask.map(|mask| {
            let full = mask.clone().reshape([b, 1, n, n]).expand([b, h, n, n]);
            scores = scores.clone().mask_fill(full, MASKED_LOGIT);
            mask.all_dim(2)
        });
        let weights = crate::softmax::softmax_last(scores);
        let probs = crate::dropout(&self.dropout, weights.clone());
        let out = crate::matmul(probs, v).swap_dims(1, 2).reshape([b, n, d]);
        let out = crate::linear(&self.out_proj, out);
        let out = match row_masked {
            Some(rows) => out.mask_fill(rows.expand([b, n, d]), 0.0),
            None => out,
        };
        (out, weights)
    }
}

#[cfg(test)]
mod tests;
