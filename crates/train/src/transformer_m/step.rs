//! Transformer-M on the training engine: the supervised step (L1 or MSE on standardised
//! targets, or BCE with logits; missing labels masked; modes sampled per molecule during training, the
//! evaluation mode for validation) and the 3D denoising-pretraining step.

use burn::optim::GradientsParams;
use burn::prelude::*;
use burn::train::{InferenceStep, RegressionOutput, TrainOutput, TrainStep};
use models::transformer_m::{Mode, TransformerM, TransformerMBatch};
use mol_featurize::graphormer::{EncodingLimits, GraphormerFeatures};
use mol_featurize::pad_graphormer_batch;
use rand::rngs::StdRng;

use crate::denoising::denoising_loss;
use crate::engine::EpochBatcher;
use crate::example::Example;
use crate::masked_loss::{LossKind, LossScale, MaskedTargets};
use crate::mode_sampling::ModeProbabilities;
use crate::target_scaling::TargetScaling;

/// A Transformer-M trained on a graph-level target (the step functions live on this
/// wrapper because the model type belongs to `models`).
#[derive(Module, Debug)]
pub struct TmLearner {
    /// The model.
    pub model: TransformerM,
    /// Clip the gradients' global L2 norm to this before each step (0 = off;
    /// [`crate::grad_clip::clip_global_norm`]).
    pub clip_norm: f64,
}

/// A Transformer-M trained to predict the noise added to its 3D coordinates.
#[derive(Module, Debug)]
pub struct TmDenoiser {
    /// The model (with its denoising head).
    pub model: TransformerM,
}

/// One featurized molecule (with coordinates where it has a 3D conformer) and its labels
/// (target units, NaN = missing; empty for pretraining).
pub type TmExample = Example<GraphormerFeatures>;

/// A padded batch with its labels (or, for pretraining, its coordinate noise).
#[derive(Debug, Clone)]
pub struct TmBatch {
    /// Model input (noisy coordinates when pretraining).
    pub batch: TransformerMBatch,
    /// Labels (supervised).
    pub targets: Option<MaskedTargets>,
    /// The supervised loss.
    pub loss: LossKind,
    /// The noise added to the coordinates, `[B, N, 3]` Angstrom (pretraining).
    pub noise: Option<Tensor<3>>,
}

/// How a [`TmBatcher`] sets each molecule's mode.
#[derive(Debug, Clone)]
pub enum ModeChoice {
    /// Drawn per molecule from these probabilities (training).
    Sample(ModeProbabilities),
    /// This mode for every molecule (validation, pretraining).
    Fixed(Mode),
}

/// Pads molecules into [`TmBatch`]es.
#[derive(Debug, Clone)]
pub struct TmBatcher {
    /// Padding limits of the model.
    pub limits: EncodingLimits,
    /// Modes.
    pub modes: ModeChoice,
    /// The labels' scaling (the loss uses standardised labels; none for classification).
    pub scaling: TargetScaling,
    /// The supervised loss.
    pub loss: LossKind,
    /// Standard deviation (Angstrom) of the Gaussian noise on heavy-atom coordinates
    /// (pretraining; `None` for supervised batches).
    pub noise_std: Option<f64>,
    /// With `noise_std`: the batches also carry their labels (the original's joint
    /// pretraining objective, [`super::joint`]); without, noise only.
    pub joint: bool,
    /// Where the regression loss is computed (standardised labels or target units).
    pub loss_scale: LossScale,
}

impl EpochBatcher<TmExample> for TmBatcher {
    type Batch = TmBatch;

    fn batch(
        &self,
        items: &[&TmExample],
        rng: &mut StdRng,
        device: &Device,
    ) -> Result<TmBatch, String> {
        let features: Vec<&GraphormerFeatures> = items.iter().map(|e| &e.features).collect();
        let data = pad_graphormer_batch(&features, &self.limits).map_err(|e| {
            let rows: Vec<usize> = items.iter().map(|e| e.row).collect();
            format!("rows {rows:?}: {e}")
        })?;
        let modes = match &self.modes {
            ModeChoice::Sample(p) => p.sample(&data.has_3d, rng),
            ModeChoice::Fixed(mode) => vec![*mode; items.len()],
        };
        let batch = TransformerMBatch::from_data(&data, &modes, device);
        if let Some(std) = self.noise_std {
            // Drawn from the batch's own generator (seeded by the loader per batch), not
            // the device's process-wide one: reproducible whatever else draws meanwhile
            // (other workers, other threads).
            let [b, n] = batch.key_padding_mask.dims();
            let real = batch
                .key_padding_mask
                .clone()
                .bool_not()
                .float()
                .reshape([b, n, 1]);
            let values = normal_f32(rng, b * n * 3, std);
            let noise = Tensor::<3>::from_data(TensorData::new(values, [b, n, 3]), device) * real;
            let noisy = batch.coordinates.clone() + noise.clone();
            return Ok(TmBatch {
                batch: batch.with_coordinates(noisy),
                targets: self.joint.then(|| self.targets(items, device)),
                loss: self.loss,
                noise: Some(noise),
            });
        }
        Ok(TmBatch {
            batch,
            targets: Some(self.targets(items, device)),
            loss: self.loss,
            noise: None,
        })
    }
}

impl TmBatcher {
    /// The labels of `items`, scaled as [`TmBatcher::scaling`] and
    /// [`TmBatcher::loss_scale`] say.
    fn targets(&self, items: &[&TmExample], device: &Device) -> MaskedTargets {
        let labels: Vec<&[f32]> = items.iter().map(|e| e.targets.as_slice()).collect();
        let targets = MaskedTargets::new(&labels, &self.scaling, device);
        if self.loss_scale == LossScale::StdLogits && !self.scaling.std.is_empty() {
            targets.in_target_units(&self.scaling.std)
        } else {
            targets
        }
    }
}

fn supervised(
    model: &TransformerM,
    item: TmBatch,
    parallel: bool,
) -> (Tensor<1>, RegressionOutput) {
    let targets = item.targets.expect("supervised batches carry labels");
    // Inference only: burn-autodiff serialises concurrent graphs.
    let parts = if parallel {
        models::parallel::inference_parts(&item.batch.key_padding_mask.device())
    } else {
        1
    };
    let pred = model.forward_parallel(&item.batch, parts);
    let loss = targets.loss(item.loss, pred.clone());
    (loss.clone(), RegressionOutput::new(loss, pred, targets.raw))
}

impl TrainStep for TmLearner {
    type Input = TmBatch;
    type Output = RegressionOutput;

    fn step(&self, item: TmBatch) -> TrainOutput<RegressionOutput> {
        let (loss, output) = supervised(&self.model, item, false);
        let mut grads = GradientsParams::from_grads(loss.backward(), self);
        if self.clip_norm > 0.0 {
            crate::grad_clip::clip_global_norm(self, &mut grads, self.clip_norm);
        }
        TrainOutput {
            grads,
            item: output,
        }
    }
}

impl InferenceStep for TmLearner {
    type Input = TmBatch;
    type Output = RegressionOutput;

    fn step(&self, item: TmBatch) -> RegressionOutput {
        // On the CPU, the batch split across rayon's threads (TransformerM::forward_parallel).
        supervised(&self.model, item, true).1
    }
}

fn denoise(model: &TransformerM, item: TmBatch) -> (Tensor<1>, RegressionOutput) {
    let noise = item.noise.expect("pretraining batches carry their noise");
    let out = model.encode(&item.batch);
    let predicted = model
        .denoise(&out)
        .expect("checked before training: denoising head present");
    let loss = denoising_loss(predicted, noise, item.batch.key_padding_mask.clone());
    // No per-molecule target: the loss is the metric.
    let device = loss.device();
    let none = Tensor::<2>::zeros([1, 1], &device);
    (
        loss.clone(),
        RegressionOutput::new(loss, none.clone(), none),
    )
}

impl TrainStep for TmDenoiser {
    type Input = TmBatch;
    type Output = RegressionOutput;

    fn step(&self, item: TmBatch) -> TrainOutput<RegressionOutput> {
        let (loss, output) = denoise(&self.model, item);
        TrainOutput::new(self, loss.backward(), output)
    }
}

impl InferenceStep for TmDenoiser {
    type Input = TmBatch;
    type Output = RegressionOutput;

    fn step(&self, item: TmBatch) -> RegressionOutput {
        denoise(&self.model, item).1
    }
}

/// `count` draws of N(0, std^2) from `rng` (Box-Muller: two uniforms give two normals).
/// By hand: one small formula, where `rand_distr` would be a dependency for it alone.
fn normal_f32(rng: &mut StdRng, count: usize, std: f64) -> Vec<f32> {
    use rand::Rng;
    let mut out = Vec::with_capacity(count + 1);
    while out.len() < count {
        // u1 in (0, 1]: ln(u1) finite.
        let u1 = 1.0 - rng.random::<f64>();
        let u2 = rng.random::<f64>();
        let r = (-2.0 * u1.ln()).sqrt() * std;
        let angle = std::f64::consts::TAU * u2;
        out.push((r * angle.cos()) as f32);
        out.push((r * angle.sin()) as f32);
    }
    out.truncate(count);
    out
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    /// The noise has the requested mean 0 and standard deviation, and a seed repeats it.
    #[test]
    fn normal_noise_has_the_requested_spread_and_repeats_for_a_seed() {
        let n = 100_001;
        let v = super::normal_f32(&mut StdRng::seed_from_u64(3), n, 0.2);
        assert_eq!(v.len(), n);
        let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / n as f64;
        let var = v
            .iter()
            .map(|&x| (f64::from(x) - mean).powi(2))
            .sum::<f64>()
            / n as f64;
        // Standard errors: mean 0.2 / sqrt(n) = 6.3e-4; std about 0.2 / sqrt(2n) = 4.5e-4.
        assert!(mean.abs() < 0.003, "{mean}");
        assert!((var.sqrt() - 0.2).abs() < 0.003, "{}", var.sqrt());
        // Tails as a normal's: about 4.55% beyond 2 std.
        let tail = v.iter().filter(|x| x.abs() > 0.4).count() as f64 / n as f64;
        assert!((tail - 0.0455).abs() < 0.004, "{tail}");
        assert_eq!(
            v[..10],
            super::normal_f32(&mut StdRng::seed_from_u64(3), 10, 0.2)[..]
        );
    }
}
