//! Local (sliding-window) attention computed block by block: each block of queries
//! attends to the global keys and the keys its window can reach, never to an `n x n`
//! score matrix, so memory and time grow linearly in the sequence length `n` (for a fixed
//! window `w` and `g` global tokens: `O(n (w + g))` scores instead of `O(n^2)`).
//!
//! The values equal [`super::scaled_dot_product_attention`] with the dense mask of the
//! same [`AttentionPattern`] (tested); only which scores are computed differs.

use burn::nn::Dropout;
use burn::prelude::*;

use super::pattern::AttentionPattern;
use super::scaled_dot_product_attention;

/// Queries per block: at least the window (so a block's keys span at most three windows)
/// and at least this many, so short windows do not make many tiny products.
const MIN_BLOCK: usize = 64;

/// Whether the blocked path computes fewer scores than the dense one for `n` tokens with
/// window `w` and `g` global tokens (a block touches about `block + 2 w + g` keys).
pub(super) fn pays(n: usize, w: usize, g: usize) -> bool {
    let block = w.max(MIN_BLOCK);
    n > 2 * block + 2 * w + g
}

/// Self-attention of `q` `[B, H, n, d_k]` over `k` `[B, H, n, d_k]`, `v` `[B, H, n, d_v]`
/// (the same `n` positions, `0 .. n`) under a windowed `pattern`, with an optional
/// `key_padding_mask` `[B, n]` (`true` = padding) and dropout on the weights. Returns
/// `[B, H, n, d_v]`, a fully masked query row giving 0.
///
/// # Panics
/// If `pattern.window` is `None` (a dense pattern has no blocks: use
/// [`super::scaled_dot_product_attention`]) or the shapes disagree.
pub fn local_attention(
    q: Tensor<4>,
    k: Tensor<4>,
    v: Tensor<4>,
    pattern: &AttentionPattern,
    key_padding_mask: Option<Tensor<2, Bool>>,
    dropout: Option<&Dropout>,
) -> Tensor<4> {
    let w = pattern.window.expect("local_attention needs a window");
    let [b, h, n, _] = q.dims();
    assert_eq!(
        k.dims()[2],
        n,
        "local_attention: keys must cover the queries' positions"
    );
    let g = pattern.global_tokens.min(n);
    let device = q.device();
    let block = w.max(MIN_BLOCK);
    let mut outputs = Vec::with_capacity(n.div_ceil(block));
    let mut start = 0;
    // Bidirectional global queries see every key: one dense block of rows 0..g.
    if g > 0 && !pattern.causal {
        outputs.push(block_attention(
            &q,
            &k,
            &v,
            (0, g),
            &[(0, n)],
            pattern,
            key_padding_mask.as_ref(),
            dropout,
            [b, h],
            &device,
        ));
        start = g;
    }
    while start < n {
        let end = (start + block).min(n);
        let lo = start.saturating_sub(w - 1);
        let hi = if pattern.causal {
            end
        } else {
            (end + w - 1).min(n)
        };
        let ranges: Vec<(usize, usize)> = if lo <= g {
            vec![(0, hi.max(g))]
        } else {
            vec![(0, g), (lo, hi)]
        };
        outputs.push(block_attention(
            &q,
            &k,
            &v,
            (start, end),
            &ranges,
            pattern,
            key_padding_mask.as_ref(),
            dropout,
            [b, h],
            &device,
        ));
        start = end;
    }
    Tensor::cat(outputs, 2)
}

/// Queries `rows.0 .. rows.1` against the keys of `ranges` (absolute positions, in
/// order, disjoint), masked by `pattern` and the key padding.
#[allow(clippy::too_many_arguments)]
fn block_attention(
    q: &Tensor<4>,
    k: &Tensor<4>,
    v: &Tensor<4>,
    rows: (usize, usize),
    ranges: &[(usize, usize)],
    pattern: &AttentionPattern,
    key_padding_mask: Option<&Tensor<2, Bool>>,
    dropout: Option<&Dropout>,
    [b, h]: [usize; 2],
    device: &Device,
) -> Tensor<4> {
    let ranges: Vec<(usize, usize)> = ranges.iter().copied().filter(|(s, e)| e > s).collect();
    let gather = |t: &Tensor<4>, dim: usize| {
        let parts: Vec<Tensor<4>> = ranges
            .iter()
            .map(|&(s, e)| t.clone().narrow(dim, s, e - s))
            .collect();
        Tensor::cat(parts, dim)
    };
    let (r0, r1) = rows;
    let qb = q.clone().narrow(2, r0, r1 - r0);
    let kb = gather(k, 2);
    let vb = gather(v, 2);
    let keys: Vec<usize> = ranges.iter().flat_map(|&(s, e)| s..e).collect();
    let n_q = r1 - r0;
    let n_k = keys.len();
    let structural: Vec<bool> = (r0..r1)
        .flat_map(|i| keys.iter().map(move |&j| !pattern.allows(i, j)))
        .collect();
    let mut mask: Tensor<4, Bool> =
        Tensor::<2, Bool>::from_bool(TensorData::new(structural, [n_q, n_k]), device)
            .reshape([1, 1, n_q, n_k])
            .expand([b, h, n_q, n_k]);
    if let Some(padding) = key_padding_mask {
        let parts: Vec<Tensor<2, Bool>> = ranges
            .iter()
            .map(|&(s, e)| padding.clone().narrow(1, s, e - s))
            .collect();
        let padding = Tensor::cat(parts, 1);
        mask = mask.bool_or(crate::mask::key_mask_4d(padding, h, n_q));
    }
    scaled_dot_product_attention(qb, kb, vb, Some(mask), dropout)
}
