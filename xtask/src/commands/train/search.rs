//! `cargo xtask hpopt`: `train`'s flags define the base run, the search's flags how many
//! trials draw what ([`train::hpopt`]).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{ArgMatches, Args};
use serde_json::Value;
use train::hpopt::{SearchSpace, SearchSpec, TrialSettings, run_search};
use train::{RunControl, Task, TrainError, TrainSummary};

use super::TrainArgs;
use crate::commands::common::{ModelArg, spelling};
use train::engine::Progress;

/// Flags of `hpopt`: the search's, then every flag of `train` (the base run each trial
/// starts from).
#[derive(Args)]
pub struct HpoptArgs {
    /// Trials to train (each a complete run, early-stopped by --patience).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub trials: usize,
    /// Trials trained at once. They share the process's threads, so more trials at once
    /// use the same cores (a gain where one trial leaves them idle: small models, data
    /// loading); each trial's progress display is off above 1.
    #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub parallel: usize,
    /// The search space as JSON: setting -> list of values, e.g. `{"learning_rate":
    /// [1e-3, 1e-4], "d_model": [64, 128]}` (default: the family's, `train::hpopt::space`).
    #[arg(long)]
    pub space: Option<PathBuf>,
    /// Seed of the draws (trial k's settings depend on it and k alone; each trial trains
    /// with --seed).
    #[arg(long, default_value_t = 0)]
    pub search_seed: u64,
    /// The base run: every flag of `train`.
    #[command(flatten)]
    pub train: TrainArgs,
}

/// The search's own settings, handed to the table run's last step.
pub(super) struct Search<'a> {
    pub args: &'a HpoptArgs,
}

impl Search<'_> {
    /// Runs the search for one family: `base_model` is the base run's model
    /// configuration (JSON), `trial(settings)` the run of one trial.
    ///
    /// # Errors
    /// A space that does not fit the family, the search's errors ([`run_search`]).
    pub(super) fn run(
        &self,
        task: Task,
        control: &RunControl,
        base_model: &Value,
        trial: impl Fn(
            &std::path::Path,
            &TrialSettings,
            &RunControl,
        ) -> Result<TrainSummary, TrainError>
        + Sync,
    ) -> Result<()> {
        let shared = &self.args.train.shared;
        let space = match &self.args.space {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("--space {}", path.display()))?;
                serde_json::from_str::<SearchSpace>(&text).with_context(|| {
                    format!("--space {}: not a JSON object of lists", path.display())
                })?
            }
            None => match shared.model {
                ModelArg::Mat => SearchSpace::mat(),
                _ => SearchSpace::transformer_m(),
            },
        };
        space.check(base_model)?;
        let spec = SearchSpec {
            family: spelling(&shared.model).to_string(),
            space,
            seed: self.args.search_seed,
            trials: self.args.trials,
            task,
        };
        let mut control = control.clone();
        if self.args.parallel > 1 {
            control.progress = Progress::Quiet;
        }
        let report = run_search(
            &shared.out,
            &spec,
            (base_model, self.args.parallel, control.resume),
            |folder, settings| trial(folder, settings, &control),
        )?;
        println!(
            "{}",
            std::fs::read_to_string(shared.out.join("results.md"))?
        );
        if let Some(best) = report.best() {
            println!(
                "best: trial {} ({} {:.5}); its run: {}; its model: {}",
                best.trial,
                report.metric,
                best.valid_metric.unwrap_or(f64::NAN),
                train::hpopt::trial_dir(&shared.out, best.trial).display(),
                shared.out.join("best_model_config.json").display()
            );
        }
        Ok(())
    }
}

/// Runs `hpopt`.
///
/// # Errors
/// A family without a table search (smiles-gpt, QM9), an ensemble, the search's errors.
pub fn run(args: HpoptArgs, matches: &ArgMatches) -> Result<()> {
    let shared = &args.train.shared;
    if matches!(shared.model, ModelArg::SmilesGpt) {
        bail!("hpopt searches MAT and Transformer-M on a molecule table (--data)");
    }
    if args.train.tm.dataset.is_some() {
        bail!("hpopt searches a molecule table (--data), not --dataset qm9");
    }
    if shared.ensemble_size > 1 {
        bail!("hpopt trains one run per trial; --ensemble-size is for train");
    }
    if args.train.mat.config.is_some() && args.space.is_none() {
        eprintln!(
            "note: --config sets the base model; the default space redraws its searched settings"
        );
    }
    super::check_family_flags(&args.train, matches, "hpopt")?;
    super::table::train_table(&args.train, Some(&Search { args: &args }))
}
