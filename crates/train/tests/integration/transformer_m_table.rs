//! Transformer-M on the user's molecule tables (issue #20): subsets of the three shared
//! datasets, regression (L1 and MSE) and classification, 2D / 3D / mixed modes, then
//! prediction from the run directory; old QM9 run files still load.

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use models::transformer_m::{Mode, TransformerMConfig};
use mol_featurize::ConformerOptions;
use mol_featurize::conformer::CoordinateMethod;
use train::masked_loss::LossKind;
use train::predict::predict_smiles;
use train::transformer_m::{
    SmilesSource, TableSource, TmData, TmRunSpec, train_table_transformer_m,
};
use train::{ModeProbabilities, RunControl, RunKind, SplitSpec, Task, TrainOptions};

fn datasets() -> PathBuf {
    std::env::var_os("MOLATTN_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::manifest_dir().join("../../../shared/datasets"))
}

/// The first `n` data rows of a shared dataset as a CSV in `dir`.
fn subset_csv(dataset: &str, n: usize, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(datasets().join(format!("{dataset}/{dataset}.csv")))
        .expect("shared dataset");
    let lines: Vec<&str> = text.lines().take(n + 1).collect();
    let path = dir.join(format!("{dataset}.csv"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn tiny(num_targets: usize) -> TransformerMConfig {
    // layers, d_model, ffn_dim, num_heads, num_kernels
    TransformerMConfig::new(2, 32, 32, 4, 16).with_num_targets(num_targets)
}

fn spec(
    data: PathBuf,
    method: CoordinateMethod,
    task: Task,
    loss: LossKind,
    mode: Mode,
) -> TmRunSpec {
    let modes = match mode {
        Mode::Both => ModeProbabilities::new(),
        m => ModeProbabilities::fixed(m),
    };
    TmRunSpec {
        kind: RunKind::TransformerM,
        data: TmData::Table(TableSource {
            molecules: SmilesSource {
                path: data,
                smiles_column: "smiles".into(),
                delimiter: ',',
                conformer: ConformerOptions {
                    method,
                    max_embed_attempts: 20,
                    ..Default::default()
                },
            },
            split: SplitSpec::Random { seed: 0 },
        }),
        targets: vec!["y".into()],
        task,
        loss,
        units: None,
        modes,
        eval_mode: mode,
        model: tiny(1),
        train: TrainOptions {
            epochs: 12,
            batch_size: 16,
            learning_rate: 2e-3,
            warmup_fraction: 0.06,
            patience: 100,
            seed: 1,
        },
        init_from: None,
        target_mean: Vec::new(),
        target_std: Vec::new(),
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("molattn-tm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Regression on ESOL (3D conformers, mixed modes, L1) and FreeSolv (3D mode, MSE):
/// each beats the training-mean predictor on its validation molecules, writes MAT's run
/// files, and predicts new SMILES from the run directory (an unparsable one gets its
/// error, the others values in target units).
#[test]
fn regression_on_esol_and_freesolv_learns_and_predicts() {
    let _rng = crate::rng_shared();
    let dir = scratch("regression");
    let device = Device::flex();
    for (dataset, loss, mode) in [
        ("esol", LossKind::L1, Mode::Both),
        ("freesolv", LossKind::Mse, Mode::ThreeD),
    ] {
        let data = subset_csv(dataset, 160, &dir);
        let run = dir.join(dataset);
        let s = spec(
            data,
            CoordinateMethod::Embed3d,
            Task::Regression,
            loss,
            mode,
        );
        let summary = train_table_transformer_m(&s, &run, &RunControl::default(), &device)
            .unwrap_or_else(|e| panic!("{dataset}: {e}"));
        // The datasets are standardised (std about 1): the mean predictor's RMSE is
        // about 1 on every part.
        let valid = summary.valid_rmse.unwrap();
        assert!(valid < 0.9, "{dataset}: valid RMSE {valid}");
        assert!(summary.test_rmse.unwrap().is_finite());
        assert_eq!(summary.task, Task::Regression);
        for file in [
            "run.json",
            "best_model.bpk",
            "metrics.json",
            "test_predictions.csv",
            "featurize_report.json",
            "curves.png",
        ] {
            assert!(run.join(file).exists(), "{dataset}: {file}");
        }
        let report: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.join("featurize_report.json")).unwrap(),
        )
        .unwrap();
        assert!(
            report["coordinate_sources"]["embed3d"].as_u64().unwrap() > 150,
            "{dataset}: {report}"
        );
        let loaded = TmRunSpec::load(&run).unwrap();
        assert_eq!((loaded.target_mean.len(), loaded.target_std.len()), (1, 1));

        let smiles = vec![
            "CCO".to_string(),
            "C1CC".to_string(),
            "c1ccccc1O".to_string(),
        ];
        let out = predict_smiles(&run, &smiles, &device, None).unwrap();
        assert_eq!(out.kind, RunKind::TransformerM);
        assert_eq!(out.target_columns, vec!["y"]);
        let p = &out.predictions;
        assert!(p[0].values.as_ref().unwrap()[0].is_finite());
        assert!(p[1].values.is_none() && p[1].error.as_ref().unwrap().contains("C1CC"));
        assert!(p[2].values.as_ref().unwrap()[0].is_finite());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Classification on BBBP with a scaffold split, in 2D mode: BCE, ROC-AUC above chance;
/// predictions are probabilities. With 2D layouts no molecule gets a 3D channel.
#[test]
fn classification_on_bbbp_reports_roc_auc() {
    let _rng = crate::rng_shared();
    let dir = scratch("bbbp");
    let device = Device::flex();
    let data = subset_csv("bbbp", 500, &dir);
    let mut s = spec(
        data,
        CoordinateMethod::Layout2d,
        Task::Classification,
        LossKind::BceWithLogits,
        Mode::TwoD,
    );
    if let TmData::Table(t) = &mut s.data {
        t.split = SplitSpec::Scaffold;
    }
    let run = dir.join("run");
    let summary = train_table_transformer_m(&s, &run, &RunControl::default(), &device).unwrap();
    assert!(summary.test_rmse.is_none());
    let auc = summary.valid_roc_auc.unwrap();
    assert!(auc > 0.6, "valid ROC-AUC {auc}");
    let out = predict_smiles(&run, &["CCN(CC)CC".to_string()], &device, None).unwrap();
    let p = out.predictions[0].values.as_ref().unwrap()[0];
    assert!((0.0..=1.0).contains(&p), "{p}");

    // A regression loss on a classification task is refused before any work.
    s.loss = LossKind::L1;
    let e = train_table_transformer_m(&s, &dir.join("bad"), &RunControl::default(), &device)
        .unwrap_err();
    assert!(e.to_string().contains("does not fit"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A QM9 run written before multi-task support (one `target`, scalar scaling) loads as
/// a one-task regression run.
#[test]
fn qm9_run_json_from_before_multi_task_loads() {
    let dir = scratch("old-qm9-run");
    let mut json = serde_json::to_value(spec(
        PathBuf::from("x.csv"),
        CoordinateMethod::Embed3d,
        Task::Regression,
        LossKind::L1,
        Mode::Both,
    ))
    .unwrap();
    let obj = json.as_object_mut().unwrap();
    for key in ["targets", "task", "loss", "units"] {
        obj.remove(key);
    }
    obj.insert("target".into(), "HOMO_LUMO_gap_au".into());
    obj.insert("target_mean".into(), 0.25.into());
    obj.insert("target_std".into(), 0.05.into());
    obj.insert(
        "data".into(),
        serde_json::json!({"dataset": "qm9", "limit": 100, "subset_seed": 0}),
    );
    std::fs::write(dir.join("run.json"), json.to_string()).unwrap();
    let loaded = TmRunSpec::load(&dir).unwrap();
    assert_eq!(loaded.targets, vec!["HOMO_LUMO_gap_au"]);
    assert_eq!(
        (loaded.target_mean.clone(), loaded.target_std.clone()),
        (vec![0.25], vec![0.05])
    );
    assert_eq!((loaded.task, loaded.loss), (Task::Regression, LossKind::L1));
    assert!(matches!(loaded.data, TmData::Qm9(ref q) if q.limit == Some(100)));
    assert_eq!(loaded.labels().unscale(&[2.0]), vec![0.35]);
    let _ = std::fs::remove_dir_all(&dir);
}
