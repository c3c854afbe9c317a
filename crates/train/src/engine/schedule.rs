//! Learning-rate schedules, stepped by burn-train once per optimiser step and saved with
//! every checkpoint.
//!
//! - MAT: burn's Noam schedule, scaled so that its peak (at the end of warm-up) is the
//!   configured learning rate (huggingmolecules' MAT recipe, docs/SPEC.md 1.2).
//! - Transformer-M: linear warm-up then linear decay to 0 (the original's
//!   `polynomial_decay` with power 1, docs/TRANSFORMER_M.md). Burn's linear scheduler
//!   has no warm-up phase and its sequential composition restarts the second phase's
//!   step count, so this one is ours (a dozen lines).

use burn::lr_scheduler::LrScheduler;
use burn::lr_scheduler::LrSchedulerRecord;
use burn::lr_scheduler::module_lr_scheduler::ModuleLrScheduler;
use burn::lr_scheduler::noam::NoamLrSchedulerConfig;

use crate::error::TrainError;

/// Warm-up steps for `fraction` of `total` steps (at least 1).
pub fn warmup_steps(fraction: f64, total: usize) -> usize {
    ((fraction * total as f64).round() as usize).max(1)
}

/// Burn's Noam schedule peaking at `peak` after `warmup` steps:
/// `lr(step) = peak * min(sqrt(warmup / step), step / warmup)`.
///
/// # Errors
/// [`TrainError::Invalid`] if `d_model` or `warmup` is 0.
pub fn noam(peak: f64, warmup: usize, d_model: usize) -> Result<ModuleLrScheduler, TrainError> {
    // Burn's Noam: factor * d^-0.5 * min(step^-0.5, step * warmup^-1.5); its peak (at
    // step = warmup) equals `peak` with this factor.
    let factor = peak * ((d_model * warmup) as f64).sqrt();
    NoamLrSchedulerConfig::new(factor)
        .with_warmup_steps(warmup)
        .with_model_size(d_model)
        .init()
        .map_err(TrainError::Invalid)
}

/// Learning rate at `step` (1-based): linear warm-up to `peak` over `warmup` steps,
/// then linear decay to 0 at `total`.
pub fn warmup_linear(step: usize, warmup: usize, total: usize, peak: f64) -> f64 {
    let step = step as f64;
    let (w, t) = (warmup.max(1) as f64, total.max(1) as f64);
    if step <= w {
        peak * step / w
    } else {
        peak * ((t - step) / (t - w).max(1.0)).max(0.0)
    }
}

/// [`warmup_linear`] as a burn scheduler (its step count is checkpointed).
#[derive(Debug, Clone)]
pub struct WarmupLinear {
    /// Peak learning rate.
    pub peak: f64,
    /// Warm-up steps.
    pub warmup: usize,
    /// Steps of the whole run (the rate reaches 0 there).
    pub total: usize,
    step: usize,
}

impl WarmupLinear {
    /// A schedule before its first step.
    pub fn new(peak: f64, warmup: usize, total: usize) -> Self {
        Self {
            peak,
            warmup,
            total,
            step: 0,
        }
    }
}

impl LrScheduler for WarmupLinear {
    fn step(&mut self) -> f64 {
        self.step += 1;
        warmup_linear(self.step, self.warmup, self.total, self.peak)
    }

    fn to_record(&self) -> LrSchedulerRecord {
        LrSchedulerRecord::new().with_scalar("step", self.step as u64)
    }

    fn load_record(&mut self, record: LrSchedulerRecord) {
        if let Some(step) = record.scalar::<u64>("step") {
            self.step = step as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_warms_up_then_decays_to_zero() {
        assert_eq!(warmup_linear(1, 10, 100, 1.0), 0.1);
        assert_eq!(warmup_linear(10, 10, 100, 1.0), 1.0);
        assert!((warmup_linear(55, 10, 100, 1.0) - 0.5).abs() < 1e-12);
        assert_eq!(warmup_linear(100, 10, 100, 1.0), 0.0);
    }

    #[test]
    fn warmup_linear_resumes_from_its_record() {
        let mut a = WarmupLinear::new(1.0, 10, 100);
        for _ in 0..37 {
            a.step();
        }
        let mut b = WarmupLinear::new(1.0, 10, 100);
        b.load_record(a.to_record());
        assert_eq!(a.step(), b.step());
    }

    #[test]
    fn noam_peaks_at_the_configured_rate() {
        let mut s = noam(1e-3, 4, 128).unwrap();
        let lrs: Vec<f64> = (0..6).map(|_| s.step().base()).collect();
        assert!((lrs[3] - 1e-3).abs() < 1e-12, "{lrs:?}");
        assert!(lrs[2] < lrs[3] && lrs[4] < lrs[3]);
    }
}
