//! Transformer-M 3D position-denoising pretraining on QM9 coordinates: Gaussian noise on
//! heavy-atom positions, the denoising head predicts it, loss `1 - cos` per atom
//! ([`crate::denoising::denoising_loss`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::Distribution;
use models::transformer_m::{Mode, TransformerMBatch, TransformerMConfig};
use mol_featurize::graphormer::GraphormerFeatures;
use mol_featurize::pad_graphormer_batch;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use super::{Qm9Subset, featurize_subset, warmup_linear};
use crate::checkpoint::write_json;
use crate::denoising::denoising_loss;
use crate::error::TrainError;
use crate::qm9::Qm9;

/// Settings of denoising pretraining (`pretrain.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PretrainSpec {
    /// Molecules.
    pub data: Qm9Subset,
    /// Model (its denoising head is trained; the regression head is untouched).
    pub model: TransformerMConfig,
    /// Optimisation steps.
    pub steps: usize,
    /// Molecules per step.
    pub batch_size: usize,
    /// Peak learning rate.
    pub learning_rate: f64,
    /// Warm-up steps (then linear decay).
    pub warmup_steps: usize,
    /// Standard deviation of the coordinate noise (Angstrom).
    pub noise_std: f64,
    /// Seed.
    pub seed: u64,
}

/// Result of [`pretrain_denoising`] (`pretrain_metrics.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PretrainSummary {
    /// Loss (1 - cos) per step.
    pub loss: Vec<f64>,
    /// Mean loss over the first 10% of steps.
    pub loss_start: f64,
    /// Mean loss over the last 10% of steps.
    pub loss_end: f64,
    /// Molecules used.
    pub n_molecules: usize,
    /// Seconds.
    pub seconds: f64,
}

/// 3D position-denoising pretraining in [`Mode::ThreeD`]: writes `pretrain.json`,
/// `featurize_report.json` (molecules that could not be featurized, with reasons),
/// `pretrained_model.bpk` (load with `TmRunSpec::init_from` and the same model
/// configuration), `pretrain_metrics.json` and `pretrain_loss.png`.
///
/// # Errors
/// Dataset or I/O errors; a configuration without a denoising head.
pub fn pretrain_denoising(
    spec: &PretrainSpec,
    run_dir: &Path,
    progress: bool,
    device: &Device,
) -> Result<PretrainSummary, TrainError> {
    if !spec.model.denoising_head {
        return Err(TrainError::Invalid(
            "denoising pretraining needs denoising_head = true".into(),
        ));
    }
    std::fs::create_dir_all(run_dir).map_err(|e| TrainError::io(run_dir, e))?;
    write_json(&run_dir.join("pretrain.json"), spec)?;
    let qm9 = Qm9::load(&spec.data.dataset)?;
    let (features, _) = featurize_subset(&qm9, &spec.data, spec.model.limits.max_hops, run_dir)?;
    if features.is_empty() {
        return Err(TrainError::Invalid("no molecule to pretrain on".into()));
    }
    let ad = device.clone().autodiff();
    ad.seed(spec.seed);
    let mut model = spec.model.init(&ad);
    let mut optim = AdamConfig::new().init();
    let mut rng = StdRng::seed_from_u64(spec.seed);
    let mut order: Vec<usize> = Vec::new();
    let mut losses = Vec::with_capacity(spec.steps);
    let started = Instant::now();
    for step in 1..=spec.steps {
        if order.len() < spec.batch_size {
            let mut epoch: Vec<usize> = (0..features.len()).collect();
            epoch.shuffle(&mut rng);
            order.extend(epoch);
        }
        let chunk: Vec<usize> = order.drain(..spec.batch_size.min(order.len())).collect();
        let feats: Vec<&GraphormerFeatures> = chunk.iter().map(|&i| &features[i].1).collect();
        let data = pad_graphormer_batch(&feats, &spec.model.limits)
            .map_err(|e| TrainError::Invalid(e.to_string()))?;
        let batch = TransformerMBatch::from_data(&data, &vec![Mode::ThreeD; chunk.len()], &ad);
        let [b, n] = batch.key_padding_mask.dims();
        let real = batch
            .key_padding_mask
            .clone()
            .bool_not()
            .float()
            .reshape([b, n, 1]);
        let noise =
            Tensor::<3>::random([b, n, 3], Distribution::Normal(0.0, spec.noise_std), &ad) * real;
        let noisy = batch.coordinates.clone() + noise.clone();
        let batch = batch.with_coordinates(noisy);
        let out = model.encode(&batch);
        let predicted = model
            .denoise(&out)
            .expect("checked: denoising head present");
        let loss = denoising_loss(predicted, noise, batch.key_padding_mask.clone());
        let value = loss.clone().into_scalar::<f32>() as f64;
        losses.push(value);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        let lr = warmup_linear(step, spec.warmup_steps, spec.steps, spec.learning_rate);
        model = optim.step(lr, model, grads);
        if progress && (step % 25 == 0 || step == 1 || step == spec.steps) {
            eprintln!(
                "step {step:>4}  denoising loss {value:.4}  {:.0}s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    let path = run_dir.join("pretrained_model.bpk");
    model
        .valid()
        .save_file(&path)
        .map_err(|e| TrainError::Checkpoint {
            path: path.clone(),
            reason: format!("{e:?}"),
        })?;
    let tenth = (losses.len() / 10).max(1);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let smooth: Vec<f64> = (0..losses.len())
        .map(|i| mean(&losses[i.saturating_sub(tenth - 1)..=i]))
        .collect();
    let summary = PretrainSummary {
        loss_start: mean(&losses[..tenth]),
        loss_end: mean(&losses[losses.len() - tenth..]),
        loss: losses.clone(),
        n_molecules: features.len(),
        seconds: started.elapsed().as_secs_f64(),
    };
    write_json(&run_dir.join("pretrain_metrics.json"), &summary)?;
    crate::plot::curves(
        &run_dir.join("pretrain_loss.png"),
        "Transformer-M 3D denoising pretraining on QM9: 1 - cos",
        "step",
        &[
            (&losses, "per step"),
            (&smooth, &format!("mean of last {tenth}")),
        ],
        "1 - cos(predicted, noise)",
    )?;
    Ok(summary)
}

impl PretrainSpec {
    /// Warm-up steps of a pretraining run of `steps` steps: 10%, at least 1.
    pub fn warmup_steps_for(steps: usize) -> usize {
        (steps / 10).max(1)
    }
}

/// `--init-from`: a pretraining run directory (its `pretrain.json` gives the model
/// configuration, which replaces `model` except for `num_targets`) or a model file
/// (`model` must be the configuration it was saved with). Returns the model file and the
/// configuration to build. `size_given`: the user set a size explicitly, so a pretraining
/// run of another size is an error rather than silently adopted.
///
/// # Errors
/// [`TrainError::Checkpoint`] for a directory that is not a pretraining run, an
/// unreadable `pretrain.json`, a missing path, or a size conflict.
pub fn resolve_init_from(
    path: &Path,
    model: TransformerMConfig,
    size_given: bool,
) -> Result<(PathBuf, TransformerMConfig), TrainError> {
    let bad = |reason: String| TrainError::Checkpoint {
        path: path.to_path_buf(),
        reason,
    };
    if path.is_file() {
        return Ok((path.to_path_buf(), model));
    }
    if !path.is_dir() {
        return Err(bad("no such file or directory".into()));
    }
    let file = path.join("pretrained_model.bpk");
    let spec_path = path.join("pretrain.json");
    if !file.exists() || !spec_path.exists() {
        return Err(bad(
            "not a pretraining run (expected pretrained_model.bpk and pretrain.json from \
             `cargo xtask pretrain`)"
                .into(),
        ));
    }
    let text = std::fs::read_to_string(&spec_path).map_err(|e| bad(e.to_string()))?;
    let pre: PretrainSpec = serde_json::from_str(&text)
        .map_err(|e| bad(format!("pretrain.json is not a pretraining spec: {e}")))?;
    let size = |c: &TransformerMConfig| {
        (
            c.num_layers,
            c.d_model,
            c.ffn_dim,
            c.num_heads,
            c.num_kernels,
            c.layer_norm,
        )
    };
    if size_given && size(&pre.model) != size(&model) {
        return Err(bad(format!(
            "pretrained with (layers, d_model, ffn, heads, kernels, layer norm) = {:?}, but \
             this run asks for {:?}; drop the size flags to use the pretrained size",
            size(&pre.model),
            size(&model)
        )));
    }
    let num_targets = model.num_targets;
    Ok((file, pre.model.with_num_targets(num_targets)))
}
