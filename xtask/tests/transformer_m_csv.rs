//! `cargo xtask` end to end with Transformer-M on a CSV (issue #20): `train`, `predict`,
//! `featurize` and `export` (verified in ONNX Runtime and tract; built with the `onnx`
//! feature, as CI's full build is) on a subset of ESOL, as a user runs them.

mod common;
use common::ok_and_text as xtask;

use std::path::PathBuf;

fn datasets() -> PathBuf {
    mol_featurize::mat_datasets::dir().unwrap()
}

#[test]
fn transformer_m_trains_on_a_csv_predicts_and_exports() {
    let dir = std::env::temp_dir().join(format!("molattn-tm-csv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let esol = std::fs::read_to_string(datasets().join("esol/esol.csv")).unwrap();
    let data = dir.join("esol-120.csv");
    std::fs::write(&data, esol.lines().take(121).collect::<Vec<_>>().join("\n")).unwrap();
    let (data, run) = (data.to_str().unwrap(), dir.join("run"));
    let run = run.to_str().unwrap();

    let (ok, text) = xtask(&[
        "train",
        "--model",
        "transformer-m",
        "--data",
        data,
        "--out",
        run,
        "--split",
        "random",
        "--no-cache",
        "--quiet",
        "--epochs",
        "3",
        "--layers",
        "2",
        "--d-model",
        "32",
        "--num-heads",
        "4",
        "--kernels",
        "16",
        "--mode",
        "mixed",
    ]);
    assert!(ok, "{text}");
    let metrics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run/metrics.json")).unwrap())
            .unwrap();
    assert!(
        metrics["test_rmse"].as_f64().unwrap().is_finite(),
        "{metrics}"
    );

    // A flag of MAT's only is refused by name.
    let (ok, text) = xtask(&[
        "train",
        "--model",
        "transformer-m",
        "--data",
        data,
        "--out",
        run,
        "--pretrained",
        "x.pt",
    ]);
    assert!(!ok && text.contains("--pretrained"), "{text}");
    // 3D mode without 3D conformers would train a 2D model: refused before any work.
    let (ok, text) = xtask(&[
        "train",
        "--model",
        "transformer-m",
        "--data",
        data,
        "--out",
        run,
        "--mode",
        "3d",
        "--coords",
        "layout2d",
    ]);
    assert!(
        !ok && text.contains("--mode 3d needs 3D conformers"),
        "{text}"
    );

    let predictions = dir.join("predictions.csv");
    let (ok, text) = xtask(&[
        "predict",
        "--run",
        run,
        "--smiles",
        "CCO",
        "--smiles",
        "C1CC",
        "--no-cache",
        "--out",
        predictions.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    let lines: Vec<String> = std::fs::read_to_string(&predictions)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines[0], "row,smiles,y_pred,error");
    let first: Vec<&str> = lines[1].split(',').collect();
    assert!(first[2].parse::<f32>().unwrap().is_finite(), "{}", lines[1]);
    assert!(lines[2].starts_with("1,C1CC,,"), "{}", lines[2]);

    // The run's featurization, as JSON (Graphormer features with their coordinates).
    let features = dir.join("features.json");
    let (ok, text) = xtask(&[
        "featurize",
        "--run",
        run,
        "--data",
        data,
        "--no-cache",
        "--out",
        features.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&features).unwrap()).unwrap();
    let first = &json["features"][0];
    assert!(
        first["spd"].is_array() && first["path_bonds"].is_array(),
        "{first}"
    );
    assert_eq!(json["report"]["n_total"], 120);

    let onnx = dir.join("model.onnx");
    let (ok, text) = xtask(&[
        "export",
        "--model",
        "transformer-m",
        "--run",
        run,
        "--out",
        onnx.to_str().unwrap(),
    ]);
    if cfg!(feature = "onnx") {
        assert!(ok, "{text}");
        assert!(text.contains("verified: every runtime within"), "{text}");
        assert!(
            text.contains("ONNX Runtime vs Burn") && text.contains("tract        vs Burn"),
            "{text}"
        );
        // The exported model's inputs, written by featurize in the run's evaluation mode.
        let npz = dir.join("inputs.npz");
        let (ok, text) = xtask(&[
            "featurize",
            "--run",
            run,
            "--data",
            data,
            "--no-cache",
            "--format",
            "npz",
            "--out",
            npz.to_str().unwrap(),
        ]);
        assert!(ok, "{text}");
        assert!(
            text.contains("atom_index [120,") && text.contains("use_3d [120]"),
            "{text}"
        );
    } else {
        assert!(!ok && text.contains("needs the `onnx` feature"), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The original's QM9 criterion as flags (issue #41): the run records the readout, the
/// target scaling and the clipping, trains to finite metrics, and predicts with the same
/// readout; a readout other than `cls` is refused by `export` by name.
#[test]
fn transformer_m_trains_with_the_originals_qm9_criterion() {
    let dir = std::env::temp_dir().join(format!("molattn-tm-qm9c-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let esol = std::fs::read_to_string(datasets().join("esol/esol.csv")).unwrap();
    let data = dir.join("esol-80.csv");
    std::fs::write(&data, esol.lines().take(81).collect::<Vec<_>>().join("\n")).unwrap();
    let (data, run) = (data.to_str().unwrap(), dir.join("run"));
    let run = run.to_str().unwrap();
    let (ok, text) = xtask(&[
        "train",
        "--model",
        "transformer-m",
        "--data",
        data,
        "--out",
        run,
        "--split",
        "random",
        "--no-cache",
        "--quiet",
        "--epochs",
        "2",
        "--layers",
        "1",
        "--d-model",
        "16",
        "--num-heads",
        "4",
        "--kernels",
        "8",
        "--mode",
        "2d",
        "--coords",
        "layout2d",
        "--loss",
        "mse",
        "--readout",
        "mean",
        "--target-scaling",
        "std-logits",
        "--clip-norm",
        "5",
    ]);
    assert!(ok, "{text}");
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run/run.json")).unwrap()).unwrap();
    assert_eq!(spec["model"]["readout"], "mean", "{spec}");
    assert_eq!(spec["criterion"]["loss_scale"], "std_logits", "{spec}");
    assert_eq!(spec["criterion"]["clip_norm"], 5.0, "{spec}");
    let metrics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run/metrics.json")).unwrap())
            .unwrap();
    assert!(
        metrics["test_rmse"].as_f64().unwrap().is_finite(),
        "{metrics}"
    );
    let (ok, text) = xtask(&[
        "export",
        "--model",
        "transformer-m",
        "--run",
        run,
        "--out",
        dir.join("m.onnx").to_str().unwrap(),
    ]);
    if cfg!(feature = "onnx") {
        assert!(!ok && text.contains("--readout cls"), "{text}");
    }
    // A non-positive clipping norm is refused before anything runs.
    let (ok, text) = xtask(&[
        "train",
        "--model",
        "transformer-m",
        "--data",
        data,
        "--out",
        dir.join("bad").to_str().unwrap(),
        "--clip-norm",
        "0",
    ]);
    assert!(
        !ok && text.contains("--clip-norm") && text.contains("not a positive number"),
        "{text}"
    );
    // Clipping on several devices would clip each device's share, not the global norm.
    let (ok, text) = xtask(&[
        "train",
        "--model",
        "transformer-m",
        "--data",
        data,
        "--out",
        dir.join("bad").to_str().unwrap(),
        "--clip-norm",
        "5",
        "--devices",
        "flex:0,flex:1",
    ]);
    assert!(!ok && text.contains("one device"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
