//! [`fused_attention_packed`]: the fused core on molecules stored one after another
//! without padding rows (see the parent module's documentation).

use std::sync::Arc;

use burn::backend::Flex;
use burn::nn::Dropout;
use burn::prelude::*;

use super::{Data, FusedAttention, Shape, Span, run};
use crate::flex_data::{contiguous, is_tracked, on_flex_f32};

/// [`fused_attention`] over molecules stored one after another without padding ("packed"
/// rows, as `PackedBatch` in [`crate::packing`] lays them out): `q`, `k`, `v` are
/// `[1, R, d_model]` with molecule `b`'s `lengths[b]` atoms in consecutive rows
/// (`R = sum(lengths)`), and `p_mix` holds each molecule's `[n_b, n_b]` block in turn
/// (`sum(n_b^2)` floats). Every key is an atom, so there is no mask and no bias. Returns
/// `[1, R, d_model]`, or `None` where [`fused_attention`] would (not f32 on flex, `p_mix`
/// tracked).
///
/// The same values, row for row, as [`fused_attention`] on the padded batch with the key
/// padding mask, when `p_mix` is 0 from real atoms to padding (MAT's distance and
/// adjacency terms are): masked keys get softmax weight exactly 0 there. Skipping the
/// padding saves its share of the work (about half of an ESOL batch of 32).
///
/// # Panics
/// If `q`, `k`, `v` are not `[1, sum(lengths), d_model]`, `d_model` is not a multiple of
/// `num_heads`, or `p_mix` is not `sum(n_b^2)` long.
pub fn fused_attention_packed(
    cfg: FusedAttention,
    q: Tensor<3>,
    k: Tensor<3>,
    v: Tensor<3>,
    lengths: &[usize],
    p_mix: Option<Tensor<1>>,
    dropout: Option<&Dropout>,
) -> Option<Tensor<3>> {
    packed_core(cfg, [q, k, v], lengths, p_mix, None, dropout)
}

/// [`fused_attention_packed`] with a per-head additive bias instead of `p_mix`
/// (Transformer-M's and Graphormer's biased attention on a packed batch):
/// `attn_bias` holds each molecule's `[H, n_b, n_b]` block in turn (`H sum(n_b^2)`
/// floats, [`crate::PackedBatch::pack_head_pairs`] lays a padded `[B, H, N, N]` bias out
/// so) and gets its gradient in the same layout. No mask: every key is a real token.
/// Returns `[1, R, d_model]`, or `None` where the fused kernel does not apply (not f32 on
/// flex).
///
/// Row for row the values of [`fused_attention`] on the padded batch with its key
/// padding mask (masked keys get softmax weight exactly 0 there), and under autodiff
/// the same gradients for `q`, `k`, `v` and the real pairs of the bias.
///
/// # Panics
/// If `q`, `k`, `v` are not `[1, sum(lengths), d_model]`, `d_model` is not a multiple of
/// `num_heads`, or `attn_bias` is not `H sum(n_b^2)` long.
pub fn fused_attention_packed_biased(
    cfg: FusedAttention,
    q: Tensor<3>,
    k: Tensor<3>,
    v: Tensor<3>,
    lengths: &[usize],
    attn_bias: Tensor<1>,
    dropout: Option<&Dropout>,
) -> Option<Tensor<3>> {
    packed_core(cfg, [q, k, v], lengths, None, Some(attn_bias), dropout)
}

/// Both packed entries: `p_mix` (no gradient, shared by the heads) or a per-head bias.
fn packed_core(
    cfg: FusedAttention,
    [q, k, v]: [Tensor<3>; 3],
    lengths: &[usize],
    p_mix: Option<Tensor<1>>,
    attn_bias: Option<Tensor<1>>,
    dropout: Option<&Dropout>,
) -> Option<Tensor<3>> {
    if !on_flex_f32(&q) || p_mix.as_ref().is_some_and(is_tracked) {
        return None;
    }
    let rows: usize = lengths.iter().sum();
    let pairs: usize = lengths.iter().map(|n| n * n).sum();
    let d = q.dims()[2];
    for (t, name) in [(&q, "q"), (&k, "k"), (&v, "v")] {
        assert_eq!(
            t.dims(),
            [1, rows, d],
            "fused_attention_packed: {name} must be [1, sum(lengths), d_model]"
        );
    }
    assert!(
        cfg.num_heads > 0 && d.is_multiple_of(cfg.num_heads),
        "fused_attention_packed: d_model must be a multiple of num_heads"
    );
    let p_mix = match p_mix {
        Some(p) => {
            assert_eq!(
                p.dims(),
                [pairs],
                "fused_attention_packed: p_mix must hold sum(n_b^2) floats"
            );
            let p = if p.is_autodiff() { p.inner() } else { p };
            Some(contiguous(p.try_into_primitive::<Flex>().ok()?))
        }
        None => None,
    };
    let bias_dims = [1, 1, 1, cfg.num_heads * pairs];
    let attn_bias = attn_bias.map(|bias| {
        assert_eq!(
            bias.dims(),
            [cfg.num_heads * pairs],
            "fused_attention_packed_biased: attn_bias must hold H sum(n_b^2) floats"
        );
        bias.reshape(bias_dims)
    });
    let device = q.device();
    let keep = dropout
        .and_then(|layer| crate::dropout::flex_keep_mask(layer, &device, cfg.num_heads * pairs))
        .map(Arc::new);
    let data = Data {
        shape: Shape {
            n: lengths.iter().copied().max().unwrap_or(0),
            d,
            h: cfg.num_heads,
            scale: cfg.scale,
            weight: cfg.softmax_weight,
        },
        spans: Arc::new(packed_spans(lengths)),
        out_dims: [1, rows, d],
        bias_dims,
        mask: None,
        p_mix,
        keep,
    };
    run(q, k, v, attn_bias, data)
}

/// The spans of `b` molecules of `n` rows each (a padded batch).
pub(super) fn uniform_spans(b: usize, n: usize) -> Vec<Span> {
    packed_spans(&vec![n; b])
}

/// The spans of molecules of `lengths` rows stored one after another.
fn packed_spans(lengths: &[usize]) -> Vec<Span> {
    let (mut row, mut pair) = (0, 0);
    lengths
        .iter()
        .map(|&n| {
            let span = Span { row, n, pair };
            row += n;
            pair += n * n;
            span
        })
        .collect()
}
