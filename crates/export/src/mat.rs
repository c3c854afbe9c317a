//! Lowering of [`MatModel`] to ONNX (Maziarka et al. 2020, Eq. 2; the same arithmetic
//! as `models::mat` and `attn_core::MoleculeAttention`, op for op).
//!
//! Inputs (`batch` and `atoms` symbolic):
//! - `node_features` f32 `[batch, atoms, d_atom]`
//! - `key_padding_mask` bool `[batch, atoms]`, `true` = padding
//! - `adjacency` f32 `[batch, atoms, atoms]`
//! - `distances` f32 `[batch, atoms, atoms]`, Angstrom
//!
//! Output: `prediction` f32 `[batch, num_targets]` (regression values or logits).
//!
//! The row-wise work runs on the real atoms only ([`crate::packing`]): padded atoms'
//! `node_features` are never read, and the graph costs what the molecules cost, not the
//! padded batch (issue #42 item 4).

use attn_core::mask::{MASKED_DISTANCE, MASKED_LOGIT};
use attn_core::molecule_attention::ADJACENCY_EPS;
use attn_core::{MatNorm, MoleculeAttention};
use burn::module::Param;
use burn::nn::Linear;
use burn::prelude::*;
use models::MatModel;
use models::mat::feed_forward::FeedForward;
use models::mat::{Aggregation, OutputNonlinearity};
use mol_featurize::MatBatchData;
use onnx_protobuf::ModelProto;

use crate::graph::{Attr, Dim, Elem, GraphBuilder};
use crate::packing::RowPacking;
use crate::verify::Feed;

/// Values of a parameter as f32.
pub(crate) fn values<const D: usize>(p: &Param<Tensor<D>>) -> Vec<f32> {
    p.val()
        .try_into_vec_as::<f32>()
        .expect("parameters are readable f32")
}

/// `x W + b` for a Burn [`Linear`] (weight `[d_in, d_out]`).
pub(crate) fn linear(g: &mut GraphBuilder, x: &str, name: &str, lin: &Linear) -> String {
    let w = values(&lin.weight);
    let shape = lin.weight.dims();
    let b = lin.bias.as_ref().map(values);
    g.linear(x, name, (&shape, &w), b.as_deref())
}

/// Burn's `LayerNorm` over the last axis: `(x - mean) / sqrt(var + eps) * gamma + beta`
/// with the biased variance; `names` are the initializer names of gamma and beta.
pub(crate) fn burn_layer_norm(
    g: &mut GraphBuilder,
    x: &str,
    names: (&str, &str),
    ln: &burn::nn::LayerNorm,
    eps: f64,
) -> String {
    let gamma = values(&ln.gamma);
    let d = gamma.len();
    let mean = g.reduce_mean(x, &[-1]);
    let centred = g.sub(x, &mean);
    let sq = g.mul(&centred, &centred);
    let var = g.reduce_mean(&sq, &[-1]);
    let eps = g.scalar(eps as f32);
    let var = g.add(&var, &eps);
    let std = g.node("Sqrt", &[&var], &[]);
    let normed = g.div(&centred, &std);
    let w = g.f32_tensor(names.0, &[d], &gamma);
    let y = g.mul(&normed, &w);
    match &ln.beta {
        Some(beta) => {
            let b = g.f32_tensor(names.1, &[d], &values(beta));
            g.add(&y, &b)
        }
        None => y,
    }
}

/// MAT LayerNorm (unbiased std, eps added to the std) or ScaleNorm over the last axis.
fn norm(g: &mut GraphBuilder, x: &str, name: &str, norm: &MatNorm) -> String {
    match norm {
        MatNorm::LayerNorm(n) => {
            let a_2 = values(&n.a_2);
            let d = a_2.len();
            let mean = g.reduce_mean(x, &[-1]);
            let centred = g.sub(x, &mean);
            let sq = g.mul(&centred, &centred);
            let sum = g.reduce_sum(&sq, &[-1]);
            let denom = g.scalar((d.max(2) - 1) as f32);
            let var = g.div(&sum, &denom);
            let std = g.node("Sqrt", &[&var], &[]);
            let eps = g.scalar(n.eps as f32);
            let std = g.add(&std, &eps);
            let normed = g.div(&centred, &std);
            let a = g.f32_tensor(&format!("{name}.a_2"), &[d], &a_2);
            let b = g.f32_tensor(&format!("{name}.b_2"), &[d], &values(&n.b_2));
            let scaled = g.mul(&normed, &a);
            g.add(&scaled, &b)
        }
        MatNorm::ScaleNorm(n) => {
            let sq = g.mul(x, x);
            let sum = g.reduce_sum(&sq, &[-1]);
            let len = g.node("Sqrt", &[&sum], &[]);
            let eps = g.scalar(n.eps as f32);
            let len = g.node("Max", &[&len, &eps], &[]);
            let unit = g.div(x, &len);
            let scale = g.f32_tensor(&format!("{name}.scale"), &[1], &values(&n.scale));
            g.mul(&unit, &scale)
        }
    }
}

fn leaky_relu(g: &mut GraphBuilder, x: &str, slope: f64) -> String {
    g.node("LeakyRelu", &[x], &[("alpha", Attr::Float(slope as f32))])
}

fn feed_forward(g: &mut GraphBuilder, x: &str, name: &str, ff: &FeedForward) -> String {
    let last = ff.linears.len().saturating_sub(1);
    let mut h = x.to_string();
    for (i, lin) in ff.linears.iter().enumerate() {
        let y = linear(g, &h, &format!("{name}.linears.{i}"), lin);
        h = if i < last {
            leaky_relu(g, &y, ff.leaky_relu_slope)
        } else {
            match ff.output() {
                OutputNonlinearity::Relu => leaky_relu(g, &y, ff.leaky_relu_slope),
                OutputNonlinearity::Tanh => g.node("Tanh", &[&y], &[]),
                OutputNonlinearity::None => y,
            }
        };
    }
    h
}

/// Masks prepared once and shared by every layer.
struct Masks {
    /// `[B, 1, 1, N]` bool.
    key4: String,
    /// `[B, 1, N]` bool.
    key3: String,
}

/// Molecule attention of the packed rows `x` `[R, d]` (queries, keys and values projected
/// on the rows, the `[B, H, N, N]` mixing in the padded layout); returns `[R, d]`.
#[allow(clippy::too_many_arguments)]
fn attention(
    g: &mut GraphBuilder,
    packing: &mut RowPacking,
    x: &str,
    name: &str,
    att: &MoleculeAttention,
    adjacency: &str,
    distances: &str,
    masks: &Masks,
) -> String {
    let (h, d_k) = (att.num_heads as i64, att.d_k as i64);
    let mut heads = |g: &mut GraphBuilder, lin: &Linear, part: &str, perm: &[i64]| {
        let y = linear(g, x, &format!("{name}.{part}"), lin); // [R, H d_k]
        let y = packing.unpack(g, &y, (h * d_k) as usize); // [B, N, H d_k]
        let y = g.reshape(&y, &[0, 0, h, d_k]);
        g.transpose(&y, perm)
    };
    let q = heads(g, &att.query, "query", &[0, 2, 1, 3]); // [B, H, N, d_k]
    let k_t = heads(g, &att.key, "key", &[0, 2, 3, 1]); // [B, H, d_k, N]
    let v = heads(g, &att.value, "value", &[0, 2, 1, 3]);

    let scores = g.matmul(&q, &k_t);
    let inv_sqrt = g.scalar(1.0 / (d_k as f32).sqrt());
    let scores = g.mul(&scores, &inv_sqrt);
    let neg = g.scalar(MASKED_LOGIT);
    let scores = g.node("Where", &[&masks.key4, &neg, &scores], &[]);
    let p_attn = g.node("Softmax", &[&scores], &[("axis", Attr::Int(-1))]);

    let far = g.scalar(MASKED_DISTANCE);
    let dist = g.node("Where", &[&masks.key3, &far, distances], &[]);
    let neg_dist = g.node("Neg", &[&dist], &[]);
    let p_dist = if att.exp_kernel {
        g.node("Exp", &[&neg_dist], &[])
    } else {
        g.node("Softmax", &[&neg_dist], &[("axis", Attr::Int(-1))])
    };
    let row = g.reduce_sum(adjacency, &[2]);
    let eps = g.scalar(ADJACENCY_EPS as f32);
    let row = g.add(&row, &eps);
    let p_adj = g.div(adjacency, &row);

    let [la, ld, lg] = att.lambda_values(&att.output.weight.device());
    let (la, ld, lg) = (g.scalar(la), g.scalar(ld), g.scalar(lg));
    let p_dist = g.mul(&p_dist, &ld);
    let p_adj = g.mul(&p_adj, &lg);
    let p_mix = g.add(&p_dist, &p_adj);
    let p_mix = g.unsqueeze(&p_mix, &[1]);
    let p_attn = g.mul(&p_attn, &la);
    let p = g.add(&p_attn, &p_mix);

    let out = g.matmul(&p, &v);
    let out = g.transpose(&out, &[0, 2, 1, 3]); // [B, N, H, d_k]
    let out = packing.pack(g, &out, (h * d_k) as usize); // [R, H d_k]
    linear(g, &out, &format!("{name}.output"), &att.output)
}

/// Lowers `model` (its current weights) to an ONNX model; `metadata` goes into the
/// model's `metadata_props`.
///
/// # Panics
/// For a model with `use_edge_features` (the graph has no bond-feature input; the run
/// export refuses such runs with a message first).
pub fn mat_to_onnx(model: &MatModel, metadata: &[(String, String)]) -> ModelProto {
    assert!(
        model
            .encoder
            .layers
            .iter()
            .all(|l| l.self_attn.edge_weights.is_none()),
        "a MAT with use_edge_features has no ONNX lowering"
    );
    let d_atom = model.src_embed.lut.weight.dims()[0];
    let num_targets = model.generator.proj.weight.dims()[1];
    let d_model = model.src_embed.lut.weight.dims()[1];
    let (batch, atoms) = (Dim::Symbolic("batch"), Dim::Symbolic("atoms"));
    let mut g = GraphBuilder::new("mat");
    let x = g.input(
        "node_features",
        Elem::F32,
        &[batch.clone(), atoms.clone(), Dim::Fixed(d_atom)],
    );
    let mask = g.input(
        "key_padding_mask",
        Elem::Bool,
        &[batch.clone(), atoms.clone()],
    );
    let adjacency = g.input(
        "adjacency",
        Elem::F32,
        &[batch.clone(), atoms.clone(), atoms.clone()],
    );
    let distances = g.input(
        "distances",
        Elem::F32,
        &[batch.clone(), atoms.clone(), atoms.clone()],
    );
    let masks = Masks {
        key4: g.unsqueeze(&mask, &[1, 2]),
        key3: g.unsqueeze(&mask, &[1]),
    };
    // No bonds toward padded atoms, so that the adjacency term never mixes in their
    // (unpacked, zero) values. The featurizer and the original's loader pad adjacency
    // with 0, where this changes nothing; a hand-made batch with bonds into padding gets
    // Burn's packed semantics, not its padded ones.
    let no_bond = g.scalar(0.0);
    let adjacency = g.node("Where", &[&masks.key3, &no_bond, &adjacency], &[]);

    // Every row-wise op runs on the real atoms' rows `[R, d]` (`RowPacking`); only the
    // attention's `[B, H, N, N]` mixing sees the padded layout.
    let mut packing = RowPacking::new(&mut g, &mask);
    let x = packing.pack(&mut g, &x, d_atom);
    let mut h = linear(&mut g, &x, "src_embed.lut", &model.src_embed.lut);
    for (i, layer) in model.encoder.layers.iter().enumerate() {
        let name = format!("encoder.layers.{i}");
        let n1 = norm(&mut g, &h, &format!("{name}.norm_attn"), &layer.norm_attn);
        let a = attention(
            &mut g,
            &mut packing,
            &n1,
            &format!("{name}.self_attn"),
            &layer.self_attn,
            &adjacency,
            &distances,
            &masks,
        );
        h = g.add(&h, &a);
        let n2 = norm(&mut g, &h, &format!("{name}.norm_ff"), &layer.norm_ff);
        let f = feed_forward(
            &mut g,
            &n2,
            &format!("{name}.feed_forward"),
            &layer.feed_forward,
        );
        h = g.add(&h, &f);
    }
    let h = norm(&mut g, &h, "encoder.norm", &model.encoder.norm);
    let h = packing.unpack(&mut g, &h, d_model); // [B, N, d], 0 at padded atoms

    // Generator: masked pooling over atoms.
    let gen_ = &model.generator;
    let real = g.node("Not", &[&mask], &[]);
    let real = g.node("Cast", &[&real], &[("to", Attr::Int(1))]); // FLOAT
    let real = g.unsqueeze(&real, &[2]); // [B, N, 1]
    let masked = g.mul(&h, &real);
    let mut pooled = match gen_.pooling() {
        Aggregation::Mean => {
            let sum = g.reduce_sum(&masked, &[1]);
            let count = g.reduce_sum(&real, &[1]);
            let one = g.scalar(1.0);
            let count = g.node("Max", &[&count, &one], &[]);
            g.div(&sum, &count)
        }
        Aggregation::Sum => g.reduce_sum(&masked, &[1]),
        Aggregation::DummyNode => {
            let first = g.i64s(&[0]);
            g.node("Gather", &[&masked, &first], &[("axis", Attr::Int(1))])
        }
    };
    pooled = g.reshape(&pooled, &[-1, d_model as i64]);
    for (i, block) in gen_.hidden.iter().enumerate() {
        let name = format!("generator.hidden.{i}");
        let y = linear(&mut g, &pooled, &format!("{name}.linear"), &block.linear);
        let y = leaky_relu(&mut g, &y, gen_.leaky_relu_slope);
        pooled = norm(&mut g, &y, &format!("{name}.norm"), &block.norm);
    }
    let out = linear(&mut g, &pooled, "generator.proj", &gen_.proj);
    g.output(
        &out,
        "prediction",
        Elem::F32,
        &[batch, Dim::Fixed(num_targets)],
    );
    g.finish(metadata)
}

/// The graph inputs of [`mat_to_onnx`] for a padded batch: `node_features [B, N, d_atom]`,
/// `key_padding_mask [B, N]` (true = padding), `adjacency [B, N, N]`, `distances [B, N, N]`
/// (Angstrom).
pub fn mat_feeds(data: &MatBatchData) -> Vec<Feed> {
    let (b, n, d) = (data.batch_size, data.n_atoms, data.d_atom);
    vec![
        Feed::f32("node_features", &[b, n, d], data.node_features.clone()),
        Feed::bool("key_padding_mask", &[b, n], data.key_padding_mask.clone()),
        Feed::f32("adjacency", &[b, n, n], data.adjacency.clone()),
        Feed::f32("distances", &[b, n, n], data.distances.clone()),
    ]
}

/// [`mat_feeds`] of a batch already on a device (its tensors read back).
///
/// # Errors
/// [`crate::ExportError::Runtime`] when a tensor cannot be read back as f32.
pub fn mat_batch_feeds(batch: &models::MatBatch) -> Result<Vec<Feed>, crate::ExportError> {
    let [b, n, d] = batch.node_features.dims();
    let read = |t: Tensor<3>| {
        t.try_into_vec_as::<f32>()
            .map_err(|e| crate::ExportError::Runtime {
                runtime: "burn",
                reason: format!("reading a MAT input back: {e:?}"),
            })
    };
    let key_padding_mask = batch
        .key_padding_mask
        .clone()
        .into_data()
        .iter::<bool>()
        .collect();
    Ok(mat_feeds(&MatBatchData {
        batch_size: b,
        n_atoms: n,
        d_atom: d,
        node_features: read(batch.node_features.clone())?,
        adjacency: read(batch.adjacency.clone())?,
        distances: read(batch.distances.clone())?,
        key_padding_mask,
        edge_features: None,
    }))
}
