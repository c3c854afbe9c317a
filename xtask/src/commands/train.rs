//! `cargo xtask train`: MAT on a CSV dataset, Transformer-M on QM9. `--model` selects the
//! family; each family's flags live in their own struct, and a flag of the other family
//! is rejected by name (from the structs' clap definitions, not a list kept here).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::ArgMatches;
use clap::parser::ValueSource;
use clap::{Args, ValueEnum};
use models::MatConfig;
use train::{RunControl, RunSpec, SplitSpec, Task, TrainOptions, train_run};

use super::common::{
    CoordsArg, DatasetArg, DeviceArg, ModelArg, PresetArg, conformer_cache_dir, featurizer,
};
use super::data::data_qm9;
use super::train_transformer_m::{ModeArg, TmSizeArgs, TmTrain, tm_config, train_tm};

/// Flags of `train`: those of every model, then each family's own.
#[derive(Args)]
pub struct TrainArgs {
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
    /// Target column(s).
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
    /// Backend.
    #[arg(long, value_enum, default_value = "flex")]
    pub device: DeviceArg,
    /// MAT flags.
    #[command(flatten)]
    pub mat: MatTrainArgs,
    /// Transformer-M flags.
    #[command(flatten)]
    pub tm: TmTrainArgs,
}

/// Flags that only MAT training takes.
#[derive(Args)]
#[command(next_help_heading = "MAT only (--model mat)")]
pub struct MatTrainArgs {
    /// Embed every molecule; neither read nor write the conformer cache.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
    /// CSV with a SMILES column and target columns (MAT).
    #[arg(long, required_unless_present = "dataset")]
    pub data: Option<PathBuf>,
    /// JSON split file ({"random-0": {"train": [...], ...}}).
    #[arg(long)]
    pub splits: Option<PathBuf>,
    /// Split name in --splits, or `random` / `scaffold` without a split file.
    #[arg(long, default_value = "random-0")]
    pub split: String,
    /// SMILES column.
    #[arg(long, default_value = "smiles")]
    pub smiles_column: String,
    /// Field delimiter of --data (`,`; `;`, `tab`, ... for other exports).
    #[arg(long, default_value = ",", value_parser = train::data::parse_delimiter)]
    pub delimiter: char,
    /// Unit of the targets (e.g. kcal/mol), recorded in metrics.json.
    #[arg(long)]
    pub units: Option<String>,
    /// Task; by default classification when every target is 0 or 1.
    #[arg(long, value_enum)]
    pub task: Option<TaskArg>,
    /// Coordinates for the distance matrices.
    #[arg(long, value_enum, default_value = "embed3d")]
    pub coords: CoordsArg,
    /// Reproduce the MAT reference featurizer's quirks.
    #[arg(long)]
    pub reference_compat: bool,
    /// Continue the run in --out from its last checkpoint.
    #[arg(long)]
    pub resume: bool,
    /// Fine-tune from a reference PyTorch MAT state dict (.pt or .safetensors, e.g. the
    /// published pretrained MAT with --preset pretrained); its generator is not loaded.
    #[arg(long)]
    pub pretrained: Option<PathBuf>,
}

/// Flags that only Transformer-M training takes.
#[derive(Args)]
#[command(next_help_heading = "Transformer-M only (--model transformer-m)")]
pub struct TmTrainArgs {
    /// A prepared dataset instead of --data (Transformer-M: qm9).
    #[arg(long, value_enum)]
    pub dataset: Option<DatasetArg>,
    /// Use this many molecules of the dataset (shuffled with seed 0).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Skip this many molecules of the shuffled dataset first.
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// Transformer-M channels during training and evaluation.
    #[arg(long, value_enum, default_value = "mixed")]
    pub mode: ModeArg,
    /// Transformer-M: start from a pretraining run directory (its model size is used)
    /// or a .bpk model file (give the same --preset / size flags it was made with).
    #[arg(long)]
    pub init_from: Option<PathBuf>,
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

/// The flags of `A` given on the command line (`--name`).
fn given<A: Args>(matches: &ArgMatches) -> Vec<String> {
    A::augment_args(clap::Command::new("flags"))
        .get_arguments()
        .filter(|a| matches.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine))
        .map(|a| format!("--{}", a.get_long().unwrap_or(a.get_id().as_str())))
        .collect()
}

/// Runs `train`; `matches` are the subcommand's, to reject the other family's flags.
///
/// # Errors
/// A flag of the other model family, bad data or splits, training failures.
pub fn run(args: TrainArgs, matches: &ArgMatches) -> Result<()> {
    let (foreign, model) = match args.model {
        ModelArg::Mat => (given::<TmTrainArgs>(matches), "mat"),
        ModelArg::TransformerM => (given::<MatTrainArgs>(matches), "transformer-m"),
    };
    if !foreign.is_empty() {
        bail!("{} does not apply to --model {model}", foreign.join(", "));
    }
    train(args)
}

fn train(args: TrainArgs) -> Result<()> {
    if let ModelArg::TransformerM = args.model {
        let Some(DatasetArg::Qm9) = args.tm.dataset else {
            bail!("--model transformer-m trains on --dataset qm9");
        };
        let [target] = &args.targets[..] else {
            bail!("--model transformer-m takes one --target");
        };
        if target == "y" {
            bail!(
                "--model transformer-m needs --target with a QM9 column, e.g. --target HOMO_LUMO_gap_au"
            );
        }
        if matches!(args.preset, PresetArg::Pretrained) {
            bail!("--preset pretrained is MAT's; use small or base for Transformer-M");
        }
        let model = tm_config(matches!(args.preset, PresetArg::Base), &args.tm.size);
        return train_tm(
            TmTrain {
                dataset: data_qm9(args.cache, false)?,
                target: target.clone(),
                limit: args.tm.limit,
                offset: args.tm.offset,
                mode: args.tm.mode,
                model,
                train: TrainOptions {
                    epochs: args.epochs,
                    batch_size: args.batch_size,
                    learning_rate: args.lr,
                    warmup_fraction: train::transformer_m::WARMUP_FRACTION,
                    patience: args.patience,
                    seed: args.seed,
                },
                init_from: args.tm.init_from,
                size_given: args.tm.size.any(),
                out: args.out,
            },
            &args.device.device()?,
        );
    }
    let data = args
        .mat
        .data
        .clone()
        .context("--data CSV is required for --model mat")?;
    let table = train::data::MoleculeTable::read_delimited(
        &data,
        &args.mat.smiles_column,
        &args.targets,
        train::data::delimiter_byte(args.mat.delimiter)?,
    )?;
    let task = match args.mat.task {
        Some(TaskArg::Regression) => Task::Regression,
        Some(TaskArg::Classification) => Task::Classification,
        None => Task::from_labels(&table.targets),
    };
    let split = match (&args.mat.splits, args.mat.split.as_str()) {
        (Some(path), name) => SplitSpec::File {
            path: path.clone(),
            name: name.to_string(),
        },
        (None, "scaffold") => SplitSpec::Scaffold,
        (None, _) => SplitSpec::Random { seed: args.seed },
    };
    let model = match args.preset {
        PresetArg::Small => MatConfig::small(),
        PresetArg::Pretrained => MatConfig::pretrained(),
        PresetArg::Base => {
            bail!("--preset base is Transformer-M's; use small or pretrained for MAT")
        }
    }
    .with_num_targets(args.targets.len());
    let spec = RunSpec {
        kind: train::RunKind::Mat,
        data: data.clone(),
        smiles_column: args.mat.smiles_column,
        delimiter: args.mat.delimiter,
        target_columns: args.targets,
        units: args.mat.units,
        split,
        task,
        featurizer: featurizer(args.mat.coords, args.seed, args.mat.reference_compat),
        model,
        train: TrainOptions {
            epochs: args.epochs,
            batch_size: args.batch_size,
            learning_rate: args.lr,
            warmup_fraction: train::run_spec::MAT_WARMUP_FRACTION,
            patience: args.patience,
            seed: args.seed,
        },
        target_mean: Vec::new(),
        target_std: Vec::new(),
        pretrained: args.mat.pretrained.clone(),
    };
    let control = RunControl {
        resume: args.mat.resume,
        progress: true,
        stop_after_epochs: None,
        conformer_cache: conformer_cache_dir(args.cache.clone(), args.mat.no_cache),
    };
    let summary = train_run(&spec, &args.out, &control, &args.device.device()?)?;
    println!("{}", serde_json::to_string_pretty(&summary)?);
    println!("run written to {}", args.out.display());
    Ok(())
}
