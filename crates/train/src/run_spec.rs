//! What defines a MAT training run (`run.json`): task, optimisation settings, split,
//! featurizer and model configuration.

use std::path::{Path, PathBuf};

use burn::prelude::*;
use models::{MatConfig, MatModel};
use mol_featurize::MatFeaturizer;
use serde::{Deserialize, Serialize};

use crate::engine::MetricKind;
use crate::error::TrainError;
use crate::masked_loss::LossKind;
use crate::run_kind::RunKind;
use crate::table_data::{MoleculeFormat, MoleculeSource};

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
        match self {
            Task::Regression => LossKind::Mse,
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

/// How the split is chosen.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitSpec {
    /// A named split of a split file.
    File {
        /// The JSON split file.
        path: PathBuf,
        /// The split's name, e.g. `random-0`.
        name: String,
    },
    /// Seeded random 80/10/10.
    Random {
        /// Seed.
        seed: u64,
    },
    /// Bemis-Murcko scaffold 80/10/10.
    Scaffold,
}

/// Everything that defines a training run; saved as `run.json` in the run directory
/// and read back by prediction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSpec {
    /// Always [`RunKind::Mat`]: tells run directories apart ([`crate::run_kind`]).
    #[serde(default = "RunKind::mat")]
    pub kind: RunKind,
    /// Dataset: a delimited file, an SDF, or XYZ files (see `format`).
    pub data: PathBuf,
    /// How `data` is read (runs written before structure files read a delimited file).
    #[serde(default)]
    pub format: MoleculeFormat,
    /// SMILES column name (delimited files, XYZ labels).
    pub smiles_column: String,
    /// Field delimiter of `data` (`,` unless the user gave `--delimiter`).
    #[serde(default = "default_delimiter")]
    pub delimiter: char,
    /// Target column names.
    pub target_columns: Vec<String>,
    /// Unit of the targets (e.g. `kcal/mol`), written into `metrics.json`; `None` when
    /// not given (MAT's standardised CSVs are in units of one standard deviation).
    #[serde(default)]
    pub units: Option<String>,
    /// Split.
    pub split: SplitSpec,
    /// Regression or classification.
    pub task: Task,
    /// Featurizer settings (d_atom must equal `model.d_atom`).
    pub featurizer: MatFeaturizer,
    /// Model hyper-parameters.
    pub model: MatConfig,
    /// Optimisation settings.
    pub train: TrainOptions,
    /// Regression targets are standardised with the training mean/std; filled in by
    /// the run (empty before).
    #[serde(default)]
    pub target_mean: Vec<f32>,
    /// See `target_mean`.
    #[serde(default)]
    pub target_std: Vec<f32>,
    /// Reference PyTorch MAT state dict to fine-tune from (encoder and embedding are
    /// loaded, the generator is not; see [`models::mat::LoadParts::EncoderOnly`]).
    #[serde(default)]
    pub pretrained: Option<PathBuf>,
}

fn default_delimiter() -> char {
    ','
}

impl RunSpec {
    /// Reads `run.json` of a MAT run directory.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] if missing, malformed, or another kind of run.
    pub fn load(run_dir: &Path) -> Result<Self, TrainError> {
        let mut json: serde_json::Value = crate::checkpoint::read_run_spec(run_dir, RunKind::Mat)?;
        // Runs written before MatConfig's `n_output` became `num_targets`.
        if let Some(model) = json.get_mut("model").and_then(|m| m.as_object_mut())
            && let Some(n) = model.remove("n_output")
        {
            model.entry("num_targets").or_insert(n);
        }
        serde_json::from_value(json.clone()).map_err(|e| TrainError::Checkpoint {
            path: run_dir.join("run.json"),
            reason: crate::run_kind::spec_error(&json, RunKind::Mat, &e),
        })
    }

    /// Loads `best_model.bpk` of a run directory onto `device`.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] if it is missing or does not fit the configuration.
    pub fn load_best_model(&self, run_dir: &Path, device: &Device) -> Result<MatModel, TrainError> {
        crate::checkpoint::load_best_model(self.model.init(device), run_dir)
    }

    /// Model outputs back to target units (identity for classification).
    pub fn unscale(&self, raw: &[f32]) -> Vec<f32> {
        self.labels().unscale(raw)
    }

    /// The run's molecule file and how it is read.
    pub fn molecule_source(&self) -> MoleculeSource {
        MoleculeSource {
            path: self.data.clone(),
            format: self.format.clone(),
            smiles_column: self.smiles_column.clone(),
            delimiter: self.delimiter,
        }
    }

    /// The run's labels: task, target columns and their training scaling.
    pub fn labels(&self) -> Labels {
        Labels {
            task: self.task,
            columns: self.target_columns.clone(),
            mean: self.target_mean.clone(),
            std: self.target_std.clone(),
        }
    }
}

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
