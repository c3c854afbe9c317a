//! `cargo xtask hpopt` end to end (issue #40 item 6): a MAT search on 60 ESOL molecules,
//! two trials at once, resumed, its best configuration trained again through `--config`;
//! a Transformer-M search; spaces that do not fit refused.

mod common;
use common::code_and_stderr as xtask;

use std::path::Path;

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_mat_search_ranks_its_trials_resumes_and_its_best_config_trains() {
    let dir = common::scratch("hpopt-mat");
    let data = common::esol_rows(&dir, 60);
    let space = dir.join("space.json");
    std::fs::write(
        &space,
        r#"{"learning_rate": [1e-3, 3e-4], "d_model": [16, 32], "num_heads": [2, 4, 8],
            "num_layers": [1], "aggregation": ["Mean", "Sum"]}"#,
    )
    .unwrap();
    let out = dir.join("search");
    let search = |extra: &[&str]| {
        let mut args = vec![
            "hpopt",
            "--data",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--coords",
            "layout2d",
            "--epochs",
            "2",
            "--patience",
            "2",
            "--trials",
            "3",
            "--search-seed",
            "4",
            "--space",
            space.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        xtask(&args)
    };
    let (code, stderr) = search(&["--parallel", "2"]);
    assert_eq!(code, Some(0), "{stderr}");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    let mut previous = f64::NEG_INFINITY;
    for row in &rows {
        // Best first, every trial finished, and its run trained what the row says.
        let rmse: f64 = row[col("valid_rmse")].parse().unwrap();
        assert!(rmse.is_finite() && rmse >= previous, "{csv}");
        previous = rmse;
        let trial: usize = row[col("trial")].parse().unwrap();
        let run = json(&out.join(format!("trial-{trial:03}/run.json")));
        assert_eq!(
            run["model"]["d_model"].to_string(),
            row[col("d_model")],
            "{csv}"
        );
        assert_eq!(
            run["model"]["num_heads"].to_string(),
            row[col("num_heads")],
            "{csv}"
        );
        assert_eq!(
            run["model"]["aggregation"],
            row[col("aggregation")],
            "{csv}"
        );
        let lr: f64 = row[col("learning_rate")].parse().unwrap();
        assert_eq!(run["train"]["learning_rate"].as_f64(), Some(lr), "{csv}");
        let d: u64 = row[col("d_model")].parse().unwrap();
        let h: u64 = row[col("num_heads")].parse().unwrap();
        assert_eq!(d % h, 0);
    }
    let best = json(&out.join("best.json"));
    assert_eq!(best["trial"].to_string(), rows[0][col("trial")]);

    // Again: refused without --resume; with it, every trial is kept, none retrained.
    let (code, stderr) = search(&[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    let (code, stderr) = search(&["--resume"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stderr.matches("finished before, kept").count(),
        3,
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("results.csv")).unwrap(),
        csv
    );

    // The best model configuration trains as a --config file.
    let (code, stderr) = xtask(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--out",
        dir.join("best-run").to_str().unwrap(),
        "--coords",
        "layout2d",
        "--epochs",
        "1",
        "--quiet",
        "--config",
        out.join("best_model_config.json").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let trained = json(&dir.join("best-run/run.json"));
    let best_run = json(&out.join(format!(
        "trial-{:03}/run.json",
        best["trial"].as_u64().unwrap()
    )));
    assert_eq!(trained["model"], best_run["model"]);

    // Other base run flags (here --batch-size) into this folder: another search, refused.
    let (code, stderr) = search(&["--resume", "--batch-size", "16"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("another search") && stderr.contains("base_run"),
        "{stderr}"
    );
    // A space naming a setting MAT does not have.
    std::fs::write(&space, r#"{"d_modle": [16]}"#).unwrap();
    let (code, stderr) = search(&[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("d_modle") && stderr.contains("num_heads"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_transformer_m_search_trains_its_draws() {
    let dir = common::scratch("hpopt-tm");
    let data = common::esol_rows(&dir, 60);
    let space = dir.join("space.json");
    std::fs::write(
        &space,
        r#"{"learning_rate": [1e-4, 5e-5], "d_model": [16, 32], "num_heads": [4]}"#,
    )
    .unwrap();
    let out = dir.join("search");
    let (code, stderr) = xtask(&[
        "hpopt",
        "--model",
        "transformer-m",
        "--data",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--coords",
        "layout2d",
        "--mode",
        "2d",
        "--layers",
        "1",
        "--kernels",
        "8",
        "--epochs",
        "1",
        "--trials",
        "2",
        "--space",
        space.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    for trial in 0..2 {
        let run = json(&out.join(format!("trial-{trial:03}/run.json")));
        let d = run["model"]["d_model"].as_u64().unwrap();
        assert!(d == 16 || d == 32, "{run}");
        // The FFN as wide as d_model, as the original's configurations have it.
        assert_eq!(run["model"]["ffn_dim"].as_u64(), Some(d));
        assert_eq!(run["model"]["num_layers"], 1);
    }
    // MAT's settings are not Transformer-M's.
    std::fs::write(&space, r#"{"n_dense": [1, 2]}"#).unwrap();
    let (code, stderr) = xtask(&[
        "hpopt",
        "--model",
        "transformer-m",
        "--data",
        data.to_str().unwrap(),
        "--out",
        dir.join("other").to_str().unwrap(),
        "--trials",
        "1",
        "--space",
        space.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("n_dense") && stderr.contains("not a setting"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
