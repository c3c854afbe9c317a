//! Transformer-M pretraining on QM9's DFT coordinates or on the conformers of the user's
//! own SMILES: Gaussian noise on heavy-atom positions, the denoising head predicts it, loss
//! `1 - cos` per atom ([`crate::denoising::denoising_loss`]); or the original's joint
//! objective ([`super::joint`]: that term plus the supervised L1 on QM9's HOMO-LUMO gap,
//! modes mixed, in one step).

use std::path::Path;
use std::sync::Arc;

use crate::engine::fused_adam::FusedAdamConfig;
use burn::prelude::*;
use models::transformer_m::{Mode, TransformerMConfig};
use mol_featurize::graphormer::GraphormerFeatures;
use mol_featurize::{GraphormerFeaturizer, SkippedMolecule};
use serde::{Deserialize, Serialize};

use super::joint::{JointTerms, TmJointLearner};
use super::step::{ModeChoice, TmBatcher, TmDenoiser, TmExample};
use super::{Qm9Subset, SmilesSource};
use crate::checkpoint::write_json;
use crate::engine::schedule::WarmupLinear;
use crate::engine::{self, FitSettings, Selection};
use crate::error::TrainError;
use crate::mode_sampling::ModeProbabilities;
use crate::qm9_table::qm9_geometries;
use crate::run_control::RunControl;
use crate::run_folder::RunFolder;
use crate::table_data::MoleculeSource;
use crate::target_scaling::TargetScaling;

/// Electronvolts per Hartree ([`crate::qm9::HARTREE_EV`]): the joint objective's labels
/// are QM9's gap in eV, the unit of PCQM4Mv2's gap that the original pretrains on.
pub const EV_PER_HARTREE: f64 = crate::qm9::HARTREE_EV;

/// The QM9 column the joint objective predicts (qm9pack's name; Hartree).
pub const JOINT_TARGET: &str = "HOMO_LUMO_gap_au";

/// What a pretraining run optimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PretrainObjective {
    /// The denoising term alone, every molecule in 3D mode (runs written before the
    /// joint objective existed).
    #[default]
    Denoising,
    /// The original's PCQM4Mv2 objective (`graph_prediction`, [`super::joint`]): noise,
    /// the supervised L1 on the graph token plus the denoising term, modes drawn per
    /// molecule ([`PretrainSpec::modes`]). Needs labels: QM9's HOMO-LUMO gap.
    Joint,
}

/// Share of the pretraining molecules held out to report a validation denoising loss
/// (at least one molecule).
pub const PRETRAIN_VALID_FRACTION: f64 = 0.05;

/// The molecules of a pretraining run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PretrainData {
    /// A QM9 subset with its DFT geometries.
    Qm9(Qm9Subset),
    /// The user's SMILES with ETKDG + UFF conformers (molecules without a 3D conformer
    /// are left out and counted in `featurize_report.json`).
    Smiles(SmilesSource),
}

/// Settings of denoising pretraining (`pretrain.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PretrainSpec {
    /// Molecules.
    pub data: PretrainData,
    /// Model (its denoising head is trained; the regression head too with the joint
    /// objective, untouched by denoising alone).
    #[serde(deserialize_with = "crate::run_compat::tm_config")]
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
    /// What is optimised (denoising in runs written before 2026-12-05).
    #[serde(default)]
    pub objective: PretrainObjective,
    /// Joint objective: each molecule's mode, drawn per step (the original's `mode_prob`,
    /// 0.2 / 0.2 / 0.6 over 2D+3D, 2D, 3D); validation runs every molecule in 2D+3D with
    /// its denoising counted, as the original's evaluation (no mode mask).
    #[serde(default = "ModeProbabilities::new")]
    pub modes: ModeProbabilities,
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
    /// Molecules used (trained on, and the held-out share).
    pub n_molecules: usize,
    /// Loss on the held-out molecules after the last epoch (the joint objective: both
    /// terms, evaluated as the original: 2D+3D, every molecule's denoising counted).
    #[serde(default)]
    pub valid_loss: f64,
    /// Joint objective: the held-out terms after the last step, evaluated as the
    /// original: the gap's mean absolute error (eV) and the denoising term.
    #[serde(default)]
    pub valid_terms: Option<JointTerms>,
    /// Seconds.
    pub seconds: f64,
}

/// 3D position-denoising pretraining in [`Mode::ThreeD`] on the training engine
/// (resume, several devices; [`PRETRAIN_VALID_FRACTION`] of the molecules held out for a
/// validation loss; the step budget cut into epochs): writes `pretrain.json`,
/// `featurize_report.json` (molecules that could not be featurized, with reasons),
/// `pretrained_model.bpk` (load with `TmRunSpec::init_from` and the same model
/// configuration), `pretrain_metrics.json` and `pretrain_loss.png`.
///
/// # Errors
/// Dataset or I/O errors; a configuration without a denoising head.
pub fn pretrain_denoising(
    spec: &PretrainSpec,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
) -> Result<PretrainSummary, TrainError> {
    if !spec.model.denoising_head {
        return Err(TrainError::Invalid(
            "denoising pretraining needs denoising_head = true".into(),
        ));
    }
    if spec.batch_size == 0 || spec.steps == 0 {
        return Err(TrainError::Invalid(format!(
            "batch size {} and steps {}: both must be at least 1",
            spec.batch_size, spec.steps
        )));
    }
    if !(spec.learning_rate.is_finite() && spec.learning_rate > 0.0) {
        return Err(TrainError::Invalid(format!(
            "learning rate {}: it must be a finite number above 0",
            spec.learning_rate
        )));
    }
    let joint = spec.objective == PretrainObjective::Joint;
    if joint {
        if !matches!(spec.data, PretrainData::Qm9(_)) {
            return Err(TrainError::Invalid(
                "the joint objective needs labelled 3D molecules: QM9 (its HOMO-LUMO gap), \
                 not --data (SMILES carry no label here)"
                    .into(),
            ));
        }
        if spec.model.num_targets != 1 {
            return Err(TrainError::Invalid(format!(
                "the joint objective predicts one label (the gap); the model has {} outputs",
                spec.model.num_targets
            )));
        }
        spec.modes.validate()?;
    }
    let data: Vec<&Path> = match &spec.data {
        PretrainData::Smiles(source) => vec![source.path.as_path()],
        // QM9 is a fixed dataset; the subset is part of the spec.
        PretrainData::Qm9(_) => Vec::new(),
    };
    let folder = RunFolder::claim(run_dir, control.resume, control.force, &data)?;
    folder.write_definition("pretrain.json", spec)?;
    if !control.resume {
        // A fresh (or --force) run: no model of an earlier run stands beside this spec.
        for file in [
            "pretrained_model.bpk",
            "pretrain_metrics.json",
            "pretrain_loss.png",
        ] {
            let _ = std::fs::remove_file(run_dir.join(file));
        }
    }
    let (molecules, conformer) = match &spec.data {
        PretrainData::Qm9(subset) => (MoleculeSource::qm9(subset), qm9_geometries()),
        PretrainData::Smiles(source) => (source.molecule_source(), source.conformer.clone()),
    };
    let featurizer = GraphormerFeaturizer {
        max_hops: spec.model.limits.max_hops,
        conformer,
    };
    let targets = if joint {
        vec![JOINT_TARGET.to_string()]
    } else {
        Vec::new()
    };
    let features = featurize_conformers(&molecules, &targets, &featurizer, control, run_dir)?;
    if features.is_empty() {
        return Err(TrainError::Invalid("no molecule to pretrain on".into()));
    }
    let devices = control.devices_or(device);
    let ad = devices.main().clone().autodiff();
    ad.seed(spec.seed);
    let model = spec.model.init(&ad);
    let examples: Vec<TmExample> = features
        .into_iter()
        .map(|(row, features, targets)| TmExample {
            row,
            features,
            targets,
        })
        .collect();
    let n_molecules = examples.len();
    let n_valid = ((n_molecules as f64 * PRETRAIN_VALID_FRACTION).round() as usize)
        .max(1)
        .min(n_molecules.saturating_sub(1));
    if n_molecules < 2 {
        return Err(TrainError::Invalid(
            "pretraining needs at least 2 molecules (one is held out for validation)".into(),
        ));
    }
    let (train, valid) = examples.split_at(n_molecules - n_valid);
    // Validation: denoising-only in 3D; the joint objective as the original evaluates it
    // (no mode mask: 2D+3D).
    let batcher = TmBatcher {
        limits: spec.model.limits,
        modes: ModeChoice::Fixed(if joint { Mode::Both } else { Mode::ThreeD }),
        // Joint: Hartree -> eV (standardising with mean 0 and std 1 / EV_PER_HARTREE).
        scaling: if joint {
            TargetScaling {
                mean: vec![0.0],
                std: vec![(1.0 / EV_PER_HARTREE) as f32],
            }
        } else {
            TargetScaling::default()
        },
        loss: crate::masked_loss::LossKind::L1,
        noise_std: Some(spec.noise_std),
        joint,
        loss_scale: crate::masked_loss::LossScale::StdLabels,
    };
    let train_batcher = if joint {
        TmBatcher {
            modes: ModeChoice::Sample(spec.modes.clone()),
            ..batcher.clone()
        }
    } else {
        batcher.clone()
    };
    let mut settings = FitSettings {
        run_dir: run_dir.to_path_buf(),
        epochs: 0,
        // Pretraining runs its whole step budget.
        patience: usize::MAX,
        selection: Selection::Loss,
        batch_size: spec.batch_size.max(1),
        seed: spec.seed,
        resume: control.resume,
        devices,
        progress: control.progress,
        interrupt_after_batches: control.interrupt_after_batches,
        checkpoints_per_epoch: control.checkpoints_per_epoch,
        max_steps: Some(spec.steps),
    };
    // The step budget cut into epochs (the last one partial).
    settings.epochs = spec
        .steps
        .div_ceil(settings.steps_per_epoch(train.len()).max(1));
    let (train, valid) = (Arc::new(train.to_vec()), Arc::new(valid.to_vec()));
    // One call for either learner (engine::fit is generic over the step type).
    macro_rules! fit {
        ($learner:expr) => {
            engine::fit(
                $learner,
                FusedAdamConfig::new().init(),
                WarmupLinear::new(spec.learning_rate, spec.warmup_steps, spec.steps).into(),
                train,
                train_batcher,
                valid.clone(),
                batcher.clone(),
                &settings,
            )?
        };
    }
    let outcome = if joint {
        fit!(TmJointLearner { model })
    } else {
        fit!(TmDenoiser { model })
    };
    // The model after the last step (not the best validation epoch): what the original
    // pretraining hands to fine-tuning.
    let last = outcome.history.len();
    let pretrained = engine::export_checkpoint(
        TmDenoiser {
            model: spec.model.init(device),
        },
        |d| d.model,
        run_dir,
        last,
        "pretrained_model.bpk",
    )?;
    let valid_terms = if joint {
        Some(super::joint::held_out_terms(
            &pretrained,
            &valid,
            &batcher,
            spec.seed,
            device,
        )?)
    } else {
        None
    };
    // burn-train logs one loss per batch; a step takes one batch per device.
    let per_device = settings.devices.len().max(1);
    let losses: Vec<f64> = (1..=last)
        .flat_map(|epoch| {
            let batches = engine::logged_batches(run_dir, "train", epoch, "Loss");
            batches
                .chunks(per_device)
                .map(|step| step.iter().sum::<f64>() / step.len() as f64)
                .collect::<Vec<_>>()
        })
        .collect();
    let tenth = (losses.len() / 10).max(1);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let smooth: Vec<f64> = (0..losses.len())
        .map(|i| mean(&losses[i.saturating_sub(tenth - 1)..=i]))
        .collect();
    let summary = PretrainSummary {
        loss_start: mean(&losses[..tenth]),
        loss_end: mean(&losses[losses.len() - tenth..]),
        loss: losses.clone(),
        n_molecules,
        valid_loss: outcome.history.last().map_or(f64::NAN, |h| h.valid_loss),
        valid_terms,
        seconds: outcome.train_seconds,
    };
    write_json(&run_dir.join("pretrain_metrics.json"), &summary)?;
    crate::plot::curves(
        &run_dir.join("pretrain_loss.png"),
        if joint {
            "Transformer-M joint pretraining: L1 (gap, eV) + (1 - cos)"
        } else {
            "Transformer-M 3D denoising pretraining: 1 - cos"
        },
        "step",
        &[
            (&losses, "per step"),
            (&smooth, &format!("mean of last {tenth}")),
        ],
        if joint {
            "L1 + (1 - cos)"
        } else {
            "1 - cos(predicted, noise)"
        },
    )?;
    Ok(summary)
}

/// The molecules of `molecules` that have 3D coordinates (the file's, or a conformer made
/// as `featurizer` says), with their rows and their `targets` columns; the others
/// (unparsable, or left with a 2D layout or topological distances) are written with their
/// reasons to `run_dir/featurize_report.json` and counted on stderr.
///
/// # Errors
/// An unreadable file or column; an unwritable report.
fn featurize_conformers(
    molecules: &MoleculeSource,
    targets: &[String],
    featurizer: &GraphormerFeaturizer,
    control: &RunControl,
    run_dir: &Path,
) -> Result<Vec<(usize, GraphormerFeatures, Vec<f32>)>, TrainError> {
    // Through the table reader: an SDF's unreadable records keep their own reasons.
    let data = molecules.read(targets)?;
    let smiles = &data.table.smiles;
    let (features, mut report) = control.featurize_table(featurizer, &data)?;
    crate::print_cache_report(&report);
    let mut kept = Vec::new();
    for (row, f) in features.into_iter().enumerate() {
        let Some(f) = f else { continue };
        if f.coordinates.is_some() {
            let labels = data.table.targets.get(row).cloned().unwrap_or_default();
            kept.push((row, f, labels));
        } else {
            report.skipped.push(SkippedMolecule {
                row,
                smiles: smiles[row].clone(),
                kind: "no_3d".into(),
                reason: format!(
                    "{}: no 3D conformer ({:?}), nothing to denoise",
                    smiles[row], f.coordinate_source
                ),
            });
        }
    }
    report.skipped.sort_by_key(|s| s.row);
    report.n_skipped = report.skipped.len();
    report.n_ok = kept.len();
    write_json(&run_dir.join("featurize_report.json"), &report)?;
    if report.n_skipped > 0 {
        eprintln!(
            "featurize: {} of {} molecules left out (see featurize_report.json); first: {}",
            report.n_skipped, report.n_total, report.skipped[0].reason
        );
    }
    Ok(kept)
}

impl PretrainSpec {
    /// Warm-up steps of a pretraining run of `steps` steps: 10%, at least 1.
    pub fn warmup_steps_for(steps: usize) -> usize {
        (steps / 10).max(1)
    }
}
