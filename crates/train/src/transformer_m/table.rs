//! Transformer-M on a molecule table, the user's or a QM9 subset: 2D encodings from the
//! SMILES graph, the 3D channel from the file's geometries (QM9's DFT ones, an SDF's) or
//! from conformers (the same ETKDG + UFF pipeline, cache and fallbacks as MAT; a molecule
//! left without a 3D conformer runs in 2D), regression or binary classification, several
//! tasks with missing labels, the same splits, reports and prediction files as MAT
//! ([`crate::table_run`]).

use std::path::Path;
use std::sync::Arc;

use burn::prelude::*;
use models::transformer_m::{Mode, TransformerM};
use mol_featurize::GraphormerFeaturizer;
use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::graphormer::GraphormerFeatures;

use super::{Qm9Subset, TmData, TmRunSpec, fit, predict_raw};
use crate::engine::{FitOutcome, MetricKind};
use crate::error::TrainError;
use crate::example::Example;
use crate::labels::Labels;
use crate::masked_loss::LossKind;
use crate::qm9::Qm9;
use crate::qm9_table::{qm9_columns, qm9_geometries};
use crate::report::TrainSummary;
use crate::run_control::RunControl;
use crate::splits::SplitSpec;
use crate::table_data::{Featurized, MoleculeSource, TableData};
use crate::table_run::{TableFamily, TableInput, train_table};
use crate::task::Task;

/// Trains a Transformer-M on the molecules of `spec`, writing into `run_dir` what a MAT
/// run writes: `run.json`, `featurize_report.json`, burn-train's `train/`, `valid/` and
/// `checkpoint/`, `best_model.bpk`, `metrics.json` (the same [`TrainSummary`]),
/// `curves.png`, `test_predictions.csv`. The learning rate warms up linearly over
/// `spec.train.warmup_fraction` of the steps, then decays linearly.
///
/// - A table ([`TmData::Table`]): its split; early stopping on the validation RMSE
///   (regression) or ROC-AUC (classification).
/// - A QM9 subset ([`TmData::Qm9`]): its DFT geometries, regression of the QM9 columns
///   the targets name (resolved to QM9's names and units in `run.json`), a random
///   80/10/10 split of the subset with `spec.train.seed`, early stopping on the
///   validation MAE (the metric QM9 results are given in).
///
/// # Errors
/// A classification run with a regression loss or the reverse, a model with another
/// number of outputs than targets, a target QM9 does not have; dataset, split,
/// model-file or I/O errors naming the file.
pub fn train_transformer_m(
    spec: &TmRunSpec,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
) -> Result<TrainSummary, TrainError> {
    spec.train.validate()?;
    let mut spec = spec.clone();
    let input = match &spec.data {
        TmData::Table(source) => TableInput {
            source: source.molecules.molecule_source(),
            split: source.split.clone(),
            task: spec.task,
            target_columns: spec.target_columns.clone(),
            units: spec.units.clone(),
        },
        TmData::Qm9(subset) => {
            let subset = subset.clone();
            qm9_input(&mut spec, &subset)?
        }
    };
    let classification = spec.task == Task::Classification;
    if classification != (spec.loss == LossKind::BceWithLogits) {
        return Err(TrainError::Invalid(format!(
            "loss {:?} does not fit a {:?} task",
            spec.loss, spec.task
        )));
    }
    if spec.model.num_targets != spec.target_columns.len() {
        return Err(TrainError::Invalid(format!(
            "the model has {} outputs for {} targets",
            spec.model.num_targets,
            spec.target_columns.len()
        )));
    }
    train_table(&mut TmFamily { spec }, &input, run_dir, control, device)
}

/// The table input of a QM9 run; `spec` gets QM9's column names, their units and the
/// regression task.
///
/// # Errors
/// An unreadable dataset; a target QM9 does not have.
fn qm9_input(spec: &mut TmRunSpec, subset: &Qm9Subset) -> Result<TableInput, TrainError> {
    let qm9 = Qm9::load(&subset.dataset)?;
    let (columns, units) = qm9_columns(&qm9, &spec.target_columns)?;
    spec.target_columns = columns;
    spec.task = Task::Regression;
    spec.units = Some(units);
    Ok(TableInput {
        source: MoleculeSource::qm9(subset),
        split: SplitSpec::Random {
            seed: spec.train.seed,
        },
        task: spec.task,
        target_columns: spec.target_columns.clone(),
        units: spec.units.clone(),
    })
}

/// Transformer-M's part of a table run.
struct TmFamily {
    spec: TmRunSpec,
}

impl TableFamily for TmFamily {
    const NAME: &'static str = "Transformer-M";

    type Features = GraphormerFeatures;
    type Model = TransformerM;

    fn featurize(
        &self,
        data: &TableData,
        control: &RunControl,
    ) -> Result<Featurized<GraphormerFeatures>, TrainError> {
        let featurizer = match &self.spec.data {
            // Training takes QM9's DFT geometries (new molecules get conformers).
            TmData::Qm9(_) => GraphormerFeaturizer {
                conformer: qm9_geometries(),
                ..self.spec.featurizer()
            },
            TmData::Table(_) => self.spec.featurizer(),
        };
        let (features, report) = control.featurize_table(&featurizer, data)?;
        let flat = features
            .iter()
            .flatten()
            .filter(|f| f.coordinates.is_none())
            .count();
        if flat > 0 && flat == report.n_ok && self.spec.eval_mode != Mode::TwoD {
            return Err(TrainError::Invalid(format!(
                "none of the {flat} molecules has 3D coordinates (a structure file of 2D \
                 records, or --coords layout2d|topological), so the 3D channel would never \
                 run (evaluation mode {}): use --coords embed3d for conformers, or --mode 2d",
                serde_json::to_string(&self.spec.eval_mode).unwrap_or_default()
            )));
        }
        if flat > 0 && self.spec.eval_mode != Mode::TwoD {
            eprintln!(
                "featurize: {flat} of {} molecules have no 3D conformer and run in 2D \
                 (featurize_report.json counts their coordinate sources)",
                report.n_ok
            );
        }
        Ok((features, report))
    }

    fn coordinate_source(features: &GraphormerFeatures) -> CoordinateMethod {
        features.coordinate_source
    }

    fn spec_with(&mut self, labels: &Labels) -> Result<serde_json::Value, TrainError> {
        self.spec.target_mean = labels.scaling.mean.clone();
        self.spec.target_std = labels.scaling.std.clone();
        serde_json::to_value(&self.spec).map_err(|e| TrainError::Invalid(e.to_string()))
    }

    fn fit(
        &self,
        labels: &Labels,
        run_dir: &Path,
        control: &RunControl,
        device: &Device,
        train: Arc<Vec<Example<GraphormerFeatures>>>,
        valid: Arc<Vec<Example<GraphormerFeatures>>>,
    ) -> Result<(FitOutcome, TransformerM), TrainError> {
        let metric = match self.spec.data {
            TmData::Qm9(_) => MetricKind::Mae,
            TmData::Table(_) => self.spec.task.selection_metric(),
        };
        fit(
            &self.spec,
            metric,
            &labels.scaling,
            (run_dir, control, device),
            train,
            valid,
        )
    }

    fn predict_raw(
        &self,
        model: &TransformerM,
        features: &[&GraphormerFeatures],
        device: &Device,
    ) -> Result<Vec<Vec<f32>>, TrainError> {
        predict_raw(
            model,
            features,
            &self.spec.model.limits,
            self.spec.eval_mode,
            self.spec.train.batch_size,
            device,
        )
    }

    fn num_params(model: &TransformerM) -> usize {
        model.num_params()
    }

    fn loss_name(&self, _task: Task) -> &'static str {
        use crate::masked_loss::LossScale;
        match (self.spec.loss, self.spec.criterion.loss_scale) {
            (LossKind::L1, LossScale::StdLabels) => "L1 (standardised targets)",
            (LossKind::Mse, LossScale::StdLabels) => "MSE (standardised targets)",
            (LossKind::L1, LossScale::StdLogits) => "L1 (target units)",
            (LossKind::Mse, LossScale::StdLogits) => "MSE (target units)",
            (LossKind::BceWithLogits, _) => "BCE",
        }
    }
}
