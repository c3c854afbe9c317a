//! Predictions of a trained run directory (MAT or Transformer-M), through
//! [`crate::trained_run::TrainedRun`].

use std::path::Path;

use burn::prelude::*;
use mol_featurize::FeaturizeReport;
use serde::Serialize;

use crate::data::MoleculeTable;
use crate::error::TrainError;
use crate::run_kind::RunKind;
pub use crate::smiles_conformer::conformer_for_smiles;
use crate::table_data::TableData;
use crate::trained_run::{Readout, TrainedRun};

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
    let run = TrainedRun::open(run_dir, device, "used to predict")?;
    // The conformer bar: drawn on a terminal only (indicatif hides it otherwise).
    let progress = true;
    let inference = run.infer(
        data,
        Readout::Prediction,
        (cache.as_ref(), limit, progress),
        device,
    )?;
    let (kind, labels, report) = (run.kind(), run.labels(), inference.report);
    crate::print_cache_report(&report);
    let mut skipped = report.skipped.iter().peekable();
    let predictions = data
        .table
        .smiles
        .iter()
        .zip(inference.rows)
        .enumerate()
        .map(|(row, (s, raw))| {
            let mut p = Prediction {
                row,
                id: data.table.ids.get(row).cloned(),
                smiles: s.clone(),
                values: raw.map(|raw| labels.output(&raw)),
                error: None,
            };
            if p.values.is_none()
                && let Some(s) = skipped.next_if(|s| s.row == row)
            {
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
