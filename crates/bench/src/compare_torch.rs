//! `cargo xtask bench --compare-torch`: runs every row of the side-by-side table in its own
//! process (`bench-row` for ours, `bench/torch_models.py` for PyTorch), prints the table
//! with ratios against PyTorch and writes `bench/results.json` (docs/BENCHMARKS.md).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use serde::Serialize;

use crate::measure::cpu_model;
use crate::model_bench::{BenchMode, BenchModel, BenchRuntime, RowResult, esol_batch, write_batch};

/// One row of the side-by-side table, as written to `bench/results.json`.
#[derive(Debug, Serialize)]
struct TableRow {
    model: BenchModel,
    mode: BenchMode,
    runtime: BenchRuntime,
    batch: usize,
    atoms: usize,
    threads: usize,
    result: Option<RowResult>,
    error: Option<String>,
}

/// Runs one row in a child process (its own peak RSS) and parses the JSON line it prints.
pub(crate) fn spawn_row(
    root: &Path,
    batch: &Path,
    model: BenchModel,
    mode: BenchMode,
    runtime: BenchRuntime,
    threads: usize,
    seconds: f64,
) -> Result<RowResult> {
    let name = |v: &dyn Fn() -> Option<clap::builder::PossibleValue>| {
        v().map(|p| p.get_name().to_string()).unwrap_or_default()
    };
    let model_name = name(&|| model.to_possible_value());
    let mode_name = name(&|| mode.to_possible_value());
    let mut cmd = if runtime == BenchRuntime::Torch {
        let mut c = std::process::Command::new("python3");
        c.arg(root.join("bench/torch_models.py"))
            .arg(batch)
            .args(["--threads", &threads.to_string()]);
        c
    } else {
        let mut c = std::process::Command::new(std::env::current_exe()?);
        c.args(["bench-row", "--batch"])
            .arg(batch)
            .args(["--runtime", &name(&|| runtime.to_possible_value())]);
        c
    };
    cmd.args(["--model", &model_name, "--mode", &mode_name])
        .args(["--seconds", &seconds.to_string()])
        .env("RAYON_NUM_THREADS", threads.to_string());
    let out = cmd.output().context("starting a benchmark row")?;
    if !out.status.success() {
        // The cause: the last lines that are not Rust's backtrace hints.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("note:"))
            .collect();
        let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
        bail!("{}: {tail}", out.status);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or("");
    serde_json::from_str(line).with_context(|| format!("unreadable row output: {line}"))
}

fn python_version(module: &str) -> Option<String> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            &format!("import {module}; print({module}.__version__)"),
        ])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `cargo xtask bench --compare-torch`: every row of the table (MAT small and
/// pretrained-size; forward and training step; flex, wgpu if `with_wgpu`, ONNX Runtime for
/// forward when built with `onnx`, and PyTorch when `python3 -c "import torch"` works),
/// printed, and written to `bench/results.json`. Rows that cannot run say why.
pub fn compare_torch(
    root: &Path,
    datasets: &Path,
    threads: usize,
    seconds: f64,
    with_wgpu: bool,
) -> Result<()> {
    anyhow::ensure!(
        seconds.is_finite() && seconds >= 0.0,
        "--seconds must be a finite number >= 0, not {seconds}"
    );
    let data = esol_batch(datasets)?;
    let batch_path: PathBuf =
        std::env::temp_dir().join(format!("molattn-bench-batch-{}.json", std::process::id()));
    write_batch(&data, &batch_path)?;
    let tm_data = crate::tm_bench::esol_batch(datasets)?;
    let tm_batch_path: PathBuf = std::env::temp_dir().join(format!(
        "molattn-bench-tm-batch-{}.json",
        std::process::id()
    ));
    crate::tm_bench::write_batch(&tm_data, &tm_batch_path)?;
    let torch = python_version("torch");
    if torch.is_none() {
        println!(
            "PyTorch rows skipped: `python3 -c \"import torch\"` fails (pip install torch numpy rdkit safetensors)"
        );
    }
    let onnxruntime = if cfg!(feature = "onnx") {
        python_version("onnxruntime")
    } else {
        println!(
            "ONNX Runtime rows skipped: this build has no `onnx` feature (cargo xtask-onnx bench ...)"
        );
        None
    };
    println!(
        "batch {} ESOL molecules, {} atoms after padding (Transformer-M: {} molecules, {} atoms); \
         {threads} threads for every runtime; {}",
        data.batch_size,
        data.n_atoms,
        tm_data.batch_size,
        tm_data.n_atoms,
        cpu_model()
    );
    println!(
        "{:<15} {:<8} {:<12} {:>9} {:>9} {:>9} {:>9}",
        "model", "mode", "runtime", "mol/s", "ms/batch", "RSS MiB", "vs torch"
    );
    let mut rows = Vec::new();
    for model in [
        BenchModel::MatSmall,
        BenchModel::MatPretrained,
        BenchModel::TmSmall,
    ] {
        let is_mat = model != BenchModel::TmSmall;
        let (path, batch, atoms) = if is_mat {
            (&batch_path, data.batch_size, data.n_atoms)
        } else {
            (&tm_batch_path, tm_data.batch_size, tm_data.n_atoms)
        };
        for mode in [BenchMode::Forward, BenchMode::Train] {
            let mut runtimes = vec![BenchRuntime::Flex];
            if mode == BenchMode::Forward {
                runtimes.push(BenchRuntime::FlexSplit);
            }
            if with_wgpu {
                runtimes.push(BenchRuntime::Wgpu);
            }
            if mode == BenchMode::Forward && is_mat && onnxruntime.is_some() {
                runtimes.push(BenchRuntime::Onnxruntime);
            }
            if torch.is_some() {
                runtimes.push(BenchRuntime::Torch);
            }
            let mut measured: Vec<TableRow> = runtimes
                .into_iter()
                .map(|runtime| {
                    let r = spawn_row(root, path, model, mode, runtime, threads, seconds);
                    TableRow {
                        model,
                        mode,
                        runtime,
                        batch,
                        atoms,
                        threads,
                        error: r.as_ref().err().map(|e| format!("{e:#}")),
                        result: r.ok(),
                    }
                })
                .collect();
            let reference = measured
                .iter()
                .find(|r| r.runtime == BenchRuntime::Torch)
                .and_then(|r| r.result.as_ref().map(|x| x.molecules_per_second));
            for row in &mut measured {
                let label = |v: Option<clap::builder::PossibleValue>| {
                    v.map(|p| p.get_name().to_string()).unwrap_or_default()
                };
                let (m, o, r) = (
                    label(row.model.to_possible_value()),
                    label(row.mode.to_possible_value()),
                    label(row.runtime.to_possible_value()),
                );
                match (&row.result, &row.error) {
                    (Some(x), _) => println!(
                        "{m:<15} {o:<8} {r:<12} {:>9.1} {:>9.1} {:>9} {:>9}",
                        x.molecules_per_second,
                        x.median_ms,
                        x.peak_rss_mb.map_or("-".into(), |v| format!("{v:.0}")),
                        reference.map_or("-".into(), |t| format!(
                            "{:.2}x",
                            x.molecules_per_second / t
                        )),
                    ),
                    (None, Some(e)) => println!("{m:<15} {o:<8} {r:<12} failed: {e}"),
                    (None, None) => unreachable!("a row has a result or an error"),
                }
            }
            rows.extend(measured);
        }
    }
    let _ = std::fs::remove_file(&batch_path);
    let _ = std::fs::remove_file(&tm_batch_path);
    let results = serde_json::json!({
        "command": format!(
            "cargo {} bench --compare-torch --threads {threads} --seconds {seconds}{}",
            if cfg!(feature = "onnx") { "xtask-onnx" } else { "xtask" },
            if with_wgpu { " --device wgpu" } else { "" }
        ),
        "machine": {
            "cpu": cpu_model(),
            "cores": std::thread::available_parallelism().map_or(1, |n| n.get()),
            "threads": threads,
        },
        "versions": {"burn": "0.22.1", "torch": torch, "onnxruntime": onnxruntime,
                     "blas": attn_core::blas::blas_summary()},
        "batch": {"source": "first 32 featurizable ESOL molecules, 2D-layout distances",
                  "molecules": data.batch_size, "atoms": data.n_atoms,
                  "transformer_m_atoms": tm_data.n_atoms},
        "rows": rows,
    });
    let out = root.join("bench/results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)? + "\n")?;
    println!("wrote {}", out.display());
    Ok(())
}
