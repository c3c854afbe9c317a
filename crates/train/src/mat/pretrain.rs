//! MAT's node-level self-supervised pretraining (issue #40): atoms masked, their type
//! predicted from the encoder's output.
//!
//! Source: Maziarka et al. 2020 (arXiv 2002.08264), section "Pretraining", which adopts the
//! node-level attribute masking of Hu et al. 2020 ("Strategies for Pre-training Graph
//! Neural Networks", `MaskAtom` in snap-stanford/pretrain-gnns `loader.py`). ardigen/MAT
//! publishes the pretrained weights but not this code, so the choices it leaves open are
//! ours and are named here:
//! - **Which atoms:** Hu et al.'s count, `floor(n * mask_rate + 1)` of a molecule's `n`
//!   heavy atoms drawn without replacement (at least one atom per molecule); the dummy
//!   node is never masked.
//! - **The mask vector:** all zeros. MAT embeds atoms with a linear layer, so a zero row
//!   becomes the layer's bias: one learned vector for every masked atom, the role of Hu
//!   et al.'s mask token. A masked atom keeps its bonds (adjacency) and distances and stays
//!   a real node (the padding mask is taken before masking).
//! - **The target:** the atom type, the atomic-number one-hot of MAT's features (11
//!   classes: B, C, N, O, F, P, S, Cl, Br, I, other; docs/SPEC.md 1.1).
//! - **The head:** one `Linear(d_model, 11)` on the encoder's atom states; cross-entropy
//!   averaged over the masked atoms of the batch.

use std::path::Path;
use std::sync::Arc;

use burn::nn::{Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::log_softmax;
use burn::train::{InferenceStep, RegressionOutput, TrainOutput, TrainStep};
use models::{MatBatch, MatConfig, MatModel};
use mol_featurize::{MatFeatures, MatFeaturizer, pad_batch};
use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::index::sample;
use serde::{Deserialize, Serialize};

use crate::checkpoint::write_json;
use crate::engine::fused_adam::FusedAdamConfig;
use crate::engine::{self, EpochBatcher, FitSettings, Selection};
use crate::error::TrainError;
use crate::example::Example;
use crate::run_control::RunControl;
use crate::run_folder::RunFolder;
use crate::table_data::MoleculeSource;

/// Atom types predicted: the slots of MAT's atomic-number one-hot.
pub const ATOM_TYPES: usize = 11;
/// Column of the first atomic-number slot in MAT's node features (column 0 is the dummy
/// flag).
const FIRST_TYPE_COLUMN: usize = 1;
/// Share of the molecules held out for the validation loss and accuracy.
pub const VALID_FRACTION: f64 = 0.05;

/// Settings of a MAT pretraining run (`pretrain.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatPretrainSpec {
    /// Always "mat": tells a MAT pretraining run from a Transformer-M one.
    pub kind: String,
    /// The molecule file (delimited with a SMILES column, or an SDF).
    pub data: std::path::PathBuf,
    /// SMILES column of a delimited file.
    pub smiles_column: String,
    /// Field delimiter.
    pub delimiter: char,
    /// Featurizer (conformers through the cache; `d_atom` must equal `model.d_atom`).
    pub featurizer: MatFeaturizer,
    /// The model; its encoder and embedding are what fine-tuning takes.
    #[serde(deserialize_with = "crate::run_compat::mat_config")]
    pub model: MatConfig,
    /// Share of each molecule's heavy atoms masked (Hu et al.'s count).
    pub mask_rate: f64,
    /// Epochs.
    pub epochs: usize,
    /// Molecules per batch.
    pub batch_size: usize,
    /// Peak learning rate (Noam schedule, as MAT's fine-tuning).
    pub learning_rate: f64,
    /// Warm-up share of the steps.
    pub warmup_fraction: f64,
    /// Seed (initialisation, shuffles, masks, held-out molecules).
    pub seed: u64,
}

impl MatPretrainSpec {
    /// The molecule file and how it is read.
    ///
    /// # Errors
    /// A file whose format cannot be told from its name.
    pub fn molecule_source(&self) -> Result<MoleculeSource, TrainError> {
        Ok(MoleculeSource {
            path: self.data.clone(),
            format: crate::table_data::MoleculeFormat::for_path(&self.data, None, None)?,
            smiles_column: self.smiles_column.clone(),
            delimiter: self.delimiter,
        })
    }
}

/// Result of [`pretrain_mat`] (`pretrain_metrics.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatPretrainSummary {
    /// Training loss (cross-entropy over masked atoms, nats) per epoch.
    pub train_loss: Vec<f64>,
    /// Validation loss per epoch.
    pub valid_loss: Vec<f64>,
    /// Share of the held-out molecules' masked atoms whose type the final model predicts
    /// (masks drawn with the run's seed).
    pub valid_accuracy: f64,
    /// The same for always predicting the most frequent type of the training molecules
    /// (carbon on drug-like sets): the floor the accuracy is to be read against.
    pub majority_accuracy: f64,
    /// Masked atoms scored for `valid_accuracy`.
    pub valid_masked_atoms: usize,
    /// Molecules trained on and held out.
    pub n_train: usize,
    /// See `n_train`.
    pub n_valid: usize,
    /// Molecules that could not be featurized (see `featurize_report.json`).
    pub n_skipped: usize,
    /// Training seconds.
    pub seconds: f64,
}

/// A MAT with its atom-type head, as the engine trains it.
#[derive(Module, Debug)]
pub struct MatMasker {
    /// The model (its generator is not trained here).
    pub model: MatModel,
    /// `Linear(d_model, 11)` on each atom state.
    pub atom_type_head: Linear,
}

/// A padded batch with some atoms masked.
#[derive(Debug, Clone)]
pub struct MaskedBatch {
    /// Model input, masked atoms' features zeroed.
    pub batch: MatBatch,
    /// Flat indices `b * N + i` of the masked atoms, `[M]`.
    pub positions: Tensor<1, Int>,
    /// Their true atom types, `[M]`.
    pub types: Tensor<1, Int>,
}

/// Masks atoms of padded batches (see the module documentation).
#[derive(Debug, Clone)]
pub struct MaskingBatcher {
    /// Share of each molecule's heavy atoms masked.
    pub mask_rate: f64,
}

/// The atom type (0..11) of a node's feature row, `None` for the dummy node or padding.
pub fn atom_type(row: &[f32]) -> Option<usize> {
    row.get(FIRST_TYPE_COLUMN..FIRST_TYPE_COLUMN + ATOM_TYPES)?
        .iter()
        .position(|&v| v == 1.0)
}

/// The nodes to mask in a molecule with `n_heavy` heavy atoms (node indices, the dummy
/// node 0 excluded): `floor(n_heavy * rate + 1)` of them at most `n_heavy`, without
/// replacement.
pub fn masked_nodes(n_heavy: usize, rate: f64, rng: &mut impl Rng) -> Vec<usize> {
    if n_heavy == 0 {
        return Vec::new();
    }
    let count = ((n_heavy as f64 * rate) as usize + 1).min(n_heavy);
    let mut nodes: Vec<usize> = sample(rng, n_heavy, count)
        .into_iter()
        .map(|i| i + 1)
        .collect();
    nodes.sort_unstable();
    nodes
}

impl EpochBatcher<Example<MatFeatures>> for MaskingBatcher {
    type Batch = MaskedBatch;

    fn batch(
        &self,
        items: &[&Example<MatFeatures>],
        rng: &mut StdRng,
        device: &Device,
    ) -> Result<MaskedBatch, String> {
        let features: Vec<&MatFeatures> = items.iter().map(|e| &e.features).collect();
        let mut data = pad_batch(&features).map_err(|e| {
            let rows: Vec<usize> = items.iter().map(|e| e.row).collect();
            format!("rows {rows:?}: {e}")
        })?;
        let (n, d) = (data.n_atoms, data.d_atom);
        let (mut positions, mut types) = (Vec::new(), Vec::new());
        for (b, item) in items.iter().enumerate() {
            let n_heavy = item.features.n_atoms.saturating_sub(1);
            for node in masked_nodes(n_heavy, self.mask_rate, rng) {
                let row = &mut data.node_features[(b * n + node) * d..(b * n + node + 1) * d];
                let Some(t) = atom_type(row) else {
                    return Err(format!(
                        "row {}: atom {} has no atom type in its features",
                        item.row,
                        node - 1
                    ));
                };
                row.fill(0.0);
                positions.push((b * n + node) as i64);
                types.push(t as i64);
            }
        }
        let m = positions.len();
        Ok(MaskedBatch {
            // The padding mask was taken by pad_batch before the rows were zeroed.
            batch: MatBatch::from_data(&data, device),
            positions: Tensor::from_data(TensorData::new(positions, [m]), device),
            types: Tensor::from_data(TensorData::new(types, [m]), device),
        })
    }
}

impl MatMasker {
    /// Logits `[M, 11]` of the masked atoms' types.
    pub fn logits(&self, item: &MaskedBatch) -> Tensor<2> {
        let h = self.model.encode(&item.batch);
        let [b, n, d] = h.dims();
        let atoms = h.reshape([b * n, d]).select(0, item.positions.clone());
        self.atom_type_head.forward(atoms)
    }

    /// Cross-entropy of the masked atoms' types (mean over the batch's masked atoms, nats).
    fn loss(&self, item: &MaskedBatch) -> Tensor<1> {
        let logits = self.logits(item);
        let m = logits.dims()[0];
        if m == 0 {
            // No heavy atom in the batch: nothing to predict, a zero loss in the graph.
            return (logits.sum() * 0.0).reshape([1]);
        }
        let picked = log_softmax(logits, 1).gather(1, item.types.clone().reshape([m, 1]));
        picked.mean().neg().reshape([1])
    }
}

/// The engine's output: the loss is the metric (no per-molecule prediction; the accuracy
/// is measured after training, [`masked_accuracy`]).
fn output(loss: Tensor<1>) -> RegressionOutput {
    let none = Tensor::<2>::zeros([1, 1], &loss.device());
    RegressionOutput::new(loss, none.clone(), none)
}

impl TrainStep for MatMasker {
    type Input = MaskedBatch;
    type Output = RegressionOutput;

    fn step(&self, item: MaskedBatch) -> TrainOutput<RegressionOutput> {
        let loss = self.loss(&item);
        let out = output(loss.clone());
        TrainOutput::new(self, loss.backward(), out)
    }
}

impl InferenceStep for MatMasker {
    type Input = MaskedBatch;
    type Output = RegressionOutput;

    fn step(&self, item: MaskedBatch) -> RegressionOutput {
        output(self.loss(&item))
    }
}

/// Pretrains a MAT by atom masking on the engine (resume, several devices, progress):
/// writes `pretrain.json`, `featurize_report.json`, `pretrained_model.bpk` (the MAT after
/// the last epoch, generator untrained; `train --init-from` takes its embedding and
/// encoder), `pretrain_masker.bpk` (the same with its atom-type head),
/// `pretrain_metrics.json` and `pretrain_loss.png`. The validation loss is measured on
/// masks drawn anew each epoch; the final accuracy on masks drawn once from the seed.
///
/// # Errors
/// Invalid settings, an unreadable file, fewer than 2 molecules, I/O errors.
pub fn pretrain_mat(
    spec: &MatPretrainSpec,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
) -> Result<MatPretrainSummary, TrainError> {
    if spec.kind != "mat" {
        return Err(TrainError::Invalid(format!(
            "kind '{}' is not 'mat'",
            spec.kind
        )));
    }
    if !(spec.mask_rate > 0.0 && spec.mask_rate < 1.0) {
        return Err(TrainError::Invalid(format!(
            "mask rate {}: it must be above 0 and below 1",
            spec.mask_rate
        )));
    }
    // The supervised runs' checks of epochs, batch size, learning rate and warm-up.
    crate::train_options::TrainOptions {
        epochs: spec.epochs,
        batch_size: spec.batch_size,
        learning_rate: spec.learning_rate,
        warmup_fraction: spec.warmup_fraction,
        patience: usize::MAX,
        seed: spec.seed,
    }
    .validate()?;
    if spec.featurizer.d_atom() != spec.model.d_atom {
        return Err(TrainError::Invalid(format!(
            "featurizer gives d_atom {} but the model expects {}",
            spec.featurizer.d_atom(),
            spec.model.d_atom
        )));
    }
    super::table::check_edge_features(&spec.featurizer, &spec.model)?;
    let folder = RunFolder::claim(
        run_dir,
        control.resume,
        control.force,
        &[spec.data.as_path()],
    )?;
    folder.write_definition("pretrain.json", spec)?;
    if !control.resume {
        // A fresh (or --force) run: no model of an earlier run may stand beside this
        // run's pretrain.json while it trains, or after it fails.
        for file in [
            super::init_from::PRETRAINED_MODEL,
            "pretrain_masker.bpk",
            "pretrain_metrics.json",
            "pretrain_loss.png",
        ] {
            let _ = std::fs::remove_file(run_dir.join(file));
        }
    }
    let data = spec.molecule_source()?.read(&[])?;
    let (features, report) = control.featurize_table(&spec.featurizer, &data)?;
    crate::print_cache_report(&report);
    write_json(&run_dir.join("featurize_report.json"), &report)?;
    if report.n_skipped > 0 {
        eprintln!(
            "featurize: {} of {} molecules left out (see featurize_report.json); first: {}",
            report.n_skipped, report.n_total, report.skipped[0].reason
        );
    }
    let mut examples: Vec<Example<MatFeatures>> = features
        .into_iter()
        .enumerate()
        .filter_map(|(row, f)| {
            f.map(|features| Example {
                row,
                features,
                targets: Vec::new(),
            })
        })
        .collect();
    if examples.len() < 2 {
        return Err(TrainError::Invalid(
            "pretraining needs at least 2 molecules (one is held out for validation)".into(),
        ));
    }
    // Held-out molecules: a seeded shuffle, then the last VALID_FRACTION.
    let mut rng = StdRng::seed_from_u64(spec.seed);
    rand::seq::SliceRandom::shuffle(examples.as_mut_slice(), &mut rng);
    let n_valid =
        ((examples.len() as f64 * VALID_FRACTION).round() as usize).clamp(1, examples.len() - 1);
    let valid = examples.split_off(examples.len() - n_valid);
    let train = examples;

    let devices = control.devices_or(device);
    let ad = devices.main().clone().autodiff();
    ad.seed(spec.seed);
    let learner = MatMasker {
        model: spec.model.init(&ad),
        atom_type_head: LinearConfig::new(spec.model.d_model, ATOM_TYPES).init(&ad),
    };
    let settings = FitSettings {
        run_dir: run_dir.to_path_buf(),
        epochs: spec.epochs,
        patience: usize::MAX,
        selection: Selection::Loss,
        batch_size: spec.batch_size,
        seed: spec.seed,
        resume: control.resume,
        devices,
        progress: control.progress,
        interrupt_after_batches: control.interrupt_after_batches,
        checkpoints_per_epoch: control.checkpoints_per_epoch,
        max_steps: None,
    };
    let total = spec.epochs * settings.steps_per_epoch(train.len());
    let warmup = engine::schedule::warmup_steps(spec.warmup_fraction, total);
    let scheduler = engine::schedule::noam(spec.learning_rate, warmup, spec.model.d_model)?;
    let batcher = MaskingBatcher {
        mask_rate: spec.mask_rate,
    };
    let (n_train, n_valid) = (train.len(), valid.len());
    let majority = majority_type(&train);
    let valid = Arc::new(valid);
    let outcome = engine::fit(
        learner,
        FusedAdamConfig::new().with_epsilon(1e-8).init(),
        scheduler,
        Arc::new(train),
        batcher.clone(),
        valid.clone(),
        batcher.clone(),
        &settings,
    )?;
    // The model after the last epoch: what pretraining hands to fine-tuning.
    let last = outcome.history.len();
    let fresh = MatMasker {
        model: spec.model.init(device),
        atom_type_head: LinearConfig::new(spec.model.d_model, ATOM_TYPES).init(device),
    };
    // The encoder (with its untrained generator) for fine-tuning, and the whole masker
    // (atom-type head included) for the accuracy below and for inspection.
    let _ = engine::export_checkpoint(
        fresh.clone(),
        |m| m.model,
        run_dir,
        last,
        "pretrained_model.bpk",
    )?;
    let masker = engine::export_checkpoint(fresh, |m| m, run_dir, last, "pretrain_masker.bpk")?;
    let (correct, scored, majority_correct) =
        masked_accuracy(&masker, &valid, &batcher, spec, majority, device)?;
    let summary = MatPretrainSummary {
        train_loss: outcome.history.iter().map(|h| h.train_loss).collect(),
        valid_loss: outcome.history.iter().map(|h| h.valid_loss).collect(),
        valid_accuracy: correct as f64 / scored.max(1) as f64,
        majority_accuracy: majority_correct as f64 / scored.max(1) as f64,
        valid_masked_atoms: scored,
        n_train,
        n_valid,
        n_skipped: report.n_skipped,
        seconds: outcome.train_seconds,
    };
    write_json(&run_dir.join("pretrain_metrics.json"), &summary)?;
    crate::plot::curves(
        &run_dir.join("pretrain_loss.png"),
        "MAT atom-masking pretraining: cross-entropy of masked atom types",
        "epoch",
        &[
            (&summary.train_loss, "train"),
            (&summary.valid_loss, "validation"),
        ],
        "cross-entropy (nats)",
    )?;
    Ok(summary)
}

/// The most frequent atom type among the training molecules' heavy atoms.
fn majority_type(train: &[Example<MatFeatures>]) -> usize {
    let mut counts = [0usize; ATOM_TYPES];
    for e in train {
        let d = e.features.d_atom;
        for row in e.features.node_features.chunks(d).skip(1) {
            if let Some(t) = atom_type(row) {
                counts[t] += 1;
            }
        }
    }
    (0..ATOM_TYPES).max_by_key(|&t| counts[t]).unwrap_or(1)
}

/// Masked atoms of `valid` (masks from the run's seed) whose type `masker` predicts, how
/// many were scored, and how many the majority type gets right.
fn masked_accuracy(
    masker: &MatMasker,
    valid: &[Example<MatFeatures>],
    batcher: &MaskingBatcher,
    spec: &MatPretrainSpec,
    majority: usize,
    device: &Device,
) -> Result<(usize, usize, usize), TrainError> {
    let mut rng = StdRng::seed_from_u64(spec.seed ^ 0x5eed);
    let (mut correct, mut scored, mut majority_correct) = (0, 0, 0);
    for chunk in valid.chunks(spec.batch_size.max(1)) {
        let items: Vec<&Example<MatFeatures>> = chunk.iter().collect();
        let batch = batcher
            .batch(&items, &mut rng, device)
            .map_err(TrainError::Invalid)?;
        let predicted: Vec<i64> = masker
            .logits(&batch)
            .argmax(1)
            .try_into_vec_as::<i64>()
            .map_err(|e| TrainError::Invalid(format!("{e:?}")))?;
        let truth: Vec<i64> = batch
            .types
            .try_into_vec_as::<i64>()
            .map_err(|e| TrainError::Invalid(format!("{e:?}")))?;
        for (p, t) in predicted.iter().zip(&truth) {
            correct += usize::from(p == t);
            majority_correct += usize::from(*t == majority as i64);
        }
        scored += truth.len();
    }
    Ok((correct, scored, majority_correct))
}

#[cfg(test)]
#[path = "pretrain_tests.rs"]
mod tests;
