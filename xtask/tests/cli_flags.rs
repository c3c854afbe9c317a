//! `cargo xtask train` as a user types it: a flag of another model family is refused by
//! name with clap's exit status (2) before anything is read or written, from the one parse
//! of the command line; the family's own flags pass that check.

use std::process::Command;

/// Runs the binary; its exit code and stderr.
fn xtask(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        // Tests never install system packages (xtask::openblas_install).
        .env("MOLATTN_INSTALL_BLAS", "0")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

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
