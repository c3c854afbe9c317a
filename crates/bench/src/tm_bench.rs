//! Transformer-M rows of `cargo xtask bench --compare-torch`: the small preset on a padded
//! batch of ESOL molecules in 2D+3D mode, ours against the ORIGINAL code
//! (lsj2408/Transformer-M, loaded by `fixtures/gen/tm_original.py` and run by
//! `bench/torch_models.py` on the same batch in the original collator's format; the
//! checkout is named by `MOLATTN_TRANSFORMER_M_REPO`).
//!
//! Coordinates: a deterministic helix per molecule (1.5 Angstrom steps), not a conformer:
//! the work of both models does not depend on the values, and the benchmark should not wait
//! for ETKDG. Every molecule is in mode 2D+3D, so both channels run on both sides.

use std::path::Path;

use anyhow::{Context, Result};
use burn::nn::loss::{MseLoss, Reduction};
use burn::optim::GradientsParams;
use burn::tensor::Device;
use models::transformer_m::original_layout::collator_inputs;
use models::transformer_m::{Mode, TransformerMBatch, TransformerMConfig};
use mol_featurize::graphormer::{
    EncodingLimits, GraphormerBatchData, featurize, pad_graphormer_batch,
};
use mol_featurize::molecule::Molecule;
use train::engine::fused_adam::FusedAdamConfig;

use crate::measure::{BATCH_SIZE, regression_target};

/// Transformer-M small (4 layers, d_model 128, FFN 128, 8 heads, K 32), no dropout, no
/// denoising head (the rows time the regression forward and its training step).
pub fn config() -> TransformerMConfig {
    TransformerMConfig::small()
        .with_attention_dropout(0.0)
        .with_activation_dropout(0.0)
        .with_denoising_head(false)
}

/// The first `BATCH_SIZE` ESOL molecules that parse, with helix coordinates (Angstrom),
/// padded to the largest (`GraphormerBatchData` shapes: `[B, N, 9]` atom rows, `[B, N, N]`
/// SPD rows, `[B, N, N, M, 3]` path bonds, ...).
///
/// # Errors
/// `esol/esol.csv` missing or unreadable, or no molecule featurizable.
pub fn esol_batch(datasets: &Path) -> Result<GraphormerBatchData> {
    let smiles = train::data::read_smiles_csv(&datasets.join("esol/esol.csv"), "smiles")?;
    let limits = EncodingLimits::default();
    let mut feats = Vec::new();
    for s in &smiles {
        let Ok(mol) = Molecule::from_smiles(s) else {
            continue;
        };
        let n = mol.num_atoms();
        let helix: Vec<[f32; 3]> = (0..n)
            .map(|i| {
                let t = i as f32;
                [1.5 * t.cos(), 1.5 * t.sin(), 0.5 * t]
            })
            .collect();
        if let Ok(f) = featurize(&mol, limits.max_hops, Some(helix)) {
            feats.push(f);
        }
        if feats.len() == BATCH_SIZE {
            break;
        }
    }
    pad_graphormer_batch(&feats.iter().collect::<Vec<_>>(), &limits).map_err(anyhow::Error::msg)
}

/// Writes the batch as JSON (one field per array, flat, with the sizes), the exchange
/// format with `bench/torch_models.py` and the `bench-row` child.
///
/// # Errors
/// The file cannot be written.
pub fn write_batch(data: &GraphormerBatchData, path: &Path) -> Result<()> {
    let original = collator_inputs(&config().init(&Device::flex()), data);
    let json = serde_json::json!({
        "original": {
            "x": original.x, "in_degree": original.in_degree,
            "spatial_pos": original.spatial_pos, "edge_input": original.edge_input,
            "node_type_edge": original.node_type_edge, "masked": original.masked,
        },
        "batch": data.batch_size, "atoms": data.n_atoms, "hops": data.hops,
        "atom_index": data.atom_index, "degree_index": data.degree_index,
        "spatial_index": data.spatial_index, "edge_index": data.edge_index,
        "path_length": data.path_length, "atom_type": data.atom_type,
        "coordinates": data.coordinates, "key_padding_mask": data.key_padding_mask, "has_3d": data.has_3d,
    });
    std::fs::write(path, serde_json::to_vec(&json)?).with_context(|| path.display().to_string())
}

fn read_batch(path: &Path) -> Result<GraphormerBatchData> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    let mut json: serde_json::Value = serde_json::from_str(&text)?;
    let mut field = |name: &str| json[name].take();
    Ok(GraphormerBatchData {
        batch_size: serde_json::from_value(field("batch"))?,
        n_atoms: serde_json::from_value(field("atoms"))?,
        hops: serde_json::from_value(field("hops"))?,
        atom_index: serde_json::from_value(field("atom_index"))?,
        degree_index: serde_json::from_value(field("degree_index"))?,
        spatial_index: serde_json::from_value(field("spatial_index"))?,
        edge_index: serde_json::from_value(field("edge_index"))?,
        path_length: serde_json::from_value(field("path_length"))?,
        atom_type: serde_json::from_value(field("atom_type"))?,
        coordinates: serde_json::from_value(field("coordinates"))?,
        key_padding_mask: serde_json::from_value(field("key_padding_mask"))?,
        has_3d: serde_json::from_value(field("has_3d"))?,
    })
}

/// Times our Transformer-M on the batch at `batch_path`: `train` false is the regression
/// forward (split into `parts` across threads, `TransformerM::forward_parallel`), true one
/// Adam step on the MSE of the plain forward. Returns (median seconds per
/// call, timed calls, molecules in the batch).
pub fn time_row(
    batch_path: &Path,
    train: bool,
    parts: usize,
    device: &Device,
    seconds: f64,
    time_calls: impl Fn(&mut dyn FnMut() -> Result<()>, f64) -> Result<(f64, usize)>,
) -> Result<(f64, usize, usize)> {
    // `time_calls` is passed in so that both model families share one timing rule.
    let data = read_batch(batch_path)?;
    let modes = vec![Mode::Both; data.batch_size];
    if !train {
        let net = config().init(device);
        let batch = TransformerMBatch::from_data(&data, &modes, device);
        let (median, runs) = time_calls(
            &mut || {
                net.forward_parallel(&batch, parts)
                    .try_into_vec_as::<f32>()?;
                Ok(())
            },
            seconds,
        )?;
        return Ok((median, runs, data.batch_size));
    }
    let ad = device.clone().autodiff();
    let mut net = Some(config().init(&ad));
    let mut optim = FusedAdamConfig::new().with_epsilon(1e-8).init();
    let batch = TransformerMBatch::from_data(&data, &modes, &ad);
    let b = data.batch_size;
    let target = regression_target(b, &ad);
    let (median, runs) = time_calls(
        &mut || {
            let m = net.take().expect("model is put back after each step");
            let loss = MseLoss::new().forward(m.forward(&batch), target.clone(), Reduction::Mean);
            let grads = GradientsParams::from_grads(loss.backward(), &m);
            let m = optim.step(1e-4, m, grads);
            // Read one parameter back, so that the lazy step has run.
            m.head.out.weight.val().into_data();
            net = Some(m);
            Ok(())
        },
        seconds,
    )?;
    Ok((median, runs, b))
}
