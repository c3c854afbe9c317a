//! MAT training: CSV -> featurize -> split -> Adam + Noam -> early stopping -> best
//! checkpoint -> test metrics.
//!
//! Recipe (docs/SPEC.md 1.2, gmum/huggingmolecules): Adam, Noam schedule with warm-up over
//! the first 20% of steps, batch 32, up to 100 epochs, MSE for regression and BCE with
//! logits for classification. Early stopping watches validation RMSE (regression) or
//! ROC-AUC (classification); the best epoch's weights are kept.
//!
//! Exact resume: every epoch starts by re-seeding the device (dropout) and the data
//! shuffle from `(seed, epoch)`, and the checkpoint holds the model, the Adam state,
//! the global step and the history, so `--resume` continues bit for bit. This holds for
//! one training per process: Burn's CPU backend draws every random number from one
//! process-wide generator, so trainings running concurrently in one process interleave
//! their draws.

use std::path::Path;
use std::time::Instant;

use burn::lr_scheduler::noam::NoamLrSchedulerConfig;
use burn::nn::loss::{BinaryCrossEntropyLossConfig, MseLoss, Reduction};
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use models::mat::LoadParts;
use models::{MatBatch, MatModel};
use mol_featurize::{FeaturizeReport, MatFeatures, featurize_all_cached, pad_batch};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::checkpoint::{resolve, write_atomically, write_file_atomically, write_json};
use crate::data::MoleculeTable;
use crate::error::TrainError;
use crate::evaluation::{Part, metric_of, part_metrics, spec_metrics, write_test_predictions};
use crate::predict::predict_raw;
use crate::report::{EpochRecord, TrainSummary};
use crate::run_spec::{RunSpec, Task};
use crate::splits::split_rows;

/// State saved in the checkpoint for an exact resume.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct TrainState {
    epochs_done: usize,
    global_step: usize,
    best_metric: f64,
    best_epoch: usize,
    history: Vec<EpochRecord>,
    train_seconds: f64,
}

/// Options of [`train_run`] that are not part of the run's definition.
#[derive(Debug, Clone, Default)]
pub struct RunControl {
    /// Continue from the run directory's checkpoint.
    pub resume: bool,
    /// Draw progress bars.
    pub progress: bool,
    /// Stop after this many epochs in this invocation (for tests of resume); the run
    /// can then be resumed.
    pub stop_after_epochs: Option<usize>,
    /// Conformer cache folder (`None`: embed every molecule, store nothing).
    pub conformer_cache: Option<std::path::PathBuf>,
}

/// Trains a MAT as described by `spec`, writing into `run_dir`: `run.json`,
/// `featurize_report.json`, `checkpoint/` (last epoch), `best_model.bpk`,
/// `metrics.json`, `curves.png`, `test_predictions.csv`.
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
        control.progress,
        cache.as_ref(),
    );
    crate::print_cache_report(&report);
    let featurize_seconds = t0.elapsed().as_secs_f64();
    let (features, report) = drop_unlabelled(&table, features, report);
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
        let n = train_rows.len() as f32;
        spec.target_mean = (0..k)
            .map(|j| train_rows.iter().map(|&r| table.targets[r][j]).sum::<f32>() / n)
            .collect();
        spec.target_std = (0..k)
            .map(|j| {
                let m = spec.target_mean[j];
                let var = train_rows
                    .iter()
                    .map(|&r| (table.targets[r][j] - m).powi(2))
                    .sum::<f32>()
                    / n;
                var.sqrt().max(1e-6)
            })
            .collect();
    }
    write_json(&run_dir.join("run.json"), &spec)?;

    let part = |rows: &[usize]| Part {
        features: rows
            .iter()
            .map(|&r| features[r].as_ref().expect("kept rows are featurized"))
            .collect(),
        targets: rows.iter().map(|&r| table.targets[r].clone()).collect(),
    };
    let (train, valid, test) = (part(&train_rows), part(&valid_rows), part(&test_rows));

    let state = fit(&spec, run_dir, control, device, &train, &valid)?;

    let best = spec.load_best_model(run_dir, device)?;
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
        epochs: state.epochs_done,
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

fn noam(
    spec: &RunSpec,
    n_train: usize,
) -> Result<burn::lr_scheduler::module_lr_scheduler::ModuleLrScheduler, TrainError> {
    let steps_per_epoch = n_train.div_ceil(spec.train.batch_size.max(1));
    let total = spec.train.epochs * steps_per_epoch;
    let warmup = ((spec.train.warmup_fraction * total as f64).round() as usize).max(1);
    // Burn's Noam: factor * d^-0.5 * min(step^-0.5, step * warmup^-1.5); its peak (at
    // step = warmup) equals the configured learning rate with this factor.
    let d = spec.model.d_model;
    let factor = spec.train.learning_rate * ((d * warmup) as f64).sqrt();
    NoamLrSchedulerConfig::new(factor)
        .with_warmup_steps(warmup)
        .with_model_size(d)
        .init()
        .map_err(TrainError::Invalid)
}

fn loss(spec: &RunSpec, pred: Tensor<2>, targets: &[Vec<f32>], device: &Device) -> Tensor<1> {
    let [b, k] = pred.dims();
    match spec.task {
        Task::Regression => {
            let scaled: Vec<f32> = targets.iter().flat_map(|t| spec.scale(t)).collect();
            let y = Tensor::<2>::from_data(TensorData::new(scaled, [b, k]), device);
            MseLoss::new().forward(pred, y, Reduction::Mean)
        }
        Task::Classification => {
            let labels: Vec<i64> = targets
                .iter()
                .flatten()
                .map(|v| i64::from(*v > 0.5))
                .collect();
            let y = Tensor::<2, Int>::from_data(TensorData::new(labels, [b, k]), device);
            BinaryCrossEntropyLossConfig::new()
                .with_logits(true)
                .init(device)
                .forward(pred, y)
        }
    }
}

fn fit(
    spec: &RunSpec,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
    train: &Part,
    valid: &Part,
) -> Result<TrainState, TrainError> {
    let ad = device.clone().autodiff();
    let ckpt_dir = run_dir.join("checkpoint");
    let mut scheduler = noam(spec, train.features.len())?;
    let adam = AdamConfig::new().with_epsilon(1e-8);

    let (mut model, mut optim, mut state): (MatModel, ModuleOptimizer, TrainState) =
        match resolve(&ckpt_dir) {
            Some(dir) if control.resume => {
                let text = std::fs::read_to_string(dir.join("state.json"))
                    .map_err(|e| TrainError::io(dir.join("state.json"), e))?;
                let state: TrainState =
                    serde_json::from_str(&text).map_err(|e| TrainError::Checkpoint {
                        path: dir.join("state.json"),
                        reason: e.to_string(),
                    })?;
                let model = spec
                    .model
                    .init(&ad)
                    .try_load_file(dir.join("model.bpk"))
                    .map_err(|e| TrainError::Checkpoint {
                        path: dir.join("model.bpk"),
                        reason: format!("{e:?}"),
                    })?;
                let optim = adam.init().load(dir.join("optim.bpk")).map_err(|e| {
                    TrainError::Checkpoint {
                        path: dir.join("optim.bpk"),
                        reason: format!("{e:?}"),
                    }
                })?;
                for _ in 0..state.global_step {
                    scheduler.step();
                }
                eprintln!(
                    "resuming {} after epoch {}",
                    run_dir.display(),
                    state.epochs_done
                );
                (model, optim, state)
            }
            None if control.resume => {
                return Err(TrainError::Checkpoint {
                    path: ckpt_dir,
                    reason: "no checkpoint to resume from".into(),
                });
            }
            _ => {
                ad.seed(spec.train.seed);
                let state = TrainState {
                    epochs_done: 0,
                    global_step: 0,
                    best_metric: f64::NAN,
                    best_epoch: 0,
                    history: Vec::new(),
                    train_seconds: 0.0,
                };
                let mut model = spec.model.init(&ad);
                if let Some(path) = &spec.pretrained {
                    model = model
                        .load_reference_weights(path, LoadParts::EncoderOnly)
                        .map_err(|e| TrainError::Checkpoint {
                            path: path.clone(),
                            reason: e.to_string(),
                        })?;
                }
                (model, adam.init(), state)
            }
        };
    let started_at = state.epochs_done;
    let higher_is_better = spec.task == Task::Classification;
    while state.epochs_done < spec.train.epochs {
        if control
            .stop_after_epochs
            .is_some_and(|k| state.epochs_done - started_at >= k)
        {
            return Err(TrainError::Interrupted {
                epochs_done: state.epochs_done,
            });
        }
        let epoch_start = Instant::now();
        let epoch = state.epochs_done + 1;
        ad.seed(
            spec.train
                .seed
                .wrapping_mul(1_000_003)
                .wrapping_add(epoch as u64),
        );
        let mut order: Vec<usize> = (0..train.features.len()).collect();
        order.shuffle(&mut StdRng::seed_from_u64(
            spec.train.seed.wrapping_add(epoch as u64),
        ));

        let mut loss_sum = 0.0;
        let mut lr = 0.0;
        for chunk in order.chunks(spec.train.batch_size.max(1)) {
            let feats: Vec<&MatFeatures> = chunk.iter().map(|&i| train.features[i]).collect();
            let targets: Vec<Vec<f32>> = chunk.iter().map(|&i| train.targets[i].clone()).collect();
            let data = pad_batch(&feats).map_err(|e| TrainError::Invalid(e.to_string()))?;
            let pred = model.forward(&MatBatch::from_data(&data, &ad));
            let l = loss(spec, pred, &targets, &ad);
            loss_sum += l.clone().into_scalar::<f32>() as f64 * chunk.len() as f64;
            let grads = GradientsParams::from_grads(l.backward(), &model);
            let step_lr = scheduler.step();
            lr = step_lr.base();
            model = optim.step(step_lr, model, grads);
            state.global_step += 1;
        }
        let train_loss = loss_sum / train.features.len() as f64;

        let eval = model.valid();
        let raw = predict_raw(&eval, &valid.features, spec.train.batch_size, device);
        let b = raw.len();
        let k = spec.target_columns.len();
        let valid_loss = loss(
            spec,
            Tensor::<2>::from_data(
                TensorData::new(raw.iter().flatten().copied().collect::<Vec<f32>>(), [b, k]),
                device,
            ),
            &valid.targets,
            device,
        )
        .into_scalar::<f32>() as f64;
        let valid_metric = metric_of(&spec_metrics(spec, &raw, &valid.targets), spec.task);

        state.train_seconds += epoch_start.elapsed().as_secs_f64();
        state.epochs_done = epoch;
        state.history.push(EpochRecord {
            epoch,
            train_loss,
            valid_loss,
            valid_metric,
            learning_rate: lr,
        });
        let improved = state.best_metric.is_nan()
            || (higher_is_better && valid_metric > state.best_metric)
            || (!higher_is_better && valid_metric < state.best_metric);
        if improved {
            state.best_metric = valid_metric;
            state.best_epoch = epoch;
            let path = run_dir.join("best_model.bpk");
            let tmp = run_dir.join("best_model.bpk.tmp");
            eval.clone()
                .save_file(&tmp)
                .map_err(|e| TrainError::Checkpoint {
                    path: tmp.clone(),
                    reason: format!("{e:?}"),
                })?;
            std::fs::rename(&tmp, &path).map_err(|e| TrainError::io(&path, e))?;
        }
        if control.progress {
            eprintln!(
                "epoch {epoch:>3}  train {train_loss:.4}  valid {valid_loss:.4}  {} {valid_metric:.4}{}  lr {lr:.2e}  {:.1}s",
                if higher_is_better { "roc_auc" } else { "rmse" },
                if improved { " *" } else { "" },
                epoch_start.elapsed().as_secs_f64()
            );
        }
        let state_json =
            serde_json::to_vec_pretty(&state).map_err(|e| TrainError::Invalid(e.to_string()))?;
        write_atomically(&ckpt_dir, |dir| {
            model
                .clone()
                .save_file(dir.join("model.bpk"))
                .map_err(|e| TrainError::Checkpoint {
                    path: dir.join("model.bpk"),
                    reason: format!("{e:?}"),
                })?;
            optim
                .save(dir.join("optim.bpk"))
                .map_err(|e| TrainError::Checkpoint {
                    path: dir.join("optim.bpk"),
                    reason: format!("{e:?}"),
                })?;
            write_file_atomically(&dir.join("state.json"), &state_json)
        })?;
        if epoch - state.best_epoch >= spec.train.patience {
            if control.progress {
                eprintln!(
                    "early stopping: no validation improvement for {} epochs",
                    spec.train.patience
                );
            }
            break;
        }
    }
    Ok(state)
}
