//! `cargo xtask bench --esol-epoch`: one MAT small training epoch on ESOL's random-0
//! training split (issue #12's epoch target), ours on flex against our PyTorch MAT
//! reference (`bench/torch_models.py --mode epoch`) on the same padded batches and threads.
//!
//! An epoch: every training batch of 32 in split order (each padded to its own largest
//! molecule, as both trainers do), forward, MSE loss, backward, one Adam step (lr 1e-4).
//! Featurization is excluded (both trainers featurize once before the first epoch); the
//! 2D layout gives the distances (the timing does not depend on them). One warm-up epoch,
//! then the median of 3.
//!
//! This is a benchmark of the bare step loop on both sides (pre-padded batches, no
//! validation, no checkpoint, dropout 0), not a training loop: runs train through
//! `train::engine`, whose epoch adds batching, validation, checkpoints, metric logs and
//! MAT's dropout 0.1 (ESOL random-0: 1.5 s per epoch through the engine against 1.3 s
//! here; docs/BENCHMARKS.md, "The engine's epoch").

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use burn::nn::loss::{MseLoss, Reduction};
use burn::optim::GradientsParams;
use burn::tensor::Device;
use models::{MatBatch, MatConfig};
use mol_featurize::{featurize_all, pad_batch};
use serde::Serialize;
use train::engine::fused_adam::FusedAdamConfig;

use crate::featurizer;
use crate::measure::{BATCH_SIZE, regression_target};
use crate::model_bench::batch_json;

/// What `bench --esol-epoch` measured (`bench/esol_epoch.json`).
#[derive(Debug, Serialize)]
struct EpochResult {
    molecules: usize,
    batches: usize,
    threads: usize,
    ours_seconds_per_epoch: f64,
    torch_seconds_per_epoch: Option<f64>,
    ratio_torch_over_ours: Option<f64>,
    torch: Option<String>,
    cpu: String,
    /// The BLAS behind our matrix products (`attn_core::blas`), or Burn's gemm.
    blas: String,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Measures ours, then PyTorch when `python3 -c "import torch"` works; prints and writes
/// `bench/esol_epoch.json`.
pub fn run(root: &Path, datasets: &Path) -> Result<()> {
    let csv = datasets.join("esol/esol.csv");
    let smiles = train::data::read_smiles_csv(&csv, "smiles")?;
    let split = train::splits::read_split_file(
        &datasets.join("esol/esol.splits.json"),
        "random-0",
        smiles.len(),
    )?;
    let rows: Vec<String> = split.train.iter().map(|&r| smiles[r].clone()).collect();
    let (features, report) = featurize_all(
        &rows,
        &featurizer(mol_featurize::conformer::CoordinateMethod::Layout2d),
        false,
    );
    if report.n_skipped > 0 {
        bail!(
            "{} ESOL training molecules did not featurize",
            report.n_skipped
        );
    }
    let feats: Vec<_> = features.iter().flatten().collect();
    let batches: Vec<_> = feats
        .chunks(BATCH_SIZE)
        .map(|c| pad_batch(c).map_err(anyhow::Error::msg))
        .collect::<Result<_>>()?;
    let threads = rayon::current_num_threads();
    println!(
        "ESOL random-0 training split: {} molecules, {} batches of up to {BATCH_SIZE}, {threads} threads",
        feats.len(),
        batches.len()
    );

    // Ours.
    let device = Device::flex().autodiff();
    device.seed(0);
    let mut net = Some(MatConfig::small().with_dropout(0.0).init(&device));
    let mut optim = FusedAdamConfig::new().with_epsilon(1e-8).init();
    let uploaded: Vec<(MatBatch, _)> = batches
        .iter()
        .map(|b| {
            (
                MatBatch::from_data(b, &device),
                regression_target(b.batch_size, &device),
            )
        })
        .collect();
    let mut epoch = || {
        for (batch, target) in &uploaded {
            let m = net.take().expect("the model is put back after each step");
            let loss = MseLoss::new().forward(m.forward(batch), target.clone(), Reduction::Mean);
            let grads = GradientsParams::from_grads(loss.backward(), &m);
            let m = optim.step(1e-4, m, grads);
            net = Some(m);
        }
        // Read one parameter back so the lazy steps have run.
        if let Some(m) = &net {
            m.generator.proj.weight.val().into_data();
        }
    };
    epoch();
    let ours = median(
        (0..3)
            .map(|_| {
                let t0 = Instant::now();
                epoch();
                t0.elapsed().as_secs_f64()
            })
            .collect(),
    );
    println!(
        "  ours (flex, {}): {ours:.2} s per epoch",
        attn_core::blas::blas_summary()
    );

    // PyTorch.
    let path = std::env::temp_dir().join(format!("molattn-esol-epoch-{}.json", std::process::id()));
    let json = serde_json::json!({ "batches": batches.iter().map(batch_json).collect::<Vec<_>>() });
    std::fs::write(&path, serde_json::to_vec(&json)?)
        .with_context(|| path.display().to_string())?;
    let out = std::process::Command::new("python3")
        .arg(root.join("bench/torch_models.py"))
        .arg(&path)
        .args([
            "--model",
            "mat-small",
            "--mode",
            "epoch",
            "--threads",
            &threads.to_string(),
        ])
        .output();
    std::fs::remove_file(&path).ok();
    let (torch_seconds, torch) = match out {
        Ok(o) if o.status.success() => {
            let line = String::from_utf8_lossy(&o.stdout)
                .lines()
                .last()
                .unwrap_or("")
                .to_string();
            let v: serde_json::Value = serde_json::from_str(&line)
                .with_context(|| format!("unreadable torch output: {line}"))?;
            (
                v["seconds_per_epoch"].as_f64(),
                v["torch"].as_str().map(String::from),
            )
        }
        Ok(o) => {
            println!(
                "  PyTorch row failed: {}",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
            (None, None)
        }
        Err(e) => {
            println!("  PyTorch row not run: {e}");
            (None, None)
        }
    };
    if let Some(t) = torch_seconds {
        println!(
            "  PyTorch {}: {t:.2} s per epoch; ours / PyTorch speed: {:.2}x",
            torch.as_deref().unwrap_or("?"),
            t / ours
        );
    }
    let result = EpochResult {
        molecules: feats.len(),
        batches: batches.len(),
        threads,
        ours_seconds_per_epoch: ours,
        torch_seconds_per_epoch: torch_seconds,
        ratio_torch_over_ours: torch_seconds.map(|t| t / ours),
        torch,
        cpu: crate::measure::cpu_model(),
        blas: attn_core::blas::blas_summary(),
    };
    let out_path = root.join("bench/esol_epoch.json");
    std::fs::write(&out_path, serde_json::to_string_pretty(&result)?)
        .with_context(|| out_path.display().to_string())?;
    println!("wrote {}", out_path.display());
    Ok(())
}
