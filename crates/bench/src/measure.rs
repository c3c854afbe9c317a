//! What every benchmark shares: the batch size of the protocol, the training rows'
//! target, timing by the median of repeated calls, peak memory and the CPU's name.

use std::time::{Duration, Instant};

use anyhow::Result;
use burn::tensor::{Tensor, TensorData};

/// Molecules per benchmark batch (the protocol; the MAT paper trains with 32 too).
pub const BATCH_SIZE: usize = 32;

/// The training rows' target `[b, 1]`: `b` values evenly from -1 to 1 (as
/// `bench/torch_models.py`'s `torch.linspace(-1, 1, b)`).
pub fn regression_target(b: usize, device: &burn::tensor::Device) -> Tensor<2> {
    let values: Vec<f32> = (0..b)
        .map(|i| -1.0 + 2.0 * i as f32 / (b.max(2) - 1) as f32)
        .collect();
    Tensor::from_data(TensorData::new(values, [b, 1]), device)
}

/// Calls `step` once to warm up, then until 3 calls and `seconds` have passed (at most
/// 20 calls); returns the median seconds per call and the number of timed calls.
pub fn time_calls(mut step: impl FnMut() -> Result<()>, seconds: f64) -> Result<(f64, usize)> {
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

/// Peak resident set size of this process in MiB (Linux `VmHWM`; `None` elsewhere).
pub fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The CPU's model name (Linux `/proc/cpuinfo`; "unknown" elsewhere), for the tables.
pub fn cpu_model() -> String {
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
