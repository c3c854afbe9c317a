//! Model throughput: `cargo xtask bench` (featurization, MAT forward, MSA attention) and
//! `cargo xtask bench --compare-torch`, the side-by-side table of issue #12: our MAT (flex,
//! wgpu when asked, ONNX Runtime on the exported graph) and Transformer-M (`tm_bench`)
//! against the PyTorch references (`bench/torch_models.py`: our MAT reference, equal to
//! ardigen/MAT's code, and the original Transformer-M code) on the same padded ESOL batch,
//! the same thread count, forward (inference) and a full training step (forward, MSE,
//! backward, Adam), each row in its own process so that its peak RSS is its own.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::optim::GradientsParams;
use clap::ValueEnum;
use models::{MatBatch, MatConfig};
use mol_featurize::{MatBatchData, featurize_all, pad_batch};
use serde::{Deserialize, Serialize};
use train::engine::fused_adam::FusedAdamConfig;

use mol_featurize::conformer::CoordinateMethod;

use crate::measure::{BATCH_SIZE, peak_rss_mib, regression_target, time_calls};
use crate::{featurizer, flex_or_wgpu};

/// A model configuration in the throughput table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BenchModel {
    /// MAT's `make_model` defaults: d_model 128, 2 layers, 8 heads.
    MatSmall,
    /// MAT's pretrained configuration: d_model 1024, 8 layers, 16 heads (42M parameters).
    MatPretrained,
    /// Transformer-M small: 4 layers, d_model 128, 8 heads, K 32 (2D+3D mode).
    TmSmall,
}

impl BenchModel {
    fn config(self) -> MatConfig {
        match self {
            BenchModel::MatSmall => MatConfig::small(),
            BenchModel::MatPretrained => MatConfig::pretrained(),
            BenchModel::TmSmall => unreachable!("Transformer-M rows run in tm_bench"),
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
    /// The PyTorch reference (`bench/torch_models.py`).
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
/// `cargo xtask bench` always used: the coordinates do not change the work): `[32, N,
/// d_atom]` features, `[32, N, N]` adjacency and distances (Angstrom).
///
/// # Errors
/// `esol/esol.csv` missing or unreadable under `datasets`.
pub fn esol_batch(datasets: &Path) -> Result<MatBatchData> {
    let smiles = train::data::read_smiles_csv(&datasets.join("esol/esol.csv"), "smiles")?;
    let smiles: Vec<String> = smiles.into_iter().take(2 * BATCH_SIZE).collect();
    let (features, _) = featurize_all(&smiles, &featurizer(CoordinateMethod::Layout2d), false);
    let feats: Vec<_> = features.iter().flatten().take(BATCH_SIZE).collect();
    pad_batch(&feats).map_err(anyhow::Error::msg)
}

/// Writes `data` as JSON (`{name: {shape, values}}`, mask as 0/1 floats, 1 = padding), the
/// exchange format with `bench/torch_models.py`.
///
/// # Errors
/// The file cannot be written.
pub fn write_batch(data: &MatBatchData, path: &Path) -> Result<()> {
    std::fs::write(path, serde_json::to_vec(&batch_json(data))?)
        .with_context(|| path.display().to_string())
}

/// One batch in the exchange format of [`write_batch`].
pub(crate) fn batch_json(data: &MatBatchData) -> serde_json::Value {
    let (b, n, d) = (data.batch_size, data.n_atoms, data.d_atom);
    let mask: Vec<f32> = data
        .key_padding_mask
        .iter()
        .map(|&p| f32::from(u8::from(p)))
        .collect();
    serde_json::json!({
        "node_features": {"shape": [b, n, d], "values": data.node_features},
        "key_padding_mask": {"shape": [b, n], "values": mask},
        "adjacency": {"shape": [b, n, n], "values": data.adjacency},
        "distances": {"shape": [b, n, n], "values": data.distances},
    })
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
        edge_features: None,
    })
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
    let device = match runtime {
        BenchRuntime::Flex | BenchRuntime::FlexSplit | BenchRuntime::Onnxruntime => {
            flex_or_wgpu(false)?
        }
        BenchRuntime::Wgpu => flex_or_wgpu(true)?,
        BenchRuntime::Torch => bail!("the torch rows run in bench/torch_models.py"),
    };
    device.seed(0);
    if model == BenchModel::TmSmall {
        anyhow::ensure!(
            runtime != BenchRuntime::Onnxruntime,
            "Transformer-M rows: flex, flex-split, wgpu and torch"
        );
        let parts = match runtime {
            BenchRuntime::FlexSplit => rayon::current_num_threads(),
            _ => 1,
        };
        let (median, runs, batch) = crate::tm_bench::time_row(
            batch_path,
            mode == BenchMode::Train,
            parts,
            &device,
            seconds,
            |step, s| time_calls(step, s),
        )?;
        return Ok(RowResult {
            molecules_per_second: batch as f64 / median,
            median_ms: median * 1e3,
            runs,
            peak_rss_mb: peak_rss_mib(),
        });
    }
    let data = read_batch(batch_path)?;
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
            let mut optim = FusedAdamConfig::new().with_epsilon(1e-8).init();
            let batch = MatBatch::from_data(&data, &ad);
            let b = data.batch_size;
            let target = regression_target(b, &ad);
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

/// `cargo xtask bench`: featurization throughput of the first `molecules` ESOL SMILES for
/// each coordinate method, the MAT forward (small and pretrained-size) on `device`, and
/// MSA column global attention (in a child process, so that its peak memory is its own);
/// `device_flag` is `device`'s `--device` value, passed on to that child.
pub fn bench(
    datasets: &Path,
    molecules: usize,
    (dev, device_flag): (burn::tensor::Device, &str),
) -> Result<()> {
    let smiles = train::data::read_smiles_csv(&datasets.join("esol/esol.csv"), "smiles")?;
    let smiles: Vec<String> = smiles.into_iter().take(molecules).collect();
    println!(
        "featurization ({} ESOL molecules, {} rayon threads):",
        smiles.len(),
        rayon::current_num_threads()
    );
    for coords in [
        CoordinateMethod::Topological,
        CoordinateMethod::Layout2d,
        CoordinateMethod::Embed3d,
    ] {
        let f = featurizer(coords);
        let t0 = Instant::now();
        let (_, report) = featurize_all(&smiles, &f, false);
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "  {coords:?}: {:.1} mol/s ({} ok)",
            report.n_total as f64 / secs,
            report.n_ok
        );
    }
    let data = esol_batch(datasets)?;
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
        .args(["msa-bench", "--device", device_flag])
        .status()?;
    anyhow::ensure!(status.success(), "msa-bench failed: {status}");
    Ok(())
}
