//! The labels of a run on a molecule table and their scaling: the task, the target
//! columns and each column's training mean and standard deviation. A run records them in
//! `run.json`, and every prediction, embedding head and metric turns model outputs into
//! target units through [`Labels::output`], the one place where outputs are unscaled.

use crate::task::Task;

/// The labels of a run on a molecule table: task, target columns and, for regression,
/// each column's training mean and standard deviation (the models see standardised
/// targets).
#[derive(Debug, Clone, PartialEq)]
pub struct Labels {
    /// Regression or classification.
    pub task: Task,
    /// Target column names.
    pub columns: Vec<String>,
    /// Training mean per column (empty for classification).
    pub mean: Vec<f32>,
    /// Training standard deviation per column (empty for classification).
    pub std: Vec<f32>,
}

impl Labels {
    /// Model outputs back to target units (identity where no scaling is known).
    pub fn unscale(&self, raw: &[f32]) -> Vec<f32> {
        raw.iter()
            .enumerate()
            .map(|(k, v)| {
                v * self.std.get(k).copied().unwrap_or(1.0)
                    + self.mean.get(k).copied().unwrap_or(0.0)
            })
            .collect()
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
