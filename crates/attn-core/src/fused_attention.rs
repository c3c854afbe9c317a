//! The attention core (scores, mask, softmax, mixing, dropout, values) as one op each way on
//! the CPU backend, for MAT's molecule attention and Transformer-M's biased attention.
//!
//! Why by hand: at molecule sizes (N ~ 30-60 atoms, d_k 16) the core is a chain of small
//! ops on `[B, H, N, N]` tensors: two batched products of one CBLAS call per matrix, a
//! scale, a mask, a softmax, a weighted sum with the distance and adjacency terms (MAT) or a
//! bias add (Transformer-M), head split and merge copies, and under autodiff as many
//! backward nodes, each a pass over memory on one thread. Here, on flex, one pass per
//! molecule does all of it (molecules on rayon's threads), forward and backward:
//!
//! ```text
//! S = scale * Q_h K_h^T (+ attn_bias_h),  S[i, j] = -1e12 where attn_mask[i, j]
//! A = softmax_j(S)
//! P = softmax_weight * A (+ p_mix)                       p_mix shared by the heads (MAT)
//! O_h = (P * keep) V_h,  heads concatenated              keep: dropout's scaled mask
//!
//! dP = (dO_h V_h^T) * keep,  dV_h = (P * keep)^T dO_h
//! dS = A * (w dP - sum_j(A * w dP)),  0 where masked     w = softmax_weight
//! dQ_h = scale dS K_h,  dK_h = scale dS^T Q_h,  d attn_bias_h = dS
//! ```
//!
//! Q, K, V and the output stay `[B, N, d_model]` with head `h` in columns
//! `h d_k .. (h + 1) d_k`, so no head split or merge is copied. `A` is kept for the
//! backward (`B H N N` floats); `P` is recomputed from it. The same values as the unfused
//! ops up to f32 summation order.

use std::sync::Arc;

use burn::backend::autodiff::NodeId;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::NoCheckpointing;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::{Autodiff, Flex};
use burn::nn::Dropout;
use burn::prelude::*;
use burn_flex::FlexTensor;
use rayon::prelude::*;

use crate::flex_data::{AdTensor, contiguous, is_tracked, on_flex_f32, tensor_from, values};
use crate::mask::MASKED_LOGIT;
use crate::simd::{axpy, combine_rows, exp_in_place};

/// The sizes and scalars of one fused attention call.
#[derive(Debug, Clone, Copy)]
pub struct FusedAttention {
    /// H; `d_k = d_model / H`.
    pub num_heads: usize,
    /// Multiplies `Q K^T` (usually `1 / sqrt(d_k)`).
    pub scale: f32,
    /// Weight of the softmax term (MAT's lambda_a; 1 for plain attention).
    pub softmax_weight: f32,
}

/// The optional inputs of [`fused_attention`].
#[derive(Debug, Clone, Default)]
pub struct FusedAttentionInputs<'a> {
    /// `[B, H, N, N]`, added to the scaled scores (trainable: it gets a gradient).
    pub attn_bias: Option<Tensor<4>>,
    /// `[B, N, N]`, `true` = the key is masked for that query (logit -1e12).
    pub attn_mask: Option<Tensor<3, Bool>>,
    /// `[B, N, N]`, added to the weighted softmax, the same for every head (MAT's
    /// distance and adjacency terms). Must not need a gradient (it is treated as data).
    pub p_mix: Option<Tensor<3>>,
    /// Dropout on the mixed weights `P` (Burn's semantics: active only while training on
    /// an autodiff device).
    pub dropout: Option<&'a Dropout>,
}

/// The attention output `[B, N, d_model]` (heads concatenated, before any output
/// projection) for `q`, `k`, `v` of `[B, N, d_model]` (see the module documentation), or
/// `None` when the fused kernel does not apply: not f32 on flex, or `p_mix` tracked by
/// autodiff. The caller then runs its unfused ops (the same function). On flex's autodiff
/// device one graph node with gradients for `q`, `k`, `v` and `attn_bias`.
///
/// # Panics
/// If the shapes disagree (`q`, `k`, `v` not all `[B, N, d_model]`, `d_model` not a
/// multiple of `num_heads`, the optional inputs not the documented shapes).
pub fn fused_attention(
    cfg: FusedAttention,
    q: Tensor<3>,
    k: Tensor<3>,
    v: Tensor<3>,
    inputs: FusedAttentionInputs<'_>,
) -> Option<Tensor<3>> {
    if !on_flex_f32(&q) || inputs.p_mix.as_ref().is_some_and(is_tracked) {
        return None;
    }
    let [b, n, d] = q.dims();
    assert_eq!(
        k.dims(),
        [b, n, d],
        "fused_attention: k must be [B, N, d_model]"
    );
    assert_eq!(
        v.dims(),
        [b, n, d],
        "fused_attention: v must be [B, N, d_model]"
    );
    assert!(
        cfg.num_heads > 0 && d % cfg.num_heads == 0,
        "fused_attention: d_model must be a multiple of num_heads"
    );
    let shape = Shape {
        b,
        n,
        d,
        h: cfg.num_heads,
        scale: cfg.scale,
        weight: cfg.softmax_weight,
    };
    let device = q.device();
    let mask = inputs.attn_mask.map(|m| {
        assert_eq!(
            m.dims(),
            [b, n, n],
            "fused_attention: attn_mask must be [B, N, N]"
        );
        Arc::new(
            m.into_data()
                .convert::<bool>()
                .try_into_vec::<bool>()
                .expect("a bool mask"),
        )
    });
    let p_mix = match inputs.p_mix {
        Some(p) => {
            assert_eq!(
                p.dims(),
                [b, n, n],
                "fused_attention: p_mix must be [B, N, N]"
            );
            let p = if p.is_autodiff() { p.inner() } else { p };
            Some(contiguous(p.try_into_primitive::<Flex>().ok()?))
        }
        None => None,
    };
    let keep = inputs
        .dropout
        .and_then(|layer| crate::dropout::flex_keep_mask(layer, &device, b * shape.h * n * n))
        .map(Arc::new);
    run(q, k, v, inputs.attn_bias, shape, mask, p_mix, keep)
}

/// [`fused_attention`] after its inputs are read: `keep` is dropout's mask (scale folded
/// in, `[B, H, N, N]`).
#[allow(clippy::too_many_arguments)]
fn run(
    q: Tensor<3>,
    k: Tensor<3>,
    v: Tensor<3>,
    attn_bias: Option<Tensor<4>>,
    shape: Shape,
    mask: Option<Arc<Vec<bool>>>,
    p_mix: Option<FlexTensor>,
    keep: Option<Arc<Vec<f32>>>,
) -> Option<Tensor<3>> {
    let Shape { b, n, .. } = shape;
    if let Some(bias) = &attn_bias {
        assert_eq!(
            bias.dims(),
            [b, shape.h, n, n],
            "fused_attention: attn_bias must be [B, H, N, N]"
        );
    }
    if q.is_autodiff() {
        let prim = |t: Tensor<3>| t.try_into_primitive::<Autodiff<Flex>>().ok();
        let (q, k, v) = (prim(q)?, prim(k)?, prim(v)?);
        let bias = match attn_bias {
            Some(bias) => Some(bias.try_into_primitive::<Autodiff<Flex>>().ok()?),
            None => None,
        };
        let data = Data {
            shape,
            mask,
            p_mix,
            keep,
        };
        return Some(Tensor::from_primitive::<Autodiff<Flex>>(tracked(
            q, k, v, bias, data,
        )));
    }
    let prim = |t: Tensor<3>| t.try_into_primitive::<Flex>().ok().map(contiguous);
    let (q, k, v) = (prim(q)?, prim(k)?, prim(v)?);
    let bias = match attn_bias {
        Some(bias) => Some(contiguous(bias.try_into_primitive::<Flex>().ok()?)),
        None => None,
    };
    let data = Data {
        shape,
        mask,
        p_mix,
        keep,
    };
    let (out, _) = forward(&q, &k, &v, bias.as_ref(), &data);
    Some(Tensor::from_primitive::<Flex>(out))
}

/// Sizes and scalars.
#[derive(Debug, Clone, Copy)]
struct Shape {
    b: usize,
    n: usize,
    d: usize,
    h: usize,
    scale: f32,
    weight: f32,
}

/// The inputs that get no gradient.
#[derive(Debug, Clone)]
struct Data {
    shape: Shape,
    mask: Option<Arc<Vec<bool>>>,
    p_mix: Option<FlexTensor>,
    keep: Option<Arc<Vec<f32>>>,
}

/// One molecule's slices of the no-gradient inputs.
#[derive(Clone, Copy)]
struct MoleculeData<'a> {
    mask: Option<&'a [bool]>,
    p_mix: Option<&'a [f32]>,
    keep: Option<&'a [f32]>,
}

impl Data {
    fn molecule(&self, bi: usize) -> MoleculeData<'_> {
        let Shape { n, h, .. } = self.shape;
        MoleculeData {
            mask: self.mask.as_ref().map(|m| &m[bi * n * n..(bi + 1) * n * n]),
            p_mix: self
                .p_mix
                .as_ref()
                .map(|p| &values(p)[bi * n * n..(bi + 1) * n * n]),
            keep: self
                .keep
                .as_ref()
                .map(|m| &m[bi * h * n * n..(bi + 1) * h * n * n]),
        }
    }
}

/// The forward pass: the output `[B, N, d]` and the softmax `A` (`[B, H, N, N]`).
fn forward(
    q: &FlexTensor,
    k: &FlexTensor,
    v: &FlexTensor,
    bias: Option<&FlexTensor>,
    data: &Data,
) -> (FlexTensor, Vec<f32>) {
    let s = data.shape;
    let (q, k, v) = (values(q), values(k), values(v));
    let bias = bias.map(values);
    let (nd, hnn) = (s.n * s.d, s.h * s.n * s.n);
    let mut out = vec![0.0f32; s.b * nd];
    let mut a = vec![0.0f32; s.b * hnn];
    out.par_chunks_mut(nd.max(1))
        .zip(a.par_chunks_mut(hnn.max(1)))
        .enumerate()
        .for_each(|(bi, (out, a))| {
            let rows = bi * nd..(bi + 1) * nd;
            let bias = bias.map(|x| &x[bi * hnn..(bi + 1) * hnn]);
            let molecule = Molecule {
                s,
                q: &q[rows.clone()],
                k: &k[rows.clone()],
                v: &v[rows],
                data: data.molecule(bi),
            };
            dispatch_forward(&molecule, bias, out, a);
        });
    (tensor_from(out, &[s.b, s.n, s.d]), a)
}

/// One molecule's Q, K, V (`[N, d]`) and no-gradient inputs.
struct Molecule<'a> {
    s: Shape,
    q: &'a [f32],
    k: &'a [f32],
    v: &'a [f32],
    data: MoleculeData<'a>,
}

/// [`molecule_forward`] compiled for AVX2 + FMA where the CPU has them (the crate is built
/// for baseline x86-64), else as is.
fn dispatch_forward(m: &Molecule, bias: Option<&[f32]>, out: &mut [f32], a: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
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
struct MoleculeGrads {
    dq: Vec<f32>,
    dk: Vec<f32>,
    dv: Vec<f32>,
    dbias: Vec<f32>,
}

fn dispatch_backward(m: &Molecule, a: &[f32], dout: &[f32], with_bias: bool) -> MoleculeGrads {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
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

/// The saved forward of one fused call.
#[derive(Debug, Clone)]
struct AttentionState {
    q: FlexTensor,
    k: FlexTensor,
    v: FlexTensor,
    a: Arc<Vec<f32>>,
    data: Data,
}

/// `dq`, `dk`, `dv` (`[B, N, d]`) and `d attn_bias` (`[B, H, N, N]`, when `with_bias`).
fn backward(
    state: &AttentionState,
    dout: FlexTensor,
    with_bias: bool,
) -> (FlexTensor, FlexTensor, FlexTensor, Option<FlexTensor>) {
    let s = state.data.shape;
    let dout = contiguous(dout);
    let dout = values(&dout);
    let (q, k, v) = (values(&state.q), values(&state.k), values(&state.v));
    let (nd, hnn) = (s.n * s.d, s.h * s.n * s.n);
    let per_molecule: Vec<MoleculeGrads> = (0..s.b)
        .into_par_iter()
        .map(|bi| {
            let rows = bi * nd..(bi + 1) * nd;
            let molecule = Molecule {
                s,
                q: &q[rows.clone()],
                k: &k[rows.clone()],
                v: &v[rows.clone()],
                data: state.data.molecule(bi),
            };
            dispatch_backward(
                &molecule,
                &state.a[bi * hnn..(bi + 1) * hnn],
                &dout[rows],
                with_bias,
            )
        })
        .collect();
    let dims = [s.b, s.n, s.d];
    let gather = |f: fn(&MoleculeGrads) -> &Vec<f32>| -> Vec<f32> {
        let mut all = Vec::with_capacity(per_molecule.iter().map(|g| f(g).len()).sum());
        for g in &per_molecule {
            all.extend_from_slice(f(g));
        }
        all
    };
    let dbias = with_bias.then(|| tensor_from(gather(|g| &g.dbias), &[s.b, s.h, s.n, s.n]));
    (
        tensor_from(gather(|g| &g.dq), &dims),
        tensor_from(gather(|g| &g.dk), &dims),
        tensor_from(gather(|g| &g.dv), &dims),
        dbias,
    )
}

/// The node without a bias (parents `q`, `k`, `v`).
#[derive(Debug)]
struct AttentionBackward;

/// The node with a bias (parents `q`, `k`, `v`, `attn_bias`).
#[derive(Debug)]
struct BiasedAttentionBackward;

/// Registers `grad` for `parent` when it is tracked.
fn register(grads: &mut Gradients, parent: Option<NodeId>, grad: FlexTensor) {
    if let Some(id) = parent {
        grads.register::<Flex>(id, grad);
    }
}

impl Backward<Flex, 3> for AttentionBackward {
    type State = AttentionState;

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let dout = grads.consume::<Flex>(&ops.node);
        let (dq, dk, dv, _) = backward(&ops.state, dout, false);
        let [pq, pk, pv] = ops.parents;
        register(grads, pq.map(|p| p.id), dq);
        register(grads, pk.map(|p| p.id), dk);
        register(grads, pv.map(|p| p.id), dv);
    }
}

impl Backward<Flex, 4> for BiasedAttentionBackward {
    type State = AttentionState;

    fn backward(self, ops: Ops<Self::State, 4>, grads: &mut Gradients, _: &mut Checkpointer) {
        let dout = grads.consume::<Flex>(&ops.node);
        let (dq, dk, dv, dbias) = backward(&ops.state, dout, true);
        let [pq, pk, pv, pbias] = ops.parents;
        register(grads, pq.map(|p| p.id), dq);
        register(grads, pk.map(|p| p.id), dk);
        register(grads, pv.map(|p| p.id), dv);
        register(
            grads,
            pbias.map(|p| p.id),
            dbias.expect("computed with the bias"),
        );
    }
}

/// The fused forward as one autodiff node.
fn tracked(q: AdTensor, k: AdTensor, v: AdTensor, bias: Option<AdTensor>, data: Data) -> AdTensor {
    let (nq, nk, nv) = (q.node(), k.node(), v.node());
    let (q, k, v) = (
        contiguous(q.into_primitive()),
        contiguous(k.into_primitive()),
        contiguous(v.into_primitive()),
    );
    let state =
        |a: Vec<f32>, q: FlexTensor, k: FlexTensor, v: FlexTensor, data: Data| AttentionState {
            q,
            k,
            v,
            a: Arc::new(a),
            data,
        };
    match bias {
        None => {
            let prep = AttentionBackward
                .prepare::<NoCheckpointing>([nq, nk, nv])
                .compute_bound()
                .stateful();
            let (out, a) = forward(&q, &k, &v, None, &data);
            match prep {
                OpsKind::Tracked(prep) => prep.finish(state(a, q, k, v, data), out),
                OpsKind::UnTracked(prep) => prep.finish(out),
            }
        }
        Some(bias) => {
            let prep = BiasedAttentionBackward
                .prepare::<NoCheckpointing>([nq, nk, nv, bias.node()])
                .compute_bound()
                .stateful();
            let bias = contiguous(bias.into_primitive());
            let (out, a) = forward(&q, &k, &v, Some(&bias), &data);
            match prep {
                OpsKind::Tracked(prep) => prep.finish(state(a, q, k, v, data), out),
                OpsKind::UnTracked(prep) => prep.finish(out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Distribution, Tolerance};

    const B: usize = 3;
    const N: usize = 6;
    const H: usize = 2;
    const D: usize = 8;

    /// The unfused ops with Burn alone (the function the kernel replaces).
    #[allow(clippy::too_many_arguments)]
    fn unfused(
        cfg: FusedAttention,
        q: Tensor<3>,
        k: Tensor<3>,
        v: Tensor<3>,
        bias: Tensor<4>,
        mask: Tensor<3, Bool>,
        p_mix: Tensor<3>,
        keep: Tensor<4>,
    ) -> Tensor<3> {
        let heads = |t: Tensor<3>| t.reshape([B, N, H, D / H]).swap_dims(1, 2);
        let scores = heads(q)
            .matmul(heads(k).swap_dims(2, 3))
            .mul_scalar(cfg.scale)
            + bias;
        let scores = scores.mask_fill(mask.unsqueeze_dim::<4>(1).expand([B, H, N, N]), -1e12);
        let a = burn::tensor::activation::softmax(scores, 3);
        let p = a.mul_scalar(cfg.softmax_weight) + p_mix.unsqueeze_dim::<4>(1);
        (p * keep)
            .matmul(heads(v))
            .swap_dims(1, 2)
            .reshape([B, N, D])
    }

    /// Values and the gradients of q, k, v and attn_bias equal the unfused ops', with a
    /// key mask, one query row masked entirely (uniform weights), a shared p_mix and a
    /// dropout mask; and the plain device gives the same values. A transposed head, a
    /// missing scale or a wrong softmax term is off by O(1).
    #[test]
    fn fused_core_matches_the_unfused_ops() {
        let dev = Device::flex().autodiff();
        let cfg = FusedAttention {
            num_heads: H,
            scale: 0.5,
            softmax_weight: 0.3,
        };
        let rnd =
            |dims: [usize; 3]| Tensor::<3>::random(dims, Distribution::Normal(0.0, 1.0), &dev);
        let (q, k, v) = (rnd([B, N, D]), rnd([B, N, D]), rnd([B, N, D]));
        let bias = Tensor::<4>::random([B, H, N, N], Distribution::Normal(0.0, 1.0), &dev);
        let p_mix = Tensor::<3>::random([B, N, N], Distribution::Default, &dev);
        // Keys 4 and 5 of molecule 1 masked; molecule 2 row 0 masked entirely.
        let mask: Vec<bool> = (0..B * N * N)
            .map(|e| {
                let (bi, i, j) = (e / (N * N), e / N % N, e % N);
                (bi == 1 && j >= 4) || (bi == 2 && i == 0)
            })
            .collect();
        let keep: Vec<f32> = (0..B * H * N * N)
            .map(|e| if e % 7 == 3 { 0.0 } else { 1.25 })
            .collect();
        let mask_t = Tensor::<3, Bool>::from_data(TensorData::new(mask.clone(), [B, N, N]), &dev);
        let keep_t = Tensor::<4>::from_data(TensorData::new(keep.clone(), [B, H, N, N]), &dev);
        let g = rnd([B, N, D]);
        let shape = Shape {
            b: B,
            n: N,
            d: D,
            h: H,
            scale: cfg.scale,
            weight: cfg.softmax_weight,
        };
        let p_mix_flex = contiguous(p_mix.clone().inner().try_into_primitive::<Flex>().unwrap());
        let grads_of = |fused: bool| {
            let leaf = |t: &Tensor<3>| t.clone().detach().require_grad();
            let (q, k, v) = (leaf(&q), leaf(&k), leaf(&v));
            let bias = bias.clone().detach().require_grad();
            let out = if fused {
                run(
                    q.clone(),
                    k.clone(),
                    v.clone(),
                    Some(bias.clone()),
                    shape,
                    Some(Arc::new(mask.clone())),
                    Some(p_mix_flex.clone()),
                    Some(Arc::new(keep.clone())),
                )
                .expect("on flex")
            } else {
                unfused(
                    cfg,
                    q.clone(),
                    k.clone(),
                    v.clone(),
                    bias.clone(),
                    mask_t.clone(),
                    p_mix.clone(),
                    keep_t.clone(),
                )
            };
            let grads = (out.clone() * g.clone()).sum().backward();
            [
                out.inner().into_data(),
                q.grad(&grads).expect("dq").into_data(),
                k.grad(&grads).expect("dk").into_data(),
                v.grad(&grads).expect("dv").into_data(),
                bias.grad(&grads).expect("dbias").into_data(),
            ]
        };
        let (fused, reference) = (grads_of(true), grads_of(false));
        for (f, r) in fused.iter().zip(&reference) {
            f.assert_approx_eq::<f32>(r, Tolerance::rel_abs(1e-4, 1e-5));
        }
        // The plain device: the same values.
        let plain = run(
            q.clone().inner(),
            k.clone().inner(),
            v.clone().inner(),
            Some(bias.clone().inner()),
            shape,
            Some(Arc::new(mask)),
            Some(p_mix_flex),
            Some(Arc::new(keep)),
        )
        .expect("on flex");
        plain
            .into_data()
            .assert_approx_eq::<f32>(&reference[0], Tolerance::rel_abs(1e-4, 1e-5));
    }

    /// Through the public entry without bias, mask, mix or dropout it is plain softmax
    /// attention: checked on one head against a hand computation (two keys, equal scores
    /// give the mean of the values).
    #[test]
    fn plain_attention_averages_equal_keys() {
        let dev = Device::flex();
        let q = Tensor::<3>::from_floats([[[1.0, 0.0], [0.0, 0.0]]], &dev);
        let k = Tensor::<3>::from_floats([[[0.0, 1.0], [0.0, -1.0]]], &dev);
        let v = Tensor::<3>::from_floats([[[2.0, 4.0], [6.0, 8.0]]], &dev);
        let cfg = FusedAttention {
            num_heads: 1,
            scale: 1.0,
            softmax_weight: 1.0,
        };
        let out: Vec<f32> = fused_attention(cfg, q, k, v, FusedAttentionInputs::default())
            .expect("on flex")
            .into_data()
            .try_to_vec()
            .unwrap();
        assert_eq!(out, [4.0, 6.0, 4.0, 6.0]);
    }
}
