//! The flags of `cargo xtask train`: those of every model family, then each family's own.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use mol_featurize::properties::MolProperty;

use super::tm_flags::{LossArg, ModeArg, ReadoutArg, TargetScalingArg, TmSizeArgs};
use crate::commands::common::{CoordsArg, DatasetArg, ModelArg, PresetArg};
use crate::commands::engine_args::EngineArgs;
use crate::commands::structure_args::StructureArgs;

/// Flags that every model family takes.
#[derive(Args)]
pub struct SharedTrainArgs {
    /// Model family.
    #[arg(long, value_enum, default_value = "mat")]
    pub model: ModelArg,
    /// Cache folder: the conformer cache and prepared datasets (default:
    /// $MOLATTN_CACHE, else $XDG_CACHE_HOME/molattn, else ~/.cache/molattn).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Run directory to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Target column(s); repeat for several tasks (missing cells are masked per task).
    #[arg(long = "target", default_values_t = vec!["y".to_string()])]
    pub targets: Vec<String>,
    /// Model preset.
    #[arg(long, value_enum, default_value = "small")]
    pub preset: PresetArg,
    /// Maximum epochs.
    #[arg(long, default_value_t = 100)]
    pub epochs: usize,
    /// Batch size.
    #[arg(long, default_value_t = 32)]
    pub batch_size: usize,
    /// Peak learning rate (MAT: Noam schedule, 20% warm-up; Transformer-M: linear
    /// warm-up over 6% of the steps, then linear decay).
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f64,
    /// Early-stopping patience in epochs.
    #[arg(long, default_value_t = 20)]
    pub patience: usize,
    /// Seed (initialisation, shuffling, dropout, conformers).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Train this many members (seeds --seed, --seed + 1, ...; the same split) into one
    /// run folder (`member-<k>/`, `ensemble.json`, `ensemble_metrics.json`); `predict`
    /// gives their mean and standard deviation (MAT and Transformer-M on a table).
    #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub ensemble_size: usize,
    /// Devices, strategy, resume, progress.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Embed every molecule; neither read nor write the conformer cache.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
    /// Molecules and labels: a CSV with a SMILES column and target columns, an SDF
    /// (.sdf, .sdf.gz, .mol; targets from data fields), or XYZ files with --labels
    /// (Transformer-M: or --dataset qm9).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// SDF identity field and XYZ labels.
    #[command(flatten)]
    pub structure: StructureArgs,
    /// JSON split file ({"random-0": {"train": [...], ...}}).
    #[arg(long)]
    pub splits: Option<PathBuf>,
    /// Split name in --splits, or `random` / `scaffold` without a split file.
    #[arg(long, default_value = "random-0")]
    pub split: String,
    /// SMILES column.
    #[arg(long, default_value = "smiles")]
    pub smiles_column: String,
    /// Every column from this 0-based position of the header on (`2:`), or a range
    /// (`2:5`, end excluded), is a target, the SMILES column left out; replaces --target.
    #[arg(long, conflicts_with = "targets")]
    pub targets_from: Option<String>,
    /// Field delimiter of --data (`,`; `;`, `tab`, ... for other exports).
    #[arg(long, default_value = ",", value_parser = train::data::parse_delimiter)]
    pub delimiter: char,
    /// Unit of the targets (e.g. kcal/mol), recorded in metrics.json.
    #[arg(long)]
    pub units: Option<String>,
    /// Task; by default classification when every target is 0 or 1.
    #[arg(long, value_enum)]
    pub task: Option<TaskArg>,
    /// Start from a trained model. Transformer-M: a pretraining run directory (its model
    /// size is used) or a .bpk model file (give the same --preset / size flags it was
    /// made with). smiles-gpt: a smiles-gpt run (its vocabulary and sizes are kept;
    /// conditioning layers it lacks start fresh). MAT: a `pretrain --model mat` run, or
    /// `pretrained:mat-small`, the one shipped with molattn (atom masking on 200,000 MOSES
    /// molecules; its architecture is used; embedding and encoder loaded, generator
    /// fresh); the published PyTorch checkpoint is --pretrained.
    #[arg(long)]
    pub init_from: Option<PathBuf>,
    /// Coordinates: MAT's distance matrices; Transformer-M's 3D channel (only a 3D
    /// conformer feeds it, so Transformer-M takes layout2d or topological with --mode 2d
    /// only). Default: `file` for an SDF or XYZ files, `embed3d` for a CSV.
    #[arg(long, value_enum)]
    pub coords: Option<CoordsArg>,
}

/// Flags that only MAT training takes.
#[derive(Args)]
#[command(next_help_heading = "MAT only (--model mat)")]
pub struct MatTrainArgs {
    /// Reproduce the MAT reference featurizer's quirks.
    #[arg(long)]
    pub reference_compat: bool,
    /// Fine-tune from a reference PyTorch MAT state dict (.pt or .safetensors, e.g. the
    /// published pretrained MAT with --preset pretrained); its generator is not loaded.
    #[arg(long)]
    pub pretrained: Option<PathBuf>,
    /// A MAT architecture as JSON instead of --preset: MatConfig's field names or the
    /// original make_model's (N, h, N_dense, aggregation_type, distance_matrix_kernel,
    /// scale_norm, n_output, ...); fields left out take make_model's defaults. The run
    /// stores the configuration it used in run.json (`model`).
    #[arg(long, conflicts_with_all = ["preset", "init_from", "pretrained"])]
    pub config: Option<PathBuf>,
}

/// Flags that only Transformer-M training takes.
#[derive(Args)]
#[command(next_help_heading = "Transformer-M only (--model transformer-m)")]
pub struct TmTrainArgs {
    /// A prepared dataset instead of --data (qm9, with its DFT geometries).
    #[arg(long, value_enum, conflicts_with = "data")]
    pub dataset: Option<DatasetArg>,
    /// --dataset qm9: use this many molecules (shuffled with seed 0).
    #[arg(long)]
    pub limit: Option<usize>,
    /// --dataset qm9: skip this many molecules of the shuffled dataset first.
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// Regression loss on the standardised targets: `l1` (the original's) or `mse`
    /// (MAT's). Classification always takes BCE.
    #[arg(long, value_enum, default_value = "l1")]
    pub loss: LossArg,
    /// Transformer-M channels during training and evaluation.
    #[arg(long, value_enum, default_value = "mixed")]
    pub mode: ModeArg,
    /// How the head reads the encoder: the graph token (`cls`), or every atom token
    /// averaged over the molecule's atoms (`mean`) or summed (`sum`). The original's QM9
    /// `--readout-type` (its `mean` divides by the batch's padded length instead).
    #[arg(long, value_enum, default_value = "cls")]
    pub readout: ReadoutArg,
    /// Where the regression loss is computed: on standardised labels (`std-labels`) or in
    /// target units on `prediction * std + mean` (`std-logits`, the original's QM9
    /// default, its `--std-type`).
    #[arg(long, value_enum, default_value = "std-labels")]
    pub target_scaling: TargetScalingArg,
    /// Clip the gradients' global L2 norm to this before each step (the original's
    /// `--clip-norm`, 5 in its QM9 fine-tuning; default: no clipping).
    #[arg(long, value_parser = super::tm_flags::positive)]
    pub clip_norm: Option<f64>,
    /// Transformer-M size overrides.
    #[command(flatten)]
    pub size: TmSizeArgs,
}

/// `--task`.
#[derive(Clone, Copy, ValueEnum)]
pub enum TaskArg {
    /// Regression (MSE on standardised targets).
    Regression,
    /// Binary classification (BCE, ROC-AUC).
    Classification,
}

/// Flags that only the SMILES generator takes.
#[derive(Args)]
#[command(next_help_heading = "SMILES generator only (--model smiles-gpt)")]
pub struct GptTrainArgs {
    /// Longest sequence in tokens, <bos> and <eos> included (longer SMILES are left out
    /// and reported in skipped.json).
    #[arg(long, default_value_t = 128)]
    pub max_len: usize,
    /// Local attention: each token attends to the last W tokens only (default: dense
    /// causal attention).
    #[arg(long)]
    pub window: Option<usize>,
    /// With --window: this many leading tokens are attended by every position.
    #[arg(long, default_value_t = 0)]
    pub global_tokens: usize,
    /// Use only the first N rows of --data.
    #[arg(long = "max-rows")]
    pub max_rows: Option<usize>,
    /// Share of the SMILES held out for the validation loss.
    #[arg(long, default_value_t = 0.05)]
    pub valid_fraction: f64,
    /// Dropout (embeddings, attention weights, residual branches).
    #[arg(long, default_value_t = 0.1)]
    pub dropout: f64,
    /// Condition on these properties of each molecule (MolGPT's `--props`): logp, tpsa,
    /// qed (RDKit's definitions); comma-separated or repeated.
    #[arg(long, value_delimiter = ',')]
    pub props: Vec<MolProperty>,
    /// Condition on each molecule's Bemis-Murcko scaffold (MolGPT's `--scaffold`).
    #[arg(long)]
    pub scaffold: bool,
    /// Standardise the --props values with the training set's mean and standard
    /// deviation (stored in run.json) before the model sees them (default: raw, as
    /// MolGPT feeds them).
    #[arg(long, requires = "props")]
    pub standardize_props: bool,
}
