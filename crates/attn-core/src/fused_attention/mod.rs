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
//!
//! [`fused_attention_packed`] runs the same loops on a batch without padding rows:
//! `[1, R, d_model]` with each molecule's `n_b` atoms in consecutive rows, `A` then
//! `H sum(n_b^2)` floats. Each molecule is a `Span` (first row, atom count, first pair
//! entry); a padded batch is `B` spans of `N`.

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
use packed::uniform_spans;
pub use packed::{fused_attention_packed, fused_attention_packed_biased};
pub use qkv::fused_attention_qkv;

mod molecule;
mod packed;
mod qkv;
#[cfg(test)]
#[allow(clippy::disallowed_methods)] // Burn's own ops are the reference
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
    let data = prepare(cfg, [b, n, d], &q.device(), &inputs)?;
    run(q, k, v, inputs.attn_bias, data)
}

/// The sizes and the no-gradient inputs of a fused call on `[B, N, d_model]` rows read
/// into [`Data`] (`None` when `p_mix` is not on flex).
fn prepare(
    cfg: FusedAttention,
    [b, n, d]: [usize; 3],
    device: &Device,
    inputs: &FusedAttentionInputs<'_>,
) -> Option<Data> {
    let shape = Shape {
        n,
        d,
        h: cfg.num_heads,
        scale: cfg.scale,
        weight: cfg.softmax_weight,
    };
    let mask = inputs.attn_mask.clone().map(|m| {
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
    let p_mix = match inputs.p_mix.clone() {
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
        .and_then(|layer| crate::dropout::flex_keep_mask(layer, device, b * shape.h * n * n))
        .map(Arc::new);
    Some(Data {
        shape,
        spans: Arc::new(uniform_spans(b, n)),
        out_dims: [b, n, d],
        bias_dims: [b, shape.h, n, n],
        mask,
        p_mix,
        keep,
    })
}

/// [`fused_attention`] after its no-gradient inputs are read into `data`.
fn run(
    q: Tensor<3>,
    k: Tensor<3>,
    v: Tensor<3>,
    attn_bias: Option<Tensor<4>>,
    data: Data,
) -> Option<Tensor<3>> {
    if let Some(bias) = &attn_bias {
        assert_eq!(
            bias.dims(),
            data.bias_dims,
            "fused_attention: attn_bias must be [B, H, N, N] ([1, 1, 1, H sum(n_b^2)] packed)"
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
    n: usize,
    d: usize,
    h: usize,
    scale: f32,
    weight: f32,
}

/// Where one molecule lies: its first row of Q, K, V and the output, its atom count,
/// and the first of its `n^2` entries in the pair arrays (mask, `p_mix`; times `H` in the
/// per-head arrays: softmax, dropout, bias). Spans follow each other without gaps.
#[derive(Debug, Clone, Copy)]
struct Span {
    row: usize,
    n: usize,
    pair: usize,
}

/// The inputs that get no gradient.
#[derive(Debug, Clone)]
struct Data {
    /// Sizes and scalars; `n` is the padded size (the largest molecule when packed).
    shape: Shape,
    spans: Arc<Vec<Span>>,
    /// The output's dimensions: `[B, N, d]` padded, `[1, R, d]` packed.
    out_dims: [usize; 3],
    /// The bias's dimensions (and its gradient's): `[B, H, N, N]` padded,
    /// `[1, 1, 1, H sum(n_b^2)]` packed (each molecule's `[H, n_b, n_b]` in turn).
    bias_dims: [usize; 4],
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
    /// Molecule `span`'s shape (its own `n`) and slices of the no-gradient inputs.
    fn molecule(&self, span: Span) -> (Shape, MoleculeData<'_>) {
        let (n, h) = (span.n, self.shape.h);
        let pairs = span.pair..span.pair + n * n;
        let data = MoleculeData {
            mask: self.mask.as_ref().map(|m| &m[pairs.clone()]),
            p_mix: self.p_mix.as_ref().map(|p| &values(p)[pairs]),
            keep: self
                .keep
                .as_ref()
                .map(|m| &m[h * span.pair..h * (span.pair + n * n)]),
        };
        (Shape { n, ..self.shape }, data)
    }

    /// Rows of the output (all spans).
    fn rows(&self) -> usize {
        self.spans.last().map_or(0, |s| s.row + s.n)
    }

    /// Pair entries per head (all spans).
    fn pairs(&self) -> usize {
        self.spans.last().map_or(0, |s| s.pair + s.n * s.n)
    }
}

/// The forward pass: the output (`out_dims`) and the softmax `A` (`H n^2` per molecule).
fn forward(
    q: &FlexTensor,
    k: &FlexTensor,
    v: &FlexTensor,
    bias: Option<&FlexTensor>,
    data: &Data,
) -> (FlexTensor, Vec<f32>) {
    let (d, h) = (data.shape.d, data.shape.h);
    let (q, k, v) = (values(q), values(k), values(v));
    let bias = bias.map(values);
    let mut out = vec![0.0f32; data.rows() * d];
    let mut a = vec![0.0f32; h * data.pairs()];
    // One (output rows, softmax) pair of disjoint slices per molecule.
    let mut pieces = Vec::with_capacity(data.spans.len());
    let (mut out_rest, mut a_rest) = (&mut out[..], &mut a[..]);
    for &span in data.spans.iter() {
        let (o, rest) = std::mem::take(&mut out_rest).split_at_mut(span.n * d);
        out_rest = rest;
        let (w, rest) = std::mem::take(&mut a_rest).split_at_mut(h * span.n * span.n);
        a_rest = rest;
        pieces.push((span, o, w));
    }
    pieces.into_par_iter().for_each(|(span, out, a)| {
        let rows = span.row * d..(span.row + span.n) * d;
        let hnn = h * span.n * span.n;
        let bias = bias.map(|x| &x[h * span.pair..h * span.pair + hnn]);
        let (s, molecule_data) = data.molecule(span);
        let molecule = Molecule {
            s,
            q: &q[rows.clone()],
            k: &k[rows.clone()],
            v: &v[rows],
            data: molecule_data,
        };
        dispatch_forward(&molecule, bias, out, a);
    });
    (tensor_from(out, &data.out_dims), a)
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

/// `dq`, `dk`, `dv` (`out_dims`) and `d attn_bias` (`bias_dims`, when `with_bias`).
fn backward(
    state: &AttentionState,
    dout: FlexTensor,
    with_bias: bool,
) -> (FlexTensor, FlexTensor, FlexTensor, Option<FlexTensor>) {
    let data = &state.data;
    let per_molecule = molecule_grads(state, dout, with_bias);
    let gather = |f: fn(&MoleculeGrads) -> &Vec<f32>| -> Vec<f32> {
        let mut all = Vec::with_capacity(per_molecule.iter().map(|g| f(g).len()).sum());
        for g in &per_molecule {
            all.extend_from_slice(f(g));
        }
        all
    };
    let dbias = with_bias.then(|| tensor_from(gather(|g| &g.dbias), &data.bias_dims));
    (
        tensor_from(gather(|g| &g.dq), &data.out_dims),
        tensor_from(gather(|g| &g.dk), &data.out_dims),
        tensor_from(gather(|g| &g.dv), &data.out_dims),
        dbias,
    )
}

/// The gradients of each molecule (span order) for the output gradient `dout`.
fn molecule_grads(state: &AttentionState, dout: FlexTensor, with_bias: bool) -> Vec<MoleculeGrads> {
    let data = &state.data;
    let (d, h) = (data.shape.d, data.shape.h);
    let dout = contiguous(dout);
    let dout = values(&dout);
    let (q, k, v) = (values(&state.q), values(&state.k), values(&state.v));
    data.spans
        .par_iter()
        .map(|&span| {
            let rows = span.row * d..(span.row + span.n) * d;
            let a = h * span.pair..h * (span.pair + span.n * span.n);
            let (s, molecule_data) = data.molecule(span);
            let molecule = Molecule {
                s,
                q: &q[rows.clone()],
                k: &k[rows.clone()],
                v: &v[rows.clone()],
                data: molecule_data,
            };
            dispatch_backward(&molecule, &state.a[a], &dout[rows], with_bias)
        })
        .collect()
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
