//! `cargo xtask msa-bench`: MSA column global attention on a synthetic MSA of AlphaFold's
//! extra-MSA size (5120 sequences x 384 residues x c_m 64), timed, with peak memory.

use std::time::Instant;

use anyhow::Result;
use burn::prelude::*;
use burn::tensor::{Distribution, FloatDType};
use models::MsaColumnGlobalAttentionConfig;

use crate::measure::peak_rss_mib;

/// Size and precision of the synthetic MSA.
pub struct MsaBenchOptions {
    /// N_seq (AlphaFold extra MSA: 5120).
    pub n_seq: usize,
    /// N_res (AlphaFold crop: 384).
    pub n_res: usize,
    /// c_m (extra MSA: 64).
    pub c_m: usize,
    /// Timed runs after one warm-up.
    pub runs: usize,
    /// Run in bf16 (softmax and LayerNorm stay f32).
    pub bf16: bool,
}

/// Runs the block and prints the median time per forward and the peak memory.
pub fn run(options: &MsaBenchOptions, device: &Device) -> Result<()> {
    let (n_seq, n_res, c_m) = (options.n_seq, options.n_res, options.c_m);
    device.seed(0);
    // Random (not zero-initialised) projections, so the timed work is not trivial.
    let block = MsaColumnGlobalAttentionConfig::new()
        .with_c_m(c_m)
        .with_zero_init(false)
        .init(device);
    let mut msa_act = Tensor::<3>::random([n_seq, n_res, c_m], Distribution::Default, device);
    if options.bf16 {
        msa_act = msa_act.cast(FloatDType::BF16);
    }
    // Ragged: each column keeps a different number of sequences.
    let mask: Vec<bool> = (0..n_seq * n_res)
        .map(|i| (i / n_res) >= n_seq - (i % n_res) % (n_seq / 2).max(1))
        .collect();
    let mask = Tensor::<2, Bool>::from_data(TensorData::new(mask, [n_seq, n_res]), device);
    let input_mib = (n_seq * n_res * c_m * msa_act.dtype().size()) as f64 / (1 << 20) as f64;
    let before = peak_rss_mib();
    let forward = || -> Result<f32> {
        let out = block.forward(msa_act.clone(), mask.clone());
        // Reading one value back synchronises asynchronous backends.
        Ok(out.sum().cast(FloatDType::F32).into_scalar::<f32>())
    };
    forward()?; // warm-up
    let mut times = Vec::with_capacity(options.runs);
    for _ in 0..options.runs.max(1) {
        let t0 = Instant::now();
        let checksum = forward()?;
        times.push(t0.elapsed().as_secs_f64());
        anyhow::ensure!(checksum.is_finite(), "non-finite output");
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "MSA column global attention, N_seq {n_seq} x N_res {n_res} x c_m {c_m} ({}, input {input_mib:.0} MiB), device {device:?}:",
        if options.bf16 { "bf16" } else { "f32" },
    );
    println!(
        "  {:.1} ms per forward (median of {}), {:.2} G MSA elements/s",
        median * 1e3,
        times.len(),
        (n_seq * n_res * c_m) as f64 / median / 1e9
    );
    match (before, peak_rss_mib()) {
        (Some(b), Some(a)) => println!(
            "  peak resident memory {a:.0} MiB (host; {b:.0} MiB before the first forward)"
        ),
        _ => println!("  peak resident memory: not available on this OS"),
    }
    Ok(())
}
