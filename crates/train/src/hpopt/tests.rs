//! The search driver with a stand-in trainer (no model): ranking, failures, resume,
//! refusals, parallel workers. `crates/train/tests/integration/hpopt.rs` trains MAT.

use std::collections::BTreeSet;
use std::sync::Mutex;

use serde_json::json;

use super::*;
use crate::report::PartMetrics;

/// A finished trial's summary with validation RMSE `valid` (test RMSE `valid + 1`).
fn summary(valid: f64) -> TrainSummary {
    TrainSummary {
        task: Task::Regression,
        units: String::new(),
        test_rmse: Some(valid + 1.0),
        test_mae: None,
        test_roc_auc: None,
        valid_rmse: Some(valid),
        valid_mae: None,
        valid_roc_auc: None,
        train: PartMetrics::default(),
        valid: PartMetrics::default(),
        test: PartMetrics::default(),
        epochs: 3,
        best_epoch: 2,
        train_seconds: 1.0,
        featurize_seconds: 0.0,
        n_skipped: 0,
        n_unlabelled: 0,
        n_missing_labels: 0,
        n_dropped_from_split: [0; 3],
        n_params: 10,
    }
}

fn spec(trials: usize) -> SearchSpec {
    SearchSpec {
        family: "mat".into(),
        space: serde_json::from_value(json!({
            "learning_rate": [1e-3, 1e-4, 1e-5],
            "d_model": [32, 64, 128],
        }))
        .unwrap(),
        seed: 5,
        trials,
        task: Task::Regression,
    }
}

/// The stand-in: validation RMSE = learning rate x 1000 + d_model / 1000, so the best
/// trial is the one with the smallest learning rate, then the smallest d_model; trial
/// folders get `metrics.json` and `run.json` as a run's would. Trials 4 and 9 fail.
fn trainer(
    calls: &Mutex<Vec<usize>>,
) -> impl Fn(&Path, &TrialSettings) -> Result<TrainSummary, TrainError> + Sync + '_ {
    move |folder: &Path, settings: &TrialSettings| {
        let trial: usize = folder.to_str().unwrap()[folder.to_str().unwrap().len() - 3..]
            .parse()
            .unwrap();
        calls.lock().unwrap().push(trial);
        let lr = settings["learning_rate"].as_f64().unwrap();
        let d = settings["d_model"].as_f64().unwrap();
        if trial == 4 || trial == 9 {
            return Err(TrainError::Invalid("diverged".into()));
        }
        let s = summary(lr * 1000.0 + d / 1000.0);
        std::fs::create_dir_all(folder).unwrap();
        write_json(&folder.join("metrics.json"), &s).unwrap();
        write_json(
            &folder.join("run.json"),
            &json!({"model": {"d_model": settings["d_model"]}}),
        )
        .unwrap();
        Ok(s)
    }
}

#[test]
fn trials_are_ranked_failures_recorded_and_a_resume_keeps_finished_trials() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("search");
    let base = json!({"d_model": 64, "num_heads": 8});
    let calls = Mutex::new(Vec::new());
    let report = run_search(&out, &spec(12), (&base, 3, false), trainer(&calls)).unwrap();
    // Every trial ran once, on three workers.
    let ran: BTreeSet<usize> = calls.lock().unwrap().iter().copied().collect();
    assert_eq!(ran, (0..12).collect());
    assert_eq!(calls.lock().unwrap().len(), 12);
    assert_eq!(report.trials.len(), 12);
    // Best first: non-decreasing validation RMSE, failures last with their reason.
    let ok: Vec<f64> = report
        .trials
        .iter()
        .filter_map(|t| t.valid_metric)
        .collect();
    assert!(ok.windows(2).all(|w| w[0] <= w[1]), "{ok:?}");
    let failed: Vec<&TrialResult> = report.trials.iter().filter(|t| t.error.is_some()).collect();
    let mut failed_trials: Vec<usize> = failed.iter().map(|t| t.trial).collect();
    failed_trials.sort_unstable();
    assert_eq!(failed_trials, [4, 9]);
    assert!(
        failed
            .iter()
            .all(|t| t.error.as_ref().unwrap().contains("diverged"))
    );
    assert!(report.trials[10..].iter().all(|t| t.valid_metric.is_none()));
    assert_eq!(ok.len() + failed.len(), 12);
    let best = report.best().unwrap();
    assert_eq!(best.valid_metric, Some(ok[0]));
    // The files: the best trial and its model configuration, the tables.
    let best_json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("best.json")).unwrap()).unwrap();
    assert_eq!(best_json["trial"], best.trial);
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("best_model_config.json")).unwrap())
            .unwrap();
    assert_eq!(config["d_model"], best.settings["d_model"]);
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 13, "{csv}");
    assert!(csv.starts_with("trial,valid_rmse,test_rmse,"), "{csv}");
    assert!(
        std::fs::read_to_string(out.join("results.md"))
            .unwrap()
            .contains("| trial |")
    );

    // The same search again without --resume: refused; another search: refused.
    let e = run_search(&out, &spec(12), (&base, 1, false), trainer(&calls)).unwrap_err();
    assert!(e.to_string().contains("--resume"), "{e}");
    let e = run_search(&out, &spec(20), (&base, 1, true), trainer(&calls)).unwrap_err();
    assert!(e.to_string().contains("another search"), "{e}");

    // Resumed: finished trials are kept, the failed ones trained again, the draws the same.
    calls.lock().unwrap().clear();
    let again = run_search(&out, &spec(12), (&base, 2, true), trainer(&calls)).unwrap();
    let mut rerun = calls.lock().unwrap().clone();
    rerun.sort_unstable();
    assert_eq!(rerun, failed_trials);
    let key = |r: &SearchReport| {
        r.trials
            .iter()
            .map(|t| (t.trial, t.valid_metric.map(f64::to_bits)))
            .collect::<Vec<_>>()
    };
    assert_eq!(key(&again), key(&report));
}

#[test]
fn a_search_where_every_trial_fails_is_an_error_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let fail = |_: &Path, _: &TrialSettings| -> Result<TrainSummary, TrainError> {
        Err(TrainError::Invalid("no data".into()))
    };
    let e = run_search(dir.path(), &spec(3), (&json!({}), 2, false), fail).unwrap_err();
    assert!(e.to_string().contains("every trial failed") && e.to_string().contains("no data"));
    // A folder holding a training run is refused before anything runs.
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("run.json"), "{}").unwrap();
    let e = run_search(&run, &spec(3), (&json!({}), 1, false), fail).unwrap_err();
    assert!(e.to_string().contains("holds a training run"), "{e}");
}
