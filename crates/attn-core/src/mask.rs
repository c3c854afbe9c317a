//! Masking helpers shared by every attention module (see the crate docs for the
//! convention: `true` = masked out).

use burn::tensor::{Bool, Tensor};

/// Logit written into masked attention scores before a softmax over keys.
///
/// MAT's reference (ardigen/MAT `src/transformer.py`, pretrained variant) uses `-1e12`.
/// It is finite on purpose: a fully masked row then softmaxes to a uniform
/// distribution instead of `0/0 = NaN`, and its gradient stays finite.
pub const MASKED_LOGIT: f32 = -1e12;

/// Distance written into masked (padded) key columns of a distance matrix before the
/// MAT distance kernel. The reference writes `+inf`; `1e12` Angstrom gives the same
/// `exp(-d) = 0` in f32 while keeping every intermediate finite.
pub const MASKED_DISTANCE: f32 = 1e12;

/// Broadcasts a key padding mask `[B, N_k]` to a score mask `[B, H, N_q, N_k]`.
///
/// `true` = the key is padding and must not be attended to.
pub fn key_mask_4d(key_padding_mask: Tensor<2, Bool>, heads: usize, n_q: usize) -> Tensor<4, Bool> {
    let [b, n_k] = key_padding_mask.dims();
    key_padding_mask
        .reshape([b, 1, 1, n_k])
        .expand([b, heads, n_q, n_k])
}

/// Broadcasts a key padding mask `[B, N_k]` to a pair mask `[B, N_q, N_k]`.
pub fn key_mask_3d(key_padding_mask: Tensor<2, Bool>, n_q: usize) -> Tensor<3, Bool> {
    let [b, n_k] = key_padding_mask.dims();
    key_padding_mask.reshape([b, 1, n_k]).expand([b, n_q, n_k])
}
