//! The SMILES generator's runs: training on a column of SMILES through the one engine,
//! and sampling molecules from a trained run ([`generate`]).
//!
//! A run folder holds `run.json` ([`GptRunSpec`], `kind: "smiles-gpt"`), `vocab.json`
//! (the [`SmilesVocab`] built from the corpus, or the `init_from` run's), `skipped.json` (rows left out and why),
//! `best_model.bpk` (the epoch of lowest validation loss), `metrics.json`
//! ([`GptTrainSummary`]) and the engine's logs and checkpoints.

pub mod conditioned;
mod data;
pub mod generate;
mod step;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use burn::prelude::*;
use models::{SmilesGpt, SmilesGptConfig};
use mol_featurize::SmilesVocab;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

pub use conditioned::{ConditionReport, PropertyDeviation, condition_report};
pub use data::{
    GptCondition, GptExample, PropScaling, RowCondition, SkippedSmiles, SmilesCorpus,
    encode_examples, encode_rows, row_conditions, scaffold_tokens,
};
pub use generate::{GenerateCondition, GenerateRequest, GeneratedRow, GenerationSummary, generate};
pub use step::{GptBatch, GptBatcher, GptLearner};

use crate::checkpoint::write_json;
use crate::engine::fused_adam::FusedAdamConfig;
use crate::engine::schedule::WarmupLinear;
use crate::engine::{self, FitSettings, Selection};
use crate::error::TrainError;
use crate::run_control::RunControl;
use crate::run_folder::RunFolder;
use crate::run_kind::RunKind;
use crate::train_options::TrainOptions;

/// Settings of a generator run (`run.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GptRunSpec {
    /// Always [`RunKind::SmilesGpt`].
    pub kind: RunKind,
    /// Training SMILES.
    pub corpus: SmilesCorpus,
    /// Model (its `vocab_size` is set from the corpus's vocabulary).
    pub model: SmilesGptConfig,
    /// Epochs, batch size, peak learning rate (linear warm-up over `warmup_fraction` of
    /// the steps, then linear decay), patience, seed.
    pub train: TrainOptions,
    /// Share of the sequences held out for the validation loss (at least one).
    pub valid_fraction: f64,
    /// Properties and scaffold the model is conditioned on (none by default).
    #[serde(default)]
    pub condition: GptCondition,
    /// The standardisation of the property values the model was trained with (`None`:
    /// raw values, MolGPT's way).
    #[serde(default)]
    pub prop_scaling: Option<PropScaling>,
    /// Start from this smiles-gpt run's best model: its vocabulary and sizes are kept
    /// (`model`'s dropout and condition apply); the conditioning layers an
    /// unconditional run lacks start fresh.
    #[serde(default)]
    pub init_from: Option<PathBuf>,
}

/// `metrics.json` of a generator run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GptTrainSummary {
    /// Sequences trained on.
    pub n_train: usize,
    /// Sequences held out.
    pub n_valid: usize,
    /// Rows left out (`skipped.json`).
    pub n_skipped: usize,
    /// Vocabulary size, specials included.
    pub vocab_size: usize,
    /// Trainable parameters.
    pub num_params: usize,
    /// Epoch of the lowest validation loss (its weights are `best_model.bpk`).
    pub best_epoch: usize,
    /// Mean validation cross-entropy per token (nats) at `best_epoch`.
    pub best_valid_loss: f64,
    /// Training seconds (resumed invocations added up).
    pub train_seconds: f64,
}

/// Trains a SMILES generator: reads the corpus, builds the vocabulary, leaves out the
/// rows that cannot be encoded or are longer than `max_len` (written to `skipped.json`,
/// counted on stderr), holds out `valid_fraction` of the rest (seeded shuffle), and
/// trains on next-token cross-entropy with the engine (resume, devices, progress).
///
/// # Errors
/// An unreadable corpus, fewer than two usable rows, invalid settings, training errors.
pub fn train_smiles_gpt(
    spec: &GptRunSpec,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
) -> Result<GptTrainSummary, TrainError> {
    spec.train.validate()?;
    if !(spec.valid_fraction > 0.0 && spec.valid_fraction < 1.0) {
        return Err(TrainError::Invalid(format!(
            "valid fraction {} is not between 0 and 1",
            spec.valid_fraction
        )));
    }
    spec.model.pattern.validate().map_err(TrainError::Invalid)?;
    let folder = RunFolder::claim(
        run_dir,
        control.resume,
        control.force,
        &[spec.corpus.path.as_path()],
    )?;
    let rows = spec.corpus.read()?;
    let init = spec
        .init_from
        .as_deref()
        .map(|dir| GptRun::open(dir, device))
        .transpose()?;
    let conditions = row_conditions(&rows, &spec.condition);
    let vocab = match &init {
        Some(run) => run.vocab.clone(),
        // Scaffolds are written in RDKit's canonical form, which may use tokens the
        // corpus's own spelling does not (an explicit `-` between aromatic rings).
        None => {
            SmilesVocab::build(rows.iter().map(|(_, s)| s.as_str()).chain(
                conditions.iter().filter_map(|c| match c {
                    Some(Ok(c)) if !c.scaffold.is_empty() => Some(c.scaffold.as_str()),
                    _ => None,
                }),
            ))
            .0
        }
    };
    let sizes = init.as_ref().map_or(&spec.model, |r| &r.spec.model);
    let (mut sequences, skipped) = encode_examples(&rows, &conditions, &vocab, sizes.max_len);
    if !skipped.is_empty() && control.progress != engine::Progress::Quiet {
        eprintln!(
            "smiles-gpt: {} of {} rows left out (skipped.json); first: row {}: {}",
            skipped.len(),
            rows.len(),
            skipped[0].row,
            skipped[0].reason
        );
    }
    if sequences.len() < 2 {
        return Err(TrainError::Invalid(format!(
            "{}: {} usable SMILES; training needs at least 2",
            spec.corpus.path.display(),
            sequences.len()
        )));
    }
    let scaffold_max_len = if spec.condition.scaffold {
        sequences
            .iter()
            .map(|e| e.scaffold.len())
            .max()
            .unwrap_or(0)
            .max(1)
    } else {
        0
    };
    let model_config = SmilesGptConfig {
        vocab_size: vocab.len(),
        num_props: Some(spec.condition.props.len()).filter(|&n| n > 0),
        scaffold_max_len: Some(scaffold_max_len).filter(|&n| n > 0),
        dropout: spec.model.dropout,
        ..sizes.clone()
    };
    if let Some(run) = &init
        && run.spec.model.is_conditional()
        && (run.spec.condition != spec.condition
            || run.spec.model.scaffold_max_len() < scaffold_max_len)
    {
        return Err(TrainError::Invalid(format!(
            "--init-from {}: conditioned on {:?}, not on this run's {:?}",
            spec.init_from.as_deref().unwrap_or(Path::new("")).display(),
            run.spec.condition,
            spec.condition
        )));
    }
    let model_config = match &init {
        Some(run) if run.spec.model.is_conditional() => SmilesGptConfig {
            scaffold_max_len: run.spec.model.scaffold_max_len,
            ..model_config
        },
        _ => model_config,
    };
    sequences.shuffle(&mut StdRng::seed_from_u64(spec.train.seed));
    let n_valid = ((sequences.len() as f64 * spec.valid_fraction).round() as usize)
        .clamp(1, sequences.len() - 1);
    let mut valid = sequences.split_off(sequences.len() - n_valid);
    let prop_scaling = match &init {
        // A conditional start keeps the scaling its property layer learned with.
        Some(run) if run.spec.model.is_conditional() => run.spec.prop_scaling.clone(),
        _ if spec.condition.standardize => PropScaling::fit(&sequences),
        _ => None,
    };
    if let Some(scaling) = &prop_scaling {
        for e in sequences.iter_mut().chain(valid.iter_mut()) {
            scaling.apply(&mut e.props);
        }
    }
    let spec = GptRunSpec {
        model: model_config.clone(),
        prop_scaling,
        ..spec.clone()
    };
    folder.write_spec(&spec)?;
    write_json(&run_dir.join("skipped.json"), &skipped)?;
    write_json(&run_dir.join("vocab.json"), &vocab)?;
    let devices = control.devices_or(device);
    let ad = devices.main().clone().autodiff();
    ad.seed(spec.train.seed);
    let fresh = model_config.init(&ad);
    let model = match init {
        Some(run) if run.model.is_conditional() => run.model.fork(&ad),
        Some(run) => SmilesGpt {
            type_emb: fresh.type_emb,
            prop_nn: fresh.prop_nn,
            ..run.model.fork(&ad)
        },
        None => fresh,
    };
    let num_params = model.num_params();
    let settings = FitSettings::supervised(run_dir, &spec.train, control, devices, Selection::Loss);
    let total_steps = settings.steps_per_epoch(sequences.len()) * spec.train.epochs;
    let warmup = ((total_steps as f64 * spec.train.warmup_fraction) as usize).max(1);
    let n_train = sequences.len();
    let batcher = GptBatcher {
        num_props: model_config.num_props(),
        scaffold_max_len: model_config.scaffold_max_len(),
    };
    let outcome = engine::fit(
        GptLearner { model },
        FusedAdamConfig::new().init(),
        WarmupLinear::new(spec.train.learning_rate, warmup, total_steps.max(1)).into(),
        Arc::new(sequences),
        batcher,
        Arc::new(valid),
        batcher,
        &settings,
    )?;
    engine::keep_best(
        GptLearner {
            model: model_config.init(device),
        },
        |l| l.model,
        run_dir,
        outcome.best_epoch,
    )?;
    let summary = GptTrainSummary {
        n_train,
        n_valid,
        n_skipped: skipped.len(),
        vocab_size: vocab.len(),
        num_params,
        best_epoch: outcome.best_epoch,
        best_valid_loss: outcome
            .history
            .get(outcome.best_epoch - 1)
            .map_or(f64::NAN, |h| h.valid_loss),
        train_seconds: outcome.train_seconds,
    };
    write_json(&run_dir.join("metrics.json"), &summary)?;
    Ok(summary)
}

/// A trained generator: its spec, vocabulary and model on `device` (the best model, or a
/// checkpoint's: [`GptRun::open_checkpoint`]).
#[derive(Debug)]
pub struct GptRun {
    /// `run.json`.
    pub spec: GptRunSpec,
    /// `vocab.json`.
    pub vocab: SmilesVocab,
    /// `best_model.bpk`, or `checkpoint/model-<epoch>.bpk`.
    pub model: SmilesGpt,
}

impl GptRun {
    /// Opens the generator run in `run_dir`.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] naming the file that is missing or unreadable, or a run
    /// of another kind.
    pub fn open(run_dir: &Path, device: &Device) -> Result<Self, TrainError> {
        Self::open_spec(Self::read_spec(run_dir)?, run_dir, device)
    }

    /// `run_dir/run.json`, refused unless it is a smiles-gpt run.
    fn read_spec(run_dir: &Path) -> Result<GptRunSpec, TrainError> {
        let bad = |reason: String| TrainError::Checkpoint {
            path: run_dir.join("run.json"),
            reason,
        };
        let text =
            std::fs::read_to_string(run_dir.join("run.json")).map_err(|e| bad(e.to_string()))?;
        let spec: GptRunSpec =
            serde_json::from_str(&text).map_err(|e| bad(format!("not a smiles-gpt run: {e}")))?;
        if spec.kind != RunKind::SmilesGpt {
            return Err(bad(format!("a {} run, not smiles-gpt", spec.kind)));
        }
        Ok(spec)
    }

    /// `run_dir/vocab.json`.
    fn read_vocab(run_dir: &Path) -> Result<SmilesVocab, TrainError> {
        let vocab_path = run_dir.join("vocab.json");
        let bad = |reason: String| TrainError::Checkpoint {
            path: vocab_path.clone(),
            reason,
        };
        let text = std::fs::read_to_string(&vocab_path).map_err(|e| bad(e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))
    }

    /// The run in `run_dir` whose `run.json` is `spec` (read already, e.g. by
    /// [`crate::run_file::RunSpecFile::load`]): its vocabulary and best model.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] naming `vocab.json` or `best_model.bpk` when missing or
    /// unreadable.
    pub fn open_spec(
        spec: GptRunSpec,
        run_dir: &Path,
        device: &Device,
    ) -> Result<Self, TrainError> {
        let vocab = Self::read_vocab(run_dir)?;
        let path = run_dir.join("best_model.bpk");
        let model = crate::checkpoint::load_model_file(spec.model.init(device), &path)?;
        Ok(Self { spec, vocab, model })
    }

    /// This run with the weights of its checkpoint `epoch` (`checkpoint/model-<epoch>.bpk`,
    /// the engine's record of a training run: while it trains the engine keeps the last two
    /// epochs' and the best one's, at the end the best and the last; with
    /// `--checkpoints-per-epoch` an "epoch" is one part) instead of the best
    /// model: a run still training can be sampled and scored. The run folder needs
    /// `run.json` and `vocab.json` (written when training starts), not `best_model.bpk`.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] naming the file that is missing or unreadable, or a run
    /// of another kind.
    pub fn open_checkpoint(
        run_dir: &Path,
        epoch: usize,
        device: &Device,
    ) -> Result<Self, TrainError> {
        let spec = Self::read_spec(run_dir)?;
        let vocab = Self::read_vocab(run_dir)?;
        let learner = GptLearner {
            model: spec.model.init(device),
        };
        let model = engine::load_checkpoint(learner, run_dir, epoch)?.model;
        Ok(Self { spec, vocab, model })
    }
}
