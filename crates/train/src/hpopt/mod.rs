//! Hyperparameter search (`cargo xtask hpopt`, issue #40 item 6): a seeded random search
//! over a [`SearchSpace`], each trial a complete training run (early-stopped on the
//! validation metric by the engine's patience) in its own folder, several at once within
//! the core budget, resumable, ranked by the validation metric.
//!
//! A search folder holds `search.json` (the space, seed and trial count: a resume must
//! give the same), `trial-000/` ... (run folders), `results.csv` and `results.md` (every
//! trial, best first, rewritten as trials finish) and, at the end, `best.json` (the best
//! trial, its settings and metrics) and `best_model_config.json` (its model
//! configuration as `run.json` records it: `train --model mat --config` reads it).
//!
//! A seeded random search is the floor the issue sets, and what it buys is that trial
//! `k`'s settings are a function of (seed, `k`) alone: `--parallel` and `--resume` give
//! the same trials in any order of completion. A model-based strategy (TPE, optuna's
//! default; Rust crates such as `parzen` offer it as ask-and-tell) draws from the trials
//! finished so far, so parallel runs and resumes would need the finished trials replayed
//! in a fixed order: a follow-up, not done here.

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
    /// Epochs run and the epoch kept.
    pub epochs: usize,
    /// The epoch whose weights were kept.
    pub best_epoch: usize,
    /// Training seconds (resumed trials add up).
    pub train_seconds: f64,
    /// Why the trial failed, if it did.
    pub error: Option<String>,
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

/// The validation and test metric of a summary for `task`.
fn metrics_of(summary: &TrainSummary, task: Task) -> (Option<f64>, Option<f64>) {
    match task {
        Task::Regression => (summary.valid_rmse, summary.test_rmse),
        Task::Classification => (summary.valid_roc_auc, summary.test_roc_auc),
    }
}

/// Runs (or, with `resume`, continues) the search `spec` into `dir`: trial `k` draws
/// [`SearchSpace::sample`]`(seed, k, base_model)` and is trained by
/// `train_trial(folder, settings)`, `parallel` trials at a time (each on its own thread;
/// the trials share the process's thread pools, so `parallel` trials take no more cores
/// than one). With `resume`, a trial whose `metrics.json` exists is kept and the others
/// are trained again through `train_trial` (whose control should then resume them). A
/// trial that fails is recorded with its error and the search goes on.
///
/// # Errors
/// A folder holding another search or a run, a fresh search into a folder holding one
/// (pass `resume`), every trial failing (the first error), unwritable files.
pub fn run_search(
    dir: &Path,
    spec: &SearchSpec,
    (base_model, parallel, resume): (&Value, usize, bool),
    train_trial: impl Fn(&Path, &TrialSettings) -> Result<TrainSummary, TrainError> + Sync,
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
    let spec_path = dir.join("search.json");
    if spec_path.exists() {
        let text =
            std::fs::read_to_string(&spec_path).map_err(|e| TrainError::io(&spec_path, e))?;
        let old: SearchSpec =
            serde_json::from_str(&text).map_err(|e| refuse(format!("search.json: {e}")))?;
        if old != *spec {
            return Err(refuse(format!(
                "holds another search ({} trials of {} with seed {}); resume it with its own \
                 settings or give another --out",
                old.trials, old.family, old.seed
            )));
        }
        if !resume {
            return Err(refuse(
                "holds this search already: pass --resume to continue it".into(),
            ));
        }
    } else {
        std::fs::create_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
        write_json(&spec_path, spec)?;
    }
    let metric = match spec.task {
        Task::Regression => "valid_rmse",
        Task::Classification => "valid_roc_auc",
    };
    let results: Mutex<Vec<TrialResult>> = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let write_error: Mutex<Option<TrainError>> = Mutex::new(None);
    let worker = || {
        loop {
            let trial = next.fetch_add(1, Ordering::SeqCst);
            if trial >= spec.trials {
                break;
            }
            let settings = spec.space.sample(spec.seed, trial, base_model);
            let folder = trial_dir(dir, trial);
            let finished = folder.join("metrics.json");
            let outcome = if resume && finished.exists() {
                eprintln!(
                    "trial {trial}: finished before, kept ({})",
                    folder.display()
                );
                std::fs::read_to_string(&finished)
                    .map_err(|e| TrainError::io(&finished, e))
                    .and_then(|t| {
                        serde_json::from_str::<TrainSummary>(&t).map_err(|e| {
                            TrainError::Invalid(format!("{}: {e}", finished.display()))
                        })
                    })
            } else {
                eprintln!(
                    "trial {trial} of {}: {} -> {}",
                    spec.trials,
                    Value::Object(settings.clone().into_iter().collect()),
                    folder.display()
                );
                train_trial(&folder, &settings)
            };
            let result = match outcome {
                Ok(summary) => {
                    let (valid_metric, test_metric) = metrics_of(&summary, spec.task);
                    TrialResult {
                        trial,
                        settings,
                        valid_metric: valid_metric.filter(|m| m.is_finite()),
                        test_metric,
                        epochs: summary.epochs,
                        best_epoch: summary.best_epoch,
                        train_seconds: summary.train_seconds,
                        error: valid_metric
                            .filter(|m| !m.is_finite())
                            .map(|m| format!("validation metric {m}")),
                    }
                }
                Err(e) => {
                    eprintln!("trial {trial}: failed: {e}");
                    TrialResult {
                        trial,
                        settings,
                        valid_metric: None,
                        test_metric: None,
                        epochs: 0,
                        best_epoch: 0,
                        train_seconds: 0.0,
                        error: Some(e.to_string()),
                    }
                }
            };
            let mut all = results.lock().unwrap_or_else(|p| p.into_inner());
            all.push(result);
            let report = ranked(all.clone(), spec.task, metric);
            if let Err(e) = write_tables(dir, &report) {
                *write_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 0..parallel.clamp(1, spec.trials.max(1)) {
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
    if let Some(model) = run.get("model") {
        write_json(&dir.join("best_model_config.json"), model)?;
    }
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
    let mut md = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for row in &rows {
        md.push_str(&format!("| {} |\n", row.join(" | ").replace('\n', " ")));
    }
    let md_path = dir.join("results.md");
    std::fs::write(&md_path, md).map_err(|e| TrainError::io(&md_path, e))
}

#[cfg(test)]
mod tests;
