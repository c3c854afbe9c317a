//! Transformer-M's joint pretraining objective, as the original pretrains on PCQM4Mv2
//! (lsj2408/Transformer-M `criterions/graph_prediction.py`, `graph_prediction`; run by
//! `train.sh`): in one step, Gaussian noise on every atom's position, the supervised L1
//! loss of the graph token's prediction **plus** the denoising head's `1 - cos(predicted,
//! noise)` ([`crate::denoising::denoising_loss_counted`]: molecules in 3D-only mode, divided
//! by the batch size), modes drawn per molecule (0.2 / 0.2 / 0.6 over 2D+3D, 2D, 3D) and
//! DropPath in the encoder (the model's `droppath`).
//!
//! The original's L1 is a sum over the batch divided by fairseq's `sample_size` (the
//! number of molecules): the mean absolute error, here [`MaskedTargets::loss`] with
//! [`LossKind::L1`]. Its labels are PCQM4Mv2's gap in eV, unscaled; ours are what the
//! batcher's scaling makes of the labelled set (QM9's gap converted to eV by
//! [`super::pretrain`]).

use burn::optim::GradientsParams;
use burn::prelude::*;
use burn::train::{InferenceStep, RegressionOutput, TrainOutput, TrainStep};
use models::transformer_m::TransformerM;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};

use super::step::{TmBatch, TmBatcher, TmExample};
use crate::denoising::denoising_loss_counted;
use crate::engine::EpochBatcher;
use crate::error::TrainError;
use crate::masked_loss::{LossKind, MaskedTargets};

/// A Transformer-M pretrained with the joint objective (needs its denoising head and one
/// regression output).
#[derive(Module, Debug)]
pub struct TmJointLearner {
    /// The model.
    pub model: TransformerM,
}

/// The two terms of the joint objective for one batch, each `[1]`.
#[derive(Debug, Clone)]
pub struct JointLoss {
    /// Mean absolute error of the graph token's prediction (the labels' units after the
    /// batcher's scaling).
    pub supervised: Tensor<1>,
    /// The denoising term ([`denoising_loss_counted`]).
    pub denoising: Tensor<1>,
    /// The model's predictions `[B, 1]` and the labels (scaled), for the metrics.
    pub predictions: Tensor<2>,
    /// See `predictions`.
    pub labels: Tensor<2>,
}

impl JointLoss {
    /// `supervised + denoising`, as the original adds them (weight 1 each).
    pub fn total(&self) -> Tensor<1> {
        self.supervised.clone() + self.denoising.clone()
    }
}

/// Both terms of the joint objective on `item` (noisy coordinates, labels and noise).
/// `eval`: the original's evaluation, where no mode mask is set and every molecule's
/// denoising output counts (run the batch in 2D+3D); else training, where only molecules
/// in 3D-only mode count.
///
/// # Panics
/// A batch without labels or noise (the joint batcher makes both), or a model without a
/// denoising head (checked before training).
pub fn joint_loss(model: &TransformerM, item: TmBatch, eval: bool) -> JointLoss {
    let targets: MaskedTargets = item.targets.expect("joint batches carry labels");
    let noise = item.noise.expect("joint batches carry their noise");
    let out = model.encode(&item.batch);
    let predictions = model.predict(&out);
    let supervised = targets.loss(LossKind::L1, predictions.clone());
    let denoised = model
        .denoise(&out)
        .expect("checked before training: denoising head present");
    // Training: 3D-only molecules (the 3D channel on, the 2D channel off); evaluation:
    // every molecule.
    let counted = if eval {
        item.batch.use_3d.clone().ones_like()
    } else {
        item.batch.use_3d.clone() * item.batch.use_2d.clone().neg().add_scalar(1.0)
    };
    let denoising = denoising_loss_counted(
        denoised,
        noise,
        item.batch.key_padding_mask.clone(),
        counted,
    );
    JointLoss {
        supervised,
        denoising,
        predictions,
        labels: targets.raw,
    }
}

impl TrainStep for TmJointLearner {
    type Input = TmBatch;
    type Output = RegressionOutput;

    fn step(&self, item: TmBatch) -> TrainOutput<RegressionOutput> {
        let terms = joint_loss(&self.model, item, false);
        let loss = terms.total();
        let grads = GradientsParams::from_grads(loss.backward(), self);
        TrainOutput {
            grads,
            item: RegressionOutput::new(loss, terms.predictions, terms.labels),
        }
    }
}

impl InferenceStep for TmJointLearner {
    type Input = TmBatch;
    type Output = RegressionOutput;

    fn step(&self, item: TmBatch) -> RegressionOutput {
        let terms = joint_loss(&self.model, item, true);
        RegressionOutput::new(terms.total(), terms.predictions, terms.labels)
    }
}

/// The joint objective's two terms on held-out molecules as the original evaluates them
/// (2D+3D, every molecule's denoising counted), each the mean over molecules
/// (`pretrain_metrics.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JointTerms {
    /// Mean absolute error of the predicted gap, in the labels' units after the batcher's
    /// scaling (eV for the QM9 gap of [`super::pretrain_denoising`]).
    pub gap_mae_ev: f64,
    /// Mean `1 - cos(predicted, noise)` per molecule.
    pub denoising: f64,
    /// Molecules evaluated.
    pub n_molecules: usize,
}

/// Both terms of the joint objective for `model` on `items`, batched by `batcher` (for
/// the held-out report: every molecule in 2D+3D mode) and evaluated as the original does
/// ([`joint_loss`] with `eval`), in batches of 64, the noise drawn from a generator
/// seeded with `seed` (reproducible, whatever else draws from `device` meanwhile).
///
/// # Errors
/// [`TrainError::Invalid`] for a molecule that cannot be batched.
pub fn held_out_terms(
    model: &TransformerM,
    items: &[TmExample],
    batcher: &TmBatcher,
    seed: u64,
    device: &Device,
) -> Result<JointTerms, TrainError> {
    device.seed(seed);
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut mae, mut denoising) = (0.0, 0.0);
    for chunk in items.chunks(64) {
        let refs: Vec<&TmExample> = chunk.iter().collect();
        let batch = batcher
            .batch(&refs, &mut rng, device)
            .map_err(TrainError::Invalid)?;
        let terms = joint_loss(model, batch, true);
        let k = chunk.len() as f64;
        mae += terms.supervised.into_scalar::<f64>() * k;
        denoising += terms.denoising.into_scalar::<f64>() * k;
    }
    let n = items.len().max(1) as f64;
    Ok(JointTerms {
        gap_mae_ev: mae / n,
        denoising: denoising / n,
        n_molecules: items.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mode_sampling::ModeProbabilities;
    use crate::target_scaling::TargetScaling;
    use crate::transformer_m::ModeChoice;
    use models::transformer_m::{Mode, TransformerMConfig};
    use mol_featurize::{ConformerOptions, Molecule, conformer};

    fn examples() -> Vec<TmExample> {
        ["CCO", "c1ccncc1", "CC(=O)N"]
            .iter()
            .enumerate()
            .map(|(row, s)| {
                let mol = Molecule::from_smiles(s).unwrap();
                let (xyz, _) = conformer::coordinates(&mol, &ConformerOptions::default()).unwrap();
                let xyz: Vec<[f32; 3]> = xyz
                    .iter()
                    .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32])
                    .collect();
                TmExample {
                    row,
                    features: mol_featurize::graphormer::featurize(&mol, 5, Some(xyz)).unwrap(),
                    targets: vec![0.1 * (row as f32 + 1.0)],
                }
            })
            .collect()
    }

    fn batcher(mode: Mode) -> TmBatcher {
        TmBatcher {
            limits: TransformerMConfig::new(2, 16, 16, 4, 8).limits,
            modes: ModeChoice::Fixed(mode),
            scaling: TargetScaling {
                mean: vec![0.0],
                std: vec![0.5],
            },
            loss: LossKind::L1,
            noise_std: Some(0.2),
            joint: true,
            loss_scale: crate::masked_loss::LossScale::StdLabels,
        }
    }

    /// The supervised term is the MAE against the scaled labels in every mode; the
    /// denoising term counts 3D-only molecules and divides by all of them: 0 in 2D and in
    /// 2D+3D, the plain mean in 3D. Mixed modes sample as the original's mode_prob.
    #[test]
    fn the_terms_follow_the_originals_masks() {
        let dev = Device::flex();
        dev.seed(5);
        let model = TransformerMConfig::new(2, 16, 16, 4, 8).init(&dev);
        let items = examples();
        let refs: Vec<&TmExample> = items.iter().collect();
        let mut rng = StdRng::seed_from_u64(0);
        let labels = [0.2f32, 0.4, 0.6]; // 0.1 (k + 1) / 0.5
        for mode in [Mode::TwoD, Mode::Both, Mode::ThreeD] {
            let batch = batcher(mode).batch(&refs, &mut rng, &dev).unwrap();
            let terms = joint_loss(&model, batch.clone(), false);
            let pred: Vec<f32> = terms.predictions.clone().try_into_vec_as().unwrap();
            let mae = pred
                .iter()
                .zip(labels)
                .map(|(p, y)| (p - y).abs())
                .sum::<f32>()
                / 3.0;
            let supervised = terms.supervised.clone().into_scalar::<f32>();
            assert!(
                (supervised - mae).abs() < 1e-5,
                "{mode:?}: {supervised} vs {mae}"
            );
            let denoising = terms.denoising.clone().into_scalar::<f32>();
            match mode {
                Mode::ThreeD => assert!(denoising > 0.1 && denoising < 2.0, "{denoising}"),
                _ => assert_eq!(denoising, 0.0, "{mode:?}"),
            }
            let total = terms.total().into_scalar::<f32>();
            assert!((total - supervised - denoising).abs() < 1e-6);
            // Evaluation counts every molecule: a 2D-only molecule's denoising output is 0
            // (1 - cos = 1), the others' as in 3D.
            let eval = joint_loss(&model, batch, true)
                .denoising
                .into_scalar::<f32>();
            match mode {
                Mode::TwoD => assert!((eval - 1.0).abs() < 1e-5, "{eval}"),
                _ => assert!(eval > 0.1 && eval < 2.0 && eval != 1.0, "{mode:?}: {eval}"),
            }
        }
        let mixed = TmBatcher {
            modes: ModeChoice::Sample(ModeProbabilities::fixed(Mode::TwoD)),
            ..batcher(Mode::ThreeD)
        };
        let batch = mixed.batch(&refs, &mut rng, &dev).unwrap();
        assert_eq!(
            joint_loss(&model, batch, false)
                .denoising
                .into_scalar::<f32>(),
            0.0
        );
    }

    #[test]
    fn held_out_terms_are_reproducible_means() {
        let dev = Device::flex();
        dev.seed(6);
        let model = TransformerMConfig::new(2, 16, 16, 4, 8).init(&dev);
        let items = examples();
        let a = held_out_terms(&model, &items, &batcher(Mode::Both), 3, &dev).unwrap();
        let b = held_out_terms(&model, &items, &batcher(Mode::Both), 3, &dev).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.n_molecules, 3);
        assert!(a.gap_mae_ev.is_finite() && a.denoising > 0.0, "{a:?}");
    }
}
