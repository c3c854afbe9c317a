//! MAT on the training engine: the training and validation step (MSE on standardised
//! targets or BCE with logits, missing labels masked) and the batcher.

use burn::prelude::*;
use burn::train::{InferenceStep, RegressionOutput, TrainOutput, TrainStep};
use models::{MatBatch, MatModel};
use mol_featurize::{MatFeatures, pad_batch};
use rand::rngs::StdRng;

use crate::engine::EpochBatcher;
use crate::example::Example;
use crate::masked_loss::MaskedTargets;
use crate::target_scaling::TargetScaling;
use crate::task::Task;

/// A MAT as burn-train trains it (the step functions live on this wrapper because the
/// model type belongs to `models`).
#[derive(Module, Debug)]
pub struct MatLearner {
    /// The model.
    pub model: MatModel,
}

/// One featurized molecule and its labels (target units, NaN = missing).
pub type MatExample = Example<MatFeatures>;

/// A padded batch with its labels.
#[derive(Debug, Clone)]
pub struct MatTrainBatch {
    /// Model input.
    pub batch: MatBatch,
    /// Labels.
    pub targets: MaskedTargets,
    /// Which loss.
    pub task: Task,
}

/// Pads molecules into [`MatTrainBatch`]es; regression labels are standardised with the
/// training mean and standard deviation.
#[derive(Debug, Clone)]
pub struct MatBatcher {
    /// Task.
    pub task: Task,
    /// The labels' scaling (regression; none for classification).
    pub scaling: TargetScaling,
}

impl EpochBatcher<MatExample> for MatBatcher {
    type Batch = MatTrainBatch;

    fn batch(
        &self,
        items: &[&MatExample],
        _rng: &mut StdRng,
        device: &Device,
    ) -> Result<MatTrainBatch, String> {
        let features: Vec<&MatFeatures> = items.iter().map(|e| &e.features).collect();
        let data = pad_batch(&features).map_err(|e| {
            let rows: Vec<usize> = items.iter().map(|e| e.row).collect();
            format!("rows {rows:?}: {e}")
        })?;
        let labels: Vec<&[f32]> = items.iter().map(|e| e.targets.as_slice()).collect();
        Ok(MatTrainBatch {
            batch: MatBatch::from_data(&data, device),
            targets: MaskedTargets::new(&labels, &self.scaling, device),
            task: self.task,
        })
    }
}

fn loss(task: Task, pred: Tensor<2>, targets: &MaskedTargets) -> Tensor<1> {
    targets.loss(task.mat_loss(), pred)
}

impl TrainStep for MatLearner {
    type Input = MatTrainBatch;
    type Output = RegressionOutput;

    fn step(&self, item: MatTrainBatch) -> TrainOutput<RegressionOutput> {
        let pred = self.model.forward(&item.batch);
        let loss = loss(item.task, pred.clone(), &item.targets);
        let output = RegressionOutput::new(loss.clone(), pred, item.targets.raw);
        TrainOutput::new(self, loss.backward(), output)
    }
}

impl InferenceStep for MatLearner {
    type Input = MatTrainBatch;
    type Output = RegressionOutput;

    fn step(&self, item: MatTrainBatch) -> RegressionOutput {
        let parts = models::parallel::inference_parts(&item.batch.node_features.device());
        let pred = self.model.forward_parallel(&item.batch, parts);
        let loss = loss(item.task, pred.clone(), &item.targets);
        RegressionOutput::new(loss, pred, item.targets.raw)
    }
}
