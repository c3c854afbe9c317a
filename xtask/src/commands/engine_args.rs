//! Flags of every training command (`train`, `pretrain`) for the training engine:
//! devices, strategy, resume, progress.

use anyhow::{Result, bail};
use burn::tensor::Device;
use clap::{Args, ValueEnum};
use train::engine::{Devices, Progress, Strategy};

use super::common::DeviceArg;

/// Engine flags.
#[derive(Args, Clone)]
pub struct EngineArgs {
    /// Backend (one device).
    #[arg(long, value_enum, default_value = "flex")]
    pub device: DeviceArg,
    /// Train data parallel on these devices, the first being the main one (validation,
    /// checkpoints): `flex:0,flex:1` (two CPU workers), `cuda:0,cuda:1`, `wgpu:0,wgpu:1`.
    /// Replaces --device.
    #[arg(long, value_delimiter = ',')]
    pub devices: Vec<String>,
    /// How several devices share the work: burn-train's multi-device strategy (any
    /// backend) or distributed data parallel (`ddp`; CUDA and wgpu only).
    #[arg(long, value_enum, default_value = "multi-device")]
    pub strategy: StrategyArg,
    /// Continue the run in --out from its last complete checkpoint (after an interruption,
    /// even `kill -9`).
    #[arg(long, conflicts_with = "force")]
    pub resume: bool,
    /// Start a fresh run in an --out folder that holds one, overwriting it (without it,
    /// such a folder is refused).
    #[arg(long)]
    pub force: bool,
    /// Skip molecules with more heavy atoms than this (default 1000), with the reason in
    /// featurize_report.json.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_atoms: Option<u64>,
    /// Print nothing while training (the default is burn-train's dashboard on a terminal,
    /// one line per epoch otherwise).
    #[arg(long)]
    pub quiet: bool,
    /// Validate and checkpoint this many times per pass over the training data (each part
    /// a run of consecutive batches of the epoch's shuffle): a long run killed mid-epoch
    /// resumes from the last part instead of the last epoch. --patience counts parts.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub checkpoints_per_epoch: u64,
}

/// `--strategy`.
#[derive(Clone, Copy, ValueEnum)]
pub enum StrategyArg {
    /// burn-train's multi-device strategy.
    MultiDevice,
    /// Distributed data parallel (all-reduce of the gradients).
    Ddp,
}

impl EngineArgs {
    /// The devices of the run.
    ///
    /// # Errors
    /// An unknown device, a backend this build lacks, mixed backends, DDP on flex.
    pub fn devices(&self) -> Result<Devices> {
        if self.devices.is_empty() {
            return Ok(Devices::single(self.device.device()?));
        }
        let parsed: Vec<(String, Device)> = self
            .devices
            .iter()
            .map(|d| parse_device(d).map(|dev| (backend_of(d), dev)))
            .collect::<Result<_>>()?;
        if parsed.iter().any(|(b, _)| *b != parsed[0].0) {
            bail!(
                "--devices mixes backends ({}); give one backend",
                self.devices.join(",")
            );
        }
        let strategy = match self.strategy {
            StrategyArg::MultiDevice => Strategy::MultiDevice,
            StrategyArg::Ddp => Strategy::Ddp,
        };
        Ok(Devices::new(
            parsed.into_iter().map(|(_, d)| d).collect(),
            strategy,
        )?)
    }

    /// The main (first) device, plain.
    ///
    /// # Errors
    /// As [`EngineArgs::devices`].
    pub fn main_device(&self) -> Result<Device> {
        Ok(self.devices()?.main().clone())
    }

    /// Progress display.
    pub fn progress(&self) -> Progress {
        if self.quiet {
            Progress::Quiet
        } else {
            Progress::Auto
        }
    }

    /// The run control of these flags (no conformer cache: a command that embeds
    /// conformers sets its own).
    ///
    /// # Errors
    /// As [`EngineArgs::devices`].
    pub fn control(&self) -> Result<train::RunControl> {
        Ok(train::RunControl {
            resume: self.resume,
            force: self.force,
            max_atoms: self.max_atoms.map(|n| n as usize),
            progress: self.progress(),
            interrupt_after_batches: None,
            conformer_cache: None,
            devices: Some(self.devices()?),
            checkpoints_per_epoch: self.checkpoints_per_epoch as usize,
        })
    }
}

fn backend_of(text: &str) -> String {
    text.split(':')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// `flex:K` (the CPU backend; each K is one more worker on it), `cuda:K`, `wgpu:K` (the
/// K-th discrete GPU).
fn parse_device(text: &str) -> Result<Device> {
    let (backend, index) = text.trim().split_once(':').unwrap_or((text.trim(), "0"));
    let Ok(index) = index.parse::<usize>() else {
        bail!("--devices {text:?}: the index after ':' must be a number");
    };
    match backend.to_ascii_lowercase().as_str() {
        "flex" | "cpu" => Ok(Device::flex()),
        #[cfg(feature = "cuda")]
        "cuda" => Ok(Device::cuda(index)),
        #[cfg(not(feature = "cuda"))]
        "cuda" => Err(super::common::missing_feature("cuda", "--devices cuda:K")),
        #[cfg(feature = "wgpu")]
        "wgpu" => Ok(Device::wgpu(burn::tensor::DeviceKind::DiscreteGpu(index))),
        #[cfg(not(feature = "wgpu"))]
        "wgpu" => {
            let _ = index;
            Err(super::common::missing_feature("wgpu", "--devices wgpu:K"))
        }
        other => bail!("--devices {text:?}: unknown backend {other:?} (flex, cuda, wgpu)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(devices: &[&str], strategy: StrategyArg) -> EngineArgs {
        EngineArgs {
            device: DeviceArg::Flex,
            devices: devices.iter().map(|s| s.to_string()).collect(),
            strategy,
            resume: false,
            force: false,
            max_atoms: None,
            quiet: false,
            checkpoints_per_epoch: 1,
        }
    }

    #[test]
    fn device_lists() {
        let two = args(&["flex:0", "flex:1"], StrategyArg::MultiDevice)
            .devices()
            .unwrap();
        assert_eq!(two.len(), 2);
        assert!(two.is_flex());
        assert_eq!(
            args(&[], StrategyArg::MultiDevice).devices().unwrap().len(),
            1
        );
        let ddp = args(&["flex:0", "flex:1"], StrategyArg::Ddp)
            .devices()
            .unwrap_err();
        assert!(ddp.to_string().contains("collective"), "{ddp}");
        assert!(
            args(&["tpu:0"], StrategyArg::MultiDevice)
                .devices()
                .is_err()
        );
        assert!(
            args(&["flex:x"], StrategyArg::MultiDevice)
                .devices()
                .is_err()
        );
    }
}
