//! `cargo xtask pretrain`: 3D position-denoising pretraining of a Transformer-M on QM9's
//! DFT coordinates or on conformers of the user's own SMILES (`--data`).

use std::path::PathBuf;

use anyhow::{Result, bail};

use train::transformer_m::{PretrainData, Qm9Subset, SmilesSource};

use super::common::{CoordsArg, DatasetArg, ModelArg, PresetArg, conformer_cache_dir, featurizer};
use super::engine_args::EngineArgs;
use super::train::tm_flags::{TmSizeArgs, tm_config};
use super::train::transformer_m::pretrain;

/// Flags of `pretrain`.
#[derive(clap::Args)]
pub struct PretrainArgs {
    /// Model family (transformer-m).
    #[arg(long, value_enum, default_value = "transformer-m")]
    pub model: ModelArg,
    /// Dataset (qm9), when no --data is given.
    #[arg(long, value_enum, default_value = "qm9", conflicts_with = "data")]
    pub dataset: DatasetArg,
    /// Pretrain on these molecules instead: a CSV (or other delimited file) with a
    /// SMILES column, or an SDF (its records' molecules); labels are not needed. Each
    /// gets an ETKDG + UFF conformer (cached); molecules without a 3D conformer are left
    /// out and reported.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// SMILES column of --data.
    #[arg(long, default_value = "smiles")]
    pub smiles_column: String,
    /// Field delimiter of --data (`,`; `;`, `tab`, ...).
    #[arg(long, default_value = ",", value_parser = train::data::parse_delimiter)]
    pub delimiter: char,
    /// Cache folder: prepared datasets and the conformer cache.
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// With --data: embed every molecule; neither read nor write the conformer cache.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
    /// QM9: molecules used [default: 20000].
    #[arg(long, conflicts_with = "data")]
    pub limit: Option<usize>,
    /// QM9: skip this many molecules of the shuffled dataset (10000 keeps clear of a
    /// `train --limit 10000` subset) [default: 10000].
    #[arg(long, conflicts_with = "data")]
    pub offset: Option<usize>,
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
    let data = match &args.data {
        Some(path) => PretrainData::Smiles(SmilesSource {
            format: train::table_data::MoleculeFormat::for_path(path, None, None)?,
            path: path.clone(),
            smiles_column: args.smiles_column.clone(),
            delimiter: args.delimiter,
            conformer: featurizer(CoordsArg::Embed3d, args.seed, false).conformer,
        }),
        None => {
            let DatasetArg::Qm9 = args.dataset;
            PretrainData::Qm9(Qm9Subset {
                dataset: train::datasets::qm9(
                    &mol_featurize::cache::cache_root(args.cache.clone()),
                    false,
                )?,
                limit: Some(args.limit.unwrap_or(20000)),
                offset: args.offset.unwrap_or(10000),
                subset_seed: 0,
            })
        }
    };
    let spec = train::transformer_m::PretrainSpec {
        data,
        model: tm_config(matches!(args.preset, PresetArg::Base), &args.size),
        steps: args.steps,
        batch_size: args.batch_size,
        learning_rate: args.lr,
        warmup_steps: train::transformer_m::PretrainSpec::warmup_steps_for(args.steps),
        noise_std: args.noise_std,
        seed: args.seed,
    };
    let cache = conformer_cache_dir(args.cache, args.no_cache);
    pretrain(spec, &args.out, &args.engine, cache)
}
