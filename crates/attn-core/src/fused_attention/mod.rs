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

use molecule::{Molecule, MoleculeGrads, dispatch_backward, dispatch_forward};

mod molecule;
#[cfg(test)]
mod tests;

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
    let data = Data {
        shape,
        mask,
        p_mix,
        keep,
    };
    run(q, k, v, inputs.attn_bias, data)
}

/// [`fused_attention`] after its no-gradient inputs are read into `data`.
fn run(
    q: Tensor<3>,
    k: Tensor<3>,
    v: Tensor<3>,
    attn_bias: Option<Tensor<4>>,
    data: Data,
) -> Option<Tensor<3>> {
    let shape = data.shape;
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
