//! Optimisation settings every training run records (`train` in `run.json`): epochs,
//! batch size, peak learning rate, warm-up share, patience, seed.

use serde::{Deserialize, Serialize};

use crate::error::TrainError;

/// Warm-up share of MAT's Noam schedule (huggingmolecules' MAT recipe: 20% of the steps).
pub const MAT_WARMUP_FRACTION: f64 = 0.2;

/// Optimisation settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainOptions {
    /// Maximum number of epochs.
    pub epochs: usize,
    /// Molecules per batch.
    pub batch_size: usize,
    /// Peak learning rate of the Noam schedule (reached at the end of warm-up).
    pub learning_rate: f64,
    /// Fraction of all steps spent warming up.
    pub warmup_fraction: f64,
    /// Stop after this many epochs without a validation improvement.
    pub patience: usize,
    /// Seed of initialisation, shuffling and dropout.
    pub seed: u64,
}

impl TrainOptions {
    /// Checks the settings before a run touches anything, so every caller (CLI, Python,
    /// a test) gets the same refusals: batch size and epochs at least 1, a learning rate
    /// that is finite and positive, a warm-up fraction in [0, 1].
    ///
    /// # Errors
    /// [`TrainError::Invalid`] naming the setting, its value and what it must be.
    pub fn validate(&self) -> Result<(), TrainError> {
        let bad = |what: String| Err(TrainError::Invalid(what));
        if self.batch_size == 0 {
            return bad("batch size 0: a batch holds at least 1 molecule".into());
        }
        if self.epochs == 0 {
            return bad("epochs 0: a run trains at least 1 epoch".into());
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return bad(format!(
                "learning rate {}: it must be a finite number above 0",
                self.learning_rate
            ));
        }
        if !(0.0..=1.0).contains(&self.warmup_fraction) {
            return bad(format!(
                "warm-up fraction {}: it must be between 0 and 1",
                self.warmup_fraction
            ));
        }
        Ok(())
    }
}

impl Default for TrainOptions {
    fn default() -> Self {
        Self {
            epochs: 100,
            batch_size: 32,
            learning_rate: 1e-3,
            warmup_fraction: MAT_WARMUP_FRACTION,
            patience: 20,
            seed: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #37 item 7: settings that trained silently (batch size 0, a negative
    /// learning rate) or ran to the end before failing (NaN learning rate, 0 epochs) are
    /// refused where they are built, naming the setting; the defaults pass.
    #[test]
    fn settings_are_validated_before_a_run() {
        assert!(TrainOptions::default().validate().is_ok());
        let cases: [(TrainOptions, &str); 5] = [
            (
                TrainOptions {
                    batch_size: 0,
                    ..Default::default()
                },
                "batch size 0",
            ),
            (
                TrainOptions {
                    epochs: 0,
                    ..Default::default()
                },
                "epochs 0",
            ),
            (
                TrainOptions {
                    learning_rate: -1.0,
                    ..Default::default()
                },
                "learning rate -1",
            ),
            (
                TrainOptions {
                    learning_rate: f64::NAN,
                    ..Default::default()
                },
                "learning rate NaN",
            ),
            (
                TrainOptions {
                    warmup_fraction: 1.5,
                    ..Default::default()
                },
                "warm-up fraction 1.5",
            ),
        ];
        for (options, expected) in cases {
            let e = options.validate().unwrap_err().to_string();
            assert!(e.contains(expected), "{e}");
        }
    }
}
