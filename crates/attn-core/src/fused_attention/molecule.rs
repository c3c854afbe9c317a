//! The per-molecule loops of [`super::fused_attention()`]: one molecule's forward (scores,
//! mask, softmax, mixing, values) and backward, compiled twice (AVX2 + FMA, and plain).

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

/// The mixed, dropped weights of row `i` of head `h` from its softmax row `a`.
#[inline(always)]
fn mixed_row(m: &Molecule, h: usize, i: usize, a: &[f32], p: &mut [f32]) {
    let n = m.s.n;
    for (pj, &aj) in p.iter_mut().zip(a) {
        *pj = m.s.weight * aj;
    }
    if let Some(mix) = m.data.p_mix {
        for (pj, &x) in p.iter_mut().zip(&mix[i * n..(i + 1) * n]) {
            *pj += x;
        }
    }
    if let Some(keep) = m.data.keep {
        let row = (h * n + i) * n;
        for (pj, &x) in p.iter_mut().zip(&keep[row..row + n]) {
            *pj *= x;
        }
    }
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
    for h in 0..s.h {
        transposed_head(m.k, s, h, np, &mut kt);
        for i in 0..n {
            for (qs, &qc) in q_scaled.iter_mut().zip(&m.q[i * d + h * dk..]) {
                *qs = qc * s.scale;
            }
            combine_rows::<AVX>(&mut scores_padded, &q_scaled, &kt, np, 0);
            let scores = &mut scores_padded[..n];
            let row = (h * n + i) * n;
            if let Some(bias) = bias {
                for (sj, &x) in scores.iter_mut().zip(&bias[row..row + n]) {
                    *sj += x;
                }
            }
            if let Some(mask) = m.data.mask {
                for (sj, &masked) in scores.iter_mut().zip(&mask[i * n..(i + 1) * n]) {
                    if masked {
                        *sj = MASKED_LOGIT;
                    }
                }
            }
            let a = &mut a[row..row + n];
            softmax_row::<AVX>(scores, a);
            mixed_row(m, h, i, a, &mut p);
            let o = &mut out[i * d + h * dk..i * d + (h + 1) * dk];
            combine_rows::<AVX>(o, &p, m.v, d, h * dk);
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
    for h in 0..s.h {
        transposed_head(m.v, s, h, np, &mut vt);
        let cols = |r: usize| r * d + h * dk..r * d + (h + 1) * dk;
        for i in 0..n {
            let row = (h * n + i) * n;
            let a = &a[row..row + n];
            let dout_i = &dout[cols(i)];
            // dP = dO_i V_h^T, through dropout's mask.
            combine_rows::<AVX>(&mut dp_padded, dout_i, &vt, np, 0);
            let dp = &mut dp_padded[..n];
            if let Some(keep) = m.data.keep {
                for (dpj, &x) in dp.iter_mut().zip(&keep[row..row + n]) {
                    *dpj *= x;
                }
            }
            // dV_h += P_i^T dO_i.
            mixed_row(m, h, i, a, &mut p);
            for (j, &pj) in p.iter().enumerate() {
                axpy::<AVX>(&mut g.dv[cols(j)], pj, dout_i);
            }
            // dS = A * (w dP - sum(A * w dP)), 0 where masked (the mask's fill has no
            // gradient); dp becomes dS.
            let dot: f32 = a.iter().zip(dp.iter()).map(|(&aj, &x)| aj * x).sum();
            for (dpj, &aj) in dp.iter_mut().zip(a) {
                *dpj = s.weight * aj * (*dpj - dot);
            }
            if let Some(mask) = m.data.mask {
                for (dpj, &masked) in dp.iter_mut().zip(&mask[i * n..(i + 1) * n]) {
                    if masked {
                        *dpj = 0.0;
                    }
                }
            }
            if with_bias {
                g.dbias[row..row + n].copy_from_slice(dp);
            }
            // dQ_i = scale dS K_h, dK_h += scale dS^T Q_i.
            let q_i = &m.q[cols(i)];
            for (w, &dsj) in ds_scaled.iter_mut().zip(dp.iter()) {
                *w = dsj * s.scale;
            }
            combine_rows::<AVX>(&mut g.dq[cols(i)], &ds_scaled, m.k, d, h * dk);
            for (j, &w) in ds_scaled.iter().enumerate() {
                if w != 0.0 {
                    axpy::<AVX>(&mut g.dk[cols(j)], w, q_i);
                }
            }
        }
    }
    g
}
