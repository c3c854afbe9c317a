//! Self-attention over token sequences (SMILES language models): scaled dot-product
//! attention with a `key_padding_mask`, the causal mask, local (sliding-window) and
//! global-token patterns, merged Q/K/V projections, separate `d_k` / `d_v`, and a
//! preallocated KV cache for incremental decoding.
//!
//! - [`AttentionPattern`]: which keys a query sees (causal, window, global tokens).
//! - [`scaled_dot_product_attention()`]: `softmax(Q K^T / sqrt(d_k) + mask) V`, a fully
//!   masked query row giving 0 (PyTorch's SDPA gives NaN there).
//! - [`local_attention()`]: the same values for a windowed pattern, computed block by
//!   block so that memory grows linearly in the sequence length.
//! - [`SequenceSelfAttention`]: the multi-head layer (GPT's `c_attn` / `c_proj`), one
//!   forward for training and for cached decoding.
//! - [`KvCache`]: `[B, H, max_len, d]` keys and values written in place.
//! - [`attend_cached()`]: one query's attention over a cache on raw buffers (a fused
//!   decoding step's).
//!
//! Reference: PyTorch `torch.nn.functional.scaled_dot_product_attention` (its boolean
//! `attn_mask` is `true` where a position *is attended*, the opposite of our convention);
//! the parity fixture is `fixtures/gen/sequence_attention_reference.py`.

mod cache;
mod decode;
mod local;
mod pattern;
#[cfg(test)]
mod tests;

use burn::nn::{Dropout, DropoutConfig, Initializer, Linear, LinearConfig};
use burn::prelude::*;

pub use cache::KvCache;
pub use decode::{HeadCache, attend_cached, visible_keys};
pub use local::local_attention;
pub use pattern::{AttentionPattern, score_mask};

use crate::flex_data::on_flex_f32;
use crate::fused_attention::{FusedAttention, FusedAttentionInputs};
use crate::mask::MASKED_LOGIT;

/// `softmax(q k^T * d_k^-1/2)` with masked scores removed, times `v`:
///
/// - `q`: `[B, H, n_q, d_k]`, `k`: `[B, H, n_k, d_k]`, `v`: `[B, H, n_k, d_v]`;
/// - `mask`: `[B, H, n_q, n_k]`, `true` = the key is not attended by that query (from
///   [`score_mask`]), or `None`;
/// - `dropout`: applied to the attention weights (training only, as
///   [`crate::dropout()`]).
///
/// Returns `[B, H, n_q, d_v]`. A query row whose keys are all masked gives exactly 0 and
/// passes gradient 0 (the weights are zeroed where masked, after the softmax).
pub fn scaled_dot_product_attention(
    q: Tensor<4>,
    k: Tensor<4>,
    v: Tensor<4>,
    mask: Option<Tensor<4, Bool>>,
    dropout: Option<&Dropout>,
) -> Tensor<4> {
    let d_k = q.dims()[3];
    let scale = (d_k as f64).powf(-0.5);
    let scores = crate::matmul(q, k.swap_dims(2, 3)) * scale;
    let weights = match mask {
        Some(mask) => {
            let scores = scores.mask_fill(mask.clone(), MASKED_LOGIT);
            // Masked weights are already 0 except on fully masked rows (uniform there).
            crate::softmax::softmax_last(scores).mask_fill(mask, 0.0)
        }
        None => crate::softmax::softmax_last(scores),
    };
    let weights = match dropout {
        Some(layer) => crate::dropout(layer, weights),
        None => weights,
    };
    crate::matmul(weights, v)
}

/// Longest sequence that [`SequenceSelfAttention`] runs through the fused attention core.
/// The core was written for molecules: one thread per sequence and the `H N^2` weights of
/// every sequence kept for the backward; SMILES are at most a few hundred tokens, while a
/// long single sequence (the dense rows of `bench --generate`, 1k-4k tokens) is better
/// served by Burn's multi-threaded ops.
pub const FUSED_MAX_TOKENS: usize = 256;

/// Configuration of [`SequenceSelfAttention`].
#[derive(Config, Debug)]
pub struct SequenceAttentionConfig {
    /// d_model.
    pub d_model: usize,
    /// Number of heads H.
    pub num_heads: usize,
    /// Per-head query/key size; default `d_model / H`.
    #[config(default = "None")]
    pub d_k: Option<usize>,
    /// Per-head value size; default `d_model / H`.
    #[config(default = "None")]
    pub d_v: Option<usize>,
    /// Bias terms on the projections.
    #[config(default = true)]
    pub bias: bool,
    /// Dropout on the attention weights (GPT's `attn_pdrop`).
    #[config(default = 0.1)]
    pub dropout: f64,
    /// Causal / local / global pattern.
    #[config(default = "AttentionPattern::causal()")]
    pub pattern: AttentionPattern,
}

/// Multi-head self-attention over a token sequence:
///
/// ```text
/// [q | k | v] = x W_qkv + b_qkv          (one merged projection, H (2 d_k + d_v) wide)
/// out         = concat_h(sdpa(q_h, k_h, v_h, pattern + key_padding_mask)) W_o + b_o
/// ```
///
/// With a [`KvCache`], `x` holds the new tokens only; their keys and values are written
/// to the cache and the queries attend to every cached position, the pattern's mask
/// derived from the cache length (never passed by hand).
#[derive(Module, Debug)]
pub struct SequenceSelfAttention {
    /// Merged W_q, W_k, W_v: `[d_model, H (2 d_k + d_v)]` (Burn layout: input first).
    pub qkv: Linear,
    /// W_o: `[H d_v, d_model]`.
    pub out_proj: Linear,
    /// Dropout on the attention weights.
    pub dropout: Dropout,
    /// H.
    pub num_heads: usize,
    /// d_k.
    pub d_k: usize,
    /// d_v.
    pub d_v: usize,
    /// [`AttentionPattern::causal`].
    pub causal: bool,
    /// [`AttentionPattern::window`], 0 for dense.
    pub window: usize,
    /// [`AttentionPattern::global_tokens`].
    pub global_tokens: usize,
}

impl SequenceAttentionConfig {
    /// Builds the layer: weights N(0, 0.02), biases 0 (GPT-2 / MolGPT's `_init_weights`).
    ///
    /// # Panics
    /// If `d_model` is not divisible by `num_heads` and `d_k` / `d_v` are not given, or
    /// the pattern is invalid (a window of 0): configuration errors.
    pub fn init(&self, device: &Device) -> SequenceSelfAttention {
        self.pattern.validate().expect("attention pattern");
        let per_head = || {
            assert_eq!(
                self.d_model % self.num_heads,
                0,
                "d_model must be divisible by num_heads (or give d_k and d_v)"
            );
            self.d_model / self.num_heads
        };
        let d_k = self.d_k.unwrap_or_else(per_head);
        let d_v = self.d_v.unwrap_or_else(per_head);
        let h = self.num_heads;
        let linear = |d_in: usize, d_out: usize| {
            LinearConfig::new(d_in, d_out)
                .with_bias(self.bias)
                .with_initializer(Initializer::Normal {
                    mean: 0.0,
                    std: 0.02,
                })
                .init(device)
        };
        let zero_bias = |mut layer: Linear| {
            if let Some(bias) = &layer.bias {
                let [n] = bias.dims();
                layer.bias = Some(burn::module::Param::from_tensor(Tensor::zeros([n], device)));
            }
            layer
        };
        SequenceSelfAttention {
            qkv: zero_bias(linear(self.d_model, h * (2 * d_k + d_v))),
            out_proj: zero_bias(linear(h * d_v, self.d_model)),
            dropout: DropoutConfig::new(self.dropout).init(),
            num_heads: h,
            d_k,
            d_v,
            causal: self.pattern.causal,
            window: self.pattern.window.unwrap_or(0),
            global_tokens: self.pattern.global_tokens,
        }
    }
}

impl SequenceSelfAttention {
    /// The layer's attention pattern.
    pub fn pattern(&self) -> AttentionPattern {
        AttentionPattern {
            causal: self.causal,
            window: (self.window > 0).then_some(self.window),
            global_tokens: self.global_tokens,
        }
    }

    /// Q `[B, H, T, d_k]`, K `[B, H, T, d_k]`, V `[B, H, T, d_v]` of `x` `[B, T, d_model]`.
    pub fn project(&self, x: Tensor<3>) -> (Tensor<4>, Tensor<4>, Tensor<4>) {
        let [b, t, _] = x.dims();
        let (h, d_k, d_v) = (self.num_heads, self.d_k, self.d_v);
        let qkv = crate::linear(&self.qkv, x);
        let part = |start: usize, width: usize| {
            qkv.clone()
                .narrow(2, start, h * width)
                .reshape([b, t, h, width])
                .swap_dims(1, 2)
        };
        (part(0, d_k), part(h * d_k, d_k), part(2 * h * d_k, d_v))
    }

    /// Self-attention of `x` `[B, T, d_model]` (new tokens only when `cache` is given).
    ///
    /// - `key_padding_mask`: `[B, n_k]` over every key the queries see (the cached ones
    ///   first, then the `T` new ones), `true` = padding; or `None`.
    /// - `cache`: this layer's [`KvCache`]; the new tokens sit at positions
    ///   `cache.len() ..` and are appended.
    ///
    /// Returns `[B, T, d_model]`; a query whose keys are all masked gives 0 before the
    /// output projection (so the projection's bias alone). On flex, a whole sequence of
    /// at most [`FUSED_MAX_TOKENS`] without key padding (training, scoring) runs the fused
    /// attention core (`fused_forward`), the same values; its dropout masks are drawn
    /// by the core, so a seeded run's masks differ from the unfused path's.
    ///
    /// # Errors
    /// A full cache, or a cache of other batch / head / feature sizes.
    pub fn forward(
        &self,
        x: Tensor<3>,
        key_padding_mask: Option<Tensor<2, Bool>>,
        cache: Option<&mut KvCache>,
    ) -> Result<Tensor<3>, String> {
        let [b, t, _] = x.dims();
        let device = x.device();
        let pattern = self.pattern();
        let blocked = matches!(pattern.window, Some(w) if local::pays(t, w, pattern.global_tokens));
        if cache.is_none()
            && key_padding_mask.is_none()
            && self.d_k == self.d_v
            && !blocked
            && t <= FUSED_MAX_TOKENS
            && on_flex_f32(&x)
        {
            return Ok(self.fused_forward(x, &pattern));
        }
        let (q, k, v) = self.project(x);
        let (k, v, offset) = match cache {
            Some(cache) => {
                let offset = cache.len();
                let (k, v) = cache.append(k, v)?;
                (k, v, offset)
            }
            None => (k, v, 0),
        };
        let n_k = k.dims()[2];
        let out = match pattern.window {
            Some(w) if offset == 0 && local::pays(t, w, pattern.global_tokens) => {
                local_attention(q, k, v, &pattern, key_padding_mask, Some(&self.dropout))
            }
            _ => {
                let mask = score_mask(
                    &pattern,
                    key_padding_mask,
                    [b, self.num_heads, t, n_k],
                    offset,
                    &device,
                );
                scaled_dot_product_attention(q, k, v, mask, Some(&self.dropout))
            }
        };
        let out = out
            .swap_dims(1, 2)
            .reshape([b, t, self.num_heads * self.d_v]);
        Ok(crate::linear(&self.out_proj, out))
    }

    /// The whole-sequence forward (no cache, no key padding, `d_k = d_v`) on flex through
    /// the fused attention core ([`crate::fused_attention()`]: scores, pattern mask,
    /// softmax, dropout and values as one op each way, one graph node under autodiff), the
    /// same values as the unfused ops up to f32 summation order. Every query sees itself
    /// under any pattern, so no row is fully masked (where the unfused path's 0 and the
    /// fused kernel's uniform row would differ).
    fn fused_forward(&self, x: Tensor<3>, pattern: &AttentionPattern) -> Tensor<3> {
        let [b, t, _] = x.dims();
        let device = x.device();
        let qkv = crate::linear(&self.qkv, x);
        let dense = !pattern.causal && pattern.window.is_none();
        let attn_mask = (!dense).then(|| {
            pattern
                .mask(t, t, 0, &device)
                .unsqueeze_dim::<3>(0)
                .expand([b, t, t])
        });
        let cfg = FusedAttention {
            num_heads: self.num_heads,
            scale: (self.d_k as f64).powf(-0.5) as f32,
            softmax_weight: 1.0,
        };
        let inputs = FusedAttentionInputs {
            attn_bias: None,
            attn_mask,
            p_mix: None,
            dropout: Some(&self.dropout),
        };
        let out = crate::fused_attention_qkv(cfg, qkv, inputs)
            .expect("the fused kernel takes f32 on flex");
        crate::linear(&self.out_proj, out)
    }

    /// An empty [`KvCache`] for this layer: `batch` sequences of up to `max_len` tokens.
    pub fn new_cache(&self, batch: usize, max_len: usize, device: &Device) -> KvCache {
        KvCache::new(batch, self.num_heads, max_len, self.d_k, self.d_v, device)
    }
}
