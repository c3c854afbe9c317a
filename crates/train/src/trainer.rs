//! MAT training: CSV -> featurize -> split -> Adam + Noam -> early stopping -> best
//! checkpoint -> test metrics.
//!
//! Recipe (docs/SPEC.md 1.2, gmum/huggingmolecules): Adam, Noam schedule with warm-up over
//! the first 20% of steps, batch 32, up to 100 epochs, MSE for regression and BCE with
//! logits for classification. Early stopping watches validation RMSE (regression) or
//! ROC-AUC (classification); the best epoch's weights are kept.
//!
//! Training runs on the engine ([`crate::engine`], burn-train's `Learner`): exact resume
//! from the last complete checkpoint, several devices, progress lines or the dashboard.
//! Multi-task tables: one output per target column, missing labels masked per task.
//! Exactness of resume holds for one training per process: Burn's CPU backend draws
//! every random number from one process-wide generator, so trainings running
//! concurrently in one process interleave their draws.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use burn::optim::AdamConfig;
use burn::prelude::*;
use models::MatModel;
use models::mat::LoadParts;
use mol_featurize::{FeaturizeReport, MatFeatures, featurize_all_cached};

use crate::checkpoint::write_json;
use crate::data::MoleculeTable;
use crate::engine::{self, FitSettings, MetricKind, Progress, Selection, TaskMetric};
use crate::error::TrainError;
use crate::evaluation::{Part, part_metrics, write_test_predictions};
use crate::mat_step::{MatBatcher, MatExample, MatLearner};
use crate::report::TrainSummary;
use crate::run_control::RunControl;
use crate::run_spec::{RunSpec, Task};
use crate::splits::split_rows;

/// Trains a MAT as described by `spec`, writing into `run_dir`: `run.json`,
/// `featurize_report.json`, burn-train's `train/`, `valid/` (metric logs) and
/// `checkpoint/`, `best_model.bpk`, `metrics.json`, `curves.png`,
/// `test_predictions.csv`.
///
/// `device` is the plain (non-autodiff) device; training runs on `device.autodiff()`.
///
/// # Errors
/// Dataset, split, checkpoint or I/O errors ([`TrainError`]), each naming the file.
pub fn train_run(
    spec: &RunSpec,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
) -> Result<TrainSummary, TrainError> {
    std::fs::create_dir_all(run_dir).map_err(|e| TrainError::io(run_dir, e))?;
    if spec.featurizer.d_atom() != spec.model.d_atom {
        return Err(TrainError::Invalid(format!(
            "featurizer gives d_atom {} but the model expects {}",
            spec.featurizer.d_atom(),
            spec.model.d_atom
        )));
    }
    let table = MoleculeTable::read_delimited(
        &spec.data,
        &spec.smiles_column,
        &spec.target_columns,
        crate::data::delimiter_byte(spec.delimiter)?,
    )?;
    if table.is_empty() {
        return Err(TrainError::Invalid(format!(
            "{}: no rows",
            spec.data.display()
        )));
    }

    let t0 = Instant::now();
    let cache = crate::open_conformer_cache(control.conformer_cache.as_deref());
    let (features, report) = featurize_all_cached(
        &table.smiles,
        &spec.featurizer,
        control.progress != Progress::Quiet,
        cache.as_ref(),
    );
    crate::print_cache_report(&report);
    let featurize_seconds = t0.elapsed().as_secs_f64();
    let (mut features, report) = drop_unlabelled(&table, features, report);
    write_json(&run_dir.join("featurize_report.json"), &report)?;
    if report.n_skipped > 0 {
        eprintln!(
            "featurize: skipped {} of {} rows (see {}):",
            report.n_skipped,
            report.n_total,
            run_dir.join("featurize_report.json").display()
        );
        for s in report.skipped.iter().take(10) {
            eprintln!("  row {}: {}", s.row, s.reason);
        }
    }

    let split = split_rows(&spec.split, &table, &features)?;
    let keep = |rows: &[usize]| -> (Vec<usize>, usize) {
        let kept: Vec<usize> = rows
            .iter()
            .copied()
            .filter(|&r| features[r].is_some())
            .collect();
        let dropped = rows.len() - kept.len();
        (kept, dropped)
    };
    let (train_rows, d0) = keep(&split.train);
    let (valid_rows, d1) = keep(&split.valid);
    let (test_rows, d2) = keep(&split.test);
    if train_rows.is_empty() || valid_rows.is_empty() {
        return Err(TrainError::Invalid(
            "the split leaves no training or validation molecule".into(),
        ));
    }

    let mut spec = spec.clone();
    if spec.task == Task::Regression {
        let k = spec.target_columns.len();
        // Per task over its present labels.
        let present = |j: usize| -> Vec<f32> {
            train_rows
                .iter()
                .map(|&r| table.targets[r][j])
                .filter(|v| v.is_finite())
                .collect()
        };
        if let Some(j) = (0..k).find(|&j| present(j).is_empty()) {
            return Err(TrainError::Invalid(format!(
                "target {:?} has no label among the training molecules of this split",
                spec.target_columns[j]
            )));
        }
        let (mean, std): (Vec<f32>, Vec<f32>) = (0..k)
            .map(|j| {
                let ys = present(j);
                let n = ys.len() as f32;
                let m = ys.iter().sum::<f32>() / n;
                let var = ys.iter().map(|y| (y - m).powi(2)).sum::<f32>() / n;
                // One label, or all equal: no spread to scale by.
                let std = if ys.len() < 2 || var <= 0.0 {
                    1.0
                } else {
                    var.sqrt()
                };
                (m, std)
            })
            .unzip();
        spec.target_mean = mean;
        spec.target_std = std;
    }
    write_json(&run_dir.join("run.json"), &spec)?;

    // The training and validation molecules move into the engine's examples (no copy);
    // evaluation reads them from there.
    let mut examples = |rows: &[usize]| -> Arc<Vec<MatExample>> {
        Arc::new(
            rows.iter()
                .map(|&r| MatExample {
                    row: r,
                    features: features[r].take().expect("kept rows are featurized"),
                    targets: table.targets[r].clone(),
                })
                .collect(),
        )
    };
    let (train_examples, valid_examples) = (examples(&train_rows), examples(&valid_rows));
    let (train, valid) = (part_of(&train_examples), part_of(&valid_examples));
    let test = Part {
        features: test_rows
            .iter()
            .map(|&r| features[r].as_ref().expect("kept rows are featurized"))
            .collect(),
        targets: test_rows
            .iter()
            .map(|&r| table.targets[r].clone())
            .collect(),
    };

    let (state, best) = fit(
        &spec,
        run_dir,
        control,
        device,
        train_examples.clone(),
        valid_examples.clone(),
    )?;

    let evaluate = |p: &Part| part_metrics(&spec, &best, p, device);
    let (m_train, m_valid, m_test) = (evaluate(&train), evaluate(&valid), evaluate(&test));
    write_test_predictions(
        &run_dir.join("test_predictions.csv"),
        &spec,
        &best,
        &test,
        &test_rows,
        &table,
        device,
    )?;

    let summary = TrainSummary {
        task: spec.task,
        units: spec.units.clone().unwrap_or_else(|| "target units".into()),
        test_rmse: m_test.rmse,
        test_mae: m_test.mae,
        test_roc_auc: m_test.roc_auc,
        valid_rmse: m_valid.rmse,
        valid_mae: m_valid.mae,
        valid_roc_auc: m_valid.roc_auc,
        train: m_train,
        valid: m_valid,
        test: m_test,
        epochs: state.history.len(),
        n_missing_labels: [&train_rows, &valid_rows, &test_rows]
            .iter()
            .flat_map(|rows| rows.iter())
            .map(|&r| table.targets[r].iter().filter(|v| v.is_nan()).count())
            .sum(),
        best_epoch: state.best_epoch,
        train_seconds: state.train_seconds,
        featurize_seconds,
        n_skipped: report.n_skipped,
        n_unlabelled: table.label_problems.len(),
        n_dropped_from_split: [d0, d1, d2],
        n_params: best.num_params(),
    };
    write_json(&run_dir.join("metrics.json"), &summary)?;
    let loss_name = match spec.task {
        Task::Regression => "MSE (standardised targets)",
        Task::Classification => "BCE",
    };
    let tl: Vec<f64> = state.history.iter().map(|h| h.train_loss).collect();
    let vl: Vec<f64> = state.history.iter().map(|h| h.valid_loss).collect();
    crate::plot::loss_curves(&run_dir.join("curves.png"), &tl, &vl, loss_name)?;
    Ok(summary)
}

/// The evaluation view of a split part's examples.
fn part_of(examples: &[MatExample]) -> Part<'_> {
    Part {
        features: examples.iter().map(|e| &e.features).collect(),
        targets: examples.iter().map(|e| e.targets.clone()).collect(),
    }
}

/// Removes rows without a usable label from `features` and lists them in `report` (a
/// row that also failed featurization keeps its featurization reason).
fn drop_unlabelled(
    table: &MoleculeTable,
    mut features: Vec<Option<MatFeatures>>,
    mut report: FeaturizeReport,
) -> (Vec<Option<MatFeatures>>, FeaturizeReport) {
    for problem in &table.label_problems {
        if let Some(f) = features[problem.row].take() {
            if let Some(count) = report.coordinate_sources.get_mut(&f.coordinate_source) {
                *count -= 1;
            }
            report.n_ok -= 1;
            report.skipped.push(problem.clone());
        } else if let Some(entry) = report.skipped.iter_mut().find(|s| s.row == problem.row) {
            // Already skipped by featurization: keep that reason, and say the label is
            // missing too, so every unlabelled row shows in the report.
            entry.reason.push_str(&format!("; also {}", problem.reason));
        }
    }
    report.coordinate_sources.retain(|_, n| *n > 0);
    report.skipped.sort_by_key(|s| s.row);
    report.n_skipped = report.skipped.len();
    if !table.label_problems.is_empty() {
        eprintln!(
            "data: {} of {} rows have no usable label and are not trained on",
            table.label_problems.len(),
            table.len()
        );
    }
    (features, report)
}

fn fit(
    spec: &RunSpec,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
    train: Arc<Vec<MatExample>>,
    valid: Arc<Vec<MatExample>>,
) -> Result<(engine::FitOutcome, MatModel), TrainError> {
    let devices = control.devices_or(device);
    let ad = devices.main().clone().autodiff();
    ad.seed(spec.train.seed);
    let mut model = spec.model.init(&ad);
    if let Some(path) = &spec.pretrained {
        model = model
            .load_reference_weights(path, LoadParts::EncoderOnly)
            .map_err(|e| TrainError::Checkpoint {
                path: path.clone(),
                reason: e.to_string(),
            })?;
    }
    let (kind, mean, std) = match spec.task {
        Task::Regression => (
            MetricKind::Rmse,
            spec.target_mean.clone(),
            spec.target_std.clone(),
        ),
        Task::Classification => (MetricKind::RocAuc, Vec::new(), Vec::new()),
    };
    let metric = TaskMetric::new(kind, spec.target_columns.len(), &mean, &std);
    let settings = FitSettings::supervised(
        run_dir,
        &spec.train,
        control,
        devices,
        Selection::Metric(metric),
    );
    let total = spec.train.epochs * settings.steps_per_epoch(train.len());
    let warmup = engine::schedule::warmup_steps(spec.train.warmup_fraction, total);
    let scheduler = engine::schedule::noam(spec.train.learning_rate, warmup, spec.model.d_model)?;
    let optim = AdamConfig::new().with_epsilon(1e-8).init();
    let batcher = MatBatcher {
        task: spec.task,
        mean,
        std,
    };
    let outcome = engine::fit(
        MatLearner { model },
        optim,
        scheduler,
        train,
        batcher.clone(),
        valid,
        batcher,
        &settings,
    )?;
    let best = engine::keep_best(
        MatLearner {
            model: spec.model.init(device),
        },
        |l| l.model,
        run_dir,
        outcome.best_epoch,
    )?;
    Ok((outcome, best))
}
