//! Transformer-M on a QM9 subset with its DFT geometries (2D, 3D or mixed modes; Luo et
//! al. 2022 section 4), reporting the test MAE in the target's unit (and eV for Hartree
//! targets).
//!
//! Splits: the QM9 molecules are shuffled with `subset_seed`, positions
//! `offset..offset + limit` form the subset, and the subset is split 80/10/10 with
//! `train.seed`. Pretraining on `offset = 10000` therefore never sees the molecules of
//! a 10k fine-tuning subset with the same seed.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use burn::prelude::*;
use models::transformer_m::{Mode, TransformerM};
use mol_featurize::graphormer::GraphormerFeatures;
use mol_featurize::{ConformerOptions, GraphormerFeaturizer, featurize_all_with_coordinates};
use serde::{Deserialize, Serialize};

use super::step::TmExample;
use super::{Qm9Subset, TmData, TmRunSpec, fit, predict_raw};
use crate::checkpoint::write_json;
use crate::engine::MetricKind;
use crate::error::TrainError;
use crate::masked_loss::LossKind;
use crate::metrics::mae;
use crate::qm9::{HARTREE_EV, Qm9};
use crate::run_control::RunControl;
use crate::run_folder::RunFolder;
use crate::splits::random_split;
use crate::task::Task;

/// Metrics of a finished run (`metrics.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TmSummary {
    /// Target column.
    pub target: String,
    /// Its unit.
    pub units: String,
    /// Test MAE in target units.
    pub test_mae: f64,
    /// Test MAE in eV (Hartree targets only).
    pub test_mae_ev: Option<f64>,
    /// Validation MAE (best epoch) in target units.
    pub valid_mae: f64,
    /// Train MAE in target units.
    pub train_mae: f64,
    /// Mean-predictor test MAE (training mean), for scale.
    pub test_mae_of_mean: f64,
    /// Molecules per part.
    pub n_train: usize,
    /// Validation molecules.
    pub n_valid: usize,
    /// Test molecules.
    pub n_test: usize,
    /// Subset molecules that could not be featurized.
    pub n_skipped: usize,
    /// Epochs run.
    pub epochs: usize,
    /// Best validation epoch.
    pub best_epoch: usize,
    /// Seconds spent featurizing.
    pub featurize_seconds: f64,
    /// Seconds spent training (incl. validation).
    pub train_seconds: f64,
    /// Trainable parameters.
    pub n_params: usize,
    /// Training modes and evaluation mode, for the record.
    pub eval_mode: Mode,
}

impl std::fmt::Display for TmSummary {
    /// One line: test MAE (in eV too for Hartree targets) against the mean predictor,
    /// validation MAE, split sizes, best epoch, times and parameters.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ev = self
            .test_mae_ev
            .map(|v| format!(" = {v:.4} eV"))
            .unwrap_or_default();
        write!(
            f,
            "{}: test MAE {:.5} {}{ev} (mean predictor {:.5}); valid {:.5}; {} / {} / {} \
             molecules; best epoch {} of {}; {:.0} s training, {:.0} s featurizing; {} \
             parameters",
            self.target,
            self.test_mae,
            self.units,
            self.test_mae_of_mean,
            self.valid_mae,
            self.n_train,
            self.n_valid,
            self.n_test,
            self.best_epoch,
            self.epochs,
            self.train_seconds,
            self.featurize_seconds,
            self.n_params
        )
    }
}

/// Featurized molecules of `subset` (in its order) with their dataset rows. Molecules
/// that fail are written with their reasons to `run_dir/featurize_report.json` and counted (the
/// second value); the first is printed.
pub(crate) fn featurize_subset(
    qm9: &Qm9,
    subset: &Qm9Subset,
    max_hops: usize,
    run_dir: &Path,
) -> Result<(Vec<(usize, GraphormerFeatures)>, usize), TrainError> {
    let rows = subset.rows(qm9.len());
    let smiles: Vec<String> = rows.iter().map(|&r| qm9.index.smiles[r].clone()).collect();
    let coordinates: Vec<Option<Vec<[f64; 3]>>> = rows
        .iter()
        .map(|&r| {
            Some(
                qm9.coordinates_of(r)
                    .iter()
                    .map(|p| p.map(f64::from))
                    .collect(),
            )
        })
        .collect();
    let featurizer = GraphormerFeaturizer {
        max_hops,
        conformer: ConformerOptions::default(),
    };
    let (features, report) = featurize_all_with_coordinates(&smiles, &coordinates, &featurizer);
    write_json(&run_dir.join("featurize_report.json"), &report)?;
    if let Some(first) = report.skipped.first() {
        eprintln!(
            "featurize: skipped {} of {} molecules (see featurize_report.json); first: {}",
            report.n_skipped, report.n_total, first.reason
        );
    }
    let kept = rows
        .iter()
        .zip(features)
        .filter_map(|(&r, f)| f.map(|f| (r, f)))
        .collect();
    Ok((kept, report.n_skipped))
}

/// Predictions of a one-target QM9 run in target units.
fn predict(
    model: &TransformerM,
    spec: &TmRunSpec,
    part: &[&GraphormerFeatures],
    device: &Device,
) -> Result<Vec<f32>, TrainError> {
    let labels = spec.labels();
    Ok(predict_raw(
        model,
        part,
        &spec.model.limits,
        spec.eval_mode,
        spec.train.batch_size,
        device,
    )?
    .iter()
    .map(|r| labels.unscale(r)[0])
    .collect())
}

/// Trains a Transformer-M on a QM9 subset as described by `spec` on the training engine
/// ([`crate::engine`]: resume, several devices, progress as `control` says), writing into
/// `run_dir`: `run.json`, `best_model.bpk`, `metrics.json`, `curves.png`,
/// `featurize_report.json`, burn-train's `train/`, `valid/` and `checkpoint/`. `device`
/// is the plain device (evaluation; training runs on the main device's autodiff twin).
///
/// # Errors
/// Dataset, model-file or I/O errors naming the file; an empty split.
pub fn train_transformer_m(
    spec: &TmRunSpec,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
) -> Result<TmSummary, TrainError> {
    spec.train.validate()?;
    // QM9 is a fixed dataset; the subset is part of the spec.
    let folder = RunFolder::claim(run_dir, control.resume, control.force, &[])?;
    let TmData::Qm9(subset) = &spec.data else {
        return Err(TrainError::Invalid(
            "train_transformer_m trains on QM9; a table run goes through \
             train_table_transformer_m"
                .into(),
        ));
    };
    let [target] = &spec.target_columns[..] else {
        return Err(TrainError::Invalid(format!(
            "a QM9 run takes one target, not {}",
            spec.target_columns.len()
        )));
    };
    let qm9 = Qm9::load(&subset.dataset)?;
    let column = qm9.column(target)?;
    let mut spec = spec.clone();
    spec.target_columns = vec![qm9.index.columns[column].clone()];
    spec.task = Task::Regression;
    let units = qm9.index.units[column].clone();

    let t0 = Instant::now();
    let (features, n_skipped) =
        featurize_subset(&qm9, subset, spec.model.limits.max_hops, run_dir)?;
    let featurize_seconds = t0.elapsed().as_secs_f64();
    let positions: Vec<usize> = (0..features.len()).collect();
    let split = random_split(&positions, (0.8, 0.1), spec.train.seed);
    if split.train.is_empty() || split.valid.is_empty() || split.test.is_empty() {
        return Err(TrainError::Invalid(format!(
            "{} molecules are too few for an 80/10/10 split",
            features.len()
        )));
    }
    let part = |idx: &[usize]| -> (Vec<&GraphormerFeatures>, Vec<f32>) {
        (
            idx.iter().map(|&p| &features[p].1).collect(),
            idx.iter()
                .map(|&p| qm9.target(features[p].0, column))
                .collect(),
        )
    };
    let (train_x, train_y) = part(&split.train);
    let (valid_x, valid_y) = part(&split.valid);
    let (test_x, test_y) = part(&split.test);
    let n = train_y.len() as f32;
    let mean = train_y.iter().sum::<f32>() / n;
    let std = (train_y.iter().map(|y| (y - mean).powi(2)).sum::<f32>() / n)
        .sqrt()
        .max(1e-6);
    (spec.target_mean, spec.target_std) = (vec![mean], vec![std]);
    folder.write_spec(&spec)?;

    let (mean, std) = (spec.target_mean.clone(), spec.target_std.clone());
    let examples = |x: &[&GraphormerFeatures], y: &[f32], rows: &[usize]| -> Arc<Vec<TmExample>> {
        Arc::new(
            x.iter()
                .zip(y)
                .zip(rows)
                .map(|((f, &t), &row)| TmExample {
                    row,
                    features: (*f).clone(),
                    targets: vec![t],
                })
                .collect(),
        )
    };
    let rows = |idx: &[usize]| -> Vec<usize> { idx.iter().map(|&p| features[p].0).collect() };
    let (outcome, best_model) = fit(
        &spec,
        MetricKind::Mae,
        &mean,
        &std,
        (run_dir, control, device),
        examples(&train_x, &train_y, &rows(&split.train)),
        examples(&valid_x, &valid_y, &rows(&split.valid)),
    )?;
    let n_params = best_model.num_params();
    let test_pred = predict(&best_model, &spec, &test_x, device)?;
    let train_pred = predict(&best_model, &spec, &train_x, device)?;
    let test_mae = mae(&test_pred, &test_y);
    let mean_pred = vec![mean[0]; test_y.len()];
    let summary = TmSummary {
        target: spec.target_columns[0].clone(),
        units: units.clone(),
        test_mae,
        test_mae_ev: units
            .starts_with("Hartree")
            .then_some(test_mae * HARTREE_EV),
        // The best epoch's validation MAE, as the engine measured it (target units).
        valid_mae: outcome.history[outcome.best_epoch - 1].valid_metric,
        train_mae: mae(&train_pred, &train_y),
        test_mae_of_mean: mae(&mean_pred, &test_y),
        n_train: train_x.len(),
        n_valid: valid_x.len(),
        n_test: test_x.len(),
        n_skipped,
        epochs: outcome.history.len(),
        best_epoch: outcome.best_epoch,
        featurize_seconds,
        train_seconds: outcome.train_seconds,
        n_params,
        eval_mode: spec.eval_mode,
    };
    write_json(&run_dir.join("metrics.json"), &summary)?;
    let train_curve: Vec<f64> = outcome.history.iter().map(|h| h.train_loss).collect();
    let valid_curve: Vec<f64> = outcome
        .history
        .iter()
        .map(|h| h.valid_metric / std[0] as f64)
        .collect();
    crate::plot::curves(
        &run_dir.join("curves.png"),
        &format!(
            "Transformer-M on QM9 {}: {} (standardised)",
            spec.target_columns[0],
            if spec.loss == LossKind::Mse {
                "MSE"
            } else {
                "L1"
            }
        ),
        "epoch",
        &[
            (&train_curve, "train loss"),
            (&valid_curve, "valid MAE / std"),
        ],
        "standardised",
    )?;
    Ok(summary)
}
