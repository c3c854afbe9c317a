//! `cargo xtask predict` draws its conformer bar on a terminal (an input of one chunk), a
//! bar of molecules with rate and ETA over several chunks (issue #38), and nothing when its
//! output is piped (issue #37: the bar was never shown). The terminal is a pseudo-terminal made
//! by util-linux `script`.

use std::path::PathBuf;
use std::process::Command;

fn datasets() -> PathBuf {
    mol_featurize::mat_datasets::dir().unwrap()
}

fn has_script() -> bool {
    Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn predict_draws_the_conformer_bar_on_a_terminal_only() {
    if !has_script() {
        assert!(
            std::env::var_os("CI").is_none(),
            "util-linux `script` is needed for this test under CI"
        );
        eprintln!("SKIPPED: no util-linux `script` to make a pseudo-terminal");
        return;
    }
    let dir = std::env::temp_dir().join(format!("molattn-bar-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let esol = std::fs::read_to_string(datasets().join("esol/esol.csv")).unwrap();
    let data = dir.join("esol-40.csv");
    std::fs::write(&data, esol.lines().take(41).collect::<Vec<_>>().join("\n")).unwrap();
    let run = dir.join("run");
    let xtask = env!("CARGO_BIN_EXE_xtask");
    let trained = Command::new(xtask)
        .env("MOLATTN_INSTALL_BLAS", "0")
        .args(["train", "--data"])
        .arg(&data)
        .arg("--out")
        .arg(&run)
        .args(["--split", "random", "--coords", "embed3d", "--no-cache"])
        .args(["--epochs", "1", "--quiet"])
        .output()
        .unwrap();
    assert!(
        trained.status.success(),
        "{}",
        String::from_utf8_lossy(&trained.stderr)
    );

    // --no-cache: every molecule is embedded again, so there is a bar to draw.
    let predict = format!(
        "{xtask} predict --run {} --data {} --out {} --no-cache",
        run.display(),
        data.display(),
        dir.join("pred.csv").display()
    );
    let on_terminal = Command::new("script")
        .env("MOLATTN_INSTALL_BLAS", "0")
        .args(["-qec", &predict, "/dev/null"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&on_terminal.stdout);
    assert!(on_terminal.status.success(), "{text}");
    assert!(
        text.contains("conformers ") && text.contains("/40 ["),
        "no conformer bar on a terminal:\n{text}"
    );

    // In chunks of 16 rows (streamed): a bar of molecules with rate and ETA.
    let chunked = format!("{predict} --chunk-rows 16");
    let on_terminal = Command::new("script")
        .env("MOLATTN_INSTALL_BLAS", "0")
        .args(["-qec", &chunked, "/dev/null"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&on_terminal.stdout);
    assert!(on_terminal.status.success(), "{text}");
    assert!(
        text.contains("predict ") && text.contains("/40 molecules") && text.contains("ETA"),
        "no bar of chunks on a terminal:\n{text}"
    );

    for predict in [&predict, &chunked] {
        let piped = Command::new("sh").args(["-c", predict]).output().unwrap();
        let text = String::from_utf8_lossy(&piped.stdout) + String::from_utf8_lossy(&piped.stderr);
        assert!(piped.status.success(), "{text}");
        assert!(!text.contains("/40 "), "a bar drawn into a pipe:\n{text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
