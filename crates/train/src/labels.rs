//! The labels of a run on a molecule table: the task, the target columns and their
//! [`TargetScaling`]. A run records them in `run.json`, and every prediction, embedding
//! head and report turns model outputs into what a user is given through
//! [`Labels::output`] (unscaled by [`TargetScaling::unscale`], or the probability of the
//! positive class).

use crate::target_scaling::TargetScaling;
use crate::task::Task;

/// The labels of a run on a molecule table: task, target columns and, for regression,
/// their scaling (the models see standardised targets).
#[derive(Debug, Clone, PartialEq)]
pub struct Labels {
    /// Regression or classification.
    pub task: Task,
    /// Target column names.
    pub columns: Vec<String>,
    /// Training mean and standard deviation per column (none for classification).
    pub scaling: TargetScaling,
}

impl Labels {
    /// Model outputs back to target units ([`TargetScaling::unscale`]).
    pub fn unscale(&self, raw: &[f32]) -> Vec<f32> {
        self.scaling.unscale(raw)
    }

    /// What a user is given for raw model outputs: values in target units
    /// (regression) or the probability of the positive class (classification).
    pub fn output(&self, raw: &[f32]) -> Vec<f32> {
        match self.task {
            Task::Regression => self.unscale(raw),
            Task::Classification => raw.iter().map(|x| 1.0 / (1.0 + (-x).exp())).collect(),
        }
    }
}
