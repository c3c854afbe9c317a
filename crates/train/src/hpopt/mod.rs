//! Hyperparameter search (`cargo xtask hpopt`, issue #40 item 6): a seeded random search
//! over a [`SearchSpace`], each trial a complete training run (early-stopped on the
//! validation metric by the engine's patience) in its own folder, several at once within
//! the core budget, resumable, ranked by the validation metric.
//!
//! A search folder holds `search.json` (the space, seed, trial count, the base run's
//! definition and its data files' fingerprint: a resume must give the same), `search.lock`
//! (one process per search), `trial-000/` ... (run folders, each with the
//! `settings.json` it drew), `results.csv` and `results.md` (every trial, best first,
//! rewritten as trials finish) and, at the end, `best.json` (the best trial, its settings
//! and metrics) and `best_model_config.json` (its model configuration as `run.json`
//! records it, less `num_targets` and `d_atom`, which the data decides: `train --model
//! mat --config` reads it; for Transformer-M it is a record).
//!
//! A seeded random search is the floor the issue sets, and what it buys is that trial
//! `k`'s settings are a function of the search (space, seed, base run) and `k` alone:
//! `--parallel` and `--resume` train the same settings in any order of completion. A
//! model-based strategy (TPE, optuna's default; Rust crates such as `parzen` offer it as
//! ask-and-tell) draws from the trials finished so far, so parallel runs and resumes
//! would need the finished trials replayed in a fixed order: a follow-up, not done here.
//!
//! Trials trained at once share the backend's one random generator (Burn's CPU backends
//! seed a process-wide generator, and a run reseeds it), so with `parallel > 1` a trial's
//! initialisation and dropout draws depend on its neighbours: its metrics are not
//! reproduced exactly by `train --seed` with its settings. One at a time they are.

pub mod apply;
pub mod space;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::checkpoint::write_json;
use crate::error::TrainError;
use crate::report::TrainSummary;
use crate::run_folder::DataFingerprint;
use crate::task::Task;
pub use apply::{mat_trial, tm_trial};
pub use space::{LEARNING_RATE, SearchSpace, TrialSettings, with_settings};

/// What `search.json` records: a resume must match it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchSpec {
    /// The family (`mat`, `transformer-m`).
    pub family: String,
    /// The space drawn from.
    pub space: SearchSpace,
    /// The search's seed (trial `k` draws from (`seed`, `k`); each trial trains with the
    /// run's own `--seed`).
    pub seed: u64,
    /// Trials in the search.
    pub trials: usize,
    /// Regression (validation RMSE, lower is better) or classification (ROC-AUC, higher).
    pub task: Task,
    /// The base run's definition (the family's `run.json` before a trial's settings): its
    /// data, split, training options and model.
    pub base_run: Value,
    /// The base run's data files (molecules, split file): path, size and SHA-256.
    pub data: DataFingerprint,
}

impl SearchSpec {
    /// The spec as `search.json` holds it once read back (floats through their text),
    /// so that a spec compares equal to the file it was written to.
    fn as_written(&self) -> Result<Value, TrainError> {
        serde_json::to_string(self)
            .and_then(|t| serde_json::from_str(&t))
            .map_err(|e| TrainError::Invalid(e.to_string()))
    }
}

/// One trial's outcome, a row of `results.csv`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialResult {
    /// Index `k` of `trial-k`.
    pub trial: usize,
    /// The drawn settings.
    pub settings: TrialSettings,
    /// The validation metric of the kept epoch (`None`: the trial failed).
    pub valid_metric: Option<f64>,
    /// The test metric of the kept epoch.
    pub test_metric: Option<f64>,
    /// Epochs run.
    pub epochs: usize,
    /// The epoch whose weights were kept.
    pub best_epoch: usize,
    /// Training seconds (resumed trials add up).
    pub train_seconds: f64,
    /// Why the trial failed, if it did.
    pub error: Option<String>,
}

impl TrialResult {
    /// The row of trial `trial`, drawn `settings`, that ended with `outcome`.
    fn of(
        trial: usize,
        settings: TrialSettings,
        outcome: Result<TrainSummary, TrainError>,
        task: Task,
    ) -> Self {
        let summary = match outcome {
            Ok(s) => s,
            Err(e) => {
                return TrialResult {
                    trial,
                    settings,
                    valid_metric: None,
                    test_metric: None,
                    epochs: 0,
                    best_epoch: 0,
                    train_seconds: 0.0,
                    error: Some(e.to_string()),
                };
            }
        };
        let (valid, test) = match task {
            Task::Regression => (summary.valid_rmse, summary.test_rmse),
            Task::Classification => (summary.valid_roc_auc, summary.test_roc_auc),
        };
        let error = match valid {
            Some(m) if m.is_finite() => None,
            Some(m) => Some(format!("validation metric {m}")),
            None => Some("no validation metric (a validation set of one class?)".into()),
        };
        TrialResult {
            trial,
            settings,
            valid_metric: valid.filter(|m| m.is_finite()),
            test_metric: test,
            epochs: summary.epochs,
            best_epoch: summary.best_epoch,
            train_seconds: summary.train_seconds,
            error,
        }
    }
}

/// The search's results, best first.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchReport {
    /// Every trial, ranked by the validation metric (failed trials last).
    pub trials: Vec<TrialResult>,
    /// The metric's name (`valid_rmse`, `valid_roc_auc`).
    pub metric: String,
}

impl SearchReport {
    /// The best trial, if any succeeded.
    pub fn best(&self) -> Option<&TrialResult> {
        self.trials.first().filter(|t| t.valid_metric.is_some())
    }
}

/// `trial-007` in `dir`.
pub fn trial_dir(dir: &Path, trial: usize) -> PathBuf {
    dir.join(format!("trial-{trial:03}"))
}

/// The file a trial's drawn settings are written to before it trains.
pub const SETTINGS_FILE: &str = "settings.json";

/// A finished trial of an earlier invocation: its `metrics.json` and `settings.json`.
fn finished_trial(folder: &Path) -> Option<(TrainSummary, TrialSettings)> {
    let read = |name: &str| std::fs::read_to_string(folder.join(name)).ok();
    let summary = serde_json::from_str(&read("metrics.json")?).ok()?;
    let settings = serde_json::from_str(&read(SETTINGS_FILE)?).ok()?;
    Some((summary, settings))
}

/// The message of a panic's payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Runs (or, with `resume`, continues) the search `spec` into `dir`: trial `k` draws
/// [`SearchSpace::sample`]`(seed, k, base_model)`, writes it to `trial-k/settings.json`
/// and is trained by `train_trial(folder, settings, resume_it)` (`resume_it`: the folder
/// holds that trial's interrupted run), `parallel` trials at a time (each on its own
/// thread; they share the process's thread pools, so `parallel` trials take no more
/// cores than one). With `resume`, a trial whose `metrics.json` exists is kept as it
/// was. A trial that fails, or panics, is recorded with its error and the search goes on.
///
/// # Errors
/// A folder holding a training run, another search (other space, seed, base run or data)
/// or this one without `resume`, or in use by another process; every trial failing (the
/// first error); unwritable files.
pub fn run_search(
    dir: &Path,
    spec: &SearchSpec,
    (base_model, parallel, resume): (&Value, usize, bool),
    train_trial: impl Fn(&Path, &TrialSettings, bool) -> Result<TrainSummary, TrainError> + Sync,
) -> Result<SearchReport, TrainError> {
    let refuse = |reason: String| TrainError::Checkpoint {
        path: dir.to_path_buf(),
        reason,
    };
    if dir.join("run.json").exists() || dir.join("ensemble.json").exists() {
        return Err(refuse(
            "holds a training run; give the search another --out".into(),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
    // One process per search: the kernel's advisory lock, released however it exits.
    let lock_path = dir.join("search.lock");
    let lock = std::fs::File::create(&lock_path).map_err(|e| TrainError::io(&lock_path, e))?;
    if lock.try_lock().is_err() {
        return Err(refuse(
            "another process is running this search; wait for it to end".into(),
        ));
    }
    let spec_path = dir.join("search.json");
    let written = spec.as_written()?;
    if spec_path.exists() {
        let text =
            std::fs::read_to_string(&spec_path).map_err(|e| TrainError::io(&spec_path, e))?;
        let old: Value =
            serde_json::from_str(&text).map_err(|e| refuse(format!("search.json: {e}")))?;
        if old != written {
            let differ: Vec<&str> = [
                "family", "space", "seed", "trials", "task", "base_run", "data",
            ]
            .into_iter()
            .filter(|k| old.get(k) != written.get(k))
            .collect();
            return Err(refuse(format!(
                "holds another search (its {} differ: the base run's flags, its data, the \
                 space, seed or trial count); resume it with its own settings or give \
                 another --out",
                differ.join(", ")
            )));
        }
        if !resume {
            return Err(refuse(
                "holds this search already: pass --resume to continue it".into(),
            ));
        }
    } else {
        write_json(&spec_path, spec)?;
    }
    let metric = match spec.task {
        Task::Regression => "valid_rmse",
        Task::Classification => "valid_roc_auc",
    };
    // Trials finished by an earlier invocation are in the tables from the start.
    let mut kept = Vec::new();
    let mut pending = Vec::new();
    for trial in 0..spec.trials {
        match finished_trial(&trial_dir(dir, trial)).filter(|_| resume) {
            Some((summary, settings)) => {
                eprintln!("trial {trial}: finished before, kept");
                kept.push(TrialResult::of(trial, settings, Ok(summary), spec.task));
            }
            None => pending.push(trial),
        }
    }
    if !kept.is_empty() {
        write_tables(dir, &ranked(kept.clone(), spec.task, metric))?;
    }
    let results: Mutex<Vec<TrialResult>> = Mutex::new(kept);
    let next = AtomicUsize::new(0);
    let write_error: Mutex<Option<TrainError>> = Mutex::new(None);
    let worker = || {
        while let Some(&trial) = pending.get(next.fetch_add(1, Ordering::SeqCst)) {
            let settings = spec.space.sample(spec.seed, trial, base_model);
            let folder = trial_dir(dir, trial);
            let resume_it = resume && folder.join("run.json").exists();
            eprintln!(
                "trial {trial} of {}: {} -> {}",
                spec.trials,
                Value::Object(settings.clone().into_iter().collect()),
                folder.display()
            );
            let outcome = std::fs::create_dir_all(&folder)
                .map_err(|e| TrainError::io(&folder, e))
                .and_then(|()| write_json(&folder.join(SETTINGS_FILE), &settings))
                .and_then(|()| {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        train_trial(&folder, &settings, resume_it)
                    }))
                    .unwrap_or_else(|payload| {
                        Err(TrainError::Invalid(format!(
                            "panicked: {}",
                            panic_message(payload.as_ref())
                        )))
                    })
                });
            if let Err(e) = &outcome {
                eprintln!("trial {trial}: failed: {e}");
            }
            let result = TrialResult::of(trial, settings, outcome, spec.task);
            let mut all = results.lock().unwrap_or_else(|p| p.into_inner());
            all.push(result);
            if let Err(e) = write_tables(dir, &ranked(all.clone(), spec.task, metric)) {
                *write_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 0..parallel.clamp(1, pending.len().max(1)) {
            s.spawn(worker);
        }
    });
    if let Some(e) = write_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let all = results.into_inner().unwrap_or_else(|p| p.into_inner());
    let report = ranked(all, spec.task, metric);
    let Some(best) = report.best() else {
        let first = report
            .trials
            .iter()
            .find_map(|t| t.error.clone())
            .unwrap_or_else(|| "no trials".into());
        return Err(TrainError::Invalid(format!(
            "{}: every trial failed; the first: {first}",
            dir.display()
        )));
    };
    write_json(&dir.join("best.json"), best)?;
    let run_json = trial_dir(dir, best.trial).join("run.json");
    let run: Value = std::fs::read_to_string(&run_json)
        .map_err(|e| TrainError::io(&run_json, e))
        .and_then(|t| serde_json::from_str(&t).map_err(|e| TrainError::Invalid(e.to_string())))?;
    if let Some(Value::Object(model)) = run.get("model") {
        // What the data decides is left to the run that reads the file.
        let mut model = model.clone();
        model.remove("num_targets");
        model.remove("d_atom");
        write_json(&dir.join("best_model_config.json"), &model)?;
    }
    drop(lock);
    Ok(report)
}

/// `trials` best first: by the validation metric (lower RMSE, higher ROC-AUC), failed
/// trials last, ties by trial index.
fn ranked(mut trials: Vec<TrialResult>, task: Task, metric: &str) -> SearchReport {
    trials.sort_by(|a, b| {
        let key = |t: &TrialResult| {
            t.valid_metric.map(|m| match task {
                Task::Regression => m,
                Task::Classification => -m,
            })
        };
        match (key(a), key(b)) {
            (Some(x), Some(y)) => x.total_cmp(&y).then(a.trial.cmp(&b.trial)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.trial.cmp(&b.trial),
        }
    });
    SearchReport {
        trials,
        metric: metric.into(),
    }
}

/// `results.csv` and `results.md`: one row per trial, best first.
fn write_tables(dir: &Path, report: &SearchReport) -> Result<(), TrainError> {
    let names: Vec<String> = {
        let mut n: Vec<String> = report
            .trials
            .iter()
            .flat_map(|t| t.settings.keys().cloned())
            .collect();
        n.sort();
        n.dedup();
        n
    };
    let csv_path = dir.join("results.csv");
    let mut w =
        csv::Writer::from_path(&csv_path).map_err(|e| TrainError::Invalid(e.to_string()))?;
    let mut header = vec![
        "trial".to_string(),
        report.metric.clone(),
        report.metric.replace("valid", "test"),
        "epochs".into(),
        "best_epoch".into(),
        "train_seconds".into(),
    ];
    header.extend(names.iter().cloned());
    header.push("error".into());
    let cell = |v: Option<f64>| v.map(|x| format!("{x:.5}")).unwrap_or_default();
    let setting = |t: &TrialResult, n: &str| match t.settings.get(n) {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    };
    let rows: Vec<Vec<String>> = report
        .trials
        .iter()
        .map(|t| {
            let mut row = vec![
                t.trial.to_string(),
                cell(t.valid_metric),
                cell(t.test_metric),
                t.epochs.to_string(),
                t.best_epoch.to_string(),
                format!("{:.1}", t.train_seconds),
            ];
            row.extend(names.iter().map(|n| setting(t, n)));
            row.push(t.error.clone().unwrap_or_default());
            row
        })
        .collect();
    let csv_error = |e: csv::Error| TrainError::Csv {
        path: csv_path.clone(),
        reason: e.to_string(),
    };
    w.write_record(&header).map_err(csv_error)?;
    for row in &rows {
        w.write_record(row).map_err(csv_error)?;
    }
    w.flush().map_err(|e| TrainError::io(&csv_path, e))?;
    // A cell is one line without a bare `|` (an error message may hold either).
    let md_cell = |c: &String| {
        c.replace("\r\n", " ")
            .replace(['\r', '\n'], " ")
            .replace('|', "\\|")
    };
    let md_row = |r: &[String]| r.iter().map(md_cell).collect::<Vec<_>>().join(" | ");
    let mut md = format!(
        "| {} |\n|{}\n",
        md_row(&header),
        "---|".repeat(header.len())
    );
    for row in &rows {
        md.push_str(&format!("| {} |\n", md_row(row)));
    }
    let md_path = dir.join("results.md");
    std::fs::write(&md_path, md).map_err(|e| TrainError::io(&md_path, e))
}

#[cfg(test)]
mod tests;
