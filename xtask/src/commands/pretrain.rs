//! `cargo xtask pretrain`: 3D position-denoising pretraining of a Transformer-M on QM9
//! coordinates.

use std::path::PathBuf;

use anyhow::{Result, bail};

use super::common::{DatasetArg, ModelArg, PresetArg};
use super::data::data_qm9;
use super::engine_args::EngineArgs;
use super::train_transformer_m::{TmSizeArgs, pretrain, tm_config};

/// Flags of `pretrain`.
#[derive(clap::Args)]
pub struct PretrainArgs {
    /// Model family (transformer-m).
    #[arg(long, value_enum, default_value = "transformer-m")]
    pub model: ModelArg,
    /// Dataset (qm9).
    #[arg(long, value_enum, default_value = "qm9")]
    pub dataset: DatasetArg,
    /// Cache folder of prepared datasets.
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Molecules used.
    #[arg(long, default_value_t = 20000)]
    pub limit: usize,
    /// Skip this many molecules of the shuffled dataset (10000 keeps clear of a
    /// `train --limit 10000` subset).
    #[arg(long, default_value_t = 10000)]
    pub offset: usize,
    /// Optimisation steps.
    #[arg(long, default_value_t = 300)]
    pub steps: usize,
    /// Molecules per step.
    #[arg(long, default_value_t = 64)]
    pub batch_size: usize,
    /// Peak learning rate.
    #[arg(long, default_value_t = 3e-4)]
    pub lr: f64,
    /// Coordinate noise (Angstrom).
    #[arg(long, default_value_t = 0.2)]
    pub noise_std: f64,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Model preset (small or base).
    #[arg(long, value_enum, default_value = "small")]
    pub preset: PresetArg,
    /// Size overrides.
    #[command(flatten)]
    pub size: TmSizeArgs,
    /// Run directory.
    #[arg(long)]
    pub out: PathBuf,
    /// Devices, strategy, resume, progress.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Runs `pretrain`.
///
/// # Errors
/// A model other than Transformer-M, QM9 unavailable, training failures.
pub fn run(args: PretrainArgs) -> Result<()> {
    if !matches!(args.model, ModelArg::TransformerM) {
        bail!("pretraining is implemented for --model transformer-m");
    }
    let DatasetArg::Qm9 = args.dataset;
    let spec = train::transformer_m::PretrainSpec {
        data: train::transformer_m::Qm9Subset {
            dataset: data_qm9(args.cache, false)?,
            limit: Some(args.limit),
            offset: args.offset,
            subset_seed: 0,
        },
        model: tm_config(matches!(args.preset, PresetArg::Base), &args.size),
        steps: args.steps,
        batch_size: args.batch_size,
        learning_rate: args.lr,
        warmup_steps: train::transformer_m::PretrainSpec::warmup_steps_for(args.steps),
        noise_std: args.noise_std,
        seed: args.seed,
    };
    pretrain(spec, &args.out, &args.engine)
}
