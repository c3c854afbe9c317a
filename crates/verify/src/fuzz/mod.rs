//! The fuzzing of `cargo xtask fuzz` (issues #19, #37): [`run`] runs
//! `mol_featurize::fuzz` for a time budget on a worker thread, timing every input against a
//! per-input budget (a hang fails the run and its input is written out), minimising
//! failing inputs and writing a report; [`processes`] runs the binary itself as a user
//! would, with bad input and `kill -9`; [`fuzz_datasets`] does both on MAT's datasets.

pub mod processes;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use mol_featurize::fuzz::{self, Corpus, Failure, Generator, Input};
use serde::Serialize;

/// What `cargo xtask fuzz` did (`fuzz_report.json`).
#[derive(Debug, Default, Serialize)]
pub struct FuzzReport {
    /// Seconds spent.
    pub seconds: f64,
    /// RNG seed.
    pub seed: u64,
    /// SMILES inputs tried.
    pub smiles_tried: u64,
    /// SDF inputs tried.
    pub sdf_tried: u64,
    /// XYZ frames tried.
    pub xyz_tried: u64,
    /// Molecules featurized.
    pub accepted: u64,
    /// Molecules or records rejected with a reason.
    pub rejected: u64,
    /// Failures: kind, message, file with the (minimised) input.
    pub failures: Vec<(String, String, String)>,
    /// An input that ran past the per-input budget.
    pub hang: Option<String>,
    /// The process-level cases ([`processes`]).
    pub processes: Vec<processes::Case>,
}

/// Time spent shrinking one failing input.
const MINIMIZE_BUDGET: Duration = Duration::from_secs(20);

/// What the worker is on, for the watchdog: an input and how long it may take.
struct Current {
    started: Instant,
    input: Option<Input>,
    allowed: Duration,
}

fn write_input(out: &Path, name: &str, input: &Input) -> Result<String> {
    let ext = match input {
        Input::Smiles(_) => "smi",
        Input::Sdf { .. } => "sdf",
        Input::Xyz { .. } => "xyz",
    };
    let path = out.join(format!("{name}.{ext}"));
    std::fs::write(&path, input.text()).with_context(|| path.display().to_string())?;
    Ok(path.display().to_string())
}

fn write_report(out: &Path, report: &FuzzReport) -> Result<()> {
    let path = out.join("fuzz_report.json");
    std::fs::write(&path, serde_json::to_string_pretty(report)?)
        .with_context(|| path.display().to_string())
}

/// Fuzzes for `minutes` from the SMILES in `seeds`; returns whether every invariant held.
pub fn run(
    seeds: Vec<String>,
    minutes: f64,
    seed: u64,
    input_budget: Duration,
    out: &Path,
    processes: Vec<processes::Case>,
) -> Result<bool> {
    std::fs::create_dir_all(out).with_context(|| out.display().to_string())?;
    let processes_ok = processes.iter().all(|c| c.failure.is_none());
    let mut generator = Generator::new(Corpus::new(seeds, 200), seed);
    let corpus = generator.corpus();
    println!(
        "fuzz: {minutes} min from {} SMILES and {} SDF records (seed {seed}, {} s per input); \
         writing to {}",
        corpus.smiles.len(),
        corpus.records.len(),
        input_budget.as_secs_f64(),
        out.display()
    );
    let budget = Duration::from_secs_f64(minutes * 60.0);
    let current = Arc::new(Mutex::new(Current {
        started: Instant::now(),
        input: None,
        allowed: input_budget,
    }));
    let report = Arc::new(Mutex::new(FuzzReport {
        seed,
        processes,
        ..Default::default()
    }));
    let t0 = Instant::now();
    let out_dir: PathBuf = out.to_path_buf();
    let worker = {
        let (current, report) = (current.clone(), report.clone());
        std::thread::spawn(move || -> Result<()> {
            while t0.elapsed() < budget {
                let input = generator.next_input();
                if let Ok(mut c) = current.lock() {
                    c.started = Instant::now();
                    c.input = Some(input.clone());
                    c.allowed = input_budget;
                }
                let result = fuzz::run(&input);
                if let Ok(mut c) = current.lock() {
                    // Minimising a failure reruns it many times: still watched, with the
                    // minimiser's budget added.
                    c.started = Instant::now();
                    c.allowed = input_budget + MINIMIZE_BUDGET;
                    if result.is_ok() {
                        c.input = None;
                    }
                }
                let mut r = report.lock().map_err(|_| anyhow::anyhow!("report lock"))?;
                match &input {
                    Input::Smiles(_) => r.smiles_tried += 1,
                    Input::Sdf { .. } => r.sdf_tried += 1,
                    Input::Xyz { .. } => r.xyz_tried += 1,
                }
                match result {
                    Ok(o) => {
                        r.accepted += o.accepted as u64;
                        r.rejected += o.rejected as u64;
                    }
                    Err(failure) => {
                        drop(r);
                        record_failure(&out_dir, &report, &input, &failure)?;
                    }
                }
            }
            if let Ok(mut c) = current.lock() {
                c.input = None;
            }
            Ok(())
        })
    };
    // Watchdog: the toolkit has no cancellation, so a stuck input ends the process.
    let mut last_print = Instant::now();
    while !worker.is_finished() {
        std::thread::sleep(Duration::from_millis(100));
        let stuck = current.lock().ok().and_then(|c| {
            (c.input.is_some() && c.started.elapsed() > c.allowed)
                .then(|| c.input.clone())
                .flatten()
        });
        if let Some(input) = stuck {
            let path = write_input(out, "hang", &input)?;
            let mut r = report.lock().map_err(|_| anyhow::anyhow!("report lock"))?;
            r.hang = Some(path.clone());
            r.seconds = t0.elapsed().as_secs_f64();
            write_report(out, &r)?;
            eprintln!(
                "fuzz: an input ran past {} s: {path}",
                input_budget.as_secs_f64()
            );
            std::process::exit(1);
        }
        if last_print.elapsed() > Duration::from_secs(30) {
            if let Ok(r) = report.lock() {
                println!(
                    "  {:.0} s: {} SMILES + {} SDF inputs, {} failures",
                    t0.elapsed().as_secs_f64(),
                    r.smiles_tried,
                    r.sdf_tried,
                    r.failures.len()
                );
            }
            last_print = Instant::now();
        }
    }
    worker
        .join()
        .map_err(|_| anyhow::anyhow!("fuzz worker panicked"))??;
    let mut r = report.lock().map_err(|_| anyhow::anyhow!("report lock"))?;
    r.seconds = t0.elapsed().as_secs_f64();
    write_report(out, &r)?;
    println!(
        "fuzz: {} inputs in {:.0} s ({} SMILES, {} SDF, {} XYZ; {} molecules featurized, {} \
         rejected with a reason); {} failures",
        r.smiles_tried + r.sdf_tried + r.xyz_tried,
        r.seconds,
        r.smiles_tried,
        r.sdf_tried,
        r.xyz_tried,
        r.accepted,
        r.rejected,
        r.failures.len()
    );
    for (kind, message, file) in &r.failures {
        println!("  {kind}: {message} ({file})");
    }
    Ok(r.failures.is_empty() && processes_ok)
}

fn record_failure(
    out: &Path,
    report: &Arc<Mutex<FuzzReport>>,
    input: &Input,
    failure: &Failure,
) -> Result<()> {
    let shrunk = fuzz::minimize(input, failure, MINIMIZE_BUDGET);
    let mut r = report.lock().map_err(|_| anyhow::anyhow!("report lock"))?;
    let name = format!("{}-{}", failure.kind(), r.failures.len());
    let path = write_input(out, &name, &shrunk)?;
    eprintln!("fuzz: {failure} ({path})");
    r.failures
        .push((failure.kind().to_string(), failure.to_string(), path));
    Ok(())
}

/// What `cargo xtask fuzz` runs: the process-level cases ([`processes::run_cases`],
/// `process_rounds` rounds of kills, on `datasets`' ESOL), then the readers fuzzed for
/// `minutes` with MAT's three datasets' SMILES as seeds, each input within
/// `input_seconds`; findings and `fuzz_report.json` in `out`. Returns whether every
/// invariant held.
///
/// # Errors
/// Missing datasets or an unwritable `out`.
pub fn fuzz_datasets(
    datasets: &Path,
    out: &Path,
    (minutes, input_seconds): (f64, f64),
    (seed, process_rounds): (u64, usize),
) -> Result<bool> {
    let mut seeds = Vec::new();
    for name in ["esol", "freesolv", "bbbp"] {
        seeds.extend(train::data::read_smiles_csv(
            &datasets.join(format!("{name}/{name}.csv")),
            "smiles",
        )?);
    }
    let t0 = std::time::Instant::now();
    let processes =
        processes::run_cases(&datasets.join("esol/esol.csv"), out, process_rounds, seed)?;
    let broken = processes.iter().filter(|c| c.failure.is_some()).count();
    println!(
        "fuzz: {} process-level cases in {:.0} s (bad arguments and data, two processes on \
         one run folder, kill -9 during training and cache writes); {broken} failures",
        processes.len(),
        t0.elapsed().as_secs_f64()
    );
    for case in &processes {
        if let Some(why) = &case.failure {
            println!("  {}: {why}", case.name);
        }
    }
    let budget = Duration::from_secs_f64(input_seconds);
    run(seeds, minutes, seed, budget, out, processes)
}
