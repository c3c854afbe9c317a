//! `cargo xtask bench --generate`: the SMILES generator side by side with a PyTorch
//! reference of the same architecture (`bench/torch_gpt.py`, the weights written here), on
//! the same threads, and local against dense attention from 1k tokens up (issue #36,
//! item 9). Each row runs in its own process (`bench-gen-row` for ours), so that its peak
//! RSS is its own. Writes bench/generate.json and docs/images/local_vs_dense_{time,memory}.png.
//!
//! - sampling: KV-cached on both sides (caches preallocated and written in place), the
//!   prompt `<bos>`, then a fixed number of one-token steps for every row (temperature 1),
//!   so that both sides do the same work whatever the weights; molecules/s.
//! - training: next-token cross-entropy on a `[B, T]` batch of tokens, backward, one Adam
//!   step (lr 1e-4), dropout as the model's config; tokens/s.
//! - attention: one `SequenceSelfAttention` layer (d_model 256, 8 heads, batch 1),
//!   forward only, dense causal up to 4k tokens, causal with a window of 128 up to 32k.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use attn_core::{AttentionPattern, SequenceAttentionConfig};
use burn::optim::GradientsParams;
use burn::prelude::*;
use models::SmilesGpt;
use models::smiles_gpt::CpuWeights;
use models::smiles_gpt::sampling::{Decoding, SamplingSettings, decode_chunk_rows, sample_token};
use mol_featurize::smiles_tokenizer::BOS;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use train::engine::fused_adam::FusedAdamConfig;

use crate::measure::{cpu_model, peak_rss_mib, time_calls};

mod weights;
use weights::write_weights;

/// Sequence lengths of the dense attention rows (forward only; one 8-head score tensor
/// of 4k x 4k is 0.5 GB).
pub const DENSE_LENGTHS: [usize; 3] = [1024, 2048, 4096];
/// Sequence lengths of the local attention rows.
pub const LOCAL_LENGTHS: [usize; 6] = [1024, 2048, 4096, 8192, 16384, 32768];
/// Window of the local attention rows.
pub const WINDOW: usize = 128;

/// What one row measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GenBenchMode {
    /// KV-cached sampling of `--batch` sequences for `--steps` tokens.
    Sample,
    /// One training step on `--batch` x `--seq-len` tokens.
    Train,
    /// One dense causal attention forward over `--seq-len` tokens.
    DenseAttention,
    /// One local (window 128) causal attention forward over `--seq-len` tokens.
    LocalAttention,
}

/// One row's measurement (the JSON line a row prints).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GenRowResult {
    /// Molecules/s (sample) or tokens/s (train, attention).
    pub per_second: f64,
    /// Median milliseconds per call.
    pub median_ms: f64,
    /// Timed calls.
    pub runs: usize,
    /// Peak resident memory of the row's process (MiB).
    pub peak_rss_mb: Option<f64>,
}

/// Settings of the comparison.
#[derive(Debug, Clone)]
pub struct GenBenchOptions {
    /// Threads of every runtime.
    pub threads: usize,
    /// Seconds of timed calls per row.
    pub seconds: f64,
    /// A generator run whose weights are used (default: the small preset, seeded, with
    /// MOSES's 28-token vocabulary).
    pub run: Option<PathBuf>,
    /// Sequences sampled per call.
    pub sample_batch: usize,
    /// Tokens sampled per sequence.
    pub steps: usize,
    /// Sequences per training step.
    pub train_batch: usize,
    /// Tokens per training sequence.
    pub seq_len: usize,
}

/// The benchmarked generator on `device`: the run's best model, or the small preset
/// (28 tokens, seed 0).
fn model(run: Option<&Path>, device: &Device) -> Result<SmilesGpt> {
    match run {
        Some(run) => Ok(train::smiles_gpt::GptRun::open(run, device)?.model),
        None => {
            device.seed(0);
            Ok(models::SmilesGptConfig::small(28).init(device))
        }
    }
}

/// Runs one row in this process and returns its measurement.
///
/// # Errors
/// A batch of 0, or the model cannot be built or a call fails.
pub fn run_row(
    mode: GenBenchMode,
    run: Option<&Path>,
    batch: usize,
    steps: usize,
    seq_len: usize,
    seconds: f64,
) -> Result<GenRowResult> {
    if batch == 0 {
        bail!("--batch must be at least 1");
    }
    let device = Device::flex();
    let (median, runs, work) = match mode {
        GenBenchMode::Sample => {
            let net = model(run, &device)?;
            let v = net.vocab_size();
            let settings = SamplingSettings::default();
            // As `sample_batch` decodes on the CPU: the batch in one part per thread, each
            // row with its own generator, the steps through the fused CPU decoder when a
            // BLAS is loaded, in chunks of `decode_chunk_rows` sequences (Burn's cached
            // forward otherwise, the part at once); every row takes `steps` steps, as the
            // PyTorch loop does.
            let parts = models::parallel::inference_parts(&device);
            let weights = CpuWeights::from_model(&net);
            let chunk_rows = decode_chunk_rows(weights.as_ref(), batch);
            let decode = |start: usize, end: usize| -> Result<()> {
                let b = end - start;
                let prompts = vec![vec![BOS]; b];
                let (mut decoding, mut logits) =
                    Decoding::start(&net, weights.as_ref(), &prompts, None, &device)
                        .map_err(anyhow::Error::msg)
                        .context("--generate samples unconditionally: give an unconditional run")?;
                let mut rngs: Vec<StdRng> = (start..end)
                    .map(|row| StdRng::seed_from_u64(row as u64))
                    .collect();
                let mut ids = vec![BOS; b];
                for step in 0..steps {
                    for (row, id) in ids.iter_mut().enumerate() {
                        *id = sample_token(
                            &logits[row * v..(row + 1) * v],
                            &settings,
                            &mut rngs[row],
                        );
                    }
                    if step + 1 < steps {
                        logits = decoding.next(&ids).map_err(anyhow::Error::msg)?;
                    }
                }
                Ok(())
            };
            let (median, runs) = time_calls(
                || {
                    models::parallel::run_in_parts_chunked(batch, parts, chunk_rows, decode)
                        .map_err(anyhow::Error::msg)?
                        .into_iter()
                        .collect::<Result<()>>()
                },
                seconds,
            )?;
            (median, runs, batch)
        }
        GenBenchMode::Train => {
            let ad = device.clone().autodiff();
            let mut net = Some(model(run, &ad)?);
            let v = net.as_ref().expect("built").vocab_size() as i64;
            let mut rng = StdRng::seed_from_u64(0);
            let ids: Vec<i64> = (0..batch * seq_len)
                .map(|_| rng.random_range(4..v))
                .collect();
            let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [batch, seq_len]), &ad);
            let mut optim = FusedAdamConfig::new().with_epsilon(1e-8).init();
            let (median, runs) = time_calls(
                || {
                    let m = net.take().expect("model is put back after each step");
                    let (loss, _) = m
                        .next_token_loss(tokens.clone(), None)
                        .map_err(anyhow::Error::msg)?;
                    let grads = GradientsParams::from_grads(loss.backward(), &m);
                    let m = optim.step(1e-4, m, grads);
                    // Read one parameter back, so that the lazy step has run.
                    m.head.weight.val().into_data();
                    net = Some(m);
                    Ok(())
                },
                seconds,
            )?;
            (median, runs, batch * (seq_len - 1))
        }
        GenBenchMode::DenseAttention | GenBenchMode::LocalAttention => {
            let pattern = match mode {
                GenBenchMode::LocalAttention => AttentionPattern::local(WINDOW, 0),
                _ => AttentionPattern::causal(),
            };
            device.seed(0);
            let layer = SequenceAttentionConfig::new(256, 8)
                .with_dropout(0.0)
                .with_pattern(pattern)
                .init(&device);
            let x = Tensor::<3>::random(
                [1, seq_len, 256],
                burn::tensor::Distribution::Normal(0.0, 1.0),
                &device,
            );
            let (median, runs) = time_calls(
                || {
                    layer
                        .forward(x.clone(), None, None)
                        .map_err(anyhow::Error::msg)?
                        .into_data();
                    Ok(())
                },
                seconds,
            )?;
            (median, runs, seq_len)
        }
    };
    Ok(GenRowResult {
        per_second: work as f64 / median,
        median_ms: median * 1e3,
        runs,
        peak_rss_mb: peak_rss_mib(),
    })
}

/// Runs our row `mode` in a child process.
fn spawn_ours(
    options: &GenBenchOptions,
    mode: GenBenchMode,
    batch: usize,
    seq_len: usize,
) -> Result<GenRowResult> {
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    cmd.arg("bench-gen-row")
        .args(["--mode", &value_name(mode)])
        .args(["--batch", &batch.to_string()])
        .args(["--steps", &options.steps.to_string()])
        .args(["--seq-len", &seq_len.to_string()])
        .args(["--seconds", &options.seconds.to_string()])
        .env("RAYON_NUM_THREADS", options.threads.to_string());
    if let Some(run) = &options.run {
        cmd.arg("--run").arg(run);
    }
    parse_row(cmd.output().context("starting a benchmark row")?)
}

/// Runs `bench/torch_gpt.py` in `mode` and returns its JSON object.
fn spawn_torch(
    root: &Path,
    weights: &Path,
    options: &GenBenchOptions,
    mode: &str,
    batch: usize,
) -> Result<serde_json::Value> {
    let out = std::process::Command::new("python3")
        .arg(root.join("bench/torch_gpt.py"))
        .arg(weights)
        .args(["--mode", mode])
        .args(["--threads", &options.threads.to_string()])
        .args(["--batch", &batch.to_string()])
        .args(["--steps", &options.steps.to_string()])
        .args(["--seq-len", &options.seq_len.to_string()])
        .args(["--seconds", &options.seconds.to_string()])
        .output()
        .context("starting python3 bench/torch_gpt.py")?;
    if !out.status.success() {
        bail!(
            "bench/torch_gpt.py --mode {mode}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().context("no output")?;
    Ok(serde_json::from_str(line)?)
}

fn value_name(mode: GenBenchMode) -> String {
    use clap::ValueEnum;
    mode.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

fn parse_row(out: std::process::Output) -> Result<GenRowResult> {
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let reason = stderr
            .lines()
            .rfind(|l| !l.trim().is_empty() && !l.contains("backtrace"))
            .unwrap_or("killed (out of memory?)")
            .to_string();
        bail!("{reason}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    Ok(serde_json::from_str(
        stdout.lines().last().context("no output")?,
    )?)
}

/// The whole comparison: prints the table, writes bench/generate.json and the plots.
///
/// # Errors
/// The weights, the JSON or the plots cannot be written; a row of ours fails.
pub fn run(root: &Path, options: &GenBenchOptions) -> Result<()> {
    let device = Device::flex();
    let net = model(options.run.as_deref(), &device)?;
    let dropout = match &options.run {
        Some(run) => {
            train::smiles_gpt::GptRun::open(run, &device)?
                .spec
                .model
                .dropout
        }
        None => models::SmilesGptConfig::small(28).dropout,
    };
    let dir = std::env::temp_dir().join(format!("molattn-gen-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let weights = dir.join("weights.safetensors");
    write_weights(&net, dropout, &weights)?;
    println!(
        "SMILES generator ({} layers, d_model {}, {} heads, vocabulary {}), flex, {} threads; {}",
        net.blocks.len(),
        net.tok_emb.weight.dims()[1],
        net.blocks[0].attn.num_heads,
        net.vocab_size(),
        options.threads,
        cpu_model()
    );
    drop(net);
    let torch_ok = spawn_torch(root, &weights, options, "check", 1);
    let mut report = serde_json::Map::new();
    report.insert("cpu".into(), cpu_model().into());
    report.insert("threads".into(), options.threads.into());
    match &torch_ok {
        Ok(check) => {
            println!(
                "PyTorch {} reference on the same weights: logits max abs difference {:.2e}",
                check["torch"].as_str().unwrap_or("?"),
                check["max_abs"].as_f64().unwrap_or(f64::NAN)
            );
            report.insert("torch_check".into(), check.clone());
        }
        Err(e) => println!("PyTorch rows skipped: {e}"),
    }
    let side = |mode: GenBenchMode,
                torch_mode: &str,
                batch: usize,
                seq_len: usize|
     -> Result<serde_json::Value> {
        let ours = spawn_ours(options, mode, batch, seq_len)?;
        let torch = match &torch_ok {
            Ok(_) => spawn_torch(root, &weights, options, torch_mode, batch).ok(),
            Err(_) => None,
        };
        let ratio = torch
            .as_ref()
            .and_then(|t| t["per_second"].as_f64())
            .map(|t| ours.per_second / t);
        println!(
            "{:<7} batch {batch:>4}: ours {:>10.1}/s ({:>8.1} ms, {:>6.0} MiB)   PyTorch {:>10}   ratio {}",
            torch_mode,
            ours.per_second,
            ours.median_ms,
            ours.peak_rss_mb.unwrap_or(f64::NAN),
            torch
                .as_ref()
                .and_then(|t| t["per_second"].as_f64())
                .map_or("-".into(), |p| format!("{p:.1}/s")),
            ratio.map_or("-".into(), |r| format!("{r:.2}x"))
        );
        Ok(serde_json::json!({"ours": ours, "torch": torch, "ratio": ratio}))
    };
    println!(
        "sample: 16 and {} sequences x {} tokens (molecules/s); train: {} x {} tokens (tokens/s)",
        options.sample_batch, options.steps, options.train_batch, options.seq_len
    );
    for batch in [16, options.sample_batch] {
        report.insert(
            format!("sample_batch_{batch}"),
            side(GenBenchMode::Sample, "sample", batch, options.seq_len)?,
        );
    }
    report.insert(
        "train".into(),
        side(
            GenBenchMode::Train,
            "train",
            options.train_batch,
            options.seq_len,
        )?,
    );
    println!("attention forward, 1 x N tokens, d_model 256, 8 heads (ours):");
    // Per pattern: (tokens, ms) and (tokens, MiB) points.
    type Points = Vec<(f64, f64)>;
    let mut series: Vec<(&str, Points, Points)> = Vec::new();
    let mut rows = Vec::new();
    for (label, mode, lengths) in [
        (
            "dense causal",
            GenBenchMode::DenseAttention,
            &DENSE_LENGTHS[..],
        ),
        (
            "local, window 128",
            GenBenchMode::LocalAttention,
            &LOCAL_LENGTHS[..],
        ),
    ] {
        let (mut time, mut memory) = (Vec::new(), Vec::new());
        for &n in lengths {
            let row = spawn_ours(options, mode, 1, n);
            match &row {
                Ok(r) => {
                    println!(
                        "  {label:<18} N {n:>6}: {:>9.1} ms, peak RSS {:>7.0} MiB",
                        r.median_ms,
                        r.peak_rss_mb.unwrap_or(f64::NAN)
                    );
                    time.push((n as f64, r.median_ms));
                    if let Some(m) = r.peak_rss_mb {
                        memory.push((n as f64, m));
                    }
                }
                Err(e) => println!("  {label:<18} N {n:>6}: failed: {e}"),
            }
            rows.push(serde_json::json!({
                "pattern": label, "tokens": n,
                "result": row.as_ref().ok(), "error": row.as_ref().err().map(|e| e.to_string()),
            }));
        }
        series.push((label, time, memory));
    }
    report.insert("attention".into(), rows.into());
    let _ = std::fs::remove_dir_all(&dir);
    let json = root.join("bench/generate.json");
    std::fs::write(&json, serde_json::to_string_pretty(&report)?)?;
    let images = root.join("docs/images");
    let time: Vec<(&str, Vec<(f64, f64)>)> =
        series.iter().map(|(l, t, _)| (*l, t.clone())).collect();
    let memory: Vec<(&str, Vec<(f64, f64)>)> =
        series.iter().map(|(l, _, m)| (*l, m.clone())).collect();
    train::plot::log_log(
        &images.join("local_vs_dense_time.png"),
        "Causal self-attention forward, d_model 256, 8 heads, batch 1 (flex)",
        "tokens",
        "ms per forward",
        &time,
    )?;
    train::plot::log_log(
        &images.join("local_vs_dense_memory.png"),
        "Peak RSS of the process, same layer",
        "tokens",
        "MiB",
        &memory,
    )?;
    println!(
        "wrote {}, docs/images/local_vs_dense_time.png, docs/images/local_vs_dense_memory.png",
        json.display()
    );
    Ok(())
}
