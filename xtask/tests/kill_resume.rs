//! A training process killed with SIGKILL mid-run resumes from its last complete
//! checkpoint and ends with the learning curve of an uninterrupted run (issue #13).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn datasets() -> PathBuf {
    mol_featurize::mat_datasets::dir().unwrap()
}

fn train(data: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
    // Tests never install system packages (xtask::openblas_install).
    c.env("MOLATTN_INSTALL_BLAS", "0");
    c.args(["train", "--data"])
        .arg(data)
        .arg("--out")
        .arg(out)
        .args([
            "--split",
            "random",
            "--coords",
            "topological",
            "--no-cache",
            "--quiet",
        ])
        .args(["--epochs", "40", "--patience", "40", "--seed", "2"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn curve(run: &Path) -> Vec<String> {
    (1..)
        .map_while(|e| std::fs::read_to_string(run.join(format!("valid/epoch-{e}/RMSE.log"))).ok())
        .chain((1..).map_while(|e| {
            std::fs::read_to_string(run.join(format!("train/epoch-{e}/Loss.log"))).ok()
        }))
        .collect()
}

#[test]
fn sigkill_mid_run_then_resume_gives_the_uninterrupted_curve() {
    let dir = std::env::temp_dir().join(format!("molattn-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let esol = std::fs::read_to_string(datasets().join("esol/esol.csv")).unwrap();
    let data = dir.join("esol-150.csv");
    std::fs::write(&data, esol.lines().take(151).collect::<Vec<_>>().join("\n")).unwrap();

    let straight = dir.join("straight");
    assert!(train(&data, &straight, &[]).status().unwrap().success());

    let killed = dir.join("killed");
    let mut child = train(&data, &killed, &[]).spawn().unwrap();
    let marker = killed.join("checkpoint/model-5.bpk");
    let started = Instant::now();
    while !marker.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no checkpoint of epoch 5"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Still running (40 epochs): SIGKILL it.
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before it could be killed"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!killed.join("metrics.json").exists());

    assert!(
        train(&data, &killed, &["--resume"])
            .status()
            .unwrap()
            .success()
    );
    let (a, b) = (curve(&straight), curve(&killed));
    assert_eq!(a.len(), 80);
    assert_eq!(a, b);
    let metrics = |run: &Path| std::fs::read_to_string(run.join("metrics.json")).unwrap();
    let test_rmse =
        |m: String| serde_json::from_str::<serde_json::Value>(&m).unwrap()["test_rmse"].clone();
    assert_eq!(test_rmse(metrics(&straight)), test_rmse(metrics(&killed)));
    let _ = std::fs::remove_dir_all(&dir);
}
