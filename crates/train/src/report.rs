//! What a training run on a molecule table (MAT or Transformer-M) reports: per-part metrics, the per-epoch history and the
//! summary written as `metrics.json`.

use serde::{Deserialize, Serialize};

use crate::task::Task;

/// Metrics of one part (train, valid or test), in the targets' units.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PartMetrics {
    /// Molecules evaluated.
    pub n: usize,
    /// RMSE (regression), averaged over targets.
    pub rmse: Option<f64>,
    /// MAE (regression), averaged over targets.
    pub mae: Option<f64>,
    /// ROC-AUC (classification), averaged over targets.
    pub roc_auc: Option<f64>,
    /// The same per target column (missing labels left out), in column order.
    #[serde(default)]
    pub per_task: Vec<TaskMetrics>,
}

/// Metrics of one target column on one part.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TaskMetrics {
    /// Target column.
    pub target: String,
    /// Molecules with this label.
    pub n: usize,
    /// RMSE (regression).
    pub rmse: Option<f64>,
    /// MAE (regression).
    pub mae: Option<f64>,
    /// ROC-AUC (classification; `None` with one class only).
    pub roc_auc: Option<f64>,
}

/// One epoch of the learning curve.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EpochRecord {
    /// 1-based epoch.
    pub epoch: usize,
    /// Training loss (MSE on standardised targets, or BCE), mean over the epoch's batches.
    pub train_loss: f64,
    /// Validation loss, same definition.
    pub valid_loss: f64,
    /// Validation metric watched by early stopping (RMSE or ROC-AUC).
    pub valid_metric: f64,
    /// Learning rate, mean over the epoch's optimiser steps.
    pub learning_rate: f64,
}

/// What `metrics.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainSummary {
    /// Task.
    pub task: Task,
    /// Units of RMSE/MAE: the targets' units.
    pub units: String,
    /// Test RMSE (regression).
    pub test_rmse: Option<f64>,
    /// Test MAE (regression).
    pub test_mae: Option<f64>,
    /// Test ROC-AUC (classification).
    pub test_roc_auc: Option<f64>,
    /// Validation RMSE (regression).
    pub valid_rmse: Option<f64>,
    /// Validation MAE (regression).
    pub valid_mae: Option<f64>,
    /// Validation ROC-AUC (classification).
    pub valid_roc_auc: Option<f64>,
    /// Per-part details.
    pub train: PartMetrics,
    /// Per-part details.
    pub valid: PartMetrics,
    /// Per-part details.
    pub test: PartMetrics,
    /// Epochs run (early stopping may end before the maximum).
    pub epochs: usize,
    /// Epoch whose weights were kept.
    pub best_epoch: usize,
    /// Wall-clock seconds of the training loop (resumed runs add up).
    pub train_seconds: f64,
    /// Wall-clock seconds of featurization.
    pub featurize_seconds: f64,
    /// Rows skipped: featurization failed or the label is missing (each listed with its
    /// reason in `featurize_report.json`).
    pub n_skipped: usize,
    /// Rows with no label at all or with a label cell that is not a number (kinds
    /// `missing-label`, `bad-label` in `featurize_report.json`, or noted after the
    /// featurization reason of a row that failed both); not trained or evaluated on. A
    /// row with some labels is kept, its missing cells masked ([`Self::n_missing_labels`]).
    #[serde(default)]
    pub n_unlabelled: usize,
    /// Missing label cells of the rows trained or evaluated on (masked in the loss and
    /// metrics of their task).
    #[serde(default)]
    pub n_missing_labels: usize,
    /// Split rows dropped because their molecule was skipped, per part.
    pub n_dropped_from_split: [usize; 3],
    /// Model parameters.
    pub n_params: usize,
}
