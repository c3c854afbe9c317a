//! MAT's `make_model` options against the ORIGINAL ardigen/MAT code, one at a time
//! (issue #40 item 4; fixture `fixtures/gen/mat_variants_original.py`): tanh / no output
//! nonlinearity, sum / dummy-node pooling, a three-layer generator, ScaleNorm everywhere
//! (with a two-layer generator), `N_dense = 0`, trainable lambdas (exp kernel), and edge
//! features in place of the adjacency (`use_edge_features`, also with
//! `integrated_distances` and the exp kernel). Each at
//! d_model 32, 4 heads, 2 layers, dropout 0 on the 8 molecules of `mat_small_io`, the
//! weights drawn by name on both sides ([`super::mat::reference_state_dict`]) and loaded
//! through the reference-key loader: forward, loss, d loss / d node_features and the
//! gradients of the parameters each variant adds.

use std::path::Path;

use anyhow::{Result, anyhow};
use attn_core::{DistanceKernel, MatNorm, NormKind};
use burn::module::Param;
use burn::nn::loss::{MseLoss, Reduction};
use burn::prelude::*;
use burn::tensor::{Device, Gradients};
use models::mat::{Aggregation, LoadParts, OutputNonlinearity};
use models::{MatBatch, MatConfig, MatModel};

use super::Row;
use super::fixture::Fixture;
use super::mat::{reference_state_dict, transpose, values, write_safetensors};

/// Output and gradient tolerance (f32 against the float64 original), relative to the
/// largest value compared when that exceeds 1: sum pooling gives outputs near 13 and a
/// loss of 214, whose f32 spacing alone is 1.5e-5.
const TOL: f64 = 1e-5;

/// [`TOL`] scaled to the magnitude of `want` (at least [`TOL`]).
fn tolerance(want: &[f32]) -> f64 {
    TOL * want.iter().fold(1.0f64, |m, v| m.max(f64::from(v.abs())))
}

/// A row against the original with [`tolerance`].
fn compare(component: &str, got: &[f32], want: &[f32]) -> Row {
    let tol = tolerance(want);
    let note = if tol > TOL {
        format!(
            "make_model of src/transformer.py @1c7af06, float64; 1e-5 x the largest original value = {tol:.1e}"
        )
    } else {
        "make_model of src/transformer.py @1c7af06, float64".to_string()
    };
    Row::compare(
        component,
        "mat_variants_original (original code)",
        got,
        want,
        tol,
        &note,
    )
}

/// The variants, as the fixture script's `VARIANTS` (same names, same changes from
/// the base configuration).
fn variants() -> Vec<(&'static str, MatConfig)> {
    let base = MatConfig::small()
        .with_d_model(32)
        .with_num_heads(4)
        .with_num_layers(2)
        .with_dropout(0.0);
    vec![
        (
            "tanh",
            base.clone()
                .with_dense_output_nonlinearity(OutputNonlinearity::Tanh),
        ),
        (
            "no_output_nonlinearity",
            base.clone()
                .with_dense_output_nonlinearity(OutputNonlinearity::None)
                .with_leaky_relu_slope(0.1),
        ),
        ("sum", base.clone().with_aggregation(Aggregation::Sum)),
        (
            "dummy_node",
            base.clone().with_aggregation(Aggregation::DummyNode),
        ),
        (
            "generator_3_layers",
            base.clone()
                .with_n_generator_layers(3)
                .with_leaky_relu_slope(0.1),
        ),
        (
            "scale_norm",
            base.clone()
                .with_norm(NormKind::ScaleNorm)
                .with_n_generator_layers(2),
        ),
        ("n_dense_0", base.clone().with_n_dense(0)),
        (
            "trainable_lambda",
            base.clone()
                .with_trainable_lambda(true)
                .with_distance_kernel(DistanceKernel::Exp),
        ),
        ("edge_features", base.clone().with_use_edge_features(true)),
        (
            "edge_features_integrated_distances",
            base.with_use_edge_features(true)
                .with_integrated_distances(true)
                .with_distance_kernel(DistanceKernel::Exp),
        ),
    ]
}

/// The edge variants' bond features `[B, N, N, 11]`, as the fixture script's
/// `edge_features` draws them: each channel `uniform("edges_att") > 0.5` on the bonded
/// pairs (the adjacency without its diagonal), 0 elsewhere.
fn drawn_edge_features(adjacency: &Tensor<3>) -> Tensor<4> {
    let [b, n, _] = adjacency.dims();
    let c = mol_featurize::MAT_D_EDGE;
    let adj = values(adjacency.clone());
    let drawn = super::prng::uniform("edges_att", b * n * n * c, 0.0, 1.0);
    let edges: Vec<f32> = drawn
        .iter()
        .enumerate()
        .map(|(k, &u)| {
            let pair = k / c;
            let (i, j) = ((pair / n) % n, pair % n);
            let bonded = if i == j { 0.0 } else { adj[pair] };
            if u > 0.5 { bonded } else { 0.0 }
        })
        .collect();
    Tensor::from_data(TensorData::new(edges, [b, n, n, c]), &adjacency.device())
}

/// Our gradient of the original's parameter `key`, when this model has it.
fn parameter_grad(model: &MatModel, key: &str, grads: &Gradients) -> Option<Vec<f32>> {
    let g2 = |p: &Param<Tensor<2>>| p.val().grad(grads).map(transpose);
    let g1 = |p: &Param<Tensor<1>>| p.val().grad(grads).map(values);
    // The norm's own parameter, only under its own key suffix (`a_2` of LayerNorm,
    // `scale` of ScaleNorm): a key of the other kind finds nothing.
    let norm = |n: &MatNorm, suffix: &str| match (n, suffix) {
        (MatNorm::LayerNorm(l), "a_2") => g1(&l.a_2),
        (MatNorm::ScaleNorm(s), "scale") => g1(&s.scale),
        _ => None,
    };
    let hidden = &model.generator.hidden;
    match key {
        "src_embed.lut.weight" => return g2(&model.src_embed.lut.weight),
        "encoder.layers.0.self_attn.lambdas" => {
            return model.encoder.layers[0]
                .self_attn
                .lambdas
                .as_ref()
                .and_then(g1);
        }
        "encoder.layers.0.self_attn.edges_feature_layer.linear.weight"
        | "encoder.layers.1.self_attn.edges_feature_layer.linear.weight" => {
            let layer = usize::from(key.starts_with("encoder.layers.1"));
            return model.encoder.layers[layer]
                .self_attn
                .edge_weights
                .as_ref()
                .and_then(|w| g2(&w.weight));
        }
        "generator.proj.weight" if hidden.is_empty() => return g2(&model.generator.proj.weight),
        _ => {}
    }
    if let Some(suffix) = key.strip_prefix("encoder.norm.") {
        return norm(&model.encoder.norm, suffix);
    }
    // A deeper generator's `nn.Sequential`: block `k`'s Linear at `proj.{4k}`, its norm at
    // `proj.{4k+2}`, the output Linear at `proj.{4 hidden}` (the loader's key map).
    let (index, suffix) = key.strip_prefix("generator.proj.")?.split_once('.')?;
    let index: usize = index.parse().ok()?;
    let (k, slot) = (index / 4, index % 4);
    match (slot, suffix) {
        (0, "weight") if k == hidden.len() => g2(&model.generator.proj.weight),
        (0, "weight") => hidden.get(k).and_then(|b| g2(&b.linear.weight)),
        (2, s) => hidden.get(k).and_then(|b| norm(&b.norm, s)),
        _ => None,
    }
}

/// Every variant row.
pub fn rows(fixtures: &Path) -> Result<Vec<Row>> {
    let io = Fixture::read(&fixtures.join("parity/mat_small_io.safetensors"))?;
    let original = Fixture::read(&fixtures.join("parity/mat_variants_original.safetensors"))?;
    let ad = Device::flex().autodiff();
    let mut rows = Vec::new();
    for (name, config) in variants() {
        let config = config.with_d_atom(io.get("node_features")?.0[2]);
        let weights = std::env::temp_dir().join(format!(
            "molattn-mat-variant-{name}-{}.safetensors",
            std::process::id()
        ));
        write_safetensors(&weights, &reference_state_dict(&config))?;
        let model = config
            .init(&ad)
            .load_reference_weights(&weights, LoadParts::All)
            .map_err(|e| anyhow!("MAT variant {name}: {e}"))?;
        let _ = std::fs::remove_file(&weights);
        let adjacency = io.tensor::<3>("adjacency", &ad)?;
        let batch = MatBatch {
            node_features: io.tensor::<3>("node_features", &ad)?.require_grad(),
            edge_features: config
                .use_edge_features
                .then(|| drawn_edge_features(&adjacency)),
            adjacency,
            distances: io.tensor::<3>("distances", &ad)?,
            key_padding_mask: io.tensor::<2>("mask", &ad)?.lower_elem(0.5),
        };
        let out = model.forward(&batch);
        let target = io.tensor::<2>("target", &ad)?;
        let loss = MseLoss::new().forward(out.clone(), target, Reduction::Mean);
        rows.push(compare(
            &format!("MAT {name}: forward vs the original code"),
            &values(out),
            original.values(&format!("{name}.output"))?,
        ));
        rows.push(compare(
            &format!("MAT {name}: MSE loss vs the original code"),
            &values(loss.clone()),
            original.values(&format!("{name}.loss"))?,
        ));
        let grads = loss.backward();
        let grad_x = batch
            .node_features
            .grad(&grads)
            .map(values)
            .unwrap_or_default();
        rows.push(compare(
            &format!("MAT {name}: d loss / d node_features vs the original code"),
            &grad_x,
            original.values(&format!("{name}.grad_node_features"))?,
        ));
        let prefix = format!("{name}.grad.");
        let mut keys: Vec<&str> = original
            .names()
            .filter_map(|k| k.strip_prefix(&prefix))
            .collect();
        keys.sort_unstable();
        if keys.is_empty() {
            return Err(anyhow!(
                "MAT variant {name}: the fixture has no parameter gradients ({prefix}*)"
            ));
        }
        for key in keys {
            let got = parameter_grad(&model, key, &grads).ok_or_else(|| {
                anyhow!("MAT variant {name}: the model has no parameter for the original's {key}")
            })?;
            rows.push(compare(
                &format!("MAT {name}: d loss / d {key} vs the original code"),
                &got,
                original.values(&format!("{prefix}{key}"))?,
            ));
        }
    }
    Ok(rows)
}
