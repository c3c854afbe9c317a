//! `cargo xtask train` as a user types it: a flag of another model family is refused by
//! name with clap's exit status (2) before anything is read or written, from the one parse
//! of the command line; the family's own flags pass that check.

mod common;
use common::code_and_stderr as xtask;

#[test]
fn a_flag_of_another_family_is_refused_by_name() {
    let dir = std::env::temp_dir().join(format!("molattn-cli-flags-{}", std::process::id()));
    let out = dir.join("run");
    let out = out.to_str().unwrap();
    let (code, stderr) = xtask(&[
        "train",
        "--model",
        "transformer-m",
        "--out",
        out,
        "--pretrained",
        "m.pt",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--pretrained is not a flag of --model transformer-m")
            && stderr.contains("Usage:"),
        "{stderr}"
    );
    let (code, stderr) = xtask(&[
        "train",
        "--model",
        "smiles-gpt",
        "--out",
        out,
        "--layers",
        "2",
        "--mode",
        "3d",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--layers")
            && stderr.contains("--mode")
            && stderr.contains("are not flags"),
        "{stderr}"
    );
    // MAT's own flag passes the check; the missing data file is the (ordinary) error.
    let missing = dir.join("missing.csv");
    let (code, stderr) = xtask(&[
        "train",
        "--out",
        out,
        "--data",
        missing.to_str().unwrap(),
        "--reference-compat",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("missing.csv"), "{stderr}");
    assert!(!dir.join("run").join("run.json").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `--config` takes the original make_model's names; the run stores the architecture it
/// used; a setting the data contradicts, or --config beside --preset, is refused.
#[test]
fn a_mat_config_file_in_make_model_names_builds_the_run() {
    let dir = common::scratch("cli-config");
    let data = common::esol_rows(&dir, 60);
    let config = dir.join("mat.json");
    std::fs::write(
        &config,
        r#"{"N": 1, "d_model": 32, "h": 4, "N_dense": 1, "aggregation_type": "sum",
            "scale_norm": true, "dense_output_nonlinearity": "tanh", "n_output": 1,
            "init_type": "uniform"}"#,
    )
    .unwrap();
    let run = dir.join("run");
    let common = |extra: &[&str]| {
        let mut args = vec![
            "train",
            "--data",
            data.to_str().unwrap(),
            "--out",
            run.to_str().unwrap(),
            "--coords",
            "layout2d",
            "--epochs",
            "1",
            "--quiet",
            "--config",
            config.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let args = common(&[]);
    let (code, stderr) = xtask(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, Some(0), "{stderr}");
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
    let model = &spec["model"];
    assert_eq!(model["num_layers"], 1);
    assert_eq!(model["num_heads"], 4);
    assert_eq!(model["n_dense"], 1);
    assert_eq!(model["aggregation"], "Sum");
    assert_eq!(model["norm"], "ScaleNorm");
    assert_eq!(model["dense_output_nonlinearity"], "Tanh");
    assert_eq!(model["dropout"], 0.1);

    // Two outputs for one target column; --config with --preset.
    std::fs::write(&config, r#"{"n_output": 2}"#).unwrap();
    let args = common(&["--force"]);
    let (code, stderr) = xtask(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("2 outputs") && stderr.contains("1 target"),
        "{stderr}"
    );
    let args = common(&["--preset", "pretrained"]);
    let (code, stderr) = xtask(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--preset") && stderr.contains("--config"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The shipped pretrained models are MAT's: another family names that.
#[test]
fn a_shipped_model_for_another_family_is_refused() {
    let (code, stderr) = xtask(&[
        "train",
        "--model",
        "transformer-m",
        "--data",
        "x.csv",
        "--out",
        "/tmp/never",
        "--init-from",
        "pretrained:mat-small",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("MAT's") && stderr.contains("--model mat"),
        "{stderr}"
    );
}
