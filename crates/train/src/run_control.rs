//! Options of a training run that are not part of its definition (`run.json`): resume,
//! devices, progress, the conformer cache.

use burn::prelude::*;

use crate::engine::{Devices, Progress};

/// Options of a training run that are not part of the run's definition.
#[derive(Debug, Clone, Default)]
pub struct RunControl {
    /// Continue from the run directory's last complete checkpoint.
    pub resume: bool,
    /// What to print (default: nothing).
    pub progress: Progress,
    /// Stop this invocation after this many training batches, as a killed process would
    /// (resume tests); the run can then be resumed.
    pub interrupt_after_batches: Option<usize>,
    /// Conformer cache folder (`None`: embed every molecule, store nothing).
    pub conformer_cache: Option<std::path::PathBuf>,
    /// Devices (`None`: the `device` argument alone).
    pub devices: Option<Devices>,
}

impl RunControl {
    /// The devices of the run: [`RunControl::devices`] or `device` alone.
    pub fn devices_or(&self, device: &Device) -> Devices {
        self.devices
            .clone()
            .unwrap_or_else(|| Devices::single(device.clone()))
    }
}
