//! MAT training: CSV -> featurize -> split -> Adam + Noam -> early stopping -> best
//! checkpoint -> test metrics.
//!
//! Recipe (docs/SPEC.md 1.2, gmum/huggingmolecules): Adam, Noam schedule with warm-up over
//! the first 20% of steps, batch 32, up to 100 epochs, MSE for regression and BCE with
//! logits for classification. Early stopping watches validation RMSE (regression) or
//! ROC-AUC (classification); the best epoch's weights are kept.
//!
//! Training runs on the engine ([`crate::engine`], burn-train's `Learner`): exact resume
//! from the last complete checkpoint, several devices, progress lines or the dashboard.
//! Multi-task tables: one output per target column, missing labels masked per task.
//! Exactness of resume holds for one training per process: Burn's CPU backend draws
//! every random number from one process-wide generator, so trainings running
//! concurrently in one process interleave their draws.
//! The table handling (featurize, split, evaluate, report) is shared with Transformer-M
//! ([`crate::table_run`]).

use std::path::Path;
use std::sync::Arc;

use crate::engine::fused_adam::FusedAdamConfig;
use burn::prelude::*;
use models::MatModel;
use models::mat::LoadParts;
use mol_featurize::MatFeatures;
use mol_featurize::conformer::CoordinateMethod;

use super::infer::predict_raw;
use super::spec::RunSpec;
use crate::engine::{self, FitOutcome, FitSettings, Selection, TaskMetric};
use crate::error::TrainError;
use crate::example::Example;
use crate::labels::Labels;
use crate::mat::step::{MatBatcher, MatLearner};
use crate::report::TrainSummary;
use crate::run_control::RunControl;
use crate::table_data::{Featurized, TableData};
use crate::table_run::{TableFamily, TableInput, train_table};
use crate::task::Task;

/// Trains a MAT as described by `spec`, writing into `run_dir`: `run.json`,
/// `featurize_report.json`, burn-train's `train/`, `valid/` (metric logs) and
/// `checkpoint/`, `best_model.bpk`, `metrics.json`, `curves.png`,
/// `test_predictions.csv`.
///
/// `device` is the plain (non-autodiff) device; training runs on `device.autodiff()`.
///
/// # Errors
/// Dataset, split, checkpoint or I/O errors ([`TrainError`]), each naming the file.
pub fn train_run(
    spec: &RunSpec,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
) -> Result<TrainSummary, TrainError> {
    spec.train.validate()?;
    if spec.featurizer.d_atom() != spec.model.d_atom {
        return Err(TrainError::Invalid(format!(
            "featurizer gives d_atom {} but the model expects {}",
            spec.featurizer.d_atom(),
            spec.model.d_atom
        )));
    }
    check_edge_features(&spec.featurizer, &spec.model)?;
    let input = TableInput {
        source: spec.molecule_source(),
        split: spec.split.clone(),
        task: spec.task,
        target_columns: spec.target_columns.clone(),
        units: spec.units.clone(),
    };
    train_table(
        &mut MatFamily { spec: spec.clone() },
        &input,
        run_dir,
        control,
        device,
    )
}

/// MAT's part of a table run.
struct MatFamily {
    spec: RunSpec,
}

impl TableFamily for MatFamily {
    const NAME: &'static str = "MAT";

    type Features = MatFeatures;
    type Model = MatModel;

    fn featurize(
        &self,
        data: &TableData,
        control: &RunControl,
    ) -> Result<Featurized<MatFeatures>, TrainError> {
        control.featurize_table(&self.spec.featurizer, data)
    }

    fn coordinate_source(features: &MatFeatures) -> CoordinateMethod {
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
        train: Arc<Vec<Example<MatFeatures>>>,
        valid: Arc<Vec<Example<MatFeatures>>>,
    ) -> Result<(FitOutcome, MatModel), TrainError> {
        let spec = &self.spec;
        let devices = control.devices_or(device);
        let ad = devices.main().clone().autodiff();
        ad.seed(spec.train.seed);
        let mut model = spec.model.init(&ad);
        if let Some(run) = &spec.init_from {
            model = super::init_from::load_pretrained_encoder(model, &spec.model, run, &ad)?;
        }
        if let Some(path) = &spec.pretrained {
            model = model
                .load_reference_weights(path, LoadParts::EncoderOnly)
                .map_err(|e| TrainError::Checkpoint {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
        }
        let kind = spec.task.selection_metric();
        let metric = TaskMetric::new(kind, labels.columns.len(), labels.scaling.clone());
        let settings = FitSettings::supervised(
            run_dir,
            &spec.train,
            control,
            devices,
            Selection::Metric(metric),
        );
        let total = spec.train.epochs * settings.steps_per_epoch(train.len());
        let warmup = engine::schedule::warmup_steps(spec.train.warmup_fraction, total);
        let scheduler =
            engine::schedule::noam(spec.train.learning_rate, warmup, spec.model.d_model)?;
        let optim = FusedAdamConfig::new().with_epsilon(1e-8).init();
        let batcher = MatBatcher {
            task: spec.task,
            scaling: labels.scaling.clone(),
        };
        let outcome = engine::fit(
            MatLearner { model },
            optim,
            scheduler,
            train,
            batcher.clone(),
            valid,
            batcher,
            &settings,
        )?;
        let best = engine::keep_best(
            MatLearner {
                model: spec.model.init(device),
            },
            |l| l.model,
            run_dir,
            outcome.best_epoch,
        )?;
        Ok((outcome, best))
    }

    fn predict_raw(
        &self,
        model: &MatModel,
        features: &[&MatFeatures],
        device: &Device,
    ) -> Result<Vec<Vec<f32>>, TrainError> {
        Ok(predict_raw(
            model,
            features,
            self.spec.train.batch_size,
            device,
        ))
    }

    fn num_params(model: &MatModel) -> usize {
        model.num_params()
    }

    fn loss_name(&self, task: Task) -> &'static str {
        match task {
            Task::Regression => "MSE (standardised targets)",
            Task::Classification => "BCE",
        }
    }
}

/// A MAT with `use_edge_features` needs a featurizer that makes the bond features, and
/// one without them a featurizer that does not (the batches would carry dead weight).
///
/// # Errors
/// [`TrainError::Invalid`] naming both settings.
pub fn check_edge_features(
    featurizer: &mol_featurize::MatFeaturizer,
    model: &models::MatConfig,
) -> Result<(), TrainError> {
    if featurizer.edge_features != model.use_edge_features {
        return Err(TrainError::Invalid(format!(
            "the model has use_edge_features {} but the featurizer's edge_features is {}",
            model.use_edge_features, featurizer.edge_features
        )));
    }
    Ok(())
}
