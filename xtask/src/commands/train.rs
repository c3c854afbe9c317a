//! `cargo xtask train`: MAT or Transformer-M on a CSV dataset (Transformer-M also on
//! QM9). `--model` selects the family; each family's flags live in their own struct, and a flag of the other family
//! is rejected by name (from the structs' clap definitions, not a list kept here).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::ArgMatches;
use clap::{Args, ValueEnum};
use models::MatConfig;
use train::ensemble::train_ensemble;
use train::masked_loss::LossKind;
use train::table_data::MoleculeFormat;
use train::transformer_m::{
    SmilesSource, TableSource, TmData, TmRunSpec, train_table_transformer_m,
};
use train::{
    RunControl, RunSpec, SplitSpec, Task, TrainError, TrainOptions, TrainSummary, train_run,
};

use super::common::{
    CoordsArg, DatasetArg, ModelArg, PresetArg, StructureArgs, conformer_cache_dir, coords_for,
    featurizer, spelling,
};
use super::data::data_qm9;
use super::engine_args::EngineArgs;
use super::train_smiles_gpt::{GptTrainArgs, train_smiles_gpt};
use super::train_transformer_m::{
    ModeArg, TmSizeArgs, TmTrain, resolve_tm_init, tm_config, train_tm,
};

/// Flags of `train`: those of every model, then each family's own. After this
/// (all-families) parse, the command line is parsed again by clap with the shared flags
/// and the selected family's only, so clap itself rejects a flag of the other family.
#[derive(Args)]
pub struct TrainArgs {
    /// Flags of every model family.
    #[command(flatten)]
    pub shared: SharedTrainArgs,
    /// MAT flags.
    #[command(flatten)]
    pub mat: MatTrainArgs,
    /// Transformer-M flags.
    #[command(flatten)]
    pub tm: TmTrainArgs,
    /// SMILES generator flags.
    #[command(flatten)]
    pub gpt: GptTrainArgs,
}

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
    /// conditioning layers it lacks start fresh). MAT takes --pretrained instead.
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
    /// Transformer-M size overrides.
    #[command(flatten)]
    pub size: TmSizeArgs,
}

/// `--loss` of Transformer-M.
#[derive(Clone, Copy, ValueEnum)]
pub enum LossArg {
    /// Mean absolute error.
    L1,
    /// Mean squared error.
    Mse,
}

/// `--task`.
#[derive(Clone, Copy, ValueEnum)]
pub enum TaskArg {
    /// Regression (MSE on standardised targets).
    Regression,
    /// Binary classification (BCE, ROC-AUC).
    Classification,
}

/// Parses `argv` (the words after `train`) with clap, using the shared flags and those
/// of `F` only: a flag of the other family is clap's "unexpected argument" error.
fn parse_family<F: Args>(argv: &[String]) -> clap::error::Result<ArgMatches> {
    let command = clap::Command::new("cargo xtask train");
    F::augment_args(SharedTrainArgs::augment_args(command))
        .try_get_matches_from(std::iter::once("train".to_string()).chain(argv.iter().cloned()))
}

/// Runs `train`; `argv` are the words after `train` on the command line, parsed again
/// for the selected model family ([`TrainArgs`]).
///
/// # Errors
/// Bad data or splits, training failures. A flag of the other model family ends the
/// process with clap's error (exit status 2), as any other unknown flag does.
pub fn run(args: TrainArgs, argv: &[String]) -> Result<()> {
    let parsed = match args.shared.model {
        ModelArg::Mat => parse_family::<MatTrainArgs>(argv),
        ModelArg::TransformerM => parse_family::<TmTrainArgs>(argv),
        ModelArg::SmilesGpt => parse_family::<GptTrainArgs>(argv),
    };
    match parsed {
        Ok(matches) => train(args, &matches),
        Err(e) => e.exit(),
    }
}

/// Flags that describe a molecule table (`--data`), refused with `--dataset qm9` rather
/// than silently ignored.
const TABLE_FLAGS: [&str; 13] = [
    "data",
    "id_field",
    "labels",
    "file_column",
    "splits",
    "split",
    "smiles_column",
    "targets_from",
    "delimiter",
    "units",
    "task",
    "coords",
    "no_cache",
];

/// The flags among `ids` that the user typed (not defaults), as `--flag-name`.
fn given(matches: &ArgMatches, ids: &[&str]) -> Vec<String> {
    ids.iter()
        .filter(|id| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect()
}

/// Optimisation flags as [`TrainOptions`] with the family's warm-up share.
fn options(shared: &SharedTrainArgs, warmup_fraction: f64) -> TrainOptions {
    TrainOptions {
        epochs: shared.epochs,
        batch_size: shared.batch_size,
        learning_rate: shared.lr,
        warmup_fraction,
        patience: shared.patience,
        seed: shared.seed,
    }
}

fn train(args: TrainArgs, matches: &ArgMatches) -> Result<()> {
    let shared = &args.shared;
    let qm9 = matches!(args.tm.dataset, Some(DatasetArg::Qm9));
    if shared.ensemble_size > 1 && (matches!(shared.model, ModelArg::SmilesGpt) || qm9) {
        bail!("--ensemble-size is for MAT and Transformer-M on a molecule table (--data)");
    }
    if let ModelArg::SmilesGpt = shared.model {
        return train_smiles_gpt(&args.shared, &args.gpt, matches);
    }
    if matches!(shared.preset, PresetArg::Molgpt) {
        bail!("--preset molgpt is smiles-gpt's");
    }
    if matches!(shared.model, ModelArg::Mat) && shared.init_from.is_some() {
        bail!("--init-from is Transformer-M's and smiles-gpt's; MAT starts from --pretrained");
    }
    if let ModelArg::TransformerM = shared.model {
        if let Some(DatasetArg::Qm9) = args.tm.dataset {
            let table_only = given(matches, &TABLE_FLAGS);
            if !table_only.is_empty() {
                bail!(
                    "{} describe a CSV (--data), not --dataset qm9",
                    table_only.join(", ")
                );
            }
            return train_qm9(&args);
        }
        let qm9_only = given(matches, &["limit", "offset"]);
        if !qm9_only.is_empty() {
            bail!(
                "{} select QM9 molecules (--dataset qm9)",
                qm9_only.join(", ")
            );
        }
    }
    let data = shared.data.clone().context(match shared.model {
        ModelArg::Mat => "--data is required for --model mat",
        ModelArg::TransformerM => "--model transformer-m needs --data or --dataset qm9",
        ModelArg::SmilesGpt => unreachable!("smiles-gpt returned above"),
    })?;
    let source = shared
        .structure
        .source(&data, &shared.smiles_column, shared.delimiter)?;
    let coords = coords_for(shared.coords, &source);
    if let ModelArg::TransformerM = shared.model
        && !matches!(args.tm.mode, ModeArg::TwoD)
        && !matches!(coords, CoordsArg::Embed3d | CoordsArg::File)
    {
        bail!(
            "--mode {} needs 3D conformers, but --coords {} gives none (every molecule \
             would run in 2D): use --coords embed3d or --mode 2d",
            spelling(&args.tm.mode),
            spelling(&coords)
        );
    }
    let targets = match &shared.targets_from {
        Some(range) => {
            // Columns of the delimited file that holds the labels (an XYZ set's labels
            // file, its file-name column left out).
            let (labels, file_column) = match &source.format {
                MoleculeFormat::Delimited => (data.as_path(), None),
                MoleculeFormat::Xyz {
                    labels,
                    file_column,
                } => (labels.as_path(), Some(file_column)),
                MoleculeFormat::Sdf { .. } => {
                    bail!("--targets-from selects CSV columns; name SDF data fields with --target")
                }
            };
            let delimiter = train::data::delimiter_byte(shared.delimiter)?;
            let mut columns =
                train::data::target_columns_from(labels, delimiter, range, &shared.smiles_column)?;
            columns.retain(|c| Some(c) != file_column);
            columns
        }
        None => shared.targets.clone(),
    };
    let table = source.read(&targets)?.table;
    let task = match shared.task {
        Some(TaskArg::Regression) => Task::Regression,
        Some(TaskArg::Classification) => Task::Classification,
        None => Task::from_labels(&table.targets),
    };
    let split = match (&shared.splits, shared.split.as_str()) {
        (Some(path), name) => SplitSpec::File {
            path: path.clone(),
            name: name.to_string(),
        },
        (None, "scaffold") => SplitSpec::Scaffold,
        (None, _) => SplitSpec::Random { seed: shared.seed },
    };
    let engine = &shared.engine;
    let control = RunControl {
        conformer_cache: conformer_cache_dir(shared.cache.clone(), shared.no_cache),
        ..engine.control()?
    };
    let featurizer = featurizer(coords, shared.seed, args.mat.reference_compat);
    match shared.model {
        ModelArg::SmilesGpt => unreachable!("smiles-gpt returned above"),
        ModelArg::TransformerM => {
            if matches!(shared.preset, PresetArg::Pretrained) {
                bail!("--preset pretrained is MAT's; use small or base for Transformer-M");
            }
            let model = tm_config(matches!(shared.preset, PresetArg::Base), &args.tm.size)
                .with_num_targets(targets.len());
            let loss = match (task, args.tm.loss) {
                (Task::Classification, _) => LossKind::BceWithLogits,
                (Task::Regression, LossArg::L1) => LossKind::L1,
                (Task::Regression, LossArg::Mse) => LossKind::Mse,
            };
            let (init_from, model) =
                resolve_tm_init(args.shared.init_from.as_deref(), model, &args.tm.size)?;
            let (modes, eval_mode) = args.tm.mode.probabilities();
            let spec = TmRunSpec {
                kind: train::RunKind::TransformerM,
                data: TmData::Table(TableSource {
                    molecules: SmilesSource {
                        path: data,
                        format: source.format.clone(),
                        smiles_column: shared.smiles_column.clone(),
                        delimiter: shared.delimiter,
                        conformer: featurizer.conformer,
                    },
                    split,
                }),
                target_columns: targets,
                task,
                loss,
                units: shared.units.clone(),
                modes,
                eval_mode,
                model,
                train: options(shared, train::transformer_m::WARMUP_FRACTION),
                init_from,
                target_mean: Vec::new(),
                target_std: Vec::new(),
            };
            let device = engine.main_device()?;
            train_members(shared, task, &control, |out, seed| {
                let mut spec = spec.clone();
                spec.train.seed = seed;
                train_table_transformer_m(&spec, out, &control, &device)
            })
        }
        ModelArg::Mat => {
            let model = match shared.preset {
                PresetArg::Small => MatConfig::small(),
                PresetArg::Pretrained => MatConfig::pretrained(),
                PresetArg::Base | PresetArg::Molgpt => {
                    bail!(
                        "--preset {} is not MAT's; use small or pretrained",
                        spelling(&shared.preset)
                    )
                }
            }
            .with_num_targets(targets.len());
            let spec = RunSpec {
                kind: train::RunKind::Mat,
                data,
                format: source.format.clone(),
                smiles_column: shared.smiles_column.clone(),
                delimiter: shared.delimiter,
                target_columns: targets,
                units: shared.units.clone(),
                split,
                task,
                featurizer,
                model,
                train: options(shared, train::run_spec::MAT_WARMUP_FRACTION),
                target_mean: Vec::new(),
                target_std: Vec::new(),
                pretrained: args.mat.pretrained.clone(),
            };
            let device = engine.main_device()?;
            train_members(shared, task, &control, |out, seed| {
                let mut spec = spec.clone();
                spec.train.seed = seed;
                train_run(&spec, out, &control, &device)
            })
        }
    }
}

/// Trains one run into `--out`, or `--ensemble-size` members ([`train_ensemble`]), and
/// prints the summary (an ensemble's test metrics).
fn train_members(
    shared: &SharedTrainArgs,
    task: Task,
    control: &RunControl,
    mut train_one: impl FnMut(&Path, u64) -> Result<TrainSummary, TrainError>,
) -> Result<()> {
    if shared.ensemble_size == 1 {
        let summary = train_one(&shared.out, shared.seed)?;
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        let metrics = train_ensemble(
            &shared.out,
            shared.ensemble_size,
            shared.seed,
            (task, control.resume),
            train_one,
        )?;
        println!("{}", serde_json::to_string_pretty(&metrics)?);
    }
    println!("run written to {}", shared.out.display());
    Ok(())
}

/// `train --model transformer-m --dataset qm9`.
fn train_qm9(args: &TrainArgs) -> Result<()> {
    let shared = &args.shared;
    let [target] = &shared.targets[..] else {
        bail!("--model transformer-m --dataset qm9 takes one --target");
    };
    if target == "y" {
        bail!("--dataset qm9 needs --target with a QM9 column, e.g. --target HOMO_LUMO_gap_au");
    }
    if matches!(shared.preset, PresetArg::Pretrained) {
        bail!("--preset pretrained is MAT's; use small or base for Transformer-M");
    }
    let model = tm_config(matches!(shared.preset, PresetArg::Base), &args.tm.size);
    train_tm(TmTrain {
        dataset: data_qm9(shared.cache.clone(), false)?,
        target: target.clone(),
        limit: args.tm.limit,
        offset: args.tm.offset,
        mode: args.tm.mode,
        model,
        train: options(shared, train::transformer_m::WARMUP_FRACTION),
        loss: match args.tm.loss {
            LossArg::L1 => LossKind::L1,
            LossArg::Mse => LossKind::Mse,
        },
        init_from: args.shared.init_from.clone(),
        size: args.tm.size.clone(),
        out: shared.out.clone(),
        engine: shared.engine.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    /// clap rejects a flag of the other model family and accepts the family's own.
    #[test]
    fn a_flag_of_the_other_family_is_a_clap_error() {
        let mat = words(&["--out", "r", "--data", "x.csv", "--pretrained", "m.pt"]);
        let tm = words(&["--out", "r", "--model", "transformer-m", "--mode", "3d"]);
        let tm_csv = words(&[
            "--out", "r", "--data", "x.csv", "--splits", "s.json", "--loss", "mse",
        ]);
        assert!(parse_family::<MatTrainArgs>(&mat).is_ok());
        assert!(parse_family::<TmTrainArgs>(&tm).is_ok());
        assert!(parse_family::<TmTrainArgs>(&tm_csv).is_ok());
        let e = parse_family::<TmTrainArgs>(&mat).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument);
        assert!(e.to_string().contains("--pretrained"), "{e}");
        assert!(parse_family::<MatTrainArgs>(&tm).is_err());
        assert!(parse_family::<MatTrainArgs>(&tm_csv).is_err());
    }
}
