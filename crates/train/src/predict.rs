//! Batched inference with a MAT model and prediction from a trained run directory (MAT
//! or Transformer-M).

use std::path::Path;

use burn::prelude::*;
use models::{MatBatch, MatModel};
use mol_featurize::graphormer::GraphormerFeatures;
use mol_featurize::{AtomLimit, ConformerOptions, FeaturizeReport, MatFeatures, pad_batch};
use serde::Serialize;

use crate::data::MoleculeTable;
use crate::error::TrainError;
use crate::run_kind::{RunKind, run_kind};
use crate::run_spec::RunSpec;
use crate::table_data::{TableData, featurize_table};
use crate::transformer_m::TmRunSpec;

/// Runs `model` (evaluation mode) over `features` in batches of at most `batch_size`,
/// grouped by size ([`crate::size_batches`]), rows returned in input order.
/// Returns raw outputs `[n][num_targets]` (logits for classification; scaled values for
/// regression: apply [`RunSpec::unscale`]). On the flex CPU device each batch is split
/// across rayon's threads ([`MatModel::forward_parallel`]).
pub fn predict_raw(
    model: &MatModel,
    features: &[&MatFeatures],
    batch_size: usize,
    device: &Device,
) -> Vec<Vec<f32>> {
    let parts = models::parallel::inference_parts(device);
    let sizes: Vec<usize> = features.iter().map(|f| f.n_atoms).collect();
    let Ok(rows) = crate::size_batches::predict_grouped(&sizes, batch_size, |batch| {
        let chunk: Vec<&MatFeatures> = batch.iter().map(|&i| features[i]).collect();
        // pad_batch only fails on mixed d_atom, impossible within one featurizer.
        let data = pad_batch(&chunk).expect("one featurizer, one d_atom");
        let y = model.forward_parallel(&MatBatch::from_data(&data, device), parts);
        let [_, k] = y.dims();
        let values: Vec<f32> = y.try_into_vec_as::<f32>().unwrap_or_default();
        Ok::<_, std::convert::Infallible>(values.chunks(k.max(1)).map(|c| c.to_vec()).collect())
    });
    rows
}

/// One prediction of [`predict_table`].
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    /// Input row (a structure file's record index).
    pub row: usize,
    /// The row's identity (an SDF record's title or id field, an XYZ file), when the
    /// input has one.
    pub id: Option<String>,
    /// SMILES as given (an SDF record's canonical SMILES).
    pub smiles: String,
    /// One value per target: the target's unit for regression, the probability of the
    /// positive class for classification. `None` if the molecule was skipped.
    pub values: Option<Vec<f32>>,
    /// Why the molecule was skipped.
    pub error: Option<String>,
}

/// What [`predict_table`] returns.
#[derive(Debug, Clone)]
pub struct PredictOutput {
    /// One prediction per input row, in order.
    pub predictions: Vec<Prediction>,
    /// Featurization report of the inputs.
    pub report: FeaturizeReport,
    /// The run's target columns (one value per column in each prediction).
    pub target_columns: Vec<String>,
    /// The run's model family.
    pub kind: RunKind,
}

/// The conformer settings for molecules given as SMILES to the run in `run_dir`:
/// [`ConformerOptions::for_smiles`] with the coordinate sources of its training
/// molecules (`featurize_report.json`): a run trained on a file's 3D coordinates gets
/// ETKDG + UFF conformers, one trained on 2D depictions gets 2D layouts.
pub fn conformer_for_smiles(trained: &ConformerOptions, run_dir: &Path) -> ConformerOptions {
    let sources = std::fs::read_to_string(run_dir.join("featurize_report.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<FeaturizeReport>(&text).ok())
        .map(|r| r.coordinate_sources)
        .unwrap_or_default();
    trained.for_smiles(&sources)
}

/// A run's conformer settings for `data`: its own for a structure file, else
/// [`conformer_for_smiles`].
fn conformer_for(trained: &ConformerOptions, data: &TableData, run_dir: &Path) -> ConformerOptions {
    match data.structures {
        Some(_) => trained.clone(),
        None => conformer_for_smiles(trained, run_dir),
    }
}

/// [`predict_table`] for SMILES.
///
/// # Errors
/// As [`predict_table`].
pub fn predict_smiles(
    run_dir: &Path,
    smiles: &[String],
    device: &Device,
    conformer_cache: Option<&Path>,
) -> Result<PredictOutput, TrainError> {
    let data = TableData {
        table: MoleculeTable {
            smiles: smiles.to_vec(),
            targets: vec![Vec::new(); smiles.len()],
            target_columns: Vec::new(),
            ids: Vec::new(),
            label_problems: Vec::new(),
        },
        structures: None,
    };
    predict_table(run_dir, &data, device, conformer_cache)
}

/// Loads the best model of a run directory written by `train` (MAT, or Transformer-M on
/// a table or QM9) and predicts every row of `data`, featurized as in training: a run
/// trained on a structure file's coordinates takes each record's own, and gets ETKDG +
/// UFF conformers for molecules given as SMILES ([`conformer_for_smiles`]), as
/// does a QM9 Transformer-M run trained on DFT geometries.
///
/// `conformer_cache`: folder of the conformer cache ([`mol_featurize::cache`]), or `None`
/// to embed every molecule.
///
/// # Errors
/// [`TrainError::Checkpoint`] if the run directory lacks `run.json` or
/// `best_model.bpk`, or they do not fit each other.
pub fn predict_table(
    run_dir: &Path,
    data: &TableData,
    device: &Device,
    conformer_cache: Option<&Path>,
) -> Result<PredictOutput, TrainError> {
    predict_table_limited(run_dir, data, device, conformer_cache, None)
}

/// [`predict_table`] with a heavy-atom limit per molecule (`None`:
/// [`mol_featurize::DEFAULT_MAX_ATOMS`]); larger molecules get the reason in their
/// error.
///
/// # Errors
/// As [`predict_table`].
pub fn predict_table_limited(
    run_dir: &Path,
    data: &TableData,
    device: &Device,
    conformer_cache: Option<&Path>,
    max_atoms: Option<usize>,
) -> Result<PredictOutput, TrainError> {
    let limit = max_atoms.unwrap_or(mol_featurize::DEFAULT_MAX_ATOMS);
    let cache = crate::open_conformer_cache(conformer_cache);
    // The conformer bar: drawn on a terminal only (indicatif hides it otherwise).
    let progress = true;
    let kind = run_kind(run_dir)?;
    let (present, raw, report, labels) = match kind {
        RunKind::SmilesGpt => {
            return Err(crate::explain::generator_run(run_dir, "used to predict"));
        }
        RunKind::Mat => {
            let spec = RunSpec::load(run_dir)?;
            let model = spec.load_best_model(run_dir, device)?;
            let mut featurizer = spec.featurizer.clone();
            featurizer.conformer = conformer_for(&featurizer.conformer, data, run_dir);
            let featurizer = AtomLimit {
                inner: featurizer,
                max_atoms: limit,
            };
            let (features, report) = featurize_table(&featurizer, data, progress, cache.as_ref())?;
            let ok: Vec<&MatFeatures> = features.iter().flatten().collect();
            let raw = predict_raw(&model, &ok, spec.train.batch_size, device);
            let present = features.iter().map(Option::is_some).collect::<Vec<_>>();
            (present, raw, report, spec.labels())
        }
        RunKind::TransformerM => {
            let spec = TmRunSpec::load(run_dir)?;
            let model = spec.load_best_model(run_dir, device)?;
            let mut featurizer = spec.featurizer();
            featurizer.conformer = conformer_for(&featurizer.conformer, data, run_dir);
            let featurizer = AtomLimit {
                inner: featurizer,
                max_atoms: limit,
            };
            let (features, report) = featurize_table(&featurizer, data, progress, cache.as_ref())?;
            let ok: Vec<&GraphormerFeatures> = features.iter().flatten().collect();
            let raw = crate::transformer_m::predict_raw(
                &model,
                &ok,
                &spec.model.limits,
                spec.eval_mode,
                spec.train.batch_size,
                device,
            )?;
            let present = features.iter().map(Option::is_some).collect::<Vec<_>>();
            (present, raw, report, spec.labels())
        }
    };
    crate::print_cache_report(&report);
    let mut raw = raw.into_iter();
    let mut skipped = report.skipped.iter().peekable();
    let predictions = data
        .table
        .smiles
        .iter()
        .enumerate()
        .map(|(row, s)| {
            let mut p = Prediction {
                row,
                id: data.table.ids.get(row).cloned(),
                smiles: s.clone(),
                values: None,
                error: None,
            };
            if present[row] {
                p.values = Some(labels.output(&raw.next().unwrap_or_default()));
            } else if let Some(s) = skipped.next_if(|s| s.row == row) {
                p.error = Some(s.reason.clone());
            }
            p
        })
        .collect();
    Ok(PredictOutput {
        predictions,
        report,
        target_columns: labels.columns,
        kind,
    })
}
