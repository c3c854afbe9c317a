//! `cargo xtask hpopt`: `train`'s flags define the base run, the search's flags how many
//! trials draw what ([`train::hpopt`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{ArgMatches, Args};
use serde_json::Value;
use train::engine::Progress;
use train::hpopt::{LEARNING_RATE, SearchSpace, SearchSpec, TrialSettings, run_search};
use train::run_folder::DataFingerprint;
use train::{RunControl, Task, TrainError, TrainSummary};

use super::TrainArgs;
use crate::commands::common::{ModelArg, spelling};

/// Flags of `hpopt`: the search's, then every flag of `train` (the base run each trial
/// starts from).
#[derive(Args)]
pub struct HpoptArgs {
    /// Trials to train (each a complete run, early-stopped by --patience).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub trials: usize,
    /// Trials trained at once. They share the process's threads, so more trials at once
    /// use the same cores (a gain where one trial leaves them idle: small models, data
    /// loading); each trial's progress display is off above 1, and the trials share the
    /// backend's random generator, so a trial's metrics are then not reproduced exactly
    /// by `train` with its settings.
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

/// The run of one trial: its folder, drawn settings and run control.
pub(super) type TrialRun<'a> =
    dyn Fn(&Path, &TrialSettings, &RunControl) -> Result<TrainSummary, TrainError> + Sync + 'a;

impl Search<'_> {
    /// Runs the search for one family: `base_run` is the base run's definition (its
    /// `run.json` as JSON, the model configuration under `model`), `trial` the run of
    /// one trial.
    ///
    /// # Errors
    /// A space that does not fit the family, or that changes the model of a run that
    /// starts from pretrained weights; the search's errors ([`run_search`]).
    pub(super) fn run(
        &self,
        task: Task,
        control: &RunControl,
        base_run: Value,
        trial: &TrialRun,
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
        let base_model = base_run.get("model").cloned().unwrap_or_default();
        space.check(&base_model)?;
        // A run that starts from pretrained weights keeps their architecture (and its
        // loader compares the whole configuration): only the learning rate can vary.
        if (shared.init_from.is_some() || self.args.train.mat.pretrained.is_some())
            && let Some(name) = space.0.keys().find(|k| *k != LEARNING_RATE)
        {
            bail!(
                "--init-from / --pretrained fix the model to the pretrained one's, so the \
                 space may only search learning_rate (it has {name}); give --space"
            );
        }
        let data: Vec<&Path> = shared
            .data
            .iter()
            .chain(&shared.splits)
            .map(PathBuf::as_path)
            .collect();
        let spec = SearchSpec {
            family: spelling(&shared.model).to_string(),
            space,
            seed: self.args.search_seed,
            trials: self.args.trials,
            task,
            base_run,
            data: DataFingerprint::of(&data)?,
        };
        let mut control = control.clone();
        if self.args.parallel > 1 {
            control.progress = Progress::Quiet;
        }
        let report = run_search(
            &shared.out,
            &spec,
            (&base_model, self.args.parallel, control.resume),
            |folder, settings, resume_it| {
                // A trial resumes only its own interrupted run; a fresh one starts fresh
                // (and records its data's fingerprint).
                let control = RunControl {
                    resume: resume_it,
                    ..control.clone()
                };
                trial(folder, settings, &control)
            },
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
