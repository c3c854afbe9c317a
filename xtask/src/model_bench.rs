//! Model throughput: `cargo xtask bench` (featurization, MAT forward, MSA attention) and
//! `cargo xtask bench --compare-torch`, the side-by-side table of issue #12: our MAT (flex,
//! wgpu when asked, ONNX Runtime on the exported graph) against our PyTorch MAT reference
//! (`bench/torch_models.py`) on the same padded ESOL batch, the same thread count, forward
//! (inference) and a full training step (forward, MSE, backward, Adam), each row in its own
//! process so that its peak RSS is its own.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Tensor, TensorData};
use clap::ValueEnum;
use models::{MatBatch, MatConfig};
use mol_featurize::{MatBatchData, featurize_all, pad_batch};
use serde::{Deserialize, Serialize};

use crate::msa_bench::peak_rss_mib;
use crate::{CoordsArg, DeviceArg, featurizer};

/// Molecules per benchmark batch (the protocol; the MAT paper trains with 32 too).
pub const BATCH_SIZE: usize = 32;

/// A model configuration in the throughput table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BenchModel {
    /// MAT's `make_model` defaults: d_model 128, 2 layers, 8 heads.
    MatSmall,
    /// MAT's pretrained configuration: d_model 1024, 8 layers, 16 heads (42M parameters).
    MatPretrained,
}

impl BenchModel {
    fn config(self) -> MatConfig {
        match self {
            BenchModel::MatSmall => MatConfig::small(),
            BenchModel::MatPretrained => MatConfig::pretrained(),
        }
        .with_dropout(0.0)
    }
}

/// What one row times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BenchMode {
    /// Inference forward pass (no autodiff).
    Forward,
    /// Forward, MSE loss, backward and one Adam step (lr 1e-4).
    Train,
}

/// Who runs the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BenchRuntime {
    /// Ours on Burn's flex CPU backend, one `forward` per batch (intra-op threads only,
    /// like the other runtimes).
    Flex,
    /// Ours on flex with the batch split across the threads
    /// ([`models::MatModel::forward_parallel`], what `predict` does on the CPU; forward only).
    FlexSplit,
    /// Ours on Burn's wgpu backend.
    Wgpu,
    /// Our exported ONNX graph in ONNX Runtime (forward only).
    Onnxruntime,
    /// Our PyTorch reference (`bench/torch_models.py`).
    Torch,
}

/// One measured row: throughput and the peak resident memory of its process.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RowResult {
    /// Molecules per second (batch size / median time per call).
    pub molecules_per_second: f64,
    /// Median milliseconds per call (one batch).
    pub median_ms: f64,
    /// Timed calls.
    pub runs: usize,
    /// Peak resident set size of the row's process in MiB (`None` where not measurable).
    pub peak_rss_mb: Option<f64>,
}

/// The first `BATCH_SIZE` featurizable molecules of ESOL, padded (2D-layout distances, as
/// `cargo xtask bench` always used: the coordinates do not change the work).
pub fn esol_batch(datasets: &Path) -> Result<MatBatchData> {
    let smiles = train::data::read_smiles_csv(&datasets.join("esol/esol.csv"), "smiles")?;
    let smiles: Vec<String> = smiles.into_iter().take(2 * BATCH_SIZE).collect();
    let (features, _) = featurize_all(&smiles, &featurizer(CoordsArg::Layout2d, 42, false), false);
    let feats: Vec<_> = features.iter().flatten().take(BATCH_SIZE).collect();
    pad_batch(&feats).map_err(anyhow::Error::msg)
}

/// Writes `data` as JSON (`{name: {shape, values}}`, mask as 0/1 floats, 1 = padding), the
/// exchange format with `bench/torch_models.py`.
fn write_batch(data: &MatBatchData, path: &Path) -> Result<()> {
    let (b, n, d) = (data.batch_size, data.n_atoms, data.d_atom);
    let mask: Vec<f32> = data
        .key_padding_mask
        .iter()
        .map(|&p| f32::from(u8::from(p)))
        .collect();
    let json = serde_json::json!({
        "node_features": {"shape": [b, n, d], "values": data.node_features},
        "key_padding_mask": {"shape": [b, n], "values": mask},
        "adjacency": {"shape": [b, n, n], "values": data.adjacency},
        "distances": {"shape": [b, n, n], "values": data.distances},
    });
    std::fs::write(path, serde_json::to_vec(&json)?).with_context(|| path.display().to_string())
}

fn read_batch(path: &Path) -> Result<MatBatchData> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    let json: serde_json::Value = serde_json::from_str(&text)?;
    let values = |name: &str| -> Result<Vec<f32>> {
        Ok(serde_json::from_value(json[name]["values"].clone())?)
    };
    let shape: Vec<usize> = serde_json::from_value(json["node_features"]["shape"].clone())?;
    let [batch_size, n_atoms, d_atom] = shape[..] else {
        bail!("{}: node_features must be [B, N, d_atom]", path.display());
    };
    Ok(MatBatchData {
        batch_size,
        n_atoms,
        d_atom,
        node_features: values("node_features")?,
        adjacency: values("adjacency")?,
        distances: values("distances")?,
        key_padding_mask: values("key_padding_mask")?
            .iter()
            .map(|&v| v > 0.5)
            .collect(),
    })
}

/// Calls `step` once to warm up, then until 3 calls and `seconds` have passed (at most
/// 20 calls); returns the median seconds per call and the number of timed calls.
fn time_calls(mut step: impl FnMut() -> Result<()>, seconds: f64) -> Result<(f64, usize)> {
    step()?;
    let mut times = Vec::new();
    let budget = Instant::now();
    while times.len() < 3
        || (budget.elapsed() < Duration::from_secs_f64(seconds) && times.len() < 20)
    {
        let t0 = Instant::now();
        step()?;
        times.push(t0.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], times.len()))
}

/// Measures one row in this process (the hidden `bench-row` command): ours on flex / wgpu,
/// or the exported graph in ONNX Runtime. Errors name what is missing (a feature, torch).
pub fn run_row(
    batch_path: &Path,
    model: BenchModel,
    mode: BenchMode,
    runtime: BenchRuntime,
    seconds: f64,
) -> Result<RowResult> {
    anyhow::ensure!(
        seconds.is_finite() && seconds >= 0.0,
        "--seconds must be a finite number >= 0, not {seconds}"
    );
    let data = read_batch(batch_path)?;
    let device = match runtime {
        BenchRuntime::Flex | BenchRuntime::FlexSplit | BenchRuntime::Onnxruntime => {
            DeviceArg::Flex.device()?
        }
        BenchRuntime::Wgpu => DeviceArg::Wgpu.device()?,
        BenchRuntime::Torch => bail!("the torch rows run in bench/torch_models.py"),
    };
    device.seed(0);
    let (median, runs) = match (runtime, mode) {
        (BenchRuntime::Onnxruntime, BenchMode::Forward) => {
            onnxruntime_forward(&data, model, seconds)?
        }
        (BenchRuntime::Onnxruntime | BenchRuntime::FlexSplit, BenchMode::Train) => {
            bail!("{runtime:?} rows are inference only")
        }
        (_, BenchMode::Forward) => {
            let net = model.config().init(&device);
            let batch = MatBatch::from_data(&data, &device);
            // FlexSplit: what `predict` does on the CPU, the batch split across the threads.
            let parts = match runtime {
                BenchRuntime::FlexSplit => rayon::current_num_threads(),
                _ => 1,
            };
            time_calls(
                || {
                    net.forward_parallel(&batch, parts)
                        .try_into_vec_as::<f32>()?;
                    Ok(())
                },
                seconds,
            )?
        }
        (_, BenchMode::Train) => {
            let ad = device.clone().autodiff();
            let mut net = Some(model.config().init(&ad));
            let mut optim = AdamConfig::new().with_epsilon(1e-8).init();
            let batch = MatBatch::from_data(&data, &ad);
            let b = data.batch_size;
            let target: Vec<f32> = (0..b)
                .map(|i| -1.0 + 2.0 * i as f32 / (b.max(2) - 1) as f32)
                .collect();
            let target = Tensor::<2>::from_data(TensorData::new(target, [b, 1]), &ad);
            time_calls(
                || {
                    let m = net.take().expect("model is put back after each step");
                    let loss =
                        MseLoss::new().forward(m.forward(&batch), target.clone(), Reduction::Mean);
                    let grads = GradientsParams::from_grads(loss.backward(), &m);
                    let m = optim.step(1e-4, m, grads);
                    // Read one parameter back, so that the lazy step has run.
                    m.generator.proj.weight.val().into_data();
                    net = Some(m);
                    Ok(())
                },
                seconds,
            )?
        }
    };
    Ok(RowResult {
        molecules_per_second: data.batch_size as f64 / median,
        median_ms: median * 1e3,
        runs,
        peak_rss_mb: peak_rss_mib(),
    })
}

#[cfg(feature = "onnx")]
fn onnxruntime_forward(
    data: &MatBatchData,
    model: BenchModel,
    seconds: f64,
) -> Result<(f64, usize)> {
    let device = burn::tensor::Device::flex();
    device.seed(0);
    let net = model.config().init(&device);
    let path = std::env::temp_dir().join(format!("molattn-bench-{}.onnx", std::process::id()));
    export::write_model(&export::mat_to_onnx(&net, &[]), &path)?;
    drop(net);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(threads);
    let mut session = export::verify::OnnxRuntimeSession::open(&path, Some(threads))?;
    let feeds = export::mat_feeds(data);
    let timed = time_calls(
        || {
            session.run(&feeds, "prediction")?;
            Ok(())
        },
        seconds,
    );
    let _ = std::fs::remove_file(&path);
    timed
}

#[cfg(not(feature = "onnx"))]
fn onnxruntime_forward(_: &MatBatchData, _: BenchModel, _: f64) -> Result<(f64, usize)> {
    Err(crate::missing_feature(
        "onnx",
        "the ONNX Runtime rows of bench --compare-torch",
    ))
}

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
fn spawn_row(
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

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
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
        "batch {} ESOL molecules, {} atoms after padding; {threads} threads for every runtime; {}",
        data.batch_size,
        data.n_atoms,
        cpu_model()
    );
    println!(
        "{:<15} {:<8} {:<12} {:>9} {:>9} {:>9} {:>9}",
        "model", "mode", "runtime", "mol/s", "ms/batch", "RSS MiB", "vs torch"
    );
    let mut rows = Vec::new();
    for model in [BenchModel::MatSmall, BenchModel::MatPretrained] {
        for mode in [BenchMode::Forward, BenchMode::Train] {
            let mut runtimes = vec![BenchRuntime::Flex];
            if mode == BenchMode::Forward {
                runtimes.push(BenchRuntime::FlexSplit);
            }
            if with_wgpu {
                runtimes.push(BenchRuntime::Wgpu);
            }
            if mode == BenchMode::Forward && onnxruntime.is_some() {
                runtimes.push(BenchRuntime::Onnxruntime);
            }
            if torch.is_some() {
                runtimes.push(BenchRuntime::Torch);
            }
            let mut measured: Vec<TableRow> = runtimes
                .into_iter()
                .map(|runtime| {
                    let r = spawn_row(root, &batch_path, model, mode, runtime, threads, seconds);
                    TableRow {
                        model,
                        mode,
                        runtime,
                        batch: data.batch_size,
                        atoms: data.n_atoms,
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
        "versions": {"burn": "0.22.1", "torch": torch, "onnxruntime": onnxruntime},
        "batch": {"source": "first 32 featurizable ESOL molecules, 2D-layout distances",
                  "molecules": data.batch_size, "atoms": data.n_atoms},
        "rows": rows,
    });
    let out = root.join("bench/results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)? + "\n")?;
    println!("wrote {}", out.display());
    Ok(())
}

/// `cargo xtask bench`: featurization throughput of the first `molecules` ESOL SMILES for
/// each coordinate method, the MAT forward (small and pretrained-size) on `device`, and
/// MSA column global attention (in a child process, so that its peak memory is its own).
pub fn bench(datasets: &Path, molecules: usize, device: DeviceArg) -> Result<()> {
    let smiles = train::data::read_smiles_csv(&datasets.join("esol/esol.csv"), "smiles")?;
    let smiles: Vec<String> = smiles.into_iter().take(molecules).collect();
    println!(
        "featurization ({} ESOL molecules, {} rayon threads):",
        smiles.len(),
        crate::rayon_threads()
    );
    for coords in [
        CoordsArg::Topological,
        CoordsArg::Layout2d,
        CoordsArg::Embed3d,
    ] {
        let f = featurizer(coords, 42, false);
        let t0 = Instant::now();
        let (_, report) = featurize_all(&smiles, &f, false);
        let secs = t0.elapsed().as_secs_f64();
        let name: mol_featurize::conformer::CoordinateMethod = coords.into();
        println!(
            "  {name:?}: {:.1} mol/s ({} ok)",
            report.n_total as f64 / secs,
            report.n_ok
        );
    }
    let data = esol_batch(datasets)?;
    let dev = device.device()?;
    println!(
        "MAT forward, batch {} (N = {} atoms after padding), device {dev:?}:",
        data.batch_size, data.n_atoms,
    );
    for model in [BenchModel::MatSmall, BenchModel::MatPretrained] {
        dev.seed(0);
        let net = model.config().init(&dev);
        let batch = MatBatch::from_data(&data, &dev);
        let (median, runs) = time_calls(
            || {
                net.forward(&batch).try_into_vec_as::<f32>()?;
                Ok(())
            },
            10.0,
        )?;
        println!(
            "  {:<10} ({} params): {:.1} mol/s (median of {runs} runs, {:.1} ms/batch)",
            format!("{model:?}"),
            net.num_params(),
            data.batch_size as f64 / median,
            median * 1e3
        );
    }
    let status = std::process::Command::new(std::env::current_exe()?)
        .args(["msa-bench", "--device"])
        .arg(
            device
                .to_possible_value()
                .expect("no skipped variants")
                .get_name(),
        )
        .status()?;
    anyhow::ensure!(status.success(), "msa-bench failed: {status}");
    Ok(())
}
