//! The standardisation of regression targets: each task's training mean and standard
//! deviation. A run fits it once on its training labels ([`TargetScaling::fit`]) and
//! records it in `run.json` (`target_mean`, `target_std`); the batches scale labels with
//! [`TargetScaling::scale`] and every metric, prediction and report turns model outputs
//! back into target units with [`TargetScaling::unscale`], so the two directions live
//! here only (chemprop v2 keeps the same pair as its `UnscaleTransform`).

/// Per-task mean and standard deviation of the training labels (both empty: no scaling,
/// as for classification, whose outputs are logits).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetScaling {
    /// Training mean per task, in target units.
    pub mean: Vec<f32>,
    /// Training standard deviation per task (population), in target units; 1 for a task
    /// whose labels do not vary.
    pub std: Vec<f32>,
}

impl TargetScaling {
    /// The scaling of tasks whose present (finite) training labels are `labels[task]`:
    /// mean and population standard deviation, or standard deviation 1 for a task with
    /// one label or all equal.
    ///
    /// # Panics
    /// If a task has no label (callers name the column in an error first).
    pub fn fit(labels: &[Vec<f32>]) -> Self {
        let (mean, std) = labels
            .iter()
            .map(|ys| {
                assert!(!ys.is_empty(), "a task without a training label");
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
        TargetScaling { mean, std }
    }

    /// Label `y` of task `task` as the model is trained on it: `(y - mean) / std`, or `y`
    /// when the task has no scaling.
    pub fn scale(&self, task: usize, y: f32) -> f32 {
        match (self.mean.get(task), self.std.get(task)) {
            (Some(m), Some(s)) => (y - m) / s,
            _ => y,
        }
    }

    /// Model outputs `raw[task]` back to target units: `raw * std + mean` (identity for a
    /// task without scaling).
    pub fn unscale(&self, raw: &[f32]) -> Vec<f32> {
        raw.iter()
            .enumerate()
            .map(|(k, v)| {
                v * self.std.get(k).copied().unwrap_or(1.0)
                    + self.mean.get(k).copied().unwrap_or(0.0)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fit, scale and unscale: population statistics, a constant task scaled by 1, the
    /// round trip exact for these values, identity without scaling.
    #[test]
    fn scaling_fits_and_round_trips() {
        let s = TargetScaling::fit(&[vec![1.0, 3.0], vec![5.0, 5.0, 5.0]]);
        assert_eq!(s.mean, [2.0, 5.0]);
        assert_eq!(s.std, [1.0, 1.0]);
        let s = TargetScaling::fit(&[vec![0.0, 4.0]]);
        assert_eq!((s.mean[0], s.std[0]), (2.0, 2.0));
        assert_eq!(s.scale(0, 6.0), 2.0);
        assert_eq!(s.unscale(&[2.0]), [6.0]);
        let none = TargetScaling::default();
        assert_eq!(none.scale(0, 6.0), 6.0);
        assert_eq!(none.unscale(&[0.25, -1.0]), [0.25, -1.0]);
    }
}
