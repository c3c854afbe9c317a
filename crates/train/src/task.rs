//! The kind of prediction task of a property run: regression or binary classification,
//! with the loss and the validation metric each takes.

use serde::{Deserialize, Serialize};

use crate::engine::metrics::MetricKind;
use crate::masked_loss::LossKind;

/// Kind of prediction task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    /// Real-valued targets; MSE loss; RMSE and MAE reported.
    Regression,
    /// Binary 0/1 targets; BCE-with-logits loss; ROC-AUC reported.
    Classification,
}

impl Task {
    /// The validation metric that early stopping watches: RMSE, or ROC-AUC.
    pub fn selection_metric(self) -> MetricKind {
        match self {
            Task::Regression => MetricKind::Rmse,
            Task::Classification => MetricKind::RocAuc,
        }
    }

    /// MAT's loss for this task: MSE on standardised targets, or BCE with logits.
    pub fn mat_loss(self) -> LossKind {
        self.loss(LossKind::Mse)
    }

    /// The loss for this task: `regression` on standardised targets, or BCE with logits
    /// for classification.
    pub fn loss(self, regression: LossKind) -> LossKind {
        match self {
            Task::Regression => regression,
            Task::Classification => LossKind::BceWithLogits,
        }
    }

    /// The task a table's labels suggest: classification when every finite label is 0
    /// or 1, regression otherwise (what chemprop users expect when no task is given).
    pub fn from_labels(targets: &[Vec<f32>]) -> Task {
        let binary = targets
            .iter()
            .flatten()
            .filter(|v| v.is_finite())
            .all(|v| *v == 0.0 || *v == 1.0);
        if binary {
            Task::Classification
        } else {
            Task::Regression
        }
    }
}
