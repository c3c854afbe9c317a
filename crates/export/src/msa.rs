//! Lowering of [`MsaColumnGlobalAttention`] to ONNX (AlphaFold Suppl. Alg. 19; the same
//! arithmetic as `attn_core::GlobalAttention`, in f32).
//!
//! Inputs (`sequences` and `residues` symbolic):
//! - `msa_act` f32 `[sequences, residues, c_m]`
//! - `msa_padding_mask` bool `[sequences, residues]`, `true` = padding
//!
//! Output: `msa_update` f32 `[sequences, residues, c_m]` (before the residual add).

use attn_core::global_attention::{MASK_BIAS, MASK_MEAN_EPS};
use models::MsaColumnGlobalAttention;
use onnx_protobuf::ModelProto;

use crate::graph::{Attr, Dim, Elem, GraphBuilder};
use crate::mat::{burn_layer_norm, values};

/// Lowers `block` (its current weights) to an ONNX model; `metadata` goes into the
/// model's `metadata_props`.
pub fn msa_global_attention_to_onnx(
    block: &MsaColumnGlobalAttention,
    metadata: &[(String, String)],
) -> ModelProto {
    let att = &block.attention;
    let [c_m, h, c] = att.query_w.dims();
    let c_out = att.output_b.dims()[0];
    let hc = (h * c) as i64;
    let (seqs, res) = (Dim::Symbolic("sequences"), Dim::Symbolic("residues"));
    let mut g = GraphBuilder::new("msa_column_global_attention");
    let act = g.input(
        "msa_act",
        Elem::F32,
        &[seqs.clone(), res.clone(), Dim::Fixed(c_m)],
    );
    let mask = g.input("msa_padding_mask", Elem::Bool, &[seqs.clone(), res.clone()]);

    // Columns: [R, S, c_m]; LayerNorm (biased variance, haiku/Burn) over channels.
    let cols = g.transpose(&act, &[1, 0, 2]);
    let normed = burn_layer_norm(
        &mut g,
        &cols,
        ("query_norm.scale", "query_norm.offset"),
        &block.query_norm,
        block.layer_norm_eps,
    );

    // Masked-mean query.
    let mask_cols = g.transpose(&mask, &[1, 0]); // [R, S]
    let present = g.node("Not", &[&mask_cols], &[]);
    let present = g.node("Cast", &[&present], &[("to", Attr::Int(1))]);
    let present3 = g.unsqueeze(&present, &[2]); // [R, S, 1]
    let weighted = g.mul(&normed, &present3);
    let sum = g.reduce_sum(&weighted, &[1]); // [R, 1, c_m]
    let count = g.reduce_sum(&present3, &[1]);
    let tiny = g.scalar(MASK_MEAN_EPS as f32);
    let count = g.add(&count, &tiny);
    let q_avg = g.div(&sum, &count);
    let query_w = g.f32_tensor("attention.query_w", &[c_m, h * c], &values(&att.query_w));
    let q = g.matmul(&q_avg, &query_w);
    let scale = g.scalar((c as f32).powf(-0.5));
    let q = g.mul(&q, &scale);
    let q = g.reshape(&q, &[0, h as i64, c as i64]); // [R, H, c]

    let key_w = g.f32_tensor("attention.key_w", &[c_m, c], &values(&att.key_w));
    let value_w = g.f32_tensor("attention.value_w", &[c_m, c], &values(&att.value_w));
    let keys = g.matmul(&normed, &key_w); // [R, S, c]
    let vals = g.matmul(&normed, &value_w);
    let keys_t = g.transpose(&keys, &[0, 2, 1]);
    let one = g.scalar(1.0);
    let big = g.scalar(MASK_BIAS as f32);
    let bias = g.sub(&present, &one);
    let bias = g.mul(&bias, &big);
    let bias = g.unsqueeze(&bias, &[1]); // [R, 1, S]
    let logits = g.matmul(&q, &keys_t);
    let logits = g.add(&logits, &bias);
    let weights = g.node("Softmax", &[&logits], &[("axis", Attr::Int(-1))]);
    let o = g.matmul(&weights, &vals); // [R, H, c]
    let o = g.reshape(&o, &[0, 1, hc]); // [R, 1, H*c]

    let output_w = g.f32_tensor(
        "attention.output_w",
        &[h * c, c_out],
        &values(&att.output_w),
    );
    let output_b = g.f32_tensor("attention.output_b", &[c_out], &values(&att.output_b));
    let out = match (&att.gating_w, &att.gating_b) {
        (Some(gw), Some(gb)) => {
            let gw = g.f32_tensor("attention.gating_w", &[c_m, h * c], &values(gw));
            let gb = g.f32_tensor("attention.gating_b", &[h * c], &values(gb));
            let gate = g.matmul(&normed, &gw);
            let gate = g.add(&gate, &gb);
            let gate = g.node("Sigmoid", &[&gate], &[]);
            let gated = g.mul(&gate, &o);
            let y = g.matmul(&gated, &output_w);
            g.add(&y, &output_b)
        }
        _ => {
            let y = g.matmul(&o, &output_w);
            let y = g.add(&y, &output_b); // [R, 1, c_out]
            // Broadcast the per-column vector over the column's rows.
            let rows = g.node("Shape", &[&mask_cols], &[]); // [R, S]
            let channels = g.i64s(&[c_out as i64]);
            let target = g.node("Concat", &[&rows, &channels], &[("axis", Attr::Int(0))]);
            g.node("Expand", &[&y, &target], &[])
        }
    };
    let out = g.transpose(&out, &[1, 0, 2]);
    g.output(
        &out,
        "msa_update",
        Elem::F32,
        &[seqs, res, Dim::Fixed(c_out)],
    );
    g.finish(metadata)
}
