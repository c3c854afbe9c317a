//! What defines a Transformer-M run (`run.json`): its molecules (a QM9 subset or the
//! user's table), targets, task and loss, modes, model and optimisation.

use std::path::{Path, PathBuf};

use burn::prelude::*;
use models::transformer_m::{Mode, TransformerM, TransformerMConfig};
use mol_featurize::{ConformerOptions, GraphormerFeaturizer};
use serde::{Deserialize, Serialize};

use crate::error::TrainError;
use crate::labels::Labels;
use crate::masked_loss::{LossKind, LossScale};
use crate::mode_sampling::ModeProbabilities;
pub use crate::qm9_table::Qm9Subset;
use crate::run_kind::RunKind;
use crate::splits::SplitSpec;
use crate::table_data::{MoleculeFormat, MoleculeSource};
use crate::target_scaling::TargetScaling;
use crate::task::Task;
use crate::train_options::TrainOptions;

/// Where a Transformer-M run's molecules come from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TmData {
    /// A QM9 subset with its DFT geometries.
    Qm9(Qm9Subset),
    /// The user's molecule table, with conformers for the 3D channel.
    Table(TableSource),
}

/// The molecules of a delimited file as Transformer-M reads them: the file, its SMILES
/// column and delimiter, and how the 3D channel's conformers are made (the same ETKDG +
/// UFF pipeline, cache and fallbacks as MAT; molecules without a 3D conformer run in 2D).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SmilesSource {
    /// The molecule file: delimited, SDF, or XYZ files (see `format`).
    pub path: PathBuf,
    /// How `path` is read (runs written before structure files read a delimited file).
    #[serde(default)]
    pub format: MoleculeFormat,
    /// SMILES column (delimited files, XYZ labels).
    pub smiles_column: String,
    /// Field delimiter.
    #[serde(default = "comma")]
    pub delimiter: char,
    /// Conformer settings (also the cache key).
    pub conformer: ConformerOptions,
}

fn comma() -> char {
    ','
}

impl SmilesSource {
    /// The file and how it is read.
    pub fn molecule_source(&self) -> MoleculeSource {
        MoleculeSource {
            path: self.path.clone(),
            format: self.format.clone(),
            smiles_column: self.smiles_column.clone(),
            delimiter: self.delimiter,
        }
    }

    /// The file's SMILES, in row order (an SDF record's canonical SMILES).
    ///
    /// # Errors
    /// An unreadable file or a missing column, naming the file.
    pub fn read_smiles(&self) -> Result<Vec<String>, TrainError> {
        Ok(self.molecule_source().read(&[])?.table.smiles)
    }
}

/// A labelled molecule table and its split.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableSource {
    /// The molecules.
    #[serde(flatten)]
    pub molecules: SmilesSource,
    /// Split.
    pub split: SplitSpec,
}

/// The parts of the original's QM9 criterion (`graph_prediction_qm9`,
/// `finetune_qm9.sh` in lsj2408/Transformer-M) beside `loss` and the model's readout.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct TmCriterion {
    /// Where the regression loss is computed ([`LossScale`]; the original's QM9
    /// default is `std_logits`, ours `std_labels`).
    #[serde(default)]
    pub loss_scale: LossScale,
    /// Clip the gradients' global L2 norm to this value before each step
    /// ([`crate::grad_clip`]; the original's `--clip-norm`, 5 in its QM9 script).
    #[serde(default)]
    pub clip_norm: Option<f64>,
}

/// Everything that defines a Transformer-M training run (`run.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TmRunSpec {
    /// Always [`RunKind::TransformerM`]: tells run directories apart
    /// ([`crate::run_kind`]).
    #[serde(default = "RunKind::transformer_m")]
    pub kind: RunKind,
    /// Molecules.
    pub data: TmData,
    /// Target columns (QM9: one qm9pack name, e.g. `HOMO_LUMO_gap_au`); runs written
    /// before multi-task training have one `target` (QM9) or `targets` (tables).
    #[serde(
        alias = "target",
        alias = "targets",
        deserialize_with = "crate::run_compat::one_or_many"
    )]
    pub target_columns: Vec<String>,
    /// Regression or binary classification.
    #[serde(default = "regression")]
    pub task: Task,
    /// Training loss (L1 or MSE on standardised targets for regression, BCE with logits
    /// for classification).
    #[serde(default = "l1")]
    pub loss: LossKind,
    /// Loss scale and gradient clipping (runs before these settings existed: standardised
    /// labels, no clipping).
    #[serde(default)]
    pub criterion: TmCriterion,
    /// Unit of the targets (table runs; QM9 runs take the column's unit).
    #[serde(default)]
    pub units: Option<String>,
    /// Training-time mode probabilities.
    pub modes: ModeProbabilities,
    /// Mode used for validation and test predictions.
    pub eval_mode: Mode,
    /// Model.
    #[serde(deserialize_with = "crate::run_compat::tm_config")]
    pub model: TransformerMConfig,
    /// Optimisation (epochs, batch size, peak learning rate, warm-up fraction,
    /// patience, seed).
    pub train: TrainOptions,
    /// Start from this model file (a denoising-pretraining run's `pretrained_model.bpk`).
    #[serde(default)]
    pub init_from: Option<PathBuf>,
    /// Training-set mean of each target (filled in by the run; empty for classification;
    /// a number in runs written before multi-task training).
    #[serde(default, deserialize_with = "crate::run_compat::one_or_many")]
    pub target_mean: Vec<f32>,
    /// Training-set standard deviation of each target (filled in by the run).
    #[serde(default, deserialize_with = "crate::run_compat::one_or_many")]
    pub target_std: Vec<f32>,
}

fn regression() -> Task {
    Task::Regression
}

fn l1() -> LossKind {
    LossKind::L1
}

impl TmRunSpec {
    /// Reads `run.json` of a Transformer-M run directory (QM9 runs written before
    /// multi-task support, with one `target` and scalar scaling, are read as one-task
    /// runs).
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] if missing, malformed, or another kind of run.
    pub fn load(run_dir: &Path) -> Result<Self, TrainError> {
        crate::run_kind::read_run_spec(run_dir, RunKind::TransformerM)
    }

    /// The run's best model (`run_dir/best_model.bpk`) on `device`.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] naming the file when it is missing or does not fit
    /// [`TmRunSpec::model`].
    pub fn load_best_model(
        &self,
        run_dir: &Path,
        device: &Device,
    ) -> Result<TransformerM, TrainError> {
        crate::checkpoint::load_best_model(self.model.init(device), run_dir)
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

    /// The featurizer of the run's molecules: its conformer settings for a table run,
    /// the default ETKDG + UFF ones (for new molecules) for a QM9 run.
    pub fn featurizer(&self) -> GraphormerFeaturizer {
        GraphormerFeaturizer {
            max_hops: self.model.limits.max_hops,
            conformer: match &self.data {
                TmData::Table(t) => t.molecules.conformer.clone(),
                TmData::Qm9(_) => ConformerOptions::default(),
            },
        }
    }
}
