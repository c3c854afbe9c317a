//! `cargo xtask pretrain`: 3D position-denoising pretraining of a Transformer-M on QM9's
//! DFT coordinates or on conformers of the user's own SMILES (`--data`); with `--model
//! mat`, MAT's atom-masking pretraining on the user's SMILES (`train::mat::pretrain`).

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
    /// Model family: transformer-m (3D denoising) or mat (atom masking, --data only).
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
    /// Transformer-M: optimisation steps [default: 300].
    #[arg(long)]
    pub steps: Option<usize>,
    /// MAT: epochs over --data [default: 10].
    #[arg(long)]
    pub epochs: Option<usize>,
    /// MAT: share of each molecule's heavy atoms masked (Hu et al.'s count:
    /// floor(n * rate + 1) atoms) [default: 0.15].
    #[arg(long)]
    pub mask_rate: Option<f64>,
    /// Molecules per step.
    #[arg(long, default_value_t = 64)]
    pub batch_size: usize,
    /// Peak learning rate (Transformer-M: 3e-4 with linear warm-up and decay; MAT: 1e-3
    /// with the Noam schedule of its fine-tuning).
    #[arg(long)]
    pub lr: Option<f64>,
    /// Transformer-M: coordinate noise (Angstrom) [default: 0.2].
    #[arg(long)]
    pub noise_std: Option<f64>,
    /// Transformer-M: what is optimised: the 3D denoising term alone, or the original's
    /// joint PCQM4Mv2 objective (the supervised L1 on QM9's HOMO-LUMO gap in eV plus the
    /// denoising term in one step, modes mixed per molecule; QM9 only; add --droppath 0.1
    /// for the original's stochastic depth) [default: denoising].
    #[arg(long, value_enum)]
    pub objective: Option<ObjectiveArg>,
    /// Transformer-M with --objective joint: P(2D+3D),P(2D),P(3D) per molecule (the
    /// original's --mode-prob) [default: 0.2,0.2,0.6].
    #[arg(long, value_delimiter = ',', num_args = 1)]
    pub mode_prob: Option<Vec<f64>>,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Model preset (Transformer-M: small or base; MAT: small or pretrained).
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

/// `--objective`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ObjectiveArg {
    /// The 3D denoising term alone.
    Denoising,
    /// The original's joint objective.
    Joint,
}

/// Runs `pretrain`.
///
/// # Errors
/// smiles-gpt, a flag of the other model family, QM9 unavailable, training failures.
pub fn run(args: PretrainArgs) -> Result<()> {
    match args.model {
        ModelArg::TransformerM => {
            let mat_only = [
                ("--epochs", args.epochs.is_some()),
                ("--mask-rate", args.mask_rate.is_some()),
            ];
            refuse_foreign("transformer-m", &mat_only)?;
            if args.mode_prob.is_some() && args.objective != Some(ObjectiveArg::Joint) {
                bail!("--mode-prob mixes modes for --objective joint (denoising runs in 3D)");
            }
        }
        ModelArg::Mat => return pretrain_mat(args),
        ModelArg::SmilesGpt => {
            bail!("smiles-gpt has no pretraining step: train it with `train --model smiles-gpt`")
        }
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
        model: tm_config(matches!(args.preset, PresetArg::Base), &args.size)?,
        steps: args.steps.unwrap_or(300),
        batch_size: args.batch_size,
        learning_rate: args.lr.unwrap_or(3e-4),
        warmup_steps: train::transformer_m::PretrainSpec::warmup_steps_for(
            args.steps.unwrap_or(300),
        ),
        noise_std: args.noise_std.unwrap_or(0.2),
        seed: args.seed,
        objective: match args.objective {
            Some(ObjectiveArg::Joint) => train::transformer_m::PretrainObjective::Joint,
            _ => train::transformer_m::PretrainObjective::Denoising,
        },
        modes: match args.mode_prob.as_deref() {
            None => train::ModeProbabilities::new(),
            Some(&[both, two_d, three_d]) => train::ModeProbabilities {
                both,
                two_d,
                three_d,
            },
            Some(other) => bail!(
                "--mode-prob takes three numbers (2D+3D, 2D, 3D), got {}",
                other.len()
            ),
        },
    };
    let cache = conformer_cache_dir(args.cache, args.no_cache);
    pretrain(spec, &args.out, &args.engine, cache)
}

/// `pretrain --model mat`: atom masking on --data.
///
/// # Errors
/// No --data, a Transformer-M preset, training failures.
fn pretrain_mat(args: PretrainArgs) -> Result<()> {
    let Some(data) = args.data.clone() else {
        bail!("--model mat pretrains on your molecules: give --data <SMILES CSV | SDF>");
    };
    let size = &args.size;
    let transformer_m_only = [
        ("--steps", args.steps.is_some()),
        ("--noise-std", args.noise_std.is_some()),
        ("--objective", args.objective.is_some()),
        ("--mode-prob", args.mode_prob.is_some()),
        ("--limit", args.limit.is_some()),
        ("--offset", args.offset.is_some()),
        ("--layers", size.layers.is_some()),
        ("--d-model", size.d_model.is_some()),
        ("--num-heads", size.num_heads.is_some()),
        ("--kernels", size.kernels.is_some()),
        ("--layer-norm", size.layer_norm.is_some()),
        ("--droppath", size.droppath != 0.0),
        ("--spatial-pos-max", size.spatial_pos_max.is_some()),
    ];
    refuse_foreign("mat", &transformer_m_only)?;
    let model = match args.preset {
        PresetArg::Small => models::MatConfig::small(),
        PresetArg::Pretrained => models::MatConfig::pretrained(),
        PresetArg::Base | PresetArg::Molgpt => {
            bail!("--preset small or pretrained for MAT")
        }
    };
    let spec = train::mat::MatPretrainSpec {
        kind: "mat".into(),
        data,
        smiles_column: args.smiles_column.clone(),
        delimiter: args.delimiter,
        featurizer: featurizer(CoordsArg::Embed3d, args.seed, false),
        model,
        mask_rate: args.mask_rate.unwrap_or(0.15),
        epochs: args.epochs.unwrap_or(10),
        batch_size: args.batch_size,
        learning_rate: args.lr.unwrap_or(1e-3),
        warmup_fraction: train::train_options::MAT_WARMUP_FRACTION,
        seed: args.seed,
    };
    let control = train::RunControl {
        conformer_cache: conformer_cache_dir(args.cache.clone(), args.no_cache),
        ..args.engine.control()?
    };
    let s = train::mat::pretrain_mat(&spec, &args.out, &control, &args.engine.main_device()?)?;
    println!(
        "masked-atom cross-entropy {:.4} -> {:.4} (validation, first -> last epoch); type \
         accuracy on {} held-out masked atoms {:.4} (always the most frequent type: {:.4}); \
         {} molecules trained on, {} held out, {} skipped, {:.0} s; wrote {}",
        s.valid_loss.first().copied().unwrap_or(f64::NAN),
        s.valid_loss.last().copied().unwrap_or(f64::NAN),
        s.valid_masked_atoms,
        s.valid_accuracy,
        s.majority_accuracy,
        s.n_train,
        s.n_valid,
        s.n_skipped,
        s.seconds,
        args.out.join("pretrained_model.bpk").display()
    );
    Ok(())
}

/// Refuses the flags of `given` that were typed (`true`): they belong to the other model
/// family and would be ignored.
fn refuse_foreign(model: &str, given: &[(&str, bool)]) -> Result<()> {
    let typed: Vec<&str> = given.iter().filter(|(_, t)| *t).map(|(f, _)| *f).collect();
    if !typed.is_empty() {
        bail!(
            "{} {} pretrain --model {model}",
            typed.join(", "),
            if typed.len() == 1 {
                "is not a flag of"
            } else {
                "are not flags of"
            }
        );
    }
    Ok(())
}
