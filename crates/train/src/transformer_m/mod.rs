//! Transformer-M: supervised training of graph-level targets (2D, 3D or mixed modes; Luo
//! et al. 2022 section 4) on the user's molecule table or a QM9 subset, both through the
//! one table run ([`train_transformer_m`]), and 3D position-denoising pretraining on
//! either ([`pretrain_denoising`]).
//!
//! Recipe (scaled down for CPUs): Adam, linear warm-up then linear decay of the learning
//! rate, L1 loss on standardised targets by default (Transformer-M trains PCQM4Mv2 with
//! L1; MSE and, for classification, BCE with logits are options), the best validation
//! epoch kept; denoising: Gaussian noise (sigma 0.2 Angstrom, the original `train.sh`'s
//! `noise_scale`) on heavy-atom coordinates, loss `1 - cos` between predicted and true
//! noise per atom (docs/SPEC.md 2.3, docs/TRANSFORMER_M.md).

use std::path::Path;
use std::sync::Arc;

use crate::engine::fused_adam::FusedAdamConfig;
use burn::prelude::*;
use models::transformer_m::{Mode, TransformerM, TransformerMBatch};
use mol_featurize::graphormer::{EncodingLimits, GraphormerFeatures};
use mol_featurize::pad_graphormer_batch;

use crate::engine::schedule::{WarmupLinear, warmup_steps};
use crate::engine::{self, FitOutcome, FitSettings, MetricKind, Selection, TaskMetric};
use crate::error::TrainError;
use crate::readout::{Readout, read_out};
use crate::run_control::RunControl;
use crate::target_scaling::TargetScaling;

/// Warm-up share of the linear schedule of supervised Transformer-M runs (6% of the
/// steps, as the original's fine-tuning scripts: `warmup_updates` / `total_num_update`).
pub const WARMUP_FRACTION: f64 = 0.06;

mod init_from;
mod joint;
mod pretrain;
mod size;
mod spec;
mod step;
mod table;
pub use crate::engine::schedule::warmup_linear;
pub use init_from::resolve_init_from;
pub use joint::{JointLoss, JointTerms, TmJointLearner, joint_loss};
pub use pretrain::{
    EV_PER_HARTREE, JOINT_TARGET, PretrainData, PretrainObjective, PretrainSpec, PretrainSummary,
    pretrain_denoising,
};
pub use size::SizeOverrides;
pub use spec::{Qm9Subset, SmilesSource, TableSource, TmCriterion, TmData, TmRunSpec};
pub use step::{ModeChoice, TmBatch, TmBatcher, TmDenoiser, TmExample, TmLearner};
pub use table::train_transformer_m;

/// Raw outputs `[n][tasks]` (standardised values or logits) of `model` for `features`
/// in `mode`: [`infer`] with [`Readout::Prediction`].
///
/// # Errors
/// As [`infer`].
pub fn predict_raw(
    model: &TransformerM,
    features: &[&GraphormerFeatures],
    limits: &EncodingLimits,
    mode: Mode,
    batch_size: usize,
    device: &Device,
) -> Result<Vec<Vec<f32>>, TrainError> {
    let readout = Readout::Prediction;
    infer(model, features, (limits, mode), batch_size, readout, device)
}

/// `readout` of `model` for `features` (padded with `limits`, run in `mode`), in batches
/// of at most `batch_size` grouped by size ([`crate::size_batches`], rows in input
/// order); on the CPU each batch is split across rayon's threads
/// ([`models::parallel::forward_in_parts`]).
///
/// # Errors
/// [`TrainError::Invalid`] when a molecule cannot be padded with the model's limits.
pub fn infer(
    model: &TransformerM,
    features: &[&GraphormerFeatures],
    (limits, mode): (&EncodingLimits, Mode),
    batch_size: usize,
    readout: Readout,
    device: &Device,
) -> Result<Vec<Vec<f32>>, TrainError> {
    let parts = models::parallel::inference_parts(device);
    let sizes: Vec<usize> = features.iter().map(|f| f.num_atoms + 1).collect();
    crate::size_batches::predict_grouped(&sizes, batch_size, |batch| {
        let chunk: Vec<&GraphormerFeatures> = batch.iter().map(|&i| features[i]).collect();
        let data =
            pad_graphormer_batch(&chunk, limits).map_err(|e| TrainError::Invalid(e.to_string()))?;
        let modes = vec![mode; chunk.len()];
        let x = TransformerMBatch::from_data(&data, &modes, device);
        let atoms: Vec<usize> = chunk.iter().map(|f| f.num_atoms).collect();
        read_out(
            readout,
            (parts, &atoms),
            |s, e| model.forward(&x.molecules(s, e)),
            |s, e| model.molecule_embedding(&x.molecules(s, e)),
            |s, e| model.atom_embeddings(&x.molecules(s, e)),
        )
    })
}

/// Trains `spec`'s model (fresh or from `spec.init_from`) on the engine: Adam, linear
/// warm-up over `spec.train.warmup_fraction` of the steps then linear decay, modes drawn
/// per molecule from `spec.modes` in training and `spec.eval_mode` in validation, early
/// stopping on `metric` (labels standardised by `scaling`, none for classification).
/// Returns the outcome and the best epoch's model on `device`.
///
/// # Errors
/// A model file that does not fit; engine or I/O errors.
pub(crate) fn fit(
    spec: &TmRunSpec,
    metric: MetricKind,
    scaling: &TargetScaling,
    (run_dir, control, device): (&Path, &RunControl, &Device),
    train: Arc<Vec<TmExample>>,
    valid: Arc<Vec<TmExample>>,
) -> Result<(FitOutcome, TransformerM), TrainError> {
    let devices = control.devices_or(device);
    let ad = devices.main().clone().autodiff();
    ad.seed(spec.train.seed);
    let model = initial_model(spec, &ad)?;
    let settings = FitSettings::supervised(
        run_dir,
        &spec.train,
        control,
        devices,
        Selection::Metric(TaskMetric::new(
            metric,
            spec.target_columns.len(),
            scaling.clone(),
        )),
    );
    let total = spec.train.epochs * settings.steps_per_epoch(train.len());
    let warmup = warmup_steps(spec.train.warmup_fraction, total);
    let scheduler = WarmupLinear::new(spec.train.learning_rate, warmup, total);
    let batcher = |modes: ModeChoice| TmBatcher {
        limits: spec.model.limits,
        modes,
        scaling: scaling.clone(),
        loss: spec.loss,
        noise_std: None,
        joint: false,
        loss_scale: spec.criterion.loss_scale,
    };
    let outcome = engine::fit(
        TmLearner {
            model,
            clip_norm: spec.criterion.clip_norm.unwrap_or(0.0),
        },
        FusedAdamConfig::new().init(),
        scheduler.into(),
        train,
        batcher(ModeChoice::Sample(spec.modes.clone())),
        valid,
        batcher(ModeChoice::Fixed(spec.eval_mode)),
        &settings,
    )?;
    let best = engine::keep_best(
        TmLearner {
            model: spec.model.init(device),
            clip_norm: 0.0,
        },
        |l| l.model,
        run_dir,
        outcome.best_epoch,
    )?;
    Ok((outcome, best))
}

/// A fresh model of `spec` on `device`, or the one in `spec.init_from`. A denoising-
/// pretrained file has a one-output regression head that pretraining never trained: for a
/// run with several targets the encoder is loaded and the head is a fresh one.
///
/// # Errors
/// [`TrainError::Checkpoint`] when the file does not fit the configuration.
pub(crate) fn initial_model(spec: &TmRunSpec, device: &Device) -> Result<TransformerM, TrainError> {
    let Some(path) = &spec.init_from else {
        return Ok(spec.model.init(device));
    };
    fn bad(path: &Path, e: impl std::fmt::Debug) -> TrainError {
        let mut reason = format!("{e:?}");
        if reason.len() > 400 {
            reason.truncate(400);
            reason.push_str("...");
        }
        TrainError::Checkpoint {
            path: path.to_path_buf(),
            reason: format!(
                "cannot load into this model configuration (it must match the file's): {reason}"
            ),
        }
    }
    match spec.model.init(device).try_load_file(path) {
        Ok(model) => Ok(model),
        Err(e) if spec.model.num_targets == 1 => Err(bad(path, e)),
        Err(_) => {
            let head = spec.model.init(device).head;
            let mut model = spec
                .model
                .clone()
                .with_num_targets(1)
                .init(device)
                .try_load_file(path)
                .map_err(|e| bad(path, e))?;
            model.head = head;
            Ok(model)
        }
    }
}
