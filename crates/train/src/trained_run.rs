//! A trained property run (MAT or Transformer-M) opened once from its folder: the spec,
//! the best model and the labels' scaling, with one inference entry for predictions,
//! molecule embeddings and per-atom embeddings (issue #38 item 2; the first step of
//! issue #35's "a trained run is one type").

use std::path::{Path, PathBuf};

use burn::prelude::*;
use models::MatModel;
use models::transformer_m::TransformerM;
use mol_featurize::cache::ConformerCache;
use mol_featurize::graphormer::GraphormerFeatures;
use mol_featurize::{
    AtomLimit, ConformerOptions, FeaturizeReport, GraphormerFeaturizer, MatFeatures, MatFeaturizer,
};

use crate::error::TrainError;
use crate::labels::Labels;
use crate::mat::infer::infer_mat;
use crate::mat::spec::RunSpec;
pub use crate::readout::Readout;
use crate::readout::rows_of;
use crate::run_file::RunSpecFile;
use crate::run_kind::RunKind;
use crate::table_data::{TableData, featurize_table};
use crate::transformer_m::TmRunSpec;

/// Featurized rows of a trained run's family ([`TrainedRun::featurize`]), `None` where a
/// row was skipped.
#[derive(Debug, Clone)]
pub enum RunFeatures {
    /// MAT's inputs.
    Mat(Vec<Option<MatFeatures>>),
    /// Transformer-M's inputs.
    TransformerM(Vec<Option<GraphormerFeatures>>),
}

/// A trained run's featurizer and its folder (whose `featurize_report.json` decides the
/// conformers of molecules given as SMILES); plain data, so that another thread can
/// featurize while the model runs.
#[derive(Debug, Clone)]
pub enum RunFeaturizer {
    /// MAT's.
    Mat(MatFeaturizer, PathBuf),
    /// Transformer-M's.
    TransformerM(GraphormerFeaturizer, PathBuf),
}

impl RunFeaturizer {
    /// Featurizes every row of `data` as in training (a structure file's own settings,
    /// else [`crate::smiles_conformer::conformer_for_smiles`]), skipping molecules with more than
    /// `max_atoms` heavy atoms (with the reason); `progress`: draw the conformer bar (on
    /// a terminal only).
    ///
    /// # Errors
    /// [`TrainError::Invalid`] for a structure-coordinates run given a CSV.
    pub fn featurize(
        &self,
        data: &TableData,
        (cache, max_atoms, progress): (Option<&ConformerCache>, usize, bool),
    ) -> Result<(RunFeatures, FeaturizeReport), TrainError> {
        let conformer = |trained: &ConformerOptions, dir: &Path| match data.structures {
            Some(_) => trained.clone(),
            None => crate::smiles_conformer::conformer_for_smiles(trained, dir),
        };
        Ok(match self {
            RunFeaturizer::Mat(inner, dir) => {
                let mut inner = inner.clone();
                inner.conformer = conformer(&inner.conformer, dir);
                let featurizer = AtomLimit { inner, max_atoms };
                let (features, report) = featurize_table(&featurizer, data, progress, cache)?;
                (RunFeatures::Mat(features), report)
            }
            RunFeaturizer::TransformerM(inner, dir) => {
                let mut inner = inner.clone();
                inner.conformer = conformer(&inner.conformer, dir);
                let featurizer = AtomLimit { inner, max_atoms };
                let (features, report) = featurize_table(&featurizer, data, progress, cache)?;
                (RunFeatures::TransformerM(features), report)
            }
        })
    }
}

/// The model of a trained property run.
#[derive(Debug)]
pub enum TrainedModel {
    /// A MAT run ([`crate::train_run`]).
    Mat {
        /// Its `run.json`.
        spec: Box<RunSpec>,
        /// Its best epoch's model.
        model: Box<MatModel>,
    },
    /// A Transformer-M run (table or QM9).
    TransformerM {
        /// Its `run.json`.
        spec: Box<TmRunSpec>,
        /// Its best epoch's model.
        model: Box<TransformerM>,
    },
}

/// A trained property run opened from its folder ([`TrainedRun::open`]).
#[derive(Debug)]
pub struct TrainedRun {
    /// The run folder.
    pub dir: PathBuf,
    /// The spec and best model.
    pub model: TrainedModel,
}

/// Per row the readout's values (`None` where skipped), and per row its heavy atoms.
pub type RowsAndAtoms = (Vec<Option<Vec<f32>>>, Vec<usize>);

/// What [`TrainedRun::infer`] returns.
#[derive(Debug, Clone)]
pub struct Inference {
    /// One entry per input row, in order: the readout's values, or `None` where the
    /// molecule was skipped (its reason is in `report.skipped`).
    pub rows: Vec<Option<Vec<f32>>>,
    /// The featurization report of the inputs.
    pub report: FeaturizeReport,
    /// Heavy atoms of each row's molecule (0 where skipped): the row count of an
    /// [`Readout::Atoms`] matrix.
    pub n_atoms: Vec<usize>,
}

impl TrainedRun {
    /// Opens the run in `run_dir`: `run.json` and `best_model.bpk` loaded on `device`.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] when `run.json` or `best_model.bpk` is missing or they
    /// do not fit each other; [`TrainError::Invalid`] for a generator run (it has no
    /// molecule property to predict), naming what was asked with `used_for`.
    pub fn open(run_dir: &Path, device: &Device, used_for: &str) -> Result<Self, TrainError> {
        if run_dir.join(crate::ensemble::ENSEMBLE_FILE).exists() {
            return Err(TrainError::Invalid(format!(
                "{}: an ensemble; open its members (TrainedRun::open_members)",
                run_dir.display()
            )));
        }
        let model = match RunSpecFile::load(run_dir)? {
            RunSpecFile::SmilesGpt(_) => {
                return Err(TrainError::generator_run(run_dir, used_for));
            }
            RunSpecFile::Mat(spec) => {
                let model = spec.load_best_model(run_dir, device)?;
                TrainedModel::Mat {
                    spec,
                    model: Box::new(model),
                }
            }
            RunSpecFile::TransformerM(spec) => {
                let model = spec.load_best_model(run_dir, device)?;
                TrainedModel::TransformerM {
                    spec,
                    model: Box::new(model),
                }
            }
        };
        Ok(Self {
            dir: run_dir.to_path_buf(),
            model,
        })
    }

    /// The dropout rate of the model's layers (MAT's `dropout`; Transformer-M's
    /// `dropout`, the residual and embedding one): MC dropout needs it above 0.
    pub fn dropout(&self) -> f64 {
        match &self.model {
            TrainedModel::Mat { spec, .. } => spec.model.dropout,
            TrainedModel::TransformerM { spec, .. } => spec.model.dropout,
        }
    }

    /// The runs of `run_dir`: its members when it is an ensemble
    /// ([`crate::ensemble::EnsembleSpec`]), else the run itself.
    ///
    /// # Errors
    /// As [`TrainedRun::open`], for each member; a malformed `ensemble.json`; members of
    /// different model families or target columns.
    pub fn open_members(
        run_dir: &Path,
        device: &Device,
        used_for: &str,
    ) -> Result<Vec<Self>, TrainError> {
        let Some(spec) = crate::ensemble::EnsembleSpec::load(run_dir)? else {
            return Ok(vec![Self::open(run_dir, device, used_for)?]);
        };
        let members: Vec<Self> = spec
            .member_dirs(run_dir)
            .iter()
            .map(|dir| Self::open(dir, device, used_for))
            .collect::<Result<_, _>>()?;
        let first = (members[0].kind(), members[0].labels().columns);
        if let Some(m) = members
            .iter()
            .find(|m| (m.kind(), m.labels().columns) != first)
        {
            return Err(TrainError::Checkpoint {
                path: m.dir.clone(),
                reason: format!(
                    "member differs from {} in model family or target columns",
                    members[0].dir.display()
                ),
            });
        }
        Ok(members)
    }

    /// The run's model family.
    pub fn kind(&self) -> RunKind {
        match self.model {
            TrainedModel::Mat { .. } => RunKind::Mat,
            TrainedModel::TransformerM { .. } => RunKind::TransformerM,
        }
    }

    /// The run's task, target columns and target scaling.
    pub fn labels(&self) -> Labels {
        match &self.model {
            TrainedModel::Mat { spec, .. } => spec.labels(),
            TrainedModel::TransformerM { spec, .. } => spec.labels(),
        }
    }

    /// The width of a molecule embedding (the model's `d_model`).
    pub fn embedding_dim(&self) -> usize {
        match &self.model {
            TrainedModel::Mat { spec, .. } => spec.model.d_model,
            TrainedModel::TransformerM { spec, .. } => spec.model.d_model,
        }
    }

    /// The run's featurizer, as in training ([`RunFeaturizer`]).
    pub fn featurizer(&self) -> RunFeaturizer {
        let dir = self.dir.clone();
        match &self.model {
            TrainedModel::Mat { spec, .. } => RunFeaturizer::Mat(spec.featurizer.clone(), dir),
            TrainedModel::TransformerM { spec, .. } => {
                RunFeaturizer::TransformerM(spec.featurizer(), dir)
            }
        }
    }

    /// [`RunFeaturizer::featurize`] with the run's featurizer.
    ///
    /// # Errors
    /// As [`RunFeaturizer::featurize`].
    pub fn featurize(
        &self,
        data: &TableData,
        options: (Option<&ConformerCache>, usize, bool),
    ) -> Result<(RunFeatures, FeaturizeReport), TrainError> {
        self.featurizer().featurize(data, options)
    }

    /// Reads `readout` out of the model for featurized rows ([`TrainedRun::featurize`]),
    /// in batches grouped by size ([`crate::size_batches`]): one entry per row, `None`
    /// where the row was skipped; and each row's heavy-atom count (0 where skipped).
    ///
    /// # Errors
    /// [`TrainError::Invalid`] for features of the other family, or a batch the model
    /// cannot take.
    pub fn infer_features(
        &self,
        features: &RunFeatures,
        readout: Readout,
        device: &Device,
    ) -> Result<RowsAndAtoms, TrainError> {
        let (present, n_atoms, values) = match (&self.model, features) {
            (TrainedModel::Mat { spec, model }, RunFeatures::Mat(features)) => {
                let ok: Vec<&MatFeatures> = features.iter().flatten().collect();
                let values = infer_mat(model, &ok, spec.train.batch_size, readout, device)?;
                let atoms = |f: &MatFeatures| f.n_atoms - 1;
                let n_atoms = features.iter().map(|f| f.as_ref().map_or(0, atoms));
                let present = features.iter().map(Option::is_some).collect::<Vec<_>>();
                (present, n_atoms.collect::<Vec<_>>(), values)
            }
            (TrainedModel::TransformerM { spec, model }, RunFeatures::TransformerM(features)) => {
                let ok: Vec<&GraphormerFeatures> = features.iter().flatten().collect();
                let values = crate::transformer_m::infer(
                    model,
                    &ok,
                    (&spec.model.limits, spec.eval_mode),
                    spec.train.batch_size,
                    readout,
                    device,
                )?;
                let n_atoms = features
                    .iter()
                    .map(|f| f.as_ref().map_or(0, |f| f.num_atoms));
                let present = features.iter().map(Option::is_some).collect::<Vec<_>>();
                (present, n_atoms.collect::<Vec<_>>(), values)
            }
            _ => {
                return Err(TrainError::Invalid(format!(
                    "{}: features of another model family",
                    self.dir.display()
                )));
            }
        };
        let mut values = values.into_iter();
        let rows = present
            .iter()
            .map(|&p| if p { values.next() } else { None })
            .collect();
        Ok((rows, n_atoms))
    }

    /// [`TrainedRun::featurize`] then [`TrainedRun::infer_features`].
    ///
    /// # Errors
    /// As those two.
    pub fn infer(
        &self,
        data: &TableData,
        readout: Readout,
        options: (Option<&ConformerCache>, usize, bool),
        device: &Device,
    ) -> Result<Inference, TrainError> {
        let (features, report) = self.featurize(data, options)?;
        let (rows, n_atoms) = self.infer_features(&features, readout, device)?;
        Ok(Inference {
            rows,
            report,
            n_atoms,
        })
    }

    /// The run's head on molecule embeddings ([`Readout::Molecule`] rows, each
    /// [`TrainedRun::embedding_dim`] wide): the predictions in target units (regression)
    /// or probabilities (classification), as `predict` gives them.
    ///
    /// # Errors
    /// [`TrainError::Invalid`] for a row of another width, or for a Transformer-M run
    /// trained with an atom readout (`--readout mean|sum`), whose head reads every atom
    /// token, not one embedding per molecule.
    pub fn head(
        &self,
        embeddings: &[Vec<f32>],
        device: &Device,
    ) -> Result<Vec<Vec<f32>>, TrainError> {
        if let TrainedModel::TransformerM { spec, .. } = &self.model
            && spec.model.readout != models::transformer_m::TmReadout::Cls
        {
            return Err(TrainError::Invalid(format!(
                "this Transformer-M run was trained with --readout {}: its head reads every \
                 atom token, so it cannot be applied to molecule embeddings (only --readout cls \
                 runs can)",
                spec.model.readout.flag()
            )));
        }
        let d = self.embedding_dim();
        if let Some((i, e)) = embeddings.iter().enumerate().find(|(_, e)| e.len() != d) {
            return Err(TrainError::Invalid(format!(
                "embedding {i} has {} values; the run's embeddings have {d}",
                e.len()
            )));
        }
        if embeddings.is_empty() {
            return Ok(Vec::new());
        }
        let flat: Vec<f32> = embeddings.concat();
        let x = Tensor::<2>::from_data(TensorData::new(flat, [embeddings.len(), d]), device);
        let raw = match &self.model {
            TrainedModel::Mat { model, .. } => model.head(x),
            TrainedModel::TransformerM { model, .. } => model.head.forward(x),
        };
        let labels = self.labels();
        Ok(rows_of(raw)?.iter().map(|r| labels.output(r)).collect())
    }
}
