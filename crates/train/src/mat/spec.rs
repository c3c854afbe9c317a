//! What defines a MAT training run (`run.json`): task, optimisation settings, split,
//! featurizer and model configuration.

use std::path::{Path, PathBuf};

use burn::prelude::*;
use models::{MatConfig, MatModel};
use mol_featurize::MatFeaturizer;
use serde::{Deserialize, Serialize};

use crate::error::TrainError;
use crate::labels::Labels;
use crate::run_kind::RunKind;
use crate::splits::SplitSpec;
use crate::table_data::{MoleculeFormat, MoleculeSource};
use crate::target_scaling::TargetScaling;
use crate::task::Task;
use crate::train_options::TrainOptions;

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
    /// Model hyper-parameters (`n_output` of old runs read as `num_targets`).
    #[serde(deserialize_with = "crate::run_compat::mat_config")]
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
    /// A MAT pretraining run (`cargo xtask pretrain --model mat`) whose embedding and
    /// encoder the model starts from (the generator starts fresh); `model` is then that
    /// run's architecture ([`super::init_from`]).
    #[serde(default)]
    pub init_from: Option<PathBuf>,
}

fn default_delimiter() -> char {
    ','
}

impl RunSpec {
    /// Reads `run.json` of a MAT run directory.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] if missing, malformed, another kind of run, or a model
    /// with `use_edge_features` whose featurizer makes no edge features (or the reverse;
    /// a hand-edited file).
    pub fn load(run_dir: &Path) -> Result<Self, TrainError> {
        let spec: Self = crate::run_kind::read_run_spec(run_dir, RunKind::Mat)?;
        super::check_edge_features(&spec.featurizer, &spec.model).map_err(|e| {
            TrainError::Checkpoint {
                path: run_dir.join("run.json"),
                reason: e.to_string(),
            }
        })?;
        Ok(spec)
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
            scaling: TargetScaling {
                mean: self.target_mean.clone(),
                std: self.target_std.clone(),
            },
        }
    }
}
