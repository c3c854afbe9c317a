//! Ensembles (issue #38 item 3): members with their own seeds on one split; the
//! prediction's mean and standard deviation against a hand computation over the members;
//! the test metrics against the members' own test predictions.

use std::path::Path;

use burn::tensor::Device;
use train::ensemble::{EnsembleMetrics, EnsembleSpec, train_ensemble};
use train::predict::predict_smiles;
use train::predict_stream::{StreamInput, StreamOptions, predict_stream};
use train::trained_run::TrainedRun;
use train::{RunControl, SplitSpec, Task, train_run};

/// `(labels, predictions)` of a member's test_predictions.csv, by row.
fn test_predictions(member: &Path) -> Vec<(usize, f64, f64)> {
    let mut reader = csv::Reader::from_path(member.join("test_predictions.csv")).unwrap();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (
                r[0].parse().unwrap(),
                r[2].parse().unwrap(),
                r[3].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn ensemble_mean_and_std_are_the_members() {
    let _rng = crate::rng_shared();
    let dir = crate::pipeline::scratch("ensemble");
    let data = crate::pipeline::subset_csv("esol", 60, &[], &dir);
    let spec = crate::pipeline::spec(data, Task::Regression, SplitSpec::Random { seed: 0 }, 2);
    let run_dir = dir.join("ensemble");
    let device = Device::flex();
    let train = |out: &Path, seed: u64| {
        let mut spec = spec.clone();
        spec.train.seed = seed;
        train_run(&spec, out, &RunControl::default(), &device)
    };
    let metrics = train_ensemble(&run_dir, 3, 7, (Task::Regression, false), train).unwrap();
    let spec_file = EnsembleSpec::load(&run_dir).unwrap().unwrap();
    assert_eq!(spec_file.seeds, [7, 8, 9]);
    let members = spec_file.member_dirs(&run_dir);

    // Test metrics by hand from the members' own test predictions (same rows: one split).
    let tables: Vec<_> = members.iter().map(|m| test_predictions(m)).collect();
    assert!(
        tables
            .iter()
            .all(|t| t.iter().map(|r| r.0).eq(tables[0].iter().map(|r| r.0)))
    );
    let n = tables[0].len();
    let rmse = |pred: &dyn Fn(usize) -> f64| {
        ((0..n)
            .map(|i| (pred(i) - tables[0][i].1).powi(2))
            .sum::<f64>()
            / n as f64)
            .sqrt()
    };
    let mean = |i: usize| tables.iter().map(|t| t[i].2).sum::<f64>() / 3.0;
    let task = &metrics.tasks[0];
    assert_eq!((task.task.as_str(), task.n), ("y", n));
    assert!((task.ensemble_rmse - rmse(&mean)).abs() < 1e-5);
    for (k, t) in tables.iter().enumerate() {
        assert!((task.member_rmse[k] - rmse(&|i| t[i].2)).abs() < 1e-5);
    }
    // Different seeds, different members.
    assert!(task.member_rmse[0] != task.member_rmse[1]);
    let written: EnsembleMetrics = serde_json::from_str(
        &std::fs::read_to_string(run_dir.join("ensemble_metrics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(written.tasks[0].ensemble_rmse, task.ensemble_rmse);

    // Predictions: mean and population std of the members' own predictions.
    let smiles: Vec<String> = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "CCCl"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let each: Vec<Vec<f32>> = members
        .iter()
        .map(|m| {
            let p = predict_smiles(m, &smiles, &device, None).unwrap();
            p.predictions
                .iter()
                .map(|p| p.values.as_ref().unwrap()[0])
                .collect()
        })
        .collect();
    let runs = TrainedRun::open_members(&run_dir, &device, "used to predict").unwrap();
    assert_eq!(runs.len(), 3);
    let input = dir.join("smiles.csv");
    std::fs::write(&input, format!("smiles\n{}\n", smiles.join("\n"))).unwrap();
    let out = dir.join("predictions.csv");
    let options = StreamOptions {
        members: true,
        progress: false,
        ..Default::default()
    };
    let source = StreamInput::Delimited {
        path: input,
        smiles_column: "smiles".into(),
        delimiter: b',',
    };
    predict_stream(&runs, source, Some(&out), &options, None, &device).unwrap();
    let mut reader = csv::Reader::from_path(&out).unwrap();
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "row", "smiles", "y_pred", "y_std", "y_pred_0", "y_pred_1", "y_pred_2", "error"
        ]
    );
    for (i, r) in reader.records().enumerate() {
        let r = r.unwrap();
        let v: Vec<f64> = (2..7).map(|j| r[j].parse().unwrap()).collect();
        let m: Vec<f64> = each.iter().map(|e| f64::from(e[i])).collect();
        let hand_mean = m.iter().sum::<f64>() / 3.0;
        let hand_std = (m.iter().map(|x| (x - hand_mean).powi(2)).sum::<f64>() / 3.0).sqrt();
        assert!((v[0] - hand_mean).abs() < 1e-4, "row {i}: {v:?} vs {m:?}");
        assert!((v[1] - hand_std).abs() < 1e-4, "row {i}: {v:?} vs {m:?}");
        for k in 0..3 {
            assert!((v[2 + k] - m[k]).abs() < 1e-4, "row {i} member {k}");
        }
    }

    // Resuming a finished ensemble trains nothing; the folder is no single run.
    let mut calls = 0;
    train_ensemble(&run_dir, 3, 7, (Task::Regression, true), |_, _| {
        calls += 1;
        Err(train::TrainError::Invalid("not called".into()))
    })
    .unwrap();
    assert_eq!(calls, 0);
    let e = TrainedRun::open(&run_dir, &device, "used to predict").unwrap_err();
    assert!(e.to_string().contains("ensemble"), "{e}");
    // Another ensemble in the same folder is refused.
    let e = train_ensemble(
        &run_dir,
        2,
        7,
        (Task::Regression, true),
        |_, _| unreachable!(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("3 members"), "{e}");
}
