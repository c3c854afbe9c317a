//! The process-level half of `cargo xtask fuzz` (issue #37): this binary run as a user
//! would run it, with bad arguments and data, two processes on one run folder, and
//! `kill -9` at seeded random moments during training (checkpoint writes) and during
//! featurization (conformer cache writes), each followed by a resume or a rerun that
//! must give what an uninterrupted process gives.
//!
//! Invariants: every refused command exits with status 1 and a message containing what
//! it must name, never a panic (status 101); a refused resume leaves `run.json` byte for
//! byte; the second process on a run folder is refused and the first one's run is whole;
//! a killed and resumed run has the uninterrupted run's learning curve and test RMSE; a
//! featurization killed while writing the cache, run again on that cache, writes the
//! features of a run without a cache.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Epochs of the killed trainings (about 2 s on 80 molecules: a kill lands between
/// checkpoints).
const EPOCHS: &str = "60";

/// One process-level case and what became of it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Case {
    /// What was tried.
    pub name: String,
    /// `None` when the invariant held, else what broke.
    pub failure: Option<String>,
}

/// This binary with `args`, output captured.
fn xtask(args: &[&str]) -> Command {
    // The running binary: `cargo xtask fuzz` tests the build that runs it.
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("xtask"));
    let mut c = Command::new(exe);
    c.args(args)
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn run(args: &[&str]) -> Result<Output> {
    xtask(args)
        .output()
        .with_context(|| format!("running xtask {}", args.join(" ")))
}

/// A refused command: status 1 and `expected` in its message.
fn refused(name: &str, args: &[&str], expected: &str) -> Result<Case> {
    let out = run(args)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let failure = if out.status.code() != Some(1) {
        Some(format!(
            "exit status {:?}, not 1: {}",
            out.status.code(),
            stderr.lines().last().unwrap_or_default()
        ))
    } else if !stderr.contains(expected) {
        Some(format!("the message lacks {expected:?}: {}", stderr.trim()))
    } else {
        None
    };
    Ok(Case {
        name: name.to_string(),
        failure,
    })
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

/// A short training of `data` into `out` (topological distances, no cache).
fn train_args<'a>(data: &'a Path, out: &'a Path, epochs: &'a str) -> Vec<&'a str> {
    vec![
        "train",
        "--data",
        path(data),
        "--out",
        path(out),
        "--split",
        "random",
        "--coords",
        "topological",
        "--no-cache",
        "--quiet",
        "--epochs",
        epochs,
        "--patience",
        epochs,
        "--seed",
        "3",
    ]
}

/// The metric logs of every epoch and the test RMSE of a finished run.
fn outcome(run: &Path) -> (Vec<String>, Option<String>) {
    let logs = (1..)
        .map_while(|e| std::fs::read_to_string(run.join(format!("valid/epoch-{e}/RMSE.log"))).ok())
        .chain((1..).map_while(|e| {
            std::fs::read_to_string(run.join(format!("train/epoch-{e}/Loss.log"))).ok()
        }))
        .collect();
    let rmse = std::fs::read_to_string(run.join("metrics.json"))
        .ok()
        .and_then(|m| serde_json::from_str::<serde_json::Value>(&m).ok())
        .map(|m| m["test_rmse"].to_string());
    (logs, rmse)
}

/// Runs every case: the argument cases, two processes on one folder, `rounds` kills
/// during training and `rounds` during cache writes (kill moments from `seed`), with
/// `esol` (MAT's ESOL CSV) as the data. Work files go under `out`.
///
/// # Errors
/// When a case cannot be set up (unwritable folder, missing data); broken invariants
/// are reported in the cases, not as errors.
pub fn run_cases(esol: &Path, out: &Path, rounds: usize, seed: u64) -> Result<Vec<Case>> {
    let dir = out.join("processes");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
    let text = std::fs::read_to_string(esol).with_context(|| esol.display().to_string())?;
    let rows: Vec<&str> = text.lines().take(81).collect();
    let data = dir.join("esol-80.csv");
    std::fs::write(&data, rows.join("\n") + "\n")?;
    let mut cases = Vec::new();

    // Bad settings and data: refused where they are built, before any file is written.
    let fresh = dir.join("never");
    for (extra, expected) in [
        (&["--batch-size", "0"][..], "batch size 0"),
        (&["--lr=-1"][..], "learning rate -1"),
        (&["--lr", "nan"][..], "learning rate NaN"),
        (&[][..], "epochs 0"),
    ] {
        let epochs = if extra.is_empty() { "0" } else { "2" };
        let mut args = train_args(&data, &fresh, epochs);
        args.extend(extra);
        let name = format!("train --epochs {epochs} {}", extra.join(" "));
        cases.push(refused(&name, &args, expected)?);
    }
    if fresh.join("run.json").exists() {
        cases.push(Case {
            name: "refused settings write nothing".into(),
            failure: Some(format!("{} was written", fresh.join("run.json").display())),
        });
    }
    let dup = dir.join("dup.csv");
    std::fs::write(&dup, "smiles,y,y\nCCO,1,2\nCCN,2,3\nCCC,3,4\n")?;
    cases.push(refused(
        "a duplicated header",
        &train_args(&dup, &fresh, "2"),
        "appears 2 times",
    )?);
    let zero = dir.join("zero.csv");
    let zeros: Vec<String> = std::iter::once("smiles,y".to_string())
        .chain(
            rows[1..]
                .iter()
                .map(|r| format!("{},0", r.rsplit_once(',').map_or(*r, |(s, _)| s))),
        )
        .collect();
    std::fs::write(&zero, zeros.join("\n") + "\n")?;
    cases.push(refused(
        "an all-zero label column",
        &train_args(&zero, &fresh, "2"),
        "needs both classes",
    )?);

    // A run, then everything that must not change it.
    let run_dir = dir.join("run");
    let trained = run(&train_args(&data, &run_dir, "3"))?;
    if !trained.status.success() {
        bail!(
            "the reference training failed: {}",
            String::from_utf8_lossy(&trained.stderr)
        );
    }
    let spec = std::fs::read(run_dir.join("run.json"))?;
    cases.push(refused(
        "a second fresh run into a run folder",
        &train_args(&data, &run_dir, "3"),
        "holds a run already",
    )?);
    let mut other_batch = train_args(&data, &run_dir, "3");
    other_batch.extend(["--resume", "--batch-size", "7"]);
    cases.push(refused(
        "resume with another batch size",
        &other_batch,
        "train.batch_size was 32 and is now 7",
    )?);
    let edited = dir.join("esol-80-x10.csv");
    let x10: Vec<String> = std::iter::once(rows[0].to_string())
        .chain(rows[1..].iter().map(|r| match r.rsplit_once(',') {
            Some((s, y)) => format!("{s},{}", y.trim().parse::<f64>().unwrap_or(0.0) * 10.0),
            None => r.to_string(),
        }))
        .collect();
    std::fs::write(&edited, x10.join("\n") + "\n")?;
    let original = std::fs::read(&data)?;
    std::fs::copy(&edited, &data)?;
    let mut resume = train_args(&data, &run_dir, "3");
    resume.push("--resume");
    cases.push(refused(
        "resume after the data changed",
        &resume,
        "is not the file the run was trained on",
    )?);
    std::fs::write(&data, &original)?;
    cases.push(Case {
        name: "refused resumes leave run.json as it was".into(),
        failure: (std::fs::read(run_dir.join("run.json"))? != spec)
            .then(|| "run.json changed".to_string()),
    });
    let empty = dir.join("header-only.csv");
    std::fs::write(&empty, "smiles\n")?;
    cases.push(refused(
        "predict on a header-only file",
        &["predict", "--run", path(&run_dir), "--data", path(&empty)],
        "no data rows",
    )?);
    let aliased = format!("{}/./{}", dir.display(), "esol-80.csv");
    cases.push(refused(
        "predict --out = --data",
        &[
            "predict",
            "--run",
            path(&run_dir),
            "--data",
            path(&data),
            "--out",
            &aliased,
        ],
        "is the input file",
    )?);
    if std::fs::read(&data)? != original {
        cases.push(Case {
            name: "predict keeps its input".into(),
            failure: Some("the input CSV was overwritten".into()),
        });
    }

    // Two processes on one run folder: the second is refused, the first is whole.
    let shared = dir.join("shared");
    let first = xtask(&train_args(&data, &shared, "30")).spawn()?;
    let started = Instant::now();
    while std::fs::read_to_string(shared.join("run.lock"))
        .unwrap_or_default()
        .trim()
        .is_empty()
        && started.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut second = train_args(&data, &shared, "30");
    second.push("--force");
    let second_case = refused(
        "a second process on a run folder",
        &second,
        "another training process",
    )?;
    let first_out = first.wait_with_output()?;
    let first_failure = (!first_out.status.success() || !shared.join("metrics.json").exists())
        .then(|| {
            format!(
                "the first process did not finish its run: {}",
                String::from_utf8_lossy(&first_out.stderr).trim()
            )
        });
    cases.push(Case {
        failure: second_case.failure.or(first_failure),
        ..second_case
    });

    // kill -9 during training, then --resume: the uninterrupted curve.
    let mut rng = StdRng::seed_from_u64(seed);
    let straight = dir.join("straight");
    let t0 = Instant::now();
    if !run(&train_args(&data, &straight, EPOCHS))?.status.success() {
        bail!("the uninterrupted training failed");
    }
    let seconds = t0.elapsed().as_secs_f64();
    let expected = outcome(&straight);
    for round in 0..rounds {
        let killed = dir.join(format!("killed-{round}"));
        let at = Duration::from_secs_f64(seconds * rng.random_range(0.05..0.95));
        let mut child = xtask(&train_args(&data, &killed, EPOCHS)).spawn()?;
        std::thread::sleep(at);
        let was_running = child.try_wait()?.is_none();
        child.kill().ok();
        child.wait()?;
        let mut resume = train_args(&data, &killed, EPOCHS);
        resume.push("--resume");
        let resumed = run(&resume)?;
        let failure = if !resumed.status.success() {
            Some(format!(
                "the resume failed: {}",
                String::from_utf8_lossy(&resumed.stderr).trim()
            ))
        } else if outcome(&killed) != expected {
            Some("the resumed run's curve or test RMSE differs from the uninterrupted run's".into())
        } else {
            None
        };
        cases.push(Case {
            name: format!(
                "kill -9 at {:.2} s of training{}, then resume",
                at.as_secs_f64(),
                if was_running { "" } else { " (already done)" }
            ),
            failure,
        });
    }

    // kill -9 while the conformer cache is written, then the same featurization again.
    let molecules = dir.join("esol-400.csv");
    std::fs::write(
        &molecules,
        text.lines().take(401).collect::<Vec<_>>().join("\n") + "\n",
    )?;
    let featurize = |cache: Option<&Path>, out: &Path| -> Command {
        let mut args = vec![
            "featurize",
            "--data",
            path(&molecules),
            "--coords",
            "embed3d",
            "--out",
            path(out),
        ];
        match cache {
            Some(c) => args.extend(["--cache", path(c)]),
            None => args.push("--no-cache"),
        }
        xtask(&args)
    };
    let baseline = dir.join("features.json");
    let t0 = Instant::now();
    if !featurize(None, &baseline).output()?.status.success() {
        bail!("the featurization without a cache failed");
    }
    let seconds = t0.elapsed().as_secs_f64();
    // The features and the rows; the report differs by its cache section alone.
    let features_of = |path: &Path| -> Result<serde_json::Value> {
        let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
        if let Some(report) = json.get_mut("report").and_then(|r| r.as_object_mut()) {
            report.remove("cache");
        }
        Ok(json)
    };
    let want = features_of(&baseline)?;
    for round in 0..rounds {
        let cache = dir.join(format!("cache-{round}"));
        let out = dir.join(format!("features-{round}.json"));
        let at = Duration::from_secs_f64(seconds * rng.random_range(0.05..0.95));
        let mut child = featurize(Some(&cache), &out).spawn()?;
        std::thread::sleep(at);
        child.kill().ok();
        child.wait()?;
        let again = featurize(Some(&cache), &out).output()?;
        let failure = if !again.status.success() {
            Some(format!(
                "the rerun failed: {}",
                String::from_utf8_lossy(&again.stderr).trim()
            ))
        } else if features_of(&out)? != want {
            Some("the features differ from those made without a cache".into())
        } else {
            None
        };
        cases.push(Case {
            name: format!(
                "kill -9 at {:.2} s of a cached featurization, then again",
                at.as_secs_f64()
            ),
            failure,
        });
    }
    Ok(cases)
}
