//! Which devices a run trains on and how: one device, several with burn-train's
//! multi-device strategy (each device takes its own batch, the gradients are summed on the
//! first, which also validates), or distributed data parallel (an all-reduce of the
//! gradients; backends with collectives only: CUDA, wgpu).

use burn::prelude::*;
use burn::tensor::distributed::{DistributedConfig, ReduceOperation};
use burn::train::{ExecutionStrategy, MultiDeviceOptim};

use crate::error::TrainError;

/// How several devices share the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// burn-train's multi-device strategy (any backend).
    #[default]
    MultiDevice,
    /// Distributed data parallel (backends with collectives).
    Ddp,
}

/// The devices of a run (the first is the main one) and the strategy.
#[derive(Debug, Clone)]
pub struct Devices {
    devices: Vec<Device>,
    strategy: Strategy,
    flex: bool,
}

impl Devices {
    /// One device.
    pub fn single(device: Device) -> Self {
        let flex = device == Device::flex();
        Self {
            devices: vec![device],
            strategy: Strategy::MultiDevice,
            flex,
        }
    }

    /// `devices` (at least one; the first is the main device) with `strategy`.
    ///
    /// # Errors
    /// [`TrainError::Invalid`] for an empty list, or DDP on the CPU backend (flex has no
    /// collective operations).
    pub fn new(devices: Vec<Device>, strategy: Strategy) -> Result<Self, TrainError> {
        let Some(first) = devices.first() else {
            return Err(TrainError::Invalid("no device given".into()));
        };
        let flex = *first == Device::flex();
        if strategy == Strategy::Ddp && flex {
            return Err(TrainError::Invalid(
                "--strategy ddp needs a backend with collective operations (cuda, wgpu); \
                 the CPU backend (flex) has none: use the multi-device strategy"
                    .into(),
            ));
        }
        Ok(Self {
            devices,
            strategy,
            flex,
        })
    }

    /// The main device (model, validation).
    pub fn main(&self) -> &Device {
        &self.devices[0]
    }

    /// Number of devices.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// Always false (a run has at least one device).
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// Whether the devices are the CPU backend.
    pub fn is_flex(&self) -> bool {
        self.flex
    }

    pub(crate) fn strategy(&self) -> Result<ExecutionStrategy, TrainError> {
        let autodiff: Vec<Device> = self.devices.iter().map(|d| d.clone().autodiff()).collect();
        Ok(match (autodiff.len(), self.strategy) {
            (1, _) => ExecutionStrategy::single(autodiff[0].clone()),
            (_, Strategy::MultiDevice) => {
                ExecutionStrategy::multi(autodiff, MultiDeviceOptim::OptimMainDevice)
            }
            (_, Strategy::Ddp) => ExecutionStrategy::ddp(
                autodiff,
                DistributedConfig {
                    all_reduce_op: ReduceOperation::Mean,
                },
            ),
        })
    }
}
