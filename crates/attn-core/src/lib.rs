//! Backend-agnostic attention primitives for molecular machine learning.
//!
//! Burn 0.22 picks the backend at run time from a [`burn::tensor::Device`], so every
//! module here runs unchanged on `Device::flex()` (CPU), `Device::wgpu(..)` and CUDA.
//!
//! # Mask convention (the one convention of the whole workspace)
//! Every boolean mask in molattn is **`true` = masked out** (padding), as PyTorch's
//! `key_padding_mask` and DGL's `attn_mask`. A `key_padding_mask` has shape `[B, N]`;
//! `true` marks a padded atom slot that no query may attend to. Masked logits are
//! filled with the finite [`mask::MASKED_LOGIT`] rather than `-inf`, so a row whose keys
//! are all masked still gives finite probabilities and finite gradients (no NaN).
//!
//! # One entry per op
//! Models call this crate's entry for each op that has a fast path ([`linear()`],
//! [`matmul()`], [`dropout()`], [`gelu()`], [`apply_layer_norm()`],
//! [`softmax::softmax_last()`], the attention modules); the entry picks the path by
//! backend, dtype and autodiff, with one semantics on every path. `clippy.toml` in this
//! crate and in `models` disallows Burn's own versions of these ops outside the entries.
//!
//! Contents:
//! - [`MoleculeAttention`]: MAT molecule self-attention (Maziarka et al. 2020, Eq. 2).
//! - [`MatLayerNorm`], [`ScaleNorm`], [`MatNorm`]: MAT's normalisation layers.
//! - [`BiasedMultiHeadAttention`]: Graphormer / Transformer-M attention with a per-head
//!   pair bias (DGL `BiasedMHA` semantics), NaN-free on padded rows.
//! - [`dropout()`]: Burn's dropout with a fast mask on the CPU backend.
//! - [`fused_attention()`]: the attention core (scores to values) as one fused op each way
//!   on the CPU; [`fused_attention_qkv()`] on a merged QKV projection.
//! - [`multi_hop_edge_bias()`]: Graphormer's multi-hop edge encoding as one pass each way
//!   on the CPU.
//! - [`gaussian_basis()`]: Gaussian basis functions of pair distances (Transformer-M's 3D
//!   channel) as one fused op each way on the CPU.
//! - [`gelu()`]: exact GELU, vectorised and multi-threaded each way on the CPU.
//! - [`layer_norm()`]: layer norm (torch's or MAT's) as one fused op each way on the CPU;
//!   [`apply_layer_norm()`] for Burn's `LayerNorm` module.
//! - [`matmul()`], [`linear()`]: matrix products through a run-time BLAS on the CPU backend.
//! - [`PackedBatch`], [`PackedInputs`], [`fused_attention_packed()`]: a padded batch
//!   without its padding rows, and MAT attention on it (the padding is not computed).
//! - [`SequenceSelfAttention`], [`AttentionPattern`], [`KvCache`]: self-attention over
//!   token sequences (causal, local window, global tokens), with a KV cache for decoding.
//! - [`GlobalAttention`]: AlphaFold global attention (Jumper et al. 2021, Suppl. Alg. 19),
//!   bf16-safe (softmax in f32).

#![warn(missing_docs)]

pub mod biased_attention;
pub mod blas;
pub mod drop_path;
pub mod dropout;
pub mod edge_encoding;
mod flex_data;
pub mod fused_attention;
pub mod gaussian_basis;
pub mod gelu;
pub mod global_attention;
pub mod layer_norm;
pub mod mask;
pub mod matmul;
pub mod molecule_attention;
pub mod norm;
pub mod packed_attention;
pub mod packing;
pub mod sequence_attention;
mod simd;
pub mod softmax;

pub use biased_attention::{
    AttnBiasType, BiasedMultiHeadAttention, BiasedMultiHeadAttentionConfig,
};
pub use drop_path::drop_path;
pub use dropout::dropout;
pub use edge_encoding::multi_hop_edge_bias;
pub use fused_attention::{
    FusedAttention, FusedAttentionInputs, fused_attention, fused_attention_packed,
    fused_attention_packed_biased, fused_attention_qkv,
};
pub use gaussian_basis::gaussian_basis;
pub use gelu::gelu;
pub use global_attention::{GlobalAttention, GlobalAttentionConfig};
pub use layer_norm::{RowNorm, apply_layer_norm, layer_norm};
pub use matmul::{linear, matmul};
pub use molecule_attention::{
    DistanceKernel, MoleculeAttention, MoleculeAttentionConfig, PreparedInputs,
};
pub use norm::{MatLayerNorm, MatLayerNormConfig, MatNorm, NormKind, ScaleNorm, ScaleNormConfig};
pub use packed_attention::PackedInputs;
pub use packing::PackedBatch;
pub use sequence_attention::{
    AttentionPattern, HeadCache, KvCache, SequenceAttentionConfig, SequenceSelfAttention,
    attend_cached, scaled_dot_product_attention, visible_keys,
};
