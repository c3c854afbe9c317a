//! End-to-end training on subsets of the real datasets (the shipped ones,
//! `mol_featurize::mat_datasets`, or $MOLATTN_DATA): metrics, run directory contents, exact resume, prediction.

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use models::MatConfig;
use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::{ConformerOptions, MatFeaturizer};
use train::predict::predict_smiles;
use train::{RunControl, RunKind, RunSpec, SplitSpec, Task, TrainError, TrainOptions, train_run};

fn datasets() -> PathBuf {
    mol_featurize::mat_datasets::dir().unwrap()
}

pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("molattn-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The first `n` data rows of a shared dataset, plus extra rows, as a new CSV.
pub(crate) fn subset_csv(dataset: &str, n: usize, extra: &[&str], dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(datasets().join(format!("{dataset}/{dataset}.csv")))
        .expect("shared dataset");
    let mut lines: Vec<String> = text.lines().take(n + 1).map(String::from).collect();
    lines.extend(extra.iter().map(|s| s.to_string()));
    let path = dir.join(format!("{dataset}.csv"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

pub(crate) fn spec(data: PathBuf, task: Task, split: SplitSpec, epochs: usize) -> RunSpec {
    RunSpec {
        format: Default::default(),
        kind: RunKind::Mat,
        data,
        smiles_column: "smiles".into(),
        delimiter: ',',
        target_columns: vec!["y".into()],
        units: None,
        split,
        task,
        featurizer: MatFeaturizer {
            conformer: ConformerOptions {
                method: CoordinateMethod::Layout2d,
                ..Default::default()
            },
            ..Default::default()
        },
        model: MatConfig::small()
            .with_d_model(32)
            .with_num_heads(4)
            .with_num_layers(2),
        train: TrainOptions {
            epochs,
            batch_size: 32,
            learning_rate: 1e-3,
            warmup_fraction: 0.2,
            patience: 100,
            seed: 3,
        },
        target_mean: Vec::new(),
        target_std: Vec::new(),
        pretrained: None,
        init_from: None,
    }
}

fn history(run: &Path) -> Vec<train::EpochRecord> {
    train::engine::read_history(run, "RMSE")
}

/// Bitwise equality of two learning curves (f64 NaN-free).
fn same_curve(a: &[train::EpochRecord], b: &[train::EpochRecord]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            (
                x.epoch,
                x.train_loss.to_bits(),
                x.valid_loss.to_bits(),
                x.valid_metric.to_bits(),
                x.learning_rate.to_bits(),
            ) == (
                y.epoch,
                y.train_loss.to_bits(),
                y.valid_loss.to_bits(),
                y.valid_metric.to_bits(),
                y.learning_rate.to_bits(),
            )
        })
}

#[test]
fn regression_learns_writes_the_run_and_resumes_exactly() {
    let _rng = crate::rng_exclusive();
    let dir = scratch("esol");
    let extra = ["C1CC,0.5", "C(C)(C)(C)(C)C,0.1", "CCO,", "CCN,nan"];
    let data = subset_csv("esol", 300, &extra, &dir);
    let spec = spec(data, Task::Regression, SplitSpec::Random { seed: 1 }, 30);
    let quiet = RunControl::default();

    let straight = dir.join("straight");
    let summary = train_run(&spec, &straight, &quiet, &Device::flex()).unwrap();
    // The two invalid rows and the two unlabelled ones (issue #14) are skipped, counted
    // and listed with their reason; nothing else is lost and the run does not abort.
    assert_eq!((summary.n_skipped, summary.n_unlabelled), (4, 2));
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(straight.join("featurize_report.json")).unwrap(),
    )
    .unwrap();
    let skipped: Vec<(u64, &str)> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["row"].as_u64().unwrap(), s["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        skipped,
        vec![
            (300, "parse"),
            (301, "sanitize"),
            (302, "missing-label"),
            (303, "missing-label")
        ]
    );
    assert_eq!(
        (report["n_ok"].as_u64(), report["n_skipped"].as_u64()),
        (Some(300), Some(4))
    );
    assert_eq!(summary.train.n + summary.valid.n + summary.test.n, 300);
    // ESOL labels are z-scores: predicting the mean gives RMSE ~1. Learning must beat it.
    let test_rmse = summary.test_rmse.unwrap();
    eprintln!("test RMSE {test_rmse}");
    assert!(test_rmse < 0.8, "test RMSE {test_rmse}");
    assert!(summary.test_mae.unwrap() < test_rmse);
    for file in [
        "run.json",
        "metrics.json",
        "curves.png",
        "best_model.bpk",
        "test_predictions.csv",
        "checkpoint/model-30.bpk",
        "checkpoint/optim-30.bpk",
        "checkpoint/scheduler-30.bpk",
        "valid/epoch-30/RMSE.log",
    ] {
        assert!(straight.join(file).is_file(), "missing {file}");
    }
    let metrics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(straight.join("metrics.json")).unwrap())
            .unwrap();
    for key in [
        "test_rmse",
        "test_mae",
        "valid_rmse",
        "epochs",
        "train_seconds",
        "n_skipped",
        "n_unlabelled",
    ] {
        assert!(!metrics[key].is_null(), "metrics.json lacks {key}");
    }
    assert_eq!(metrics["epochs"], 30);

    // Interrupt mid-epoch 13 (241 training molecules: 8 batches per epoch), then
    // resume from the checkpoint of epoch 12: identical learning curve and test metrics.
    assert_eq!(summary.train.n.div_ceil(32), 8);
    let resumed = dir.join("resumed");
    let stop = RunControl {
        interrupt_after_batches: Some(12 * 8 + 3),
        ..Default::default()
    };
    match train_run(&spec, &resumed, &stop, &Device::flex()) {
        Err(TrainError::Interrupted { epochs_done: 12 }) => {}
        other => panic!("expected an interruption after 12 epochs, got {other:?}"),
    }
    let resume = RunControl {
        resume: true,
        ..Default::default()
    };
    let summary2 = train_run(&spec, &resumed, &resume, &Device::flex()).unwrap();
    let (h1, h2) = (history(&straight), history(&resumed));
    assert_eq!(h1.len(), 30);
    assert!(same_curve(&h1, &h2), "{h1:?}\n{h2:?}");
    assert_eq!(summary.test_rmse, summary2.test_rmse);

    // Two devices (burn-train's multi-device strategy; on flex, two workers on the CPU
    // backend): each optimiser step sums the gradients of one batch per device, so an
    // epoch has half the steps with twice the molecules each (effective batch 64). At
    // the same number of optimiser steps (60 epochs here, 240 steps) the loss must fall
    // and the test RMSE land near the single-device run: within 0.15 (z-score units),
    // the order of the spread between seeds of this 300-molecule run. At the same
    // number of epochs it is not comparable: the run is far from converged and has half
    // the steps.
    let two = RunControl {
        devices: Some(
            train::engine::Devices::new(
                vec![Device::flex(), Device::flex()],
                train::engine::Strategy::MultiDevice,
            )
            .unwrap(),
        ),
        ..Default::default()
    };
    let mut same_steps = spec.clone();
    same_steps.train.epochs = 60;
    same_steps.train.patience = 60;
    let parallel = train_run(&same_steps, &dir.join("two-devices"), &two, &Device::flex()).unwrap();
    let h = history(&dir.join("two-devices"));
    assert_eq!(h.len(), 60);
    assert!(h[59].train_loss < 0.6 * h[0].train_loss, "{h:?}");
    let (one, both) = (summary.test_rmse.unwrap(), parallel.test_rmse.unwrap());
    eprintln!("test RMSE: one device {one:.4}, two devices {both:.4}");
    assert!(
        (one - both).abs() < 0.15,
        "one device {one}, two devices {both}"
    );

    // Prediction from the run directory: invalid input is reported, not fatal.
    let smiles = vec![
        "CCO".to_string(),
        "C1CC".to_string(),
        "c1ccccc1O".to_string(),
    ];
    let out = predict_smiles(&straight, &smiles, &Device::flex(), None).unwrap();
    let (preds, report) = (out.predictions, out.report);
    assert_eq!(report.n_skipped, 1);
    assert!(preds[0].values.as_ref().unwrap()[0].is_finite());
    assert!(preds[1].values.is_none() && preds[1].error.as_ref().unwrap().contains("C1CC"));

    // Explain (issue #16): the attention drawn comes from the very forward pass that
    // makes the run's prediction, and the pictures are deterministic.
    let e = train::explain::explain(&straight, "c1ccccc1O", &Device::flex()).unwrap();
    let predicted = preds[2].values.as_ref().unwrap()[0];
    assert!(
        (e.prediction - predicted).abs() < 1e-4,
        "{} vs {predicted}",
        e.prediction
    );
    assert_eq!(
        e.tokens,
        ["dummy", "C0", "C1", "C2", "C3", "C4", "C5", "O6"]
    );
    assert_eq!((e.attention.len(), e.attention[1].len()), (2, 4));
    assert!(e.attention.iter().flatten().all(|m| m.len() == 64));
    assert_eq!(e.contribution.len(), 7);
    assert!(e.contribution.iter().any(|c| c.abs() > 0.0));
    assert_eq!(
        e,
        train::explain::explain(&straight, "c1ccccc1O", &Device::flex()).unwrap()
    );
    let head_1 = e.token0_attention(None, Some(1)).unwrap();
    assert_eq!(head_1, e.attention[1][1][1..8].to_vec());
    let pictures = dir.join("explain");
    let files = train::explain::render(&e, None, None, &pictures).unwrap();
    assert_eq!(files.len(), 6);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        match f.extension().and_then(|x| x.to_str()) {
            Some("png") => assert!(bytes.starts_with(b"\x89PNG\r\n") && bytes.len() > 1000),
            Some("svg") => assert!(String::from_utf8_lossy(&bytes).contains("<svg")),
            _ => assert!(bytes.len() > 100),
        }
    }
    let first = std::fs::read(pictures.join("attention.svg")).unwrap();
    train::explain::render(&e, None, None, &pictures).unwrap();
    assert_eq!(
        first,
        std::fs::read(pictures.join("attention.svg")).unwrap()
    );
    assert!(train::explain::render(&e, Some(2), None, &pictures).is_err());

    // Issue #37 item 11: one bad SMILES is its own error and the others are explained;
    // a large molecule gets a larger drawing.
    let each = train::explain::explain_each(
        &straight,
        &[
            "c1ccccc1O".to_string(),
            "C1CC".to_string(),
            "CCO".to_string(),
        ],
        (None, None),
        &dir.join("each"),
        &Device::flex(),
    );
    assert_eq!(each.len(), 3);
    assert!(each[0].is_ok() && each[2].is_ok());
    let e1 = each[1].as_ref().unwrap_err().to_string();
    assert!(e1.contains("C1CC"), "{e1}");
    assert!(dir.join("each/mol-2/attention.svg").exists());
    assert!(!dir.join("each/mol-1").exists());
    let big = train::explain::explain(&straight, &"C".repeat(90), &Device::flex()).unwrap();
    let files = train::explain::render(&big, None, None, &dir.join("big")).unwrap();
    let svg = std::fs::read_to_string(files.iter().find(|f| f.ends_with("attention.svg")).unwrap())
        .unwrap();
    let side = train::explain::depiction_side(90);
    assert_eq!(side, 692);
    assert!(
        svg.contains(&format!("width=\"{side}\"")),
        "{}",
        &svg[..200]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn classification_with_scaffold_split_reports_roc_auc() {
    let _rng = crate::rng_exclusive();
    let dir = scratch("bbbp");
    let data = subset_csv("bbbp", 800, &[], &dir);
    let spec = spec(data, Task::Classification, SplitSpec::Scaffold, 20);
    let summary = train_run(
        &spec,
        &dir.join("run"),
        &RunControl::default(),
        &Device::flex(),
    )
    .unwrap();
    assert!(summary.test_rmse.is_none());
    let auc = summary.valid_roc_auc.unwrap();
    assert!(auc > 0.6, "valid ROC-AUC {auc}");
    let test_auc = summary.test_roc_auc.unwrap();
    assert!((0.0..=1.0).contains(&test_auc));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run.json written before MatConfig's `n_output` became `num_targets` still loads
/// (predict, explain and export read it through `RunSpecFile::load`), and kinds are checked.
#[test]
fn run_json_from_before_the_num_targets_rename_loads() {
    let dir = std::env::temp_dir().join(format!("molattn-old-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = spec(
        PathBuf::from("x.csv"),
        Task::Regression,
        SplitSpec::Scaffold,
        1,
    );
    s.model = s.model.with_num_targets(3);
    // Also written before edge features existed (2026-12-05): no use_edge_features,
    // integrated_distances or featurizer edge_features.
    let mut value = serde_json::to_value(&s).unwrap();
    for key in ["use_edge_features", "integrated_distances"] {
        value["model"].as_object_mut().unwrap().remove(key).unwrap();
    }
    value["featurizer"]
        .as_object_mut()
        .unwrap()
        .remove("edge_features")
        .unwrap();
    let text = serde_json::to_string(&value)
        .unwrap()
        .replace("\"num_targets\"", "\"n_output\"")
        .replace("\"kind\":\"mat\",", "");
    assert!(text.contains("\"n_output\":3") && !text.contains("\"kind\""));
    assert!(!text.contains("edge_features") && !text.contains("integrated_distances"));
    std::fs::write(dir.join("run.json"), text).unwrap();
    let loaded = RunSpec::load(&dir).unwrap();
    assert_eq!(loaded.model.num_targets, 3);
    assert!(!loaded.model.use_edge_features && !loaded.featurizer.edge_features);
    assert_eq!(loaded.kind, RunKind::Mat);
    assert!(train::transformer_m::TmRunSpec::load(&dir).is_err());
    // Read once and typed by its (absent, so inferred) kind, as every command reads it.
    let typed = train::run_file::RunSpecFile::load(&dir).unwrap();
    assert!(
        matches!(&typed, train::run_file::RunSpecFile::Mat(s) if s.model.num_targets == 3),
        "{typed:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn multi_task_on_esol_and_freesolv_joined_by_smiles_masks_missing_labels() {
    let _rng = crate::rng_shared();
    let dir = scratch("multitask");
    let source = |dataset: &str| train::join::JoinSource {
        path: subset_csv(dataset, 250, &[], &dir),
        smiles_column: "smiles".into(),
        target_column: "y".into(),
        name: dataset.into(),
    };
    let joined = dir.join("esol-freesolv.csv");
    let report =
        train::join::join_by_smiles(&[source("esol"), source("freesolv")], &joined).unwrap();
    // Most molecules carry one of the two labels.
    assert_eq!(
        report.labelled.iter().map(|l| l.1).collect::<Vec<_>>(),
        vec![250, 250]
    );
    assert!(report.n_all_labelled < 50, "{report:?}");
    assert_eq!(report.n_rows, 500 - report.n_all_labelled);
    // One row without any label: reported, not trained on.
    let mut text = std::fs::read_to_string(&joined).unwrap();
    text.push_str("CCCCCCCCO,,\n");
    std::fs::write(&joined, text).unwrap();

    let mut spec = spec(joined, Task::Regression, SplitSpec::Random { seed: 0 }, 15);
    spec.target_columns = vec!["esol".into(), "freesolv".into()];
    spec.model = spec.model.with_num_targets(2);
    let run = dir.join("run");
    let s = train_run(&spec, &run, &RunControl::default(), &Device::flex()).unwrap();
    assert_eq!(s.n_unlabelled, 1);
    assert_eq!(s.train.n + s.valid.n + s.test.n, report.n_rows);
    // Every row with one label misses the other.
    assert_eq!(s.n_missing_labels, report.n_rows - report.n_all_labelled);
    let per_task: Vec<(&str, usize)> = s
        .test
        .per_task
        .iter()
        .map(|t| (t.target.as_str(), t.n))
        .collect();
    assert_eq!(per_task.len(), 2);
    // Each task is evaluated on its labelled test molecules only.
    assert!(per_task.iter().all(|t| t.1 < s.test.n), "{per_task:?}");
    assert!(per_task.iter().map(|t| t.1).sum::<usize>() >= s.test.n);
    for t in &s.test.per_task {
        // Labels are z-scores: learning beats the mean predictor (RMSE ~1) on each task.
        let rmse = t.rmse.unwrap();
        assert!(rmse.is_finite() && rmse < 1.0, "{}: {rmse}", t.target);
    }
    let mean = (s.test.per_task[0].rmse.unwrap() + s.test.per_task[1].rmse.unwrap()) / 2.0;
    assert!((s.test_rmse.unwrap() - mean).abs() < 1e-12);
    // Predictions: one column per task, the label cell empty where it is missing.
    let predictions = std::fs::read_to_string(run.join("test_predictions.csv")).unwrap();
    let mut lines = predictions.lines();
    assert_eq!(
        lines.next(),
        Some("row,smiles,esol,esol_pred,freesolv,freesolv_pred")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), s.test.n);
    assert!(
        rows.iter()
            .all(|r| r.len() == 6 && r[3].parse::<f32>().is_ok() && r[5].parse::<f32>().is_ok())
    );
    assert!(rows.iter().any(|r| r[2].is_empty()) && rows.iter().any(|r| r[4].is_empty()));
    let _ = std::fs::remove_dir_all(&dir);
}
