//! What the end-to-end tests of `cargo xtask` share: the binary run as a user runs it.
//! Each test file uses part of it (`mod common;`), hence the `dead_code` allowance.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the binary built for these tests with `args`; tests never install system
/// packages (xtask::openblas_install).
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .env("MOLATTN_INSTALL_BLAS", "0")
        .args(args)
        .output()
        .unwrap()
}

/// [`run`]'s exit code and stderr.
pub fn code_and_stderr(args: &[&str]) -> (Option<i32>, String) {
    let out = run(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// [`run`]'s success and stdout followed by stderr.
pub fn ok_and_text(args: &[&str]) -> (bool, String) {
    let out = run(args);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// A fresh folder under the system's temporary folder, named for the test and process.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("molattn-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The first `n` molecules of MAT's ESOL (shipped in the repository) as `dir/esol-<n>.csv`.
pub fn esol_rows(dir: &Path, n: usize) -> PathBuf {
    let esol = mol_featurize::mat_datasets::dir()
        .unwrap()
        .join("esol/esol.csv");
    let text = std::fs::read_to_string(esol).unwrap();
    let data = dir.join(format!("esol-{n}.csv"));
    std::fs::write(
        &data,
        text.lines().take(n + 1).collect::<Vec<_>>().join("\n"),
    )
    .unwrap();
    data
}
