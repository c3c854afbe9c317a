//! Transformer-M on the user's molecule table: 2D encodings from the SMILES graph, the
//! 3D channel from conformers (the same ETKDG + UFF pipeline, cache and fallbacks as MAT;
//! a molecule left without a 3D conformer runs in 2D), regression or binary
//! classification, several tasks with missing labels, the same splits, reports and
//! prediction files as MAT ([`crate::table_run`]).

use std::path::Path;
use std::sync::Arc;

use burn::prelude::*;
use models::transformer_m::{Mode, TransformerM};
use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::graphormer::GraphormerFeatures;

use super::{TmData, TmRunSpec, fit, predict_raw};
use crate::engine::FitOutcome;
use crate::error::TrainError;
use crate::example::Example;
use crate::labels::Labels;
use crate::masked_loss::LossKind;
use crate::report::TrainSummary;
use crate::run_control::RunControl;
use crate::table_data::{Featurized, TableData};
use crate::table_run::{TableFamily, TableInput, train_table};
use crate::task::Task;

/// Trains a Transformer-M on the molecule table of `spec` ([`TmData::Table`]), writing
/// into `run_dir` what a MAT run writes: `run.json`, `featurize_report.json`, burn-train's
/// `train/`, `valid/` and `checkpoint/`, `best_model.bpk`, `metrics.json` (the same
/// [`TrainSummary`]), `curves.png`, `test_predictions.csv`. Early stopping watches the
/// validation RMSE (regression) or ROC-AUC (classification); the learning rate warms up
/// linearly over `spec.train.warmup_fraction` of the steps, then decays linearly.
///
/// # Errors
/// A QM9 spec (use [`super::train_transformer_m`]), a classification run with a
/// regression loss or the reverse, a model with another number of outputs than targets;
/// dataset, split, model-file or I/O errors naming the file.
pub fn train_table_transformer_m(
    spec: &TmRunSpec,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
) -> Result<TrainSummary, TrainError> {
    spec.train.validate()?;
    let TmData::Table(source) = &spec.data else {
        return Err(TrainError::Invalid(
            "train_table_transformer_m trains on a molecule table; QM9 runs go through \
             train_transformer_m"
                .into(),
        ));
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
    let input = TableInput {
        source: source.molecules.molecule_source(),
        split: source.split.clone(),
        task: spec.task,
        target_columns: spec.target_columns.clone(),
        units: spec.units.clone(),
    };
    train_table(
        &mut TmFamily { spec: spec.clone() },
        &input,
        run_dir,
        control,
        device,
    )
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
        let (features, report) = control.featurize_table(&self.spec.featurizer(), data)?;
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
        self.spec.target_mean = labels.mean.clone();
        self.spec.target_std = labels.std.clone();
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
        let metric = self.spec.task.selection_metric();
        fit(
            &self.spec,
            metric,
            &labels.mean,
            &labels.std,
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
        match self.spec.loss {
            LossKind::L1 => "L1 (standardised targets)",
            LossKind::Mse => "MSE (standardised targets)",
            LossKind::BceWithLogits => "BCE",
        }
    }
}
