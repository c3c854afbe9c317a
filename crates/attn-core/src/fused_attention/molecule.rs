//! The per-molecule loops of [`super::fused_attention()`]: one molecule's forward (scores,
//! mask, softmax, mixing, values) and backward, compiled twice (AVX2 + FMA, and plain).

use std::ops::Range;

use super::{MoleculeData, Shape};
use crate::mask::MASKED_LOGIT;
use crate::simd::{avx2_fma, axpy, combine_rows, exp_in_place};

/// One molecule's Q, K, V (`[N, d]`) and no-gradient inputs.
pub(super) struct Molecule<'a> {
    pub(super) s: Shape,
    pub(super) q: &'a [f32],
    pub(super) k: &'a [f32],
    pub(super) v: &'a [f32],
    pub(super) data: MoleculeData<'a>,
}

/// [`molecule_forward`] compiled for AVX2 + FMA where the CPU has them (the crate is built
/// for baseline x86-64), else as is.
pub(super) fn dispatch_forward(m: &Molecule, bias: Option<&[f32]>, out: &mut [f32], a: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if avx2_fma() {
        // SAFETY: the CPU has the features the function is compiled for.
        unsafe { forward_avx2(m, bias, out, a) };
        return;
    }
    molecule_forward::<false>(m, bias, out, a);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn forward_avx2(m: &Molecule, bias: Option<&[f32]>, out: &mut [f32], a: &mut [f32]) {
    molecule_forward::<true>(m, bias, out, a);
}

/// The mixed, dropped weights of row `i` of head `h` from its softmax row `a`, in the
/// columns `cols` (`p` and `a` indexed by column).
#[inline(always)]
fn mixed_row(m: &Molecule, h: usize, i: usize, cols: Range<usize>, a: &[f32], p: &mut [f32]) {
    let n = m.s.n;
    let (a, p) = (&a[cols.clone()], &mut p[cols.clone()]);
    for (pj, &aj) in p.iter_mut().zip(a) {
        *pj = m.s.weight * aj;
    }
    if let Some(mix) = m.data.p_mix {
        for (pj, &x) in p.iter_mut().zip(&mix[i * n + cols.start..i * n + cols.end]) {
            *pj += x;
        }
    }
    if let Some(keep) = m.data.keep {
        let row = (h * n + i) * n;
        for (pj, &x) in p.iter_mut().zip(&keep[row + cols.start..row + cols.end]) {
            *pj *= x;
        }
    }
}

/// For each query row, the columns from its first to its last unmasked key: outside them
/// every weight is exactly 0 (a masked logit's term in the softmax underflows to 0, its
/// gradient is 0), so the loops skip them (a causal pattern halves the work, key padding
/// drops the padded columns). All columns where `p_mix` is given (it may weight masked
/// keys), where there is no mask, and for a row with every key masked (uniform weights).
fn visible_columns(m: &Molecule) -> Vec<Range<usize>> {
    let n = m.s.n;
    match m.data.mask {
        Some(mask) if m.data.p_mix.is_none() => (0..n)
            .map(|i| {
                let row = &mask[i * n..(i + 1) * n];
                match (row.iter().position(|&x| !x), row.iter().rposition(|&x| !x)) {
                    (Some(lo), Some(last)) => lo..last + 1,
                    _ => 0..n,
                }
            })
            .collect(),
        _ => vec![0..n; n],
    }
}

/// The columns `cols` widened to whole vectors of 8 within `0..np` (`np` a multiple of 8):
/// the range a transposed-row product computes.
#[inline(always)]
fn padded(cols: &Range<usize>, np: usize) -> Range<usize> {
    cols.start / 8 * 8..cols.end.next_multiple_of(8).min(np)
}

/// `K_h` (or `V_h`) transposed: `[d_k, N]` with rows `np` apart (`N` rounded up to a
/// multiple of 8, the padding left 0), so that a row of scores is a sum of whole vectors
/// (a scalar tail column would cost as much as 32 vector columns).
#[inline(always)]
fn transposed_head(x: &[f32], s: Shape, h: usize, np: usize, t: &mut [f32]) {
    let dk = s.d / s.h;
    for j in 0..s.n {
        for c in 0..dk {
            t[c * np + j] = x[j * s.d + h * dk + c];
        }
    }
}

#[inline(always)]
fn molecule_forward<const AVX: bool>(
    m: &Molecule,
    bias: Option<&[f32]>,
    out: &mut [f32],
    a: &mut [f32],
) {
    let s = m.s;
    let (n, d, dk) = (s.n, s.d, s.d / s.h);
    let np = n.next_multiple_of(8);
    let mut kt = vec![0.0f32; dk * np];
    let mut scores_padded = vec![0.0f32; np];
    let mut p = vec![0.0f32; n];
    let mut q_scaled = vec![0.0f32; dk];
    let visible = visible_columns(m);
    for h in 0..s.h {
        transposed_head(m.k, s, h, np, &mut kt);
        for (i, cols) in visible.iter().enumerate() {
            for (qs, &qc) in q_scaled.iter_mut().zip(&m.q[i * d + h * dk..]) {
                *qs = qc * s.scale;
            }
            let wide = padded(cols, np);
            combine_rows::<AVX>(
                &mut scores_padded[wide.clone()],
                &q_scaled,
                &kt,
                np,
                wide.start,
            );
            let scores = &mut scores_padded[cols.clone()];
            let row = (h * n + i) * n;
            if let Some(bias) = bias {
                for (sj, &x) in scores
                    .iter_mut()
                    .zip(&bias[row + cols.start..row + cols.end])
                {
                    *sj += x;
                }
            }
            if let Some(mask) = m.data.mask {
                let mask = &mask[i * n + cols.start..i * n + cols.end];
                for (sj, &masked) in scores.iter_mut().zip(mask) {
                    if masked {
                        *sj = MASKED_LOGIT;
                    }
                }
            }
            let a = &mut a[row..row + n];
            a[..cols.start].fill(0.0);
            a[cols.end..].fill(0.0);
            softmax_row::<AVX>(scores, &mut a[cols.clone()]);
            mixed_row(m, h, i, cols.clone(), a, &mut p);
            let o = &mut out[i * d + h * dk..i * d + (h + 1) * dk];
            combine_rows::<AVX>(o, &p[cols.clone()], m.v, d, cols.start * d + h * dk);
        }
    }
}

/// `a = softmax(s)` ([`exp_in_place`]: terms far below the row's maximum, as at masked
/// logits, are exactly 0).
#[inline(always)]
fn softmax_row<const AVX: bool>(s: &[f32], a: &mut [f32]) {
    let max = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for (aj, &sj) in a.iter_mut().zip(s) {
        *aj = sj - max;
    }
    exp_in_place::<AVX>(a);
    let inv = 1.0 / a.iter().sum::<f32>();
    for aj in a.iter_mut() {
        *aj *= inv;
    }
}

/// The gradients of one molecule: `dq`, `dk`, `dv` (`[N, d]`) and `d attn_bias`
/// (`[H, N, N]`, empty without a bias).
pub(super) struct MoleculeGrads {
    pub(super) dq: Vec<f32>,
    pub(super) dk: Vec<f32>,
    pub(super) dv: Vec<f32>,
    pub(super) dbias: Vec<f32>,
}

/// [`molecule_backward`] compiled for AVX2 + FMA where the CPU has them, else as is.
pub(super) fn dispatch_backward(
    m: &Molecule,
    a: &[f32],
    dout: &[f32],
    with_bias: bool,
) -> MoleculeGrads {
    #[cfg(target_arch = "x86_64")]
    if avx2_fma() {
        // SAFETY: the CPU has the features the function is compiled for.
        return unsafe { backward_avx2(m, a, dout, with_bias) };
    }
    molecule_backward::<false>(m, a, dout, with_bias)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn backward_avx2(m: &Molecule, a: &[f32], dout: &[f32], with_bias: bool) -> MoleculeGrads {
    molecule_backward::<true>(m, a, dout, with_bias)
}

#[inline(always)]
fn molecule_backward<const AVX: bool>(
    m: &Molecule,
    a: &[f32],
    dout: &[f32],
    with_bias: bool,
) -> MoleculeGrads {
    let s = m.s;
    let (n, d, dk) = (s.n, s.d, s.d / s.h);
    let mut g = MoleculeGrads {
        dq: vec![0.0; n * d],
        dk: vec![0.0; n * d],
        dv: vec![0.0; n * d],
        dbias: if with_bias {
            vec![0.0; s.h * n * n]
        } else {
            Vec::new()
        },
    };
    let np = n.next_multiple_of(8);
    let mut vt = vec![0.0f32; dk * np];
    let mut p = vec![0.0f32; n];
    let mut dp_padded = vec![0.0f32; np];
    let mut ds_scaled = vec![0.0f32; n];
    let visible = visible_columns(m);
    for h in 0..s.h {
        transposed_head(m.v, s, h, np, &mut vt);
        let cols = |r: usize| r * d + h * dk..r * d + (h + 1) * dk;
        for (i, keys) in visible.iter().enumerate() {
            let row = (h * n + i) * n;
            let a = &a[row..row + n];
            let dout_i = &dout[cols(i)];
            // dP = dO_i V_h^T, through dropout's mask.
            let wide = padded(keys, np);
            combine_rows::<AVX>(&mut dp_padded[wide.clone()], dout_i, &vt, np, wide.start);
            let dp = &mut dp_padded[keys.clone()];
            if let Some(keep) = m.data.keep {
                for (dpj, &x) in dp.iter_mut().zip(&keep[row + keys.start..row + keys.end]) {
                    *dpj *= x;
                }
            }
            // dV_h += P_i^T dO_i.
            mixed_row(m, h, i, keys.clone(), a, &mut p);
            for j in keys.clone() {
                axpy::<AVX>(&mut g.dv[cols(j)], p[j], dout_i);
            }
            // dS = A * (w dP - sum(A * w dP)), 0 where masked (the mask's fill has no
            // gradient); dp becomes dS.
            let a = &a[keys.clone()];
            let dot: f32 = a.iter().zip(dp.iter()).map(|(&aj, &x)| aj * x).sum();
            for (dpj, &aj) in dp.iter_mut().zip(a) {
                *dpj = s.weight * aj * (*dpj - dot);
            }
            if let Some(mask) = m.data.mask {
                let mask = &mask[i * n + keys.start..i * n + keys.end];
                for (dpj, &masked) in dp.iter_mut().zip(mask) {
                    if masked {
                        *dpj = 0.0;
                    }
                }
            }
            if with_bias {
                g.dbias[row + keys.start..row + keys.end].copy_from_slice(dp);
            }
            // dQ_i = scale dS K_h, dK_h += scale dS^T Q_i.
            let q_i = &m.q[cols(i)];
            let ds_scaled = &mut ds_scaled[keys.clone()];
            for (w, &dsj) in ds_scaled.iter_mut().zip(dp.iter()) {
                *w = dsj * s.scale;
            }
            combine_rows::<AVX>(
                &mut g.dq[cols(i)],
                ds_scaled,
                m.k,
                d,
                keys.start * d + h * dk,
            );
            for (j, &w) in keys.clone().zip(ds_scaled.iter()) {
                if w != 0.0 {
                    axpy::<AVX>(&mut g.dk[cols(j)], w, q_i);
                }
            }
        }
    }
    g
}
