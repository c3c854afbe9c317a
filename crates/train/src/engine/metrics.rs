//! Epoch-level validation metrics for burn-train: RMSE, MAE (target units) and ROC-AUC,
//! each over all molecules of the epoch (ROC-AUC does not decompose into batch means),
//! per task with missing labels left out, then averaged over tasks (chemprop's
//! convention). burn-train has a loss metric and classification metrics on one label
//! column per class, but none of these on masked multi-task targets.
//!
//! Input: burn-train's `RegressionOutput`, whose `output` is the model's raw output
//! (standardised for regression, logits for classification), `[B, T]`, and `targets` the
//! labels in target units with NaN for a missing label, `[B, T]`.

use std::sync::Arc;

use burn::prelude::*;
use burn::tensor::TensorReadError;
use burn::train::RegressionOutput;
use burn::train::metric::{
    Adaptor, Metric, MetricAttributes, MetricMetadata, MetricName, Numeric, NumericAttributes,
    NumericEntry, SerializedEntry,
};

use crate::metrics::{mae, rmse, roc_auc};
use crate::target_scaling::TargetScaling;

/// Which number a [`TaskMetric`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// Root-mean-square error in target units (lower is better).
    Rmse,
    /// Mean absolute error in target units (lower is better).
    Mae,
    /// Area under the ROC curve of the logits (higher is better).
    RocAuc,
}

impl MetricKind {
    /// The name burn-train logs it under (`valid/epoch-N/<name>.log`).
    pub fn name(self) -> &'static str {
        match self {
            MetricKind::Rmse => "RMSE",
            MetricKind::Mae => "MAE",
            MetricKind::RocAuc => "ROC-AUC",
        }
    }

    /// Whether a larger value is better.
    pub fn higher_is_better(self) -> bool {
        self == MetricKind::RocAuc
    }
}

/// What picks the best epoch and drives early stopping.
#[derive(Debug, Clone)]
pub enum Selection {
    /// A validation metric.
    Metric(TaskMetric),
    /// The validation loss (runs without a per-molecule target, e.g. denoising).
    Loss,
}

impl Selection {
    /// The logged name (`valid/epoch-N/<name>.log`).
    pub fn name(&self) -> &'static str {
        match self {
            Selection::Metric(m) => m.kind.name(),
            Selection::Loss => "Loss",
        }
    }

    /// Whether a larger value is better.
    pub fn higher_is_better(&self) -> bool {
        match self {
            Selection::Metric(m) => m.kind.higher_is_better(),
            Selection::Loss => false,
        }
    }
}

/// Predictions and labels of one batch, copied to the host.
pub struct PredictionInput {
    output: Tensor<2>,
    targets: Tensor<2>,
}

impl Adaptor<PredictionInput> for RegressionOutput {
    fn adapt(&self) -> PredictionInput {
        PredictionInput {
            output: self.output.clone(),
            targets: self.targets.clone(),
        }
    }
}

/// A [`MetricKind`] over a whole epoch, per task, averaged over tasks.
#[derive(Debug, Clone)]
pub struct TaskMetric {
    kind: MetricKind,
    name: MetricName,
    /// Raw outputs to target units (regression); none for classification.
    scaling: TargetScaling,
    outputs: Vec<Vec<f32>>,
    targets: Vec<Vec<f32>>,
    current: f64,
}

impl TaskMetric {
    /// A metric of `kind` on `num_targets` tasks whose raw outputs become target units
    /// through `scaling` ([`TargetScaling::unscale`]; pass the default for none).
    pub fn new(kind: MetricKind, num_targets: usize, scaling: TargetScaling) -> Self {
        Self {
            kind,
            name: Arc::new(kind.name().to_string()),
            scaling,
            outputs: vec![Vec::new(); num_targets],
            targets: vec![Vec::new(); num_targets],
            current: f64::NAN,
        }
    }

    /// What it computes.
    pub fn kind(&self) -> MetricKind {
        self.kind
    }

    fn value(&self) -> f64 {
        task_mean(self.kind, &self.outputs, &self.targets)
    }

    fn final_entry(&self) -> SerializedEntry {
        SerializedEntry::new(
            format!("{:.4}", self.current),
            NumericEntry::Final(self.current).serialize(),
        )
    }
}

/// `kind` per task over the labelled rows (`targets` finite), averaged over the tasks
/// that have a value (ROC-AUC needs both classes); NaN when none has.
pub fn task_mean(kind: MetricKind, outputs: &[Vec<f32>], targets: &[Vec<f32>]) -> f64 {
    let values: Vec<f64> = per_task(kind, outputs, targets)
        .into_iter()
        .flatten()
        .collect();
    if values.is_empty() {
        f64::NAN
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

/// `kind` of each task over its labelled rows (`None`: no label, or one class only).
pub fn per_task(kind: MetricKind, outputs: &[Vec<f32>], targets: &[Vec<f32>]) -> Vec<Option<f64>> {
    outputs
        .iter()
        .zip(targets)
        .map(|(o, t)| {
            let (o, t): (Vec<f32>, Vec<f32>) = o
                .iter()
                .zip(t)
                .filter(|(_, t)| t.is_finite())
                .map(|(o, t)| (*o, *t))
                .unzip();
            if t.is_empty() {
                return None;
            }
            match kind {
                MetricKind::Rmse => Some(rmse(&o, &t)),
                MetricKind::Mae => Some(mae(&o, &t)),
                MetricKind::RocAuc => roc_auc(&o, &t),
            }
        })
        .collect()
}

impl Metric for TaskMetric {
    type Input = PredictionInput;

    fn name(&self) -> MetricName {
        self.name.clone()
    }

    fn attributes(&self) -> MetricAttributes {
        NumericAttributes {
            unit: None,
            higher_is_better: self.kind.higher_is_better(),
        }
        .into()
    }

    fn update(
        &mut self,
        item: &PredictionInput,
        _metadata: &MetricMetadata,
    ) -> Result<SerializedEntry, TensorReadError> {
        let [_, k] = item.output.dims();
        let output = item.output.clone().try_into_vec_as::<f32>()?;
        let targets = item.targets.clone().try_into_vec_as::<f32>()?;
        for (row_out, row_t) in output.chunks(k).zip(targets.chunks(k)) {
            let row_out = self.scaling.unscale(row_out);
            for j in 0..k.min(self.outputs.len()) {
                self.outputs[j].push(row_out[j]);
                self.targets[j].push(row_t[j]);
            }
        }
        // The value exists for the whole epoch only (computing it per batch would sort
        // the epoch so far every time); burn-train logs no placeholder line.
        Ok(SerializedEntry::not_available(None))
    }

    fn compute(&mut self) -> Result<SerializedEntry, TensorReadError> {
        self.current = self.value();
        Ok(self.final_entry())
    }

    fn clear(&mut self) {
        self.outputs.iter_mut().for_each(Vec::clear);
        self.targets.iter_mut().for_each(Vec::clear);
        self.current = f64::NAN;
    }
}

impl Numeric for TaskMetric {
    fn value(&self) -> Option<NumericEntry> {
        self.current
            .is_finite()
            .then_some(NumericEntry::Value(self.current))
    }

    fn running_value(&self) -> Option<NumericEntry> {
        Numeric::value(self)
    }

    fn final_value(&self) -> NumericEntry {
        NumericEntry::Final(self.current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_labels_are_left_out_per_task() {
        let nan = f32::NAN;
        // Task 0: errors 1 and 3 (row 2 unlabelled); task 1: error 2 on row 2 only.
        let outputs = vec![vec![1.0, 3.0, 9.0], vec![0.0, 0.0, 2.0]];
        let targets = vec![vec![0.0, 0.0, nan], vec![nan, nan, 0.0]];
        let per = per_task(MetricKind::Mae, &outputs, &targets);
        assert_eq!(per, vec![Some(2.0), Some(2.0)]);
        let rmse0 = (5.0f64).sqrt();
        assert!(
            (task_mean(MetricKind::Rmse, &outputs, &targets) - (rmse0 + 2.0) / 2.0).abs() < 1e-12
        );
        // A task with one class has no ROC-AUC and is left out of the mean.
        let auc = per_task(
            MetricKind::RocAuc,
            &[vec![0.1, 0.9], vec![0.3, 0.2]],
            &[vec![0.0, 1.0], vec![1.0, 1.0]],
        );
        assert_eq!(auc, vec![Some(1.0), None]);
    }
}
