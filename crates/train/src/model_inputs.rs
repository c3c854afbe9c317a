//! A model family's inputs for molecules, without its model: the featurizer that `cargo
//! xtask featurize` and the Python package's `featurize` use (a trained run's own, as it
//! trained, or the family's default with the given coordinates), and the features it
//! makes. `export::npz::input_feeds` pads them into the exported ONNX model's inputs.

use std::path::Path;

use models::transformer_m::Mode;
use mol_featurize::cache::ConformerCache;
use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::graphormer::{EncodingLimits, GraphormerFeatures};
use mol_featurize::{
    AtomLimit, ConformerOptions, FeaturizeReport, Featurizer, GraphormerFeaturizer, MatFeatures,
    MatFeaturizer,
};

use crate::error::TrainError;
use crate::run_file::RunSpecFile;
use crate::run_kind::RunKind;
use crate::table_data::{TableData, featurize_table};

/// The featurizer of a family's inputs ([`InputFeaturizer::new`]).
#[derive(Debug, Clone)]
pub enum InputFeaturizer {
    /// MAT's node features, adjacency and distances.
    Mat(AtomLimit<MatFeaturizer>),
    /// Transformer-M's Graphormer encodings and 3D coordinates.
    TransformerM {
        /// The featurizer.
        featurizer: AtomLimit<GraphormerFeaturizer>,
        /// The model's encoding limits (padding of the degree, SPD and edge inputs).
        limits: EncodingLimits,
        /// The channels the exported model is fed (`both` without a run; a run's
        /// evaluation mode with one).
        mode: Mode,
    },
}

/// Features of every row (`None` where skipped), by family ([`InputFeaturizer::featurize`]).
#[derive(Debug, Clone)]
pub enum InputFeatures {
    /// MAT's.
    Mat(Vec<Option<MatFeatures>>),
    /// Transformer-M's, with the limits and mode of [`InputFeaturizer::TransformerM`].
    TransformerM {
        /// One entry per row.
        features: Vec<Option<GraphormerFeatures>>,
        /// As [`InputFeaturizer::TransformerM`].
        limits: EncodingLimits,
        /// As [`InputFeaturizer::TransformerM`].
        mode: Mode,
    },
}

impl InputFeaturizer {
    /// The featurizer for `family` with `coords` and conformer seed `seed`, or with `run`
    /// (its folder and spec) exactly the one that run trained with (its family wins over
    /// `family`, its coordinates over `coords`); a run trained on a file's coordinates
    /// gets the closest pipeline for SMILES when `given_structures` is false
    /// ([`crate::smiles_conformer::conformer_for_smiles`]). `max_atoms`: skip larger
    /// molecules (default [`mol_featurize::DEFAULT_MAX_ATOMS`]).
    ///
    /// # Errors
    /// [`TrainError::Invalid`] for the SMILES generator, which reads tokens, not
    /// molecule features.
    pub fn new(
        family: RunKind,
        run: Option<(&Path, &RunSpecFile)>,
        (coords, seed): (CoordinateMethod, u64),
        max_atoms: Option<usize>,
        given_structures: bool,
    ) -> Result<Self, TrainError> {
        let conformer = |trained: &ConformerOptions| match run {
            Some((dir, _)) if !given_structures => {
                crate::smiles_conformer::conformer_for_smiles(trained, dir)
            }
            _ => trained.clone(),
        };
        let default_conformer = ConformerOptions {
            method: coords,
            seed,
            ..Default::default()
        };
        let limit = |own: usize| max_atoms.unwrap_or(own);
        match run.map_or(family, |(_, spec)| spec.kind()) {
            RunKind::SmilesGpt => Err(TrainError::Invalid(
                "smiles-gpt reads SMILES tokens (vocab.json of its run), not molecule features"
                    .into(),
            )),
            RunKind::Mat => {
                let inner = match run {
                    Some((_, RunSpecFile::Mat(spec))) => spec.featurizer.clone(),
                    _ => MatFeaturizer {
                        conformer: default_conformer,
                        ..Default::default()
                    },
                };
                let inner = MatFeaturizer {
                    conformer: conformer(&inner.conformer),
                    ..inner
                };
                let max_atoms = limit(inner.max_atoms());
                Ok(InputFeaturizer::Mat(AtomLimit { inner, max_atoms }))
            }
            RunKind::TransformerM => {
                let (inner, limits, mode) = match run {
                    Some((_, RunSpecFile::TransformerM(spec))) => {
                        (spec.featurizer(), spec.model.limits, spec.eval_mode)
                    }
                    _ => {
                        let limits = EncodingLimits::default();
                        let featurizer = GraphormerFeaturizer {
                            max_hops: limits.max_hops,
                            conformer: default_conformer,
                        };
                        (featurizer, limits, Mode::Both)
                    }
                };
                let inner = GraphormerFeaturizer {
                    conformer: conformer(&inner.conformer),
                    ..inner
                };
                let max_atoms = limit(inner.max_atoms());
                Ok(InputFeaturizer::TransformerM {
                    featurizer: AtomLimit { inner, max_atoms },
                    limits,
                    mode,
                })
            }
        }
    }

    /// Featurizes every row of `data` (in parallel; `progress`: the conformer bar, on a
    /// terminal only), reading and filling `cache` when given.
    ///
    /// # Errors
    /// As [`featurize_table`].
    pub fn featurize(
        &self,
        data: &TableData,
        cache: Option<&ConformerCache>,
        progress: bool,
    ) -> Result<(InputFeatures, FeaturizeReport), TrainError> {
        Ok(match self {
            InputFeaturizer::Mat(f) => {
                let (features, report) = featurize_table(f, data, progress, cache)?;
                (InputFeatures::Mat(features), report)
            }
            InputFeaturizer::TransformerM {
                featurizer,
                limits,
                mode,
            } => {
                let (features, report) = featurize_table(featurizer, data, progress, cache)?;
                let features = InputFeatures::TransformerM {
                    features,
                    limits: *limits,
                    mode: *mode,
                };
                (features, report)
            }
        })
    }
}

impl InputFeatures {
    /// Rows featurized (skipped ones included).
    pub fn len(&self) -> usize {
        match self {
            InputFeatures::Mat(f) => f.len(),
            InputFeatures::TransformerM { features, .. } => features.len(),
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows' features as JSON (`null` where skipped).
    ///
    /// # Errors
    /// [`TrainError::Invalid`] when serde fails (non-finite numbers are written as `null`).
    pub fn to_json(&self) -> Result<serde_json::Value, TrainError> {
        let json = match self {
            InputFeatures::Mat(f) => serde_json::to_value(f),
            InputFeatures::TransformerM { features, .. } => serde_json::to_value(features),
        };
        json.map_err(|e| TrainError::Invalid(format!("features as JSON: {e}")))
    }
}
