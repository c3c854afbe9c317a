//! A run folder's `run.json`, read once and typed by its `kind`: the spec of a MAT, a
//! Transformer-M or a SMILES generator run ([`RunSpecFile::load`]). Commands that accept
//! any run read it through this, so the file is parsed once per command.

use std::path::Path;

use crate::error::TrainError;
use crate::mat::spec::RunSpec;
use crate::run_kind::{RunKind, read_run_json, typed};
use crate::smiles_gpt::GptRunSpec;
use crate::transformer_m::TmRunSpec;

/// The spec of a run folder, by family.
#[derive(Debug, Clone)]
pub enum RunSpecFile {
    /// A MAT run.
    Mat(Box<RunSpec>),
    /// A Transformer-M run (table or QM9).
    TransformerM(Box<TmRunSpec>),
    /// A SMILES generator run.
    SmilesGpt(Box<GptRunSpec>),
}

impl RunSpecFile {
    /// Reads `run_dir/run.json` once and types it by its `kind` (runs written before that
    /// field are told apart by their fields, see [`crate::run_kind`]); old files read
    /// through the spec types' serde attributes ([`crate::run_compat`]).
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] naming `run.json` when it is missing, malformed, its
    /// fields are not those of its `kind`, or a MAT's model and featurizer disagree on
    /// edge features.
    pub fn load(run_dir: &Path) -> Result<Self, TrainError> {
        let (json, kind) = read_run_json(run_dir)?;
        Ok(match kind {
            RunKind::Mat => {
                let spec: RunSpec = typed(run_dir, json, kind)?;
                crate::mat::check_edge_features(&spec.featurizer, &spec.model).map_err(|e| {
                    TrainError::Checkpoint {
                        path: run_dir.join("run.json"),
                        reason: e.to_string(),
                    }
                })?;
                RunSpecFile::Mat(Box::new(spec))
            }
            RunKind::TransformerM => {
                RunSpecFile::TransformerM(Box::new(typed(run_dir, json, kind)?))
            }
            RunKind::SmilesGpt => RunSpecFile::SmilesGpt(Box::new(typed(run_dir, json, kind)?)),
        })
    }

    /// The run's model family.
    pub fn kind(&self) -> RunKind {
        match self {
            RunSpecFile::Mat(_) => RunKind::Mat,
            RunSpecFile::TransformerM(_) => RunKind::TransformerM,
            RunSpecFile::SmilesGpt(_) => RunKind::SmilesGpt,
        }
    }
}
