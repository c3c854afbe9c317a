//! Lowering of [`TransformerM`] (regression output) to ONNX: the same arithmetic as
//! `models::transformer_m` (Luo et al. 2022; Graphormer encodings), op for op.
//!
//! Inputs (`batch` and `atoms` symbolic; `M` = `max_hops` of the config), exactly the
//! fields of `models::transformer_m::TransformerMBatch` / `mol_featurize`'s
//! `GraphormerBatchData`:
//! - `atom_index` int64 `[batch, atoms, 9]`, `degree_index` int64 `[batch, atoms]`
//! - `spatial_index` int64 `[batch, atoms, atoms]`, `edge_index` int64
//!   `[batch, atoms, atoms, M, 3]`, `path_length` f32 `[batch, atoms, atoms]`
//! - `atom_type` int64 `[batch, atoms]`, `coordinates` f32 `[batch, atoms, 3]`
//!   (Angstrom)
//! - `key_padding_mask` bool `[batch, atoms]`, `true` = padding
//! - `use_2d`, `use_3d` f32 `[batch]`: the channel switches of each molecule (1/0)
//!
//! Output: `prediction` f32 `[batch, num_targets]`.

use attn_core::mask::MASKED_LOGIT;
use burn::nn::{Embedding, LayerNorm};
use models::transformer_m::{
    ATOM_3D_SCALE, EncoderLayer, GAUSSIAN_PI, GAUSSIAN_STD_EPS, LAYER_NORM_EPS, Mode, TransformerM,
};
use mol_featurize::GraphormerBatchData;
use mol_featurize::graphormer::OGB_ATOM_FEATURES;
use onnx_protobuf::ModelProto;

use crate::graph::{Attr, Dim, Elem, GraphBuilder};
use crate::mat::{burn_layer_norm, linear, values};
use crate::verify::Feed;

/// Burn's LayerNorm with the model's [`LAYER_NORM_EPS`], parameters named `{name}.gamma` /
/// `{name}.beta`.
pub(crate) fn layer_norm(g: &mut GraphBuilder, x: &str, name: &str, ln: &LayerNorm) -> String {
    let names = (format!("{name}.gamma"), format!("{name}.beta"));
    burn_layer_norm(g, x, (&names.0, &names.1), ln, LAYER_NORM_EPS)
}

/// Exact GELU: `0.5 x (1 + erf(x / sqrt 2))`.
pub(crate) fn gelu(g: &mut GraphBuilder, x: &str) -> String {
    let inv_sqrt2 = g.scalar(std::f32::consts::FRAC_1_SQRT_2);
    let scaled = g.mul(x, &inv_sqrt2);
    let erf = g.node("Erf", &[&scaled], &[]);
    let one = g.scalar(1.0);
    let half = g.scalar(0.5);
    let t = g.add(&erf, &one);
    let t = g.mul(&t, &half);
    g.mul(x, &t)
}

/// `Gather(table, index)` along rows of an embedding table; with `zero_padding_row`
/// row 0 is written as zeros.
fn embed(
    g: &mut GraphBuilder,
    name: &str,
    table: &Embedding,
    index: &str,
    zero_padding_row: bool,
) -> String {
    let [rows, dim] = table.weight.dims();
    let mut weight = values(&table.weight);
    if zero_padding_row {
        weight[..dim].fill(0.0);
    }
    let table = g.f32_tensor(name, &[rows, dim], &weight);
    g.node("Gather", &[&table, index], &[("axis", Attr::Int(0))])
}

/// One encoder layer, post-LN or pre-LN as the layer is built.
fn encoder_layer(
    g: &mut GraphBuilder,
    x: &str,
    name: &str,
    layer: &EncoderLayer,
    bias: &str,
    mask4: &str,
) -> String {
    let att = &layer.self_attn;
    let (h, dk) = (att.num_heads as i64, att.d_k as i64);
    let norm1 = format!("{name}.self_attn_layer_norm");
    let norm2 = format!("{name}.final_layer_norm");
    let ln = if layer.pre_ln {
        layer_norm(g, x, &norm1, &layer.self_attn_layer_norm)
    } else {
        x.to_string()
    };
    let heads = |g: &mut GraphBuilder, t: &str, perm: &[i64]| {
        let t = g.reshape(t, &[0, 0, h, dk]);
        g.transpose(&t, perm)
    };
    let q = linear(g, &ln, &format!("{name}.self_attn.q_proj"), &att.q_proj);
    let scale = g.scalar((att.d_k as f32).powf(-0.5));
    let q = g.mul(&q, &scale);
    let q = heads(g, &q, &[0, 2, 1, 3]);
    let k = linear(g, &ln, &format!("{name}.self_attn.k_proj"), &att.k_proj);
    let k = heads(g, &k, &[0, 2, 3, 1]);
    let v = linear(g, &ln, &format!("{name}.self_attn.v_proj"), &att.v_proj);
    let v = heads(g, &v, &[0, 2, 1, 3]);
    let scores = g.matmul(&q, &k);
    let scores = g.add(&scores, bias);
    let masked = g.scalar(MASKED_LOGIT);
    let scores = g.node("Where", &[mask4, &masked, &scores], &[]);
    let probs = g.node("Softmax", &[&scores], &[("axis", Attr::Int(-1))]);
    let o = g.matmul(&probs, &v);
    let o = g.transpose(&o, &[0, 2, 1, 3]);
    let o = g.reshape(&o, &[0, 0, h * dk]);
    let o = linear(g, &o, &format!("{name}.self_attn.out_proj"), &att.out_proj);
    let x = g.add(x, &o);
    let (x, ln) = if layer.pre_ln {
        let ln = layer_norm(g, &x, &norm2, &layer.final_layer_norm);
        (x, ln)
    } else {
        let x = layer_norm(g, &x, &norm1, &layer.self_attn_layer_norm);
        (x.clone(), x)
    };
    let f = linear(g, &ln, &format!("{name}.fc1"), &layer.fc1);
    let f = gelu(g, &f);
    let f = linear(g, &f, &format!("{name}.fc2"), &layer.fc2);
    let x = g.add(&x, &f);
    if layer.pre_ln {
        x
    } else {
        layer_norm(g, &x, &norm2, &layer.final_layer_norm)
    }
}

/// Lowers `model` (its current weights; dropout off) to an ONNX model with the graph
/// token regression output; `metadata` goes into `metadata_props`. The graph reads the
/// graph token whatever `model.readout()` says: for a model with an atom readout
/// (`--readout mean|sum`) its output is not the model's prediction, and the run export
/// (`cargo xtask export`) refuses such runs.
pub fn transformer_m_to_onnx(model: &TransformerM, metadata: &[(String, String)]) -> ModelProto {
    let (b, n) = (Dim::Symbolic("batch"), Dim::Symbolic("atoms"));
    let h = model.num_heads;
    let d = model.head.dense.weight.dims()[0];
    let m = model.bias_encoder.edge_hop_weight.dims()[0];
    let k = model.gaussian.means.dims()[0];
    let mut g = GraphBuilder::new("transformer_m");
    let atom_index = g.input(
        "atom_index",
        Elem::I64,
        &[b.clone(), n.clone(), Dim::Fixed(OGB_ATOM_FEATURES)],
    );
    let degree_index = g.input("degree_index", Elem::I64, &[b.clone(), n.clone()]);
    let spatial_index = g.input(
        "spatial_index",
        Elem::I64,
        &[b.clone(), n.clone(), n.clone()],
    );
    let edge_index = g.input(
        "edge_index",
        Elem::I64,
        &[
            b.clone(),
            n.clone(),
            n.clone(),
            Dim::Fixed(m),
            Dim::Fixed(3),
        ],
    );
    let path_length = g.input("path_length", Elem::F32, &[b.clone(), n.clone(), n.clone()]);
    let atom_type = g.input("atom_type", Elem::I64, &[b.clone(), n.clone()]);
    let coords = g.input(
        "coordinates",
        Elem::F32,
        &[b.clone(), n.clone(), Dim::Fixed(3)],
    );
    let padding = g.input("key_padding_mask", Elem::Bool, &[b.clone(), n.clone()]);
    let use_2d = g.input("use_2d", Elem::F32, std::slice::from_ref(&b));
    let use_3d = g.input("use_3d", Elem::F32, std::slice::from_ref(&b));
    let s2_3 = g.reshape(&use_2d, &[-1, 1, 1]);
    let s3_3 = g.reshape(&use_3d, &[-1, 1, 1]);
    let s2_4 = g.reshape(&use_2d, &[-1, 1, 1, 1]);
    let s3_4 = g.reshape(&use_3d, &[-1, 1, 1, 1]);

    // 3D channel: distances, Gaussian basis, pair bias and atom feature.
    let ri = g.unsqueeze(&coords, &[2]); // [B, N, 1, 3]
    let rj = g.unsqueeze(&coords, &[1]); // [B, 1, N, 3]
    let delta = g.sub(&rj, &ri);
    let sq = g.mul(&delta, &delta);
    let sq = g.reduce_sum(&sq, &[-1]); // [B, N, N, 1]
    let tiny = g.scalar(1e-12);
    let sq = g.add(&sq, &tiny);
    let dist = g.node("Sqrt", &[&sq], &[]);
    let gauss = &model.gaussian;
    // gamma[b, i, j] = mul_i[t_i] + mul_j[t_j] (the same for beta): [B, N, N, 1].
    // A pair with a padded atom (type 0) takes both padding rows, as in Burn.
    let no_type = g.i64s(&[0]);
    let padded = g.node("Equal", &[&atom_type, &no_type], &[]);
    let padded_i = g.unsqueeze(&padded, &[2, 3]); // [B, N, 1, 1]
    let padded_j = g.unsqueeze(&padded, &[1, 3]); // [B, 1, N, 1]
    let padded_pair = g.node("Or", &[&padded_i, &padded_j], &[]);
    let pair_affine = |g: &mut GraphBuilder, name: &str, row: &Embedding, col: &Embedding| {
        let r = embed(
            g,
            &format!("gaussian.{name}_i.weight"),
            row,
            &atom_type,
            false,
        );
        let r = g.unsqueeze(&r, &[2]); // [B, N, 1, 1]
        let c = embed(
            g,
            &format!("gaussian.{name}_j.weight"),
            col,
            &atom_type,
            false,
        );
        let c = g.unsqueeze(&c, &[1]); // [B, 1, N, 1]
        let value = g.add(&r, &c);
        let padding = g.scalar(values(&row.weight)[0] + values(&col.weight)[0]);
        g.node("Where", &[&padded_pair, &padding, &value], &[])
    };
    let gamma = pair_affine(&mut g, "mul", &gauss.mul_i, &gauss.mul_j);
    let beta = pair_affine(&mut g, "bias", &gauss.bias_i, &gauss.bias_j);
    let x = g.mul(&gamma, &dist);
    let x = g.add(&x, &beta); // [B, N, N, 1]
    let means = g.f32_tensor("gaussian.means", &[k], &values(&gauss.means));
    let std: Vec<f32> = values(&gauss.stds)
        .iter()
        .map(|s| s.abs() + GAUSSIAN_STD_EPS as f32)
        .collect();
    let norm: Vec<f32> = std
        .iter()
        .map(|s| s * (2.0 * GAUSSIAN_PI as f32).sqrt())
        .collect();
    let std = g.f32_tensor("gaussian.std", &[k], &std);
    let norm = g.f32_tensor("gaussian.normaliser", &[k], &norm);
    let z = g.sub(&x, &means);
    let z = g.div(&z, &std);
    let z2 = g.mul(&z, &z);
    let minus_half = g.scalar(-0.5);
    let e = g.mul(&z2, &minus_half);
    let e = g.node("Exp", &[&e], &[]);
    let psi = g.div(&e, &norm); // [B, N, N, K]
    // The pair bias sees every pair; the summed atom feature only real keys j.
    let pad_key = g.unsqueeze(&padding, &[1]); // [B, 1, N]
    let pad_key_4 = g.unsqueeze(&pad_key, &[3]); // [B, 1, N, 1]
    let zero = g.scalar(0.0);
    let psi_keys = g.node("Where", &[&pad_key_4, &zero, &psi], &[]);
    let hidden = linear(
        &mut g,
        &psi,
        "pair_bias_3d.dense",
        &model.pair_bias_3d.dense,
    );
    let hidden = gelu(&mut g, &hidden);
    let bias_3d = linear(&mut g, &hidden, "pair_bias_3d.out", &model.pair_bias_3d.out);
    let bias_3d = g.transpose(&bias_3d, &[0, 3, 1, 2]); // [B, H, N, N]
    let psi_sum = g.reduce_sum(&psi_keys, &[2]);
    let psi_sum = g.reshape(&psi_sum, &[0, 0, k as i64]);
    let atom_3d = linear(&mut g, &psi_sum, "atom_proj_3d", &model.atom_proj_3d);
    let atom_scale = g.scalar(ATOM_3D_SCALE as f32);
    let atom_3d = g.mul(&atom_3d, &atom_scale);
    let atom_3d = g.mul(&atom_3d, &s3_3);

    // Atom features.
    let enc = &model.atom_encoder;
    let atoms = embed(
        &mut g,
        "atom_encoder.atom_embedding.weight",
        &enc.atom_embedding,
        &atom_index,
        false,
    );
    let atoms = g.reduce_sum(&atoms, &[2]);
    let atoms = g.reshape(&atoms, &[0, 0, d as i64]);
    let degree = embed(
        &mut g,
        "atom_encoder.degree_embedding.weight",
        &enc.degree_embedding,
        &degree_index,
        false,
    );
    let degree = g.mul(&degree, &s2_3);
    let atoms = g.add(&atoms, &degree);
    let atoms = g.add(&atoms, &atom_3d);
    let token = g.f32_tensor(
        "atom_encoder.graph_token",
        &[1, 1, d],
        &values(&enc.graph_token),
    );
    let shape = g.node("Shape", &[&atoms], &[]);
    let first = g.i64s(&[0]);
    let batch = g.node("Gather", &[&shape, &first], &[("axis", Attr::Int(0))]);
    let rest = g.i64s(&[1, d as i64]);
    let token_shape = g.node("Concat", &[&batch, &rest], &[("axis", Attr::Int(0))]);
    let token = g.node("Expand", &[&token, &token_shape], &[]);
    let mut x = g.node("Concat", &[&token, &atoms], &[("axis", Attr::Int(1))]);
    if let Some(norm) = &model.emb_layer_norm {
        x = layer_norm(&mut g, &x, "emb_layer_norm", norm);
    }

    // 2D biases.
    let be = &model.bias_encoder;
    let spatial = embed(
        &mut g,
        "bias_encoder.spatial_embedding.weight",
        &be.spatial_embedding,
        &spatial_index,
        false,
    );
    // Burn masks rows of bond index 0 ("no bond"): the same as a zero row 0 here.
    let edge = embed(
        &mut g,
        "bias_encoder.edge_embedding.weight",
        &be.edge_embedding,
        &edge_index,
        true,
    ); // [B,N,N,M,3,H]
    let edge = g.reduce_mean(&edge, &[4]); // [B,N,N,M,1,H]
    let hop_w = g.f32_tensor(
        "bias_encoder.edge_hop_weight",
        &[m, h, h],
        &values(&be.edge_hop_weight),
    );
    let edge = g.matmul(&edge, &hop_w);
    let edge = g.reduce_sum(&edge, &[3, 4]);
    let edge = g.reshape(&edge, &[0, 0, 0, h as i64]);
    let plen = g.unsqueeze(&path_length, &[3]);
    let edge = g.div(&edge, &plen);
    let bias_2d = g.add(&spatial, &edge);
    let bias_2d = g.transpose(&bias_2d, &[0, 3, 1, 2]);
    let bias_2d = g.mul(&bias_2d, &s2_4);
    let bias_3d = g.mul(&bias_3d, &s3_4);
    let inner = g.add(&bias_2d, &bias_3d);
    // Pairs spatial_pos_max+ bonds apart or in different fragments, and padded keys.
    let limit = g.i64s(&[model.spatial_pos_max as i64]);
    let far = g.node("Greater", &[&spatial_index, &limit], &[]);
    let masked_pair = g.node("Or", &[&far, &pad_key], &[]);
    let masked_pair = g.unsqueeze(&masked_pair, &[1]); // [B, 1, N, N]
    let masked_logit = g.scalar(MASKED_LOGIT);
    let inner = g.node("Where", &[&masked_pair, &masked_logit, &inner], &[]);
    // Graph token row and column: pad with zeros, then add t_h where the pad went.
    let pads = g.i64s(&[0, 0, 1, 1, 0, 0, 0, 0]);
    let padded = g.node("Pad", &[&inner, &pads], &[]);
    let zeros = g.mul(&inner, &zero);
    let one = g.scalar(1.0);
    let ones = g.add(&zeros, &one);
    let ones = g.node("Pad", &[&ones, &pads], &[]);
    let token_cells = g.sub(&one, &ones);
    let t = g.f32_tensor(
        "bias_encoder.virtual_distance",
        &[1, h, 1, 1],
        &values(&be.virtual_distance),
    );
    let t = g.mul(&token_cells, &t);
    let bias = g.add(&padded, &t);

    // Key padding with the (never padded) graph token in front.
    let key = g.node("Cast", &[&padding], &[("to", Attr::Int(1))]);
    let key_pads = g.i64s(&[0, 1, 0, 0]);
    let key = g.node("Pad", &[&key, &key_pads], &[]);
    let key = g.node("Cast", &[&key], &[("to", Attr::Int(9))]);
    let mask4 = g.unsqueeze(&key, &[1, 2]); // [B, 1, 1, N+1]

    for (i, layer) in model.layers.iter().enumerate() {
        x = encoder_layer(&mut g, &x, &format!("layers.{i}"), layer, &bias, &mask4);
    }
    if let Some(norm) = &model.final_layer_norm {
        x = layer_norm(&mut g, &x, "final_layer_norm", norm);
    }
    let zero_index = g.i64s(&[0]);
    let token = g.node("Gather", &[&x, &zero_index], &[("axis", Attr::Int(1))]);
    let token = g.reshape(&token, &[-1, d as i64]);
    let head = &model.head;
    let y = linear(&mut g, &token, "head.dense", &head.dense);
    let y = gelu(&mut g, &y);
    let y = layer_norm(&mut g, &y, "head.layer_norm", &head.layer_norm);
    let y = linear(&mut g, &y, "head.out", &head.out);
    let targets = head.out.weight.dims()[1];
    g.output(&y, "prediction", Elem::F32, &[b, Dim::Fixed(targets)]);
    g.finish(metadata)
}

/// The graph inputs of [`transformer_m_to_onnx`] for a padded batch, one requested
/// [`Mode`] per molecule (molecules without coordinates get 2D, as in Burn).
///
/// # Panics
/// If `modes.len()` is not the batch size.
pub fn transformer_m_feeds(data: &GraphormerBatchData, modes: &[Mode]) -> Vec<Feed> {
    let (b, n, m) = (data.batch_size, data.n_atoms, data.hops);
    let (s2, s3) = Mode::batch_switches(modes, &data.has_3d);
    vec![
        Feed::i64(
            "atom_index",
            &[b, n, OGB_ATOM_FEATURES],
            data.atom_index.clone(),
        ),
        Feed::i64("degree_index", &[b, n], data.degree_index.clone()),
        Feed::i64("spatial_index", &[b, n, n], data.spatial_index.clone()),
        Feed::i64("edge_index", &[b, n, n, m, 3], data.edge_index.clone()),
        Feed::f32("path_length", &[b, n, n], data.path_length.clone()),
        Feed::i64("atom_type", &[b, n], data.atom_type.clone()),
        Feed::f32("coordinates", &[b, n, 3], data.coordinates.clone()),
        Feed::bool("key_padding_mask", &[b, n], data.key_padding_mask.clone()),
        Feed::f32("use_2d", &[b], s2),
        Feed::f32("use_3d", &[b], s3),
    ]
}
