//! [`fused_attention_qkv`]: the fused attention core on a merged QKV projection, one
//! autodiff node with one parent.

use std::sync::Arc;

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::NoCheckpointing;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::{Autodiff, Flex};
use burn::prelude::*;
use burn_flex::FlexTensor;

use super::molecule::MoleculeGrads;
use super::{
    AttentionState, Data, FusedAttention, FusedAttentionInputs, forward, molecule_grads, prepare,
    register,
};
use crate::flex_data::{AdTensor, contiguous, is_tracked, on_flex_f32, tensor_from, values};

/// [`fused_attention`] without a bias on Q, K and V side by side in one tensor `qkv` of
/// `[B, N, 3 d_model]` (Q in columns `0..d_model`, K next, V last, as a merged QKV
/// projection writes them), the same values; `None` where [`fused_attention`] is. Under
/// autodiff one graph node whose one parent is `qkv`, so its gradient is written once as
/// `[B, N, 3 d_model]`. Why: with the three views `qkv.narrow(..)` as parents, the
/// backward scatters each view's gradient into a zero-filled `[B, N, 3 d_model]` tensor
/// and sums the three (5-6% of a SMILES generator training step, `perf`). Q, K and V are
/// still copied out of `qkv` for the kernel, as the views were.
///
/// # Panics
/// If the last dimension is not `3 d_model` with `d_model` a multiple of `num_heads`, or
/// the optional inputs are not the documented shapes (`attn_bias` must be `None`).
pub fn fused_attention_qkv(
    cfg: FusedAttention,
    qkv: Tensor<3>,
    inputs: FusedAttentionInputs<'_>,
) -> Option<Tensor<3>> {
    assert!(
        inputs.attn_bias.is_none(),
        "fused_attention_qkv: no attn_bias (use fused_attention)"
    );
    if !on_flex_f32(&qkv) || inputs.p_mix.as_ref().is_some_and(is_tracked) {
        return None;
    }
    let [b, n, d3] = qkv.dims();
    let d = d3 / 3;
    assert!(
        d3 % 3 == 0 && cfg.num_heads > 0 && d % cfg.num_heads == 0,
        "fused_attention_qkv: qkv must be [B, N, 3 d_model], d_model a multiple of num_heads"
    );
    let data = prepare(cfg, [b, n, d], &qkv.device(), &inputs)?;
    if qkv.is_autodiff() {
        let qkv = qkv.try_into_primitive::<Autodiff<Flex>>().ok()?;
        return Some(Tensor::from_primitive::<Autodiff<Flex>>(tracked_qkv(
            qkv, data,
        )));
    }
    let qkv = contiguous(qkv.try_into_primitive::<Flex>().ok()?);
    let [q, k, v] = split_qkv(&qkv, &data.out_dims);
    let (out, _) = forward(&q, &k, &v, None, &data);
    Some(Tensor::from_primitive::<Flex>(out))
}

/// Q, K and V (`dims`, `[B, N, d]`) copied out of `qkv` (`[B, N, 3 d]`, contiguous).
fn split_qkv(qkv: &FlexTensor, dims: &[usize; 3]) -> [FlexTensor; 3] {
    let d = dims[2];
    let rows = dims[0] * dims[1];
    let all = values(qkv);
    std::array::from_fn(|part| {
        let mut out = Vec::with_capacity(rows * d);
        for row in all.chunks_exact(3 * d) {
            out.extend_from_slice(&row[part * d..(part + 1) * d]);
        }
        tensor_from(out, dims)
    })
}

/// The molecules' `dq`, `dk`, `dv` (`[n, d]` each, molecules in row order) side by side
/// as one `[B, N, 3 d]`, written once (not gathered into three tensors first).
fn join_qkv(per_molecule: &[MoleculeGrads], dims: &[usize; 3]) -> FlexTensor {
    let d = dims[2];
    let mut out = Vec::with_capacity(dims[0] * dims[1] * 3 * d);
    for g in per_molecule {
        let rows =
            g.dq.chunks_exact(d)
                .zip(g.dk.chunks_exact(d))
                .zip(g.dv.chunks_exact(d));
        for ((dq, dk), dv) in rows {
            out.extend_from_slice(dq);
            out.extend_from_slice(dk);
            out.extend_from_slice(dv);
        }
    }
    tensor_from(out, &[dims[0], dims[1], 3 * d])
}

/// The node of [`fused_attention_qkv`] (one parent, `qkv`).
#[derive(Debug)]
struct QkvAttentionBackward;

impl Backward<Flex, 1> for QkvAttentionBackward {
    type State = AttentionState;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let dout = grads.consume::<Flex>(&ops.node);
        let per_molecule = molecule_grads(&ops.state, dout, false);
        let [parent] = ops.parents;
        register(
            grads,
            parent.map(|p| p.id),
            join_qkv(&per_molecule, &ops.state.data.out_dims),
        );
    }
}

/// The fused forward on a merged `qkv` as one autodiff node.
fn tracked_qkv(qkv: AdTensor, data: Data) -> AdTensor {
    let node = qkv.node();
    let qkv = contiguous(qkv.into_primitive());
    let [q, k, v] = split_qkv(&qkv, &data.out_dims);
    let prep = QkvAttentionBackward
        .prepare::<NoCheckpointing>([node])
        .compute_bound()
        .stateful();
    let (out, a) = forward(&q, &k, &v, None, &data);
    match prep {
        OpsKind::Tracked(prep) => prep.finish(
            AttentionState {
                q,
                k,
                v,
                a: Arc::new(a),
                data,
            },
            out,
        ),
        OpsKind::UnTracked(prep) => prep.finish(out),
    }
}
