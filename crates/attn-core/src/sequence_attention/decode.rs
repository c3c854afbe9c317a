//! One query's attention over a KV cache on raw buffers: the attention of a decoding step
//! (one new token per sequence) without tensors.
//!
//! Why by hand: a decoding step of the SMILES generator's small preset is about 120 Burn
//! operations of a few thousand values each, and on the CPU their per-operation overhead
//! was most of the step (docs/RESULTS.md, "The generator's speed against PyTorch"). The
//! fused step (`models::smiles_gpt::CpuDecoder`) runs the projections as BLAS products
//! and this function for each sequence and head.
//!
//! Layout: keys transposed, `[d_k, capacity]` per sequence and head, so that the scores
//! of every cached position are `d_k` scaled rows added in vector registers
//! (`simd::combine_rows`, as MAT's fused attention computes its scores), without a
//! horizontal sum per key; values `[capacity, d_v]`. With a window, only the keys the
//! pattern allows are read.

use std::ops::Range;

use super::AttentionPattern;
use crate::simd::{avx2_fma, combine_rows, exp_in_place};

/// The keys that the query at `pos` sees among `0 ..= pos` under `pattern`
/// ([`AttentionPattern::allows`]), as at most two ranges: the global tokens, then the
/// window ending at `pos` (one range `0 .. pos + 1` without a window).
pub fn visible_keys(pattern: &AttentionPattern, pos: usize) -> [Range<usize>; 2] {
    let g = pattern.global_tokens;
    match pattern.window {
        Some(w) if pos >= g => {
            let start = (pos + 1).saturating_sub(w).max(g);
            [0..g, start..pos + 1]
        }
        _ => [0..0, 0..pos + 1],
    }
}

/// One sequence and head of a decoder's KV cache, on raw buffers.
#[derive(Debug, Clone, Copy)]
pub struct HeadCache<'a> {
    /// `[d_k, capacity]`: key `j` in column `j` (columns past the query ignored).
    pub keys_t: &'a [f32],
    /// `[capacity, d_v]` (rows past the query ignored).
    pub values: &'a [f32],
    /// Positions the cache holds.
    pub capacity: usize,
}

/// `out = sum_j softmax_j(q . k_j / sqrt(d_k)) v_j` for the query `q` (`[d_k]`) at
/// absolute position `pos`, over the keys `j` in `0 ..= pos` of `cache` that `pattern`
/// lets it see ([`visible_keys`]): the values [`super::scaled_dot_product_attention`]
/// gives that query row under [`super::score_mask`] (no key padding). `out` (`[d_v]`)
/// is overwritten; `scratch` is resized here.
///
/// # Panics
/// If `pos` is outside the cache or a buffer is shorter than stated.
pub fn attend_cached(
    q: &[f32],
    cache: HeadCache<'_>,
    pos: usize,
    pattern: &AttentionPattern,
    out: &mut [f32],
    scratch: &mut Vec<f32>,
) {
    let (d_k, d_v) = (q.len(), out.len());
    assert!(
        pos < cache.capacity
            && cache.keys_t.len() >= d_k * cache.capacity
            && cache.values.len() >= (pos + 1) * d_v,
        "attend_cached: position {pos} outside the cache of {}",
        cache.capacity
    );
    if avx2_fma() {
        attend::<true>(q, cache, pos, pattern, out, scratch);
    } else {
        attend::<false>(q, cache, pos, pattern, out, scratch);
    }
}

/// [`attend_cached`] with the vector kernels when `AVX` (crate::simd).
#[inline(always)]
fn attend<const AVX: bool>(
    q: &[f32],
    cache: HeadCache<'_>,
    pos: usize,
    pattern: &AttentionPattern,
    out: &mut [f32],
    scratch: &mut Vec<f32>,
) {
    let d_v = out.len();
    let ranges = visible_keys(pattern, pos);
    let n: usize = ranges.iter().map(|r| r.len()).sum();
    // scratch: the scores of the visible keys (range after range), then d_v floats for
    // the global tokens' share of the output.
    scratch.clear();
    scratch.resize(n + d_v, 0.0);
    let (scores, partial) = scratch.split_at_mut(n);
    let scale = (q.len() as f32).powf(-0.5);
    let mut at = 0;
    for r in &ranges {
        // scores[j] = sum_c q[c] k_t[c, j]
        let s = &mut scores[at..at + r.len()];
        combine_rows::<AVX>(s, q, cache.keys_t, cache.capacity, r.start);
        at += r.len();
    }
    // A window always holds `pos`, so there is a finite maximum.
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    scores.iter_mut().for_each(|s| *s = (*s - max) * scale);
    exp_in_place::<AVX>(scores);
    let inv = 1.0 / scores.iter().sum::<f32>();
    scores.iter_mut().for_each(|s| *s *= inv);
    let [globals, window] = &ranges;
    let (g_weights, w_weights) = scores.split_at(globals.len());
    combine_rows::<AVX>(out, w_weights, cache.values, d_v, window.start * d_v);
    if !globals.is_empty() {
        combine_rows::<AVX>(partial, g_weights, cache.values, d_v, 0);
        out.iter_mut()
            .zip(partial.iter())
            .for_each(|(o, p)| *o += p);
    }
}
