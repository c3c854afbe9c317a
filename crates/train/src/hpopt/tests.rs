//! The search driver with a stand-in trainer (no model): ranking, failures and panics,
//! resume, refusals, the lock, parallel workers. `xtask/tests/hpopt.rs` trains MAT and
//! Transformer-M through the command.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

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

fn spec(trials: usize, epochs: u64) -> SearchSpec {
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
        base_run: json!({"train": {"epochs": epochs, "learning_rate": 0.1 + 0.2}}),
        data: DataFingerprint { files: Vec::new() },
    }
}

/// The trial index of a `trial-k` folder.
fn index(folder: &Path) -> usize {
    let name = folder.file_name().unwrap().to_str().unwrap();
    name.trim_start_matches("trial-").parse().unwrap()
}

/// The stand-in: validation RMSE = learning rate x 1000 + d_model / 1000, so the best
/// trial is the one with the smallest learning rate, then the smallest d_model; trial
/// folders get `metrics.json` and `run.json` as a run's would. While `flaky` is set,
/// trial 4 fails (its error holds a `|` and a newline) and trial 9 panics.
fn trainer<'a>(
    calls: &'a Mutex<Vec<(usize, bool)>>,
    flaky: &'a AtomicBool,
) -> impl Fn(&Path, &TrialSettings, bool) -> Result<TrainSummary, TrainError> + Sync + 'a {
    move |folder: &Path, settings: &TrialSettings, resume_it: bool| {
        let trial = index(folder);
        calls.lock().unwrap().push((trial, resume_it));
        // The settings were written before training.
        let written: TrialSettings =
            serde_json::from_str(&std::fs::read_to_string(folder.join(SETTINGS_FILE)).unwrap())
                .unwrap();
        assert_eq!(&written, settings);
        if flaky.load(Ordering::SeqCst) {
            if trial == 4 {
                std::fs::write(folder.join("run.json"), "{}").unwrap();
                return Err(TrainError::Invalid("diverged | twice\nat epoch 3".into()));
            }
            if trial == 9 {
                panic!("trial nine broke");
            }
        }
        let lr = settings["learning_rate"].as_f64().unwrap();
        let d = settings["d_model"].as_f64().unwrap();
        let s = summary(lr * 1000.0 + d / 1000.0);
        write_json(&folder.join("metrics.json"), &s).unwrap();
        write_json(
            &folder.join("run.json"),
            &json!({"model": {"d_model": settings["d_model"], "num_targets": 1, "d_atom": 28}}),
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
    let flaky = AtomicBool::new(true);
    let report = run_search(
        &out,
        &spec(12, 3),
        (&base, 3, false),
        trainer(&calls, &flaky),
    )
    .unwrap();
    // Every trial ran once, fresh, on three workers.
    let ran: BTreeSet<usize> = calls.lock().unwrap().iter().map(|c| c.0).collect();
    assert_eq!(ran, (0..12).collect());
    assert_eq!(calls.lock().unwrap().len(), 12);
    assert!(calls.lock().unwrap().iter().all(|c| !c.1));
    assert_eq!(report.trials.len(), 12);
    // Best first: non-decreasing validation RMSE, the failure and the panic last with
    // their reasons.
    let ok: Vec<f64> = report
        .trials
        .iter()
        .filter_map(|t| t.valid_metric)
        .collect();
    assert_eq!(ok.len(), 10);
    assert!(ok.windows(2).all(|w| w[0] <= w[1]), "{ok:?}");
    let failed: Vec<(usize, String)> = report.trials[10..]
        .iter()
        .map(|t| (t.trial, t.error.clone().unwrap()))
        .collect();
    assert_eq!(failed[0].0, 4);
    assert!(failed[0].1.contains("diverged | twice"), "{failed:?}");
    assert_eq!(failed[1].0, 9);
    assert!(
        failed[1].1.contains("panicked: trial nine broke"),
        "{failed:?}"
    );
    let best = report.best().unwrap();
    assert_eq!(best.valid_metric, Some(ok[0]));
    // The files: the best trial and its model configuration less what the data decides,
    // the tables (the error's `|` escaped and its newline gone in the markdown).
    let best_json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("best.json")).unwrap()).unwrap();
    assert_eq!(best_json["trial"], best.trial);
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("best_model_config.json")).unwrap())
            .unwrap();
    assert_eq!(config, json!({"d_model": best.settings["d_model"]}));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(csv.starts_with("trial,valid_rmse,test_rmse,"), "{csv}");
    assert_eq!(
        csv::Reader::from_reader(csv.as_bytes()).records().count(),
        12
    );
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert_eq!(md.lines().count(), 14, "{md}");
    assert!(md.contains("diverged \\| twice at epoch 3"), "{md}");
    let columns = md.lines().next().unwrap().matches(" | ").count();
    assert!(
        md.lines().all(
            |l| l.replace("\\|", "").matches(" | ").count() == columns || l.starts_with("|---")
        )
    );

    // The same search again without --resume: refused; another trial count, other base
    // run flags: refused, naming what differs.
    let e = run_search(
        &out,
        &spec(12, 3),
        (&base, 1, false),
        trainer(&calls, &flaky),
    )
    .unwrap_err();
    assert!(e.to_string().contains("--resume"), "{e}");
    let e = run_search(
        &out,
        &spec(20, 3),
        (&base, 1, true),
        trainer(&calls, &flaky),
    )
    .unwrap_err();
    assert!(e.to_string().contains("its trials differ"), "{e}");
    let e = run_search(
        &out,
        &spec(12, 4),
        (&base, 1, true),
        trainer(&calls, &flaky),
    )
    .unwrap_err();
    assert!(e.to_string().contains("its base_run differ"), "{e}");

    // Resumed: finished trials are kept (the tables list them from the start), the failed
    // ones trained again, the interrupted one (its run.json written) resumed, the
    // panicked one fresh; now they succeed.
    calls.lock().unwrap().clear();
    flaky.store(false, Ordering::SeqCst);
    let again = run_search(
        &out,
        &spec(12, 3),
        (&base, 2, true),
        trainer(&calls, &flaky),
    )
    .unwrap();
    let mut rerun = calls.lock().unwrap().clone();
    rerun.sort_unstable();
    assert_eq!(rerun, [(4, true), (9, false)]);
    assert_eq!(again.trials.len(), 12);
    assert!(again.trials.iter().all(|t| t.error.is_none()));
    // Kept trials read their settings from settings.json: the same rows as before.
    let key = |r: &SearchReport| {
        r.trials
            .iter()
            .filter(|t| t.trial != 4 && t.trial != 9)
            .map(|t| {
                (
                    t.trial,
                    t.settings.clone(),
                    t.valid_metric.map(f64::to_bits),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(key(&again), key(&report));
}

#[test]
fn a_search_where_every_trial_fails_is_an_error_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let fail = |_: &Path, _: &TrialSettings, _: bool| -> Result<TrainSummary, TrainError> {
        Err(TrainError::Invalid("no data".into()))
    };
    let e = run_search(dir.path(), &spec(3, 3), (&json!({}), 2, false), fail).unwrap_err();
    assert!(e.to_string().contains("every trial failed") && e.to_string().contains("no data"));
    // A folder holding a training run is refused before anything runs.
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("run.json"), "{}").unwrap();
    let e = run_search(&run, &spec(3, 3), (&json!({}), 1, false), fail).unwrap_err();
    assert!(e.to_string().contains("holds a training run"), "{e}");
}

/// While one search runs, another process's (here: another lock holder's) is refused.
#[test]
fn a_search_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let held = std::fs::File::create(dir.path().join("search.lock")).unwrap();
    held.lock().unwrap();
    let never = |_: &Path, _: &TrialSettings, _: bool| -> Result<TrainSummary, TrainError> {
        unreachable!("a refused search trains nothing")
    };
    let e = run_search(dir.path(), &spec(2, 3), (&json!({}), 1, false), never).unwrap_err();
    assert!(e.to_string().contains("another process"), "{e}");
}
