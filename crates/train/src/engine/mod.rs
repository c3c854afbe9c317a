//! The one training engine of every model: burn-train's `Learner` driven by
//! `SupervisedTraining`, with what our runs need around it.
//!
//! - [`loader`]: per-epoch seeding, so a resumed epoch equals the uninterrupted one.
//! - [`checkpointer`]: burn-train's checkpoint files written atomically; resume from the
//!   last complete epoch.
//! - [`early_stopping`]: patience on the validation metric, recomputed from the metric
//!   logs (so it survives a resume; burn's own strategy keeps its best epoch in memory).
//! - [`metrics`]: epoch-level RMSE / MAE / ROC-AUC with missing labels masked per task.
//! - [`schedule`]: Noam (MAT) and linear warm-up + decay (Transformer-M).
//! - [`fused_adam`]: Adam with its CPU update in one multi-threaded pass (Burn's state).
//! - [`history`]: the learning curve read back from the metric logs.
//! - [`progress`]: dashboard, plain epoch lines, or nothing.
//! - [`devices`]: one device, several (burn-train's multi-device strategy), or DDP.
//!
//! A model plugs in with a `TrainStep` / `InferenceStep` pair whose output is
//! burn-train's `RegressionOutput` (raw output `[B, T]`, labels in target units with NaN
//! where missing) and an [`EpochBatcher`] per split. docs/DESIGN.md says what was added
//! to burn-train and why.

pub mod checkpointer;
pub mod devices;
pub mod early_stopping;
pub mod fused_adam;
pub mod history;
pub mod interrupt;
pub mod loader;
pub mod metrics;
pub mod progress;
mod run_dir;
pub mod schedule;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use burn::lr_scheduler::module_lr_scheduler::ModuleLrScheduler;
use burn::optim::ModuleOptimizer;
use burn::prelude::*;
use burn::train::checkpoint::{
    ComposedCheckpointingStrategy, KeepLastNCheckpoints, MetricCheckpointingStrategy,
};
use burn::train::metric::store::{Aggregate, Direction, Split};
use burn::train::metric::{LearningRateMetric, LossMetric};
use burn::train::{
    InferenceStep, Interrupter, Learner, LearnerModel, RegressionOutput, SupervisedTraining,
    TrainStep,
};

pub use devices::{Devices, Strategy};
pub use history::{best_epoch, logged_batches, logged_value, read_history};
pub use loader::{EpochBatcher, EpochLoader, EpochPlan};
pub use metrics::{MetricKind, Selection, TaskMetric};
pub use progress::Progress;

use crate::checkpoint::write_json;
use crate::error::TrainError;
use crate::report::EpochRecord;
use checkpointer::{AtomicFileCheckpointer, last_complete_epoch};
use early_stopping::Patience;
use interrupt::BatchBudget;
use run_dir::{RunIdentity, TrainingTime, prepare_run_dir, prune_checkpoints};

/// How long and how to train (the run's own settings; the model, optimiser and data
/// come as arguments of [`fit`]).
#[derive(Debug, Clone)]
pub struct FitSettings {
    /// Run directory: burn-train writes `train/`, `valid/` (metric logs per epoch) and
    /// `checkpoint/` there; [`fit`] adds `engine.json` (what a resume must match) and
    /// `training_time.json`.
    pub run_dir: PathBuf,
    /// Maximum epochs.
    pub epochs: usize,
    /// Stop after this many validations without an improvement (epochs, or parts of one
    /// with `checkpoints_per_epoch`).
    pub patience: usize,
    /// What picks the best epoch and drives early stopping.
    pub selection: Selection,
    /// Molecules per batch (per device).
    pub batch_size: usize,
    /// Run seed (shuffles, dropout, sampled modes and noise).
    pub seed: u64,
    /// Continue from the last complete checkpoint of `run_dir`.
    pub resume: bool,
    /// Devices and strategy.
    pub devices: Devices,
    /// What to print.
    pub progress: Progress,
    /// Stop this invocation after this many training batches, as a killed process would
    /// (resume tests).
    pub interrupt_after_batches: Option<usize>,
    /// Cut training to this many optimiser steps in total (step-budgeted runs).
    pub max_steps: Option<usize>,
    /// Validations and checkpoints per pass over the training data (0 is read as 1):
    /// burn-train then runs `epochs * checkpoints_per_epoch` shorter epochs, each a run
    /// of consecutive batches of one data epoch ([`EpochPlan::parts`]); `patience`, the
    /// history and the checkpoints count those. For long runs that must survive a kill.
    pub checkpoints_per_epoch: usize,
}

impl FitSettings {
    /// The settings of a supervised run: epochs, patience, batch size and seed from
    /// `options`, resume / progress / interruption from `control`.
    pub fn supervised(
        run_dir: &Path,
        options: &crate::train_options::TrainOptions,
        control: &crate::RunControl,
        devices: Devices,
        selection: Selection,
    ) -> Self {
        Self {
            run_dir: run_dir.to_path_buf(),
            epochs: options.epochs,
            patience: options.patience,
            selection,
            batch_size: options.batch_size,
            seed: options.seed,
            resume: control.resume,
            devices,
            progress: control.progress,
            interrupt_after_batches: control.interrupt_after_batches,
            max_steps: None,
            checkpoints_per_epoch: control.checkpoints_per_epoch,
        }
    }

    /// Optimiser steps per epoch on `n_train` molecules: one step takes one batch per
    /// device, and each device gets `n_train / devices` molecules ([`EpochLoader`]).
    pub fn steps_per_epoch(&self, n_train: usize) -> usize {
        self.train_plan().batches_per_epoch(n_train)
    }

    fn train_plan(&self) -> EpochPlan {
        EpochPlan {
            batch_size: self.batch_size,
            seed: self.seed,
            shuffle: true,
            reseed_device: true,
            max_batches_total: self.max_steps,
            devices: self.devices.len(),
            parts: self.checkpoints_per_epoch,
        }
    }
}

/// What [`fit`] leaves: the per-epoch history and the best epoch (its checkpoint is in
/// `run_dir/checkpoint/`).
#[derive(Debug, Clone)]
pub struct FitOutcome {
    /// One record per finished epoch (all invocations of a resumed run).
    pub history: Vec<EpochRecord>,
    /// Epoch of the best validation metric (its checkpoint is kept).
    pub best_epoch: usize,
    /// Wall-clock seconds of training, resumed invocations added up (an invocation that
    /// was killed does not count: its time is written when training returns).
    pub train_seconds: f64,
}

/// Trains `model` (built on `settings.devices.main().autodiff()`) with burn-train's
/// `Learner`, and returns the learning curve and the best epoch, whose checkpoint is kept
/// in `run_dir/checkpoint/` (with the last epoch's): [`keep_best`] turns it into
/// `best_model.bpk`. A resumed run continues from its last complete checkpoint; one
/// killed before its first checkpoint starts afresh.
///
/// # Errors
/// [`TrainError::Interrupted`] when `interrupt_after_batches` stopped the run (resume it
/// with `resume`), [`TrainError::Checkpoint`] for an unreadable checkpoint or a resume
/// with other seed, batch size, devices or step budget than the run it continues,
/// [`TrainError::Invalid`] for an error burn-train reports (a batch that cannot be made
/// names its molecule), I/O errors naming the file.
#[allow(clippy::too_many_arguments)]
pub fn fit<M, I, BT, BV>(
    model: M,
    optim: ModuleOptimizer,
    scheduler: ModuleLrScheduler,
    train_items: Arc<Vec<I>>,
    train_batcher: BT,
    valid_items: Arc<Vec<I>>,
    valid_batcher: BV,
    settings: &FitSettings,
) -> Result<FitOutcome, TrainError>
where
    M: LearnerModel
        + TrainStep<Input = BT::Batch, Output = RegressionOutput>
        + InferenceStep<Input = BV::Batch, Output = RegressionOutput>,
    I: Send + Sync + 'static,
    BT: EpochBatcher<I> + 'static,
    BV: EpochBatcher<I> + 'static,
    BT::Batch: Send + 'static,
    BV::Batch: Send + 'static,
{
    let run_dir = &settings.run_dir;
    std::fs::create_dir_all(run_dir).map_err(|e| TrainError::io(run_dir, e))?;
    let identity = RunIdentity {
        seed: settings.seed,
        batch_size: settings.batch_size,
        devices: settings.devices.len(),
        max_steps: settings.max_steps,
        checkpoints_per_epoch: settings.train_plan().parts(),
    };
    let resume_after = prepare_run_dir(run_dir, settings.resume, &identity, settings.progress)?;
    let (name, higher) = (
        settings.selection.name(),
        settings.selection.higher_is_better(),
    );
    let time_path = run_dir.join("training_time.json");
    let previous_seconds = std::fs::read_to_string(&time_path)
        .ok()
        .and_then(|t| serde_json::from_str::<TrainingTime>(&t).ok())
        .map_or(0.0, |t| t.seconds);

    let history = read_history(run_dir, name);
    let done = resume_after.unwrap_or(0);
    let stopped_early = done > 0
        && done - best_epoch(&history[..done.min(history.len())], higher) >= settings.patience;
    let mut train_seconds = previous_seconds;
    // burn-train's epochs: `epochs` passes in `checkpoints_per_epoch` parts, cut where a
    // step budget ends.
    let loader_epochs = settings
        .train_plan()
        .loader_epochs(train_items.len(), settings.epochs);
    if done < loader_epochs && !stopped_early {
        let started = Instant::now();
        let main = settings.devices.main().clone();
        let interrupter = Interrupter::new();
        let budget = settings
            .interrupt_after_batches
            .map(|n| BatchBudget::new(n, interrupter.clone()));
        let first_epoch = done + 1;
        let train_plan = settings.train_plan();
        // Validation runs on the main device only.
        let valid_plan = EpochPlan {
            shuffle: false,
            reseed_device: false,
            max_batches_total: None,
            devices: 1,
            parts: 1,
            ..train_plan
        };
        let train_loader = EpochLoader::new(
            train_items,
            train_batcher,
            train_plan,
            first_epoch,
            main.clone(),
        )
        .with_budget(budget);
        let valid_loader = EpochLoader::new(
            valid_items,
            valid_batcher,
            valid_plan,
            first_epoch,
            main.clone(),
        );
        let direction = if higher {
            Direction::Highest
        } else {
            Direction::Lowest
        };
        let checkpoints = run_dir.join("checkpoint");
        let keep = ComposedCheckpointingStrategy::builder()
            .add(KeepLastNCheckpoints::new(2))
            .add(match &settings.selection {
                Selection::Metric(m) => {
                    MetricCheckpointingStrategy::new(m, Aggregate::Mean, direction, Split::Valid)
                }
                Selection::Loss => MetricCheckpointingStrategy::new(
                    &LossMetric::new(),
                    Aggregate::Mean,
                    direction,
                    Split::Valid,
                ),
            })
            .build();
        let mut training =
            SupervisedTraining::new(run_dir, Arc::new(train_loader), Arc::new(valid_loader))
                .with_training_strategy(settings.devices.strategy()?.into())
                .with_custom_checkpointers(
                    AtomicFileCheckpointer::new(&checkpoints, "model"),
                    AtomicFileCheckpointer::new(&checkpoints, "optim"),
                    AtomicFileCheckpointer::new(&checkpoints, "scheduler"),
                )
                .with_checkpointing_strategy(keep)
                .early_stopping(Patience::new(name, direction, settings.patience))
                .metrics((LossMetric::new(),))
                .metric_train_numeric(LearningRateMetric::new())
                .num_epochs(loader_epochs)
                .with_interrupter(interrupter.clone())
                .with_application_logger(None)
                .renderer(progress::renderer(
                    settings.progress,
                    &interrupter,
                    resume_after,
                ));
        if let Selection::Metric(m) = &settings.selection {
            training = training.metric_valid_numeric(m.clone());
        }
        if let Some(epoch) = resume_after {
            training = training.checkpoint(epoch);
            if settings.progress != Progress::Quiet {
                eprintln!("resuming {} after epoch {epoch}", run_dir.display());
            }
        }
        let result = training.launch(Learner::new(model, optim, scheduler));
        train_seconds += started.elapsed().as_secs_f64();
        write_json(
            &time_path,
            &TrainingTime {
                seconds: train_seconds,
            },
        )?;
        if let Some(error) = result.error {
            return Err(TrainError::Invalid(format!("training failed: {error}")));
        }
        if result.interrupted.is_some() {
            return Err(TrainError::Interrupted {
                epochs_done: last_complete_epoch(&checkpoints).unwrap_or(0),
            });
        }
    }
    let history = read_history(run_dir, name);
    let best = best_epoch(&history, higher);
    prune_checkpoints(&run_dir.join("checkpoint"), &[best, history.len()])?;
    if best == 0 {
        return Err(TrainError::Invalid(format!(
            "{}: no epoch has a finite validation {name}",
            run_dir.display()
        )));
    }
    Ok(FitOutcome {
        history,
        best_epoch: best,
        train_seconds,
    })
}

/// Copies the weights of checkpoint `epoch` of `run_dir` into `learner` (a plain-device
/// learner of the run's architecture) and writes the model that `unwrap` takes out of it
/// to `run_dir/best_model.bpk` atomically ([`export_checkpoint`] with that file name).
///
/// # Errors
/// [`TrainError::Checkpoint`] naming the file that cannot be read or written.
pub fn keep_best<L: Module, M: Module>(
    learner: L,
    unwrap: impl FnOnce(L) -> M,
    run_dir: &Path,
    epoch: usize,
) -> Result<M, TrainError> {
    export_checkpoint(learner, unwrap, run_dir, epoch, "best_model.bpk")
}

/// `learner` with the weights of checkpoint `epoch` of `run_dir`
/// (`checkpoint/model-<epoch>.bpk`, the record burn-train's checkpointer writes).
///
/// # Errors
/// [`TrainError::Checkpoint`] naming the file when it is missing or does not fit `learner`.
pub fn load_checkpoint<L: Module>(
    learner: L,
    run_dir: &Path,
    epoch: usize,
) -> Result<L, TrainError> {
    let source = run_dir
        .join("checkpoint")
        .join(format!("model-{epoch}.bpk"));
    crate::checkpoint::load_model_file(learner, &source)
}

/// Loads checkpoint `epoch` of `run_dir` into `learner` ([`load_checkpoint`]) and writes
/// the model `unwrap` takes out of it to `run_dir/<file>` atomically.
///
/// # Errors
/// [`TrainError::Checkpoint`] naming the file that cannot be read or written.
pub fn export_checkpoint<L: Module, M: Module>(
    learner: L,
    unwrap: impl FnOnce(L) -> M,
    run_dir: &Path,
    epoch: usize,
    file: &str,
) -> Result<M, TrainError> {
    let model = unwrap(load_checkpoint(learner, run_dir, epoch)?);
    let path = run_dir.join(file);
    let tmp = run_dir.join(format!("{file}.partial"));
    let _ = std::fs::remove_file(&tmp);
    model
        .clone()
        .save_file(&tmp)
        .map_err(|e| TrainError::Checkpoint {
            path: tmp.clone(),
            reason: format!("{e:?}"),
        })?;
    crate::checkpoint::persist_file(&tmp, &path)?;
    Ok(model)
}
