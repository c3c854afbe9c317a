//! Transformer-M: supervised training of graph-level targets (2D, 3D or mixed modes; Luo
//! et al. 2022 section 4) on QM9 or on the user's molecule table
//! ([`train_table_transformer_m`]), and 3D position-denoising pretraining.
//!
//! Recipe (scaled down for CPUs): Adam, linear warm-up then linear decay of the learning
//! rate, L1 loss on the standardised target (Transformer-M trains PCQM4Mv2 with L1), the
//! best validation epoch kept; denoising: Gaussian noise (sigma 0.2 Angstrom, the
//! original `train.sh`'s `noise_scale`) on heavy-atom coordinates, loss `1 - cos` between
//! predicted and true noise per atom (docs/SPEC.md 2.3, docs/TRANSFORMER_M.md).
//!
//! Splits: the QM9 molecules are shuffled with `subset_seed`, positions
//! `offset..offset + limit` form the subset, and the subset is split 80/10/10 with
//! `train.seed`. Pretraining on `offset = 10000` therefore never sees the molecules of
//! a 10k fine-tuning subset with the same seed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use burn::optim::AdamConfig;
use burn::prelude::*;
use models::transformer_m::{Mode, TransformerM, TransformerMBatch, TransformerMConfig};
use mol_featurize::graphormer::{EncodingLimits, GraphormerFeatures};
use mol_featurize::pad_graphormer_batch;
use mol_featurize::{ConformerOptions, GraphormerFeaturizer, featurize_all_with_coordinates};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::checkpoint::write_json;
use crate::engine::schedule::{WarmupLinear, warmup_steps};
use crate::engine::{self, FitSettings, MetricKind, Selection, TaskMetric};
use crate::error::TrainError;
use crate::masked_loss::LossKind;
use crate::metrics::mae;
use crate::mode_sampling::ModeProbabilities;
use crate::qm9::{HARTREE_EV, Qm9};
use crate::run_control::RunControl;
use crate::run_kind::RunKind;
use crate::run_spec::{Labels, SplitSpec, Task, TrainOptions};
use crate::splits::random_split;

/// Warm-up share of the linear schedule of supervised Transformer-M runs (6% of the
/// steps, as the original's fine-tuning scripts: `warmup_updates` / `total_num_update`).
pub const WARMUP_FRACTION: f64 = 0.06;

mod pretrain;
mod step;
mod table;
pub use crate::engine::schedule::warmup_linear;
pub use pretrain::{
    PretrainData, PretrainSpec, PretrainSummary, pretrain_denoising, resolve_init_from,
};
pub use step::{ModeChoice, TmBatch, TmBatcher, TmDenoiser, TmExample, TmLearner};
pub use table::train_table_transformer_m;

/// Which QM9 molecules a run uses.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Qm9Subset {
    /// Converted QM9 directory ([`crate::qm9::convert_qm9_csv`]).
    pub dataset: PathBuf,
    /// Molecules used (all when `None`).
    pub limit: Option<usize>,
    /// Start position in the shuffled order.
    #[serde(default)]
    pub offset: usize,
    /// Seed of the shuffle.
    pub subset_seed: u64,
}

impl Qm9Subset {
    /// Dataset rows of the subset, in shuffled order.
    pub fn rows(&self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(&mut StdRng::seed_from_u64(self.subset_seed));
        let end = self
            .limit
            .map_or(n, |l| (self.offset + l).min(n))
            .max(self.offset.min(n));
        order[self.offset.min(n)..end].to_vec()
    }
}

/// Where a Transformer-M run's molecules come from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TmData {
    /// A QM9 subset with its DFT geometries.
    Qm9(Qm9Subset),
    /// The user's molecule table, with conformers for the 3D channel.
    Table(TableSource),
}

/// The molecules of a delimited file as Transformer-M reads them: the file, its SMILES
/// column and delimiter, and how the 3D channel's conformers are made (the same ETKDG +
/// UFF pipeline, cache and fallbacks as MAT; molecules without a 3D conformer run in 2D).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SmilesSource {
    /// The delimited file.
    pub path: PathBuf,
    /// SMILES column.
    pub smiles_column: String,
    /// Field delimiter.
    #[serde(default = "comma")]
    pub delimiter: char,
    /// Conformer settings (also the cache key).
    pub conformer: ConformerOptions,
}

fn comma() -> char {
    ','
}

impl SmilesSource {
    /// The file's SMILES, in row order.
    ///
    /// # Errors
    /// An unreadable file or a missing column, naming the file.
    pub fn read_smiles(&self) -> Result<Vec<String>, TrainError> {
        crate::data::read_smiles_delimited(
            &self.path,
            &self.smiles_column,
            crate::data::delimiter_byte(self.delimiter)?,
        )
    }
}

/// A labelled molecule table and its split.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableSource {
    /// The molecules.
    #[serde(flatten)]
    pub molecules: SmilesSource,
    /// Split.
    pub split: SplitSpec,
}

/// Everything that defines a Transformer-M training run (`run.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TmRunSpec {
    /// Always [`RunKind::TransformerM`]: tells run directories apart
    /// ([`crate::run_kind`]).
    #[serde(default = "RunKind::transformer_m")]
    pub kind: RunKind,
    /// Molecules.
    pub data: TmData,
    /// Target columns (QM9: one qm9pack name, e.g. `HOMO_LUMO_gap_au`).
    pub targets: Vec<String>,
    /// Regression or binary classification.
    #[serde(default = "regression")]
    pub task: Task,
    /// Training loss (L1 or MSE on standardised targets for regression, BCE with logits
    /// for classification).
    #[serde(default = "l1")]
    pub loss: LossKind,
    /// Unit of the targets (table runs; QM9 runs take the column's unit).
    #[serde(default)]
    pub units: Option<String>,
    /// Training-time mode probabilities.
    pub modes: ModeProbabilities,
    /// Mode used for validation and test predictions.
    pub eval_mode: Mode,
    /// Model.
    pub model: TransformerMConfig,
    /// Optimisation (epochs, batch size, peak learning rate, warm-up fraction,
    /// patience, seed).
    pub train: TrainOptions,
    /// Start from this model file (a denoising-pretraining run's `pretrained_model.bpk`).
    #[serde(default)]
    pub init_from: Option<PathBuf>,
    /// Training-set mean of each target (filled in by the run; empty for classification).
    #[serde(default)]
    pub target_mean: Vec<f32>,
    /// Training-set standard deviation of each target (filled in by the run).
    #[serde(default)]
    pub target_std: Vec<f32>,
}

fn regression() -> Task {
    Task::Regression
}

fn l1() -> LossKind {
    LossKind::L1
}

impl TmRunSpec {
    /// Reads `run.json` of a Transformer-M run directory (runs written before multi-task
    /// support, with one `target` and scalar scaling, are read as one-task runs).
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] if missing, malformed, or another kind of run.
    pub fn load(run_dir: &Path) -> Result<Self, TrainError> {
        let mut json: serde_json::Value =
            crate::checkpoint::read_run_spec(run_dir, RunKind::TransformerM)?;
        if let Some(obj) = json.as_object_mut() {
            if let Some(target) = obj.remove("target") {
                obj.entry("targets")
                    .or_insert(serde_json::Value::Array(vec![target]));
            }
            for key in ["target_mean", "target_std"] {
                if let Some(v) = obj.get_mut(key)
                    && v.is_number()
                {
                    *v = serde_json::Value::Array(vec![v.clone()]);
                }
            }
        }
        serde_json::from_value(json).map_err(|e| TrainError::Checkpoint {
            path: run_dir.join("run.json"),
            reason: e.to_string(),
        })
    }

    /// The run's best model (`run_dir/best_model.bpk`) on `device`.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] naming the file when it is missing or does not fit
    /// [`TmRunSpec::model`].
    pub fn load_best_model(
        &self,
        run_dir: &Path,
        device: &Device,
    ) -> Result<TransformerM, TrainError> {
        crate::checkpoint::load_best_model(self.model.init(device), run_dir)
    }

    /// The run's labels: task, target columns and their training scaling.
    pub fn labels(&self) -> Labels {
        Labels {
            task: self.task,
            columns: self.targets.clone(),
            mean: self.target_mean.clone(),
            std: self.target_std.clone(),
        }
    }

    /// The featurizer of the run's molecules: its conformer settings for a table run,
    /// the default ETKDG + UFF ones (for new molecules) for a QM9 run.
    pub fn featurizer(&self) -> GraphormerFeaturizer {
        GraphormerFeaturizer {
            max_hops: self.model.limits.max_hops,
            conformer: match &self.data {
                TmData::Table(t) => t.molecules.conformer.clone(),
                TmData::Qm9(_) => ConformerOptions::default(),
            },
        }
    }
}

/// Metrics of a finished run (`metrics.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TmSummary {
    /// Target column.
    pub target: String,
    /// Its unit.
    pub units: String,
    /// Test MAE in target units.
    pub test_mae: f64,
    /// Test MAE in eV (Hartree targets only).
    pub test_mae_ev: Option<f64>,
    /// Validation MAE (best epoch) in target units.
    pub valid_mae: f64,
    /// Train MAE in target units.
    pub train_mae: f64,
    /// Mean-predictor test MAE (training mean), for scale.
    pub test_mae_of_mean: f64,
    /// Molecules per part.
    pub n_train: usize,
    /// Validation molecules.
    pub n_valid: usize,
    /// Test molecules.
    pub n_test: usize,
    /// Subset molecules that could not be featurized.
    pub n_skipped: usize,
    /// Epochs run.
    pub epochs: usize,
    /// Best validation epoch.
    pub best_epoch: usize,
    /// Seconds spent featurizing.
    pub featurize_seconds: f64,
    /// Seconds spent training (incl. validation).
    pub train_seconds: f64,
    /// Trainable parameters.
    pub n_params: usize,
    /// Training modes and evaluation mode, for the record.
    pub eval_mode: Mode,
}

/// Featurized molecules of `subset` (in its order) with their dataset rows. Molecules
/// that fail are written with their reasons to `run_dir/featurize_report.json` and counted (the
/// second value); the first is printed.
pub(crate) fn featurize_subset(
    qm9: &Qm9,
    subset: &Qm9Subset,
    max_hops: usize,
    run_dir: &Path,
) -> Result<(Vec<(usize, GraphormerFeatures)>, usize), TrainError> {
    let rows = subset.rows(qm9.len());
    let smiles: Vec<String> = rows.iter().map(|&r| qm9.index.smiles[r].clone()).collect();
    let coordinates: Vec<Option<Vec<[f64; 3]>>> = rows
        .iter()
        .map(|&r| {
            Some(
                qm9.coordinates_of(r)
                    .iter()
                    .map(|p| p.map(f64::from))
                    .collect(),
            )
        })
        .collect();
    let featurizer = GraphormerFeaturizer {
        max_hops,
        conformer: ConformerOptions::default(),
    };
    let (features, report) = featurize_all_with_coordinates(&smiles, &coordinates, &featurizer);
    write_json(&run_dir.join("featurize_report.json"), &report)?;
    if let Some(first) = report.skipped.first() {
        eprintln!(
            "featurize: skipped {} of {} molecules (see featurize_report.json); first: {}",
            report.n_skipped, report.n_total, first.reason
        );
    }
    let kept = rows
        .iter()
        .zip(features)
        .filter_map(|(&r, f)| f.map(|f| (r, f)))
        .collect();
    Ok((kept, report.n_skipped))
}

/// Raw outputs `[n][tasks]` (standardised values or logits) of `model` for `features`
/// in `mode`, in batches of `batch_size`; on the CPU each batch is split across rayon's
/// threads ([`TransformerM::forward_parallel`]).
///
/// # Errors
/// [`TrainError::Invalid`] when a molecule cannot be padded with the model's limits.
pub fn predict_raw(
    model: &TransformerM,
    features: &[&GraphormerFeatures],
    limits: &EncodingLimits,
    mode: Mode,
    batch_size: usize,
    device: &Device,
) -> Result<Vec<Vec<f32>>, TrainError> {
    let mut out = Vec::with_capacity(features.len());
    let parts = models::parallel::inference_parts(device);
    for chunk in features.chunks(batch_size.max(1)) {
        let data =
            pad_graphormer_batch(chunk, limits).map_err(|e| TrainError::Invalid(e.to_string()))?;
        let modes = vec![mode; chunk.len()];
        let pred =
            model.forward_parallel(&TransformerMBatch::from_data(&data, &modes, device), parts);
        let [_, k] = pred.dims();
        let raw = pred
            .try_into_vec_as::<f32>()
            .map_err(|e| TrainError::Invalid(format!("{e:?}")))?;
        out.extend(raw.chunks(k.max(1)).map(|c| c.to_vec()));
    }
    Ok(out)
}

/// Predictions of a one-target QM9 run in target units.
fn predict(
    model: &TransformerM,
    spec: &TmRunSpec,
    part: &[&GraphormerFeatures],
    device: &Device,
) -> Result<Vec<f32>, TrainError> {
    let labels = spec.labels();
    Ok(predict_raw(
        model,
        part,
        &spec.model.limits,
        spec.eval_mode,
        spec.train.batch_size,
        device,
    )?
    .iter()
    .map(|r| labels.unscale(r)[0])
    .collect())
}

/// Trains a Transformer-M on a QM9 subset as described by `spec` on the training engine
/// ([`crate::engine`]: resume, several devices, progress as `control` says), writing into
/// `run_dir`: `run.json`, `best_model.bpk`, `metrics.json`, `curves.png`,
/// `featurize_report.json`, burn-train's `train/`, `valid/` and `checkpoint/`. `device`
/// is the plain device (evaluation; training runs on the main device's autodiff twin).
///
/// # Errors
/// Dataset, model-file or I/O errors naming the file; an empty split.
pub fn train_transformer_m(
    spec: &TmRunSpec,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
) -> Result<TmSummary, TrainError> {
    std::fs::create_dir_all(run_dir).map_err(|e| TrainError::io(run_dir, e))?;
    let TmData::Qm9(subset) = &spec.data else {
        return Err(TrainError::Invalid(
            "train_transformer_m trains on QM9; a table run goes through \
             train_table_transformer_m"
                .into(),
        ));
    };
    let [target] = &spec.targets[..] else {
        return Err(TrainError::Invalid(format!(
            "a QM9 run takes one target, not {}",
            spec.targets.len()
        )));
    };
    let qm9 = Qm9::load(&subset.dataset)?;
    let column = qm9.column(target)?;
    let mut spec = spec.clone();
    spec.targets = vec![qm9.index.columns[column].clone()];
    spec.task = Task::Regression;
    let units = qm9.index.units[column].clone();

    let t0 = Instant::now();
    let (features, n_skipped) =
        featurize_subset(&qm9, subset, spec.model.limits.max_hops, run_dir)?;
    let featurize_seconds = t0.elapsed().as_secs_f64();
    let positions: Vec<usize> = (0..features.len()).collect();
    let split = random_split(&positions, (0.8, 0.1), spec.train.seed);
    if split.train.is_empty() || split.valid.is_empty() || split.test.is_empty() {
        return Err(TrainError::Invalid(format!(
            "{} molecules are too few for an 80/10/10 split",
            features.len()
        )));
    }
    let part = |idx: &[usize]| -> (Vec<&GraphormerFeatures>, Vec<f32>) {
        (
            idx.iter().map(|&p| &features[p].1).collect(),
            idx.iter()
                .map(|&p| qm9.target(features[p].0, column))
                .collect(),
        )
    };
    let (train_x, train_y) = part(&split.train);
    let (valid_x, valid_y) = part(&split.valid);
    let (test_x, test_y) = part(&split.test);
    let n = train_y.len() as f32;
    let mean = train_y.iter().sum::<f32>() / n;
    let std = (train_y.iter().map(|y| (y - mean).powi(2)).sum::<f32>() / n)
        .sqrt()
        .max(1e-6);
    (spec.target_mean, spec.target_std) = (vec![mean], vec![std]);
    write_json(&run_dir.join("run.json"), &spec)?;

    let devices = control.devices_or(device);
    let ad = devices.main().clone().autodiff();
    ad.seed(spec.train.seed);
    let model = initial_model(&spec, &ad)?;
    let n_params = model.num_params();
    let (mean, std) = (spec.target_mean.clone(), spec.target_std.clone());
    let examples = |x: &[&GraphormerFeatures], y: &[f32], rows: &[usize]| -> Arc<Vec<TmExample>> {
        Arc::new(
            x.iter()
                .zip(y)
                .zip(rows)
                .map(|((f, &t), &row)| TmExample {
                    row,
                    features: (*f).clone(),
                    targets: vec![t],
                })
                .collect(),
        )
    };
    let rows = |idx: &[usize]| -> Vec<usize> { idx.iter().map(|&p| features[p].0).collect() };
    let batcher = |modes: ModeChoice| TmBatcher {
        limits: spec.model.limits,
        modes,
        mean: mean.clone(),
        std: std.clone(),
        loss: spec.loss,
        noise_std: None,
    };
    let settings = FitSettings::supervised(
        run_dir,
        &spec.train,
        control,
        devices,
        Selection::Metric(TaskMetric::new(MetricKind::Mae, 1, &mean, &std)),
    );
    let total = spec.train.epochs * settings.steps_per_epoch(train_x.len());
    let warmup = warmup_steps(spec.train.warmup_fraction, total);
    let scheduler = WarmupLinear::new(spec.train.learning_rate, warmup, total);
    let outcome = engine::fit(
        TmLearner { model },
        AdamConfig::new().init(),
        scheduler.into(),
        examples(&train_x, &train_y, &rows(&split.train)),
        batcher(ModeChoice::Sample(spec.modes.clone())),
        examples(&valid_x, &valid_y, &rows(&split.valid)),
        batcher(ModeChoice::Fixed(spec.eval_mode)),
        &settings,
    )?;
    let best_model = engine::keep_best(
        TmLearner {
            model: spec.model.init(device),
        },
        |l| l.model,
        run_dir,
        outcome.best_epoch,
    )?;
    let test_pred = predict(&best_model, &spec, &test_x, device)?;
    let train_pred = predict(&best_model, &spec, &train_x, device)?;
    let test_mae = mae(&test_pred, &test_y);
    let mean_pred = vec![mean[0]; test_y.len()];
    let summary = TmSummary {
        target: spec.targets[0].clone(),
        units: units.clone(),
        test_mae,
        test_mae_ev: units
            .starts_with("Hartree")
            .then_some(test_mae * HARTREE_EV),
        // The best epoch's validation MAE, as the engine measured it (target units).
        valid_mae: outcome.history[outcome.best_epoch - 1].valid_metric,
        train_mae: mae(&train_pred, &train_y),
        test_mae_of_mean: mae(&mean_pred, &test_y),
        n_train: train_x.len(),
        n_valid: valid_x.len(),
        n_test: test_x.len(),
        n_skipped,
        epochs: outcome.history.len(),
        best_epoch: outcome.best_epoch,
        featurize_seconds,
        train_seconds: outcome.train_seconds,
        n_params,
        eval_mode: spec.eval_mode,
    };
    write_json(&run_dir.join("metrics.json"), &summary)?;
    let train_curve: Vec<f64> = outcome.history.iter().map(|h| h.train_loss).collect();
    let valid_curve: Vec<f64> = outcome
        .history
        .iter()
        .map(|h| h.valid_metric / std[0] as f64)
        .collect();
    crate::plot::curves(
        &run_dir.join("curves.png"),
        &format!(
            "Transformer-M on QM9 {}: L1 (standardised)",
            spec.targets[0]
        ),
        "epoch",
        &[(&train_curve, "train L1"), (&valid_curve, "valid MAE")],
        "L1 / std",
    )?;
    Ok(summary)
}

/// A fresh model of `spec` on `device`, or the one in `spec.init_from`.
///
/// # Errors
/// [`TrainError::Checkpoint`] when the file does not fit the configuration.
pub(crate) fn initial_model(spec: &TmRunSpec, device: &Device) -> Result<TransformerM, TrainError> {
    let model = spec.model.init(device);
    let Some(path) = &spec.init_from else {
        return Ok(model);
    };
    model.try_load_file(path).map_err(|e| {
        let mut reason = format!("{e:?}");
        if reason.len() > 400 {
            reason.truncate(400);
            reason.push_str("...");
        }
        TrainError::Checkpoint {
            path: path.clone(),
            reason: format!(
                "cannot load into this model configuration (it must match the file's): {reason}"
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsets_with_offsets_do_not_overlap() {
        let a = Qm9Subset {
            dataset: PathBuf::new(),
            limit: Some(10),
            offset: 0,
            subset_seed: 3,
        };
        let b = Qm9Subset {
            offset: 10,
            limit: Some(20),
            ..a.clone()
        };
        let (ra, rb) = (a.rows(100), b.rows(100));
        assert_eq!((ra.len(), rb.len()), (10, 20));
        assert!(ra.iter().all(|r| !rb.contains(r)));
        assert_eq!(b.rows(15).len(), 5);
    }
}
