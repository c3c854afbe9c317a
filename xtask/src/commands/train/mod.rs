//! `cargo xtask train`: MAT or Transformer-M on a molecule table (Transformer-M also on
//! QM9), or the SMILES generator on a SMILES column. `--model` selects the family; each
//! family's flags live in their own struct ([`args`]), and a flag of another family is
//! refused by name from the one parse of the command line ([`typed_flags`]).

mod args;
pub mod search;
mod smiles_gpt;
mod table;
pub mod tm_flags;
pub mod transformer_m;
mod typed_flags;

use std::path::Path;

use anyhow::{Result, bail};
use clap::{ArgMatches, Args};
use train::ensemble::train_ensemble;
use train::{RunControl, Task, TrainError, TrainOptions, TrainSummary};

use args::GptTrainArgs;
pub use args::{MatTrainArgs, SharedTrainArgs, TmTrainArgs};
use typed_flags::given;

use super::common::{DatasetArg, ModelArg, PresetArg};

/// Flags of `train`: those of every model, then each family's own; a flag of a family
/// other than `--model`'s is refused ([`run`]).
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

/// Runs `train`; `matches` is clap's parse of its command line (read for the flags the
/// user typed).
///
/// # Errors
/// Bad data or splits, training failures. A flag of another model family is a
/// [`clap::Error`] (`UnknownArgument`): `cargo xtask` exits with it as clap does for any
/// unknown flag (status 2), the Python package raises it as a `ValueError`.
pub fn run(args: TrainArgs, matches: &ArgMatches) -> Result<()> {
    check_family_flags(&args, matches, "train")?;
    train(args, matches)
}

/// Refuses a flag of another family than `--model`'s (a [`clap::Error`], see [`run`])
/// and a shipped pretrained model for a family that has none; `command` names the
/// subcommand in the message (`train`, `hpopt`).
///
/// # Errors
/// As said.
fn check_family_flags(args: &TrainArgs, matches: &ArgMatches, command: &'static str) -> Result<()> {
    let foreign = typed_flags::foreign_flags(args.shared.model, matches);
    if !foreign.is_empty() {
        let (verb, noun) = match foreign.len() {
            1 => ("is", "a flag"),
            _ => ("are", "flags"),
        };
        return Err(TrainArgs::augment_args(clap::Command::new(match command {
            "hpopt" => "cargo xtask hpopt",
            _ => "cargo xtask train",
        }))
        .error(
            clap::error::ErrorKind::UnknownArgument,
            format!(
                "{} {verb} not {noun} of --model {} (cargo xtask {command} --help lists \
                         each family's)",
                foreign.join(", "),
                super::common::spelling(&args.shared.model)
            ),
        )
        .into());
    }
    if let Some(run) = &args.shared.init_from
        && run
            .to_str()
            .is_some_and(|s| s.starts_with(train::mat::SHIPPED_PREFIX))
        && !matches!(args.shared.model, ModelArg::Mat)
    {
        bail!(
            "--init-from {}: the shipped pretrained models are MAT's ({}); give --model mat \
             (--model {} has no shipped model)",
            run.display(),
            train::mat::shipped_names()
                .iter()
                .map(|n| format!("{}{n}", train::mat::SHIPPED_PREFIX))
                .collect::<Vec<_>>()
                .join(", "),
            super::common::spelling(&args.shared.model)
        );
    }
    Ok(())
}

/// Optimisation flags as [`TrainOptions`] with the family's warm-up share.
pub(super) fn options(shared: &SharedTrainArgs, warmup_fraction: f64) -> TrainOptions {
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
        return smiles_gpt::train_smiles_gpt(&args.shared, &args.gpt, matches);
    }
    if matches!(shared.preset, PresetArg::Molgpt) {
        bail!("--preset molgpt is smiles-gpt's");
    }
    if let ModelArg::TransformerM = shared.model {
        if let Some(DatasetArg::Qm9) = args.tm.dataset {
            let table_only = given(matches, &typed_flags::TABLE_FLAGS);
            if !table_only.is_empty() {
                bail!(
                    "{} describe a CSV (--data), not --dataset qm9",
                    table_only.join(", ")
                );
            }
            return transformer_m::train_qm9(&args);
        }
        let qm9_only = given(matches, &["limit", "offset"]);
        if !qm9_only.is_empty() {
            bail!(
                "{} select QM9 molecules (--dataset qm9)",
                qm9_only.join(", ")
            );
        }
    }
    table::train_table(&args, None)
}

/// Trains one run into `--out`, or `--ensemble-size` members ([`train_ensemble`]), and
/// prints the summary (an ensemble's test metrics).
pub(super) fn train_members(
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
