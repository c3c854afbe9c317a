//! molattn's benchmarks, reachable from tests and from `cargo xtask bench` /
//! `msa-bench`: each speed figure is a ratio against the reference implementation
//! measured in the same run (docs/BENCHMARKS.md).
//!
//! - [`model_bench`]: featurization, the MAT forward and MSA attention; the row runner
//!   of the side-by-side table.
//! - [`compare_torch`]: MAT and Transformer-M against the PyTorch references
//!   (`bench/torch_models.py`), each row in its own process; [`tm_bench`] holds
//!   Transformer-M's rows, [`scaling_bench`] the thread scaling.
//! - [`epoch_bench`]: a whole training epoch against the reference training loop.
//! - [`featurize_bench`]: 3D featurization against RDKit, per stage.
//! - [`gen_bench`]: the SMILES generator's sampling and training step against PyTorch.
//! - [`msa_bench`]: MSA column global attention's time and peak memory.
//!
//! Application code like xtask (anyhow errors, clap value enums for the rows' flags),
//! not a library API.

pub mod compare_torch;
pub mod epoch_bench;
pub mod featurize_bench;
pub mod gen_bench;
pub mod measure;
pub mod model_bench;
pub mod msa_bench;
pub mod scaling_bench;
pub mod tm_bench;

use burn::tensor::Device;
use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::{ConformerOptions, MatFeaturizer};

/// The benchmarks' MAT featurizer: coordinates by `method`, conformer seed 42, the
/// reference quirks off (as `cargo xtask featurize` by default).
pub fn featurizer(method: CoordinateMethod) -> MatFeaturizer {
    MatFeaturizer {
        conformer: ConformerOptions {
            method,
            seed: 42,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The flex CPU device, or with `wgpu` the default wgpu device (an error naming the
/// feature when this build has no wgpu).
///
/// # Errors
/// `wgpu` asked of a build without the `wgpu` feature.
pub fn flex_or_wgpu(wgpu: bool) -> anyhow::Result<Device> {
    if !wgpu {
        return Ok(Device::flex());
    }
    #[cfg(feature = "wgpu")]
    return Ok(Device::wgpu(burn::tensor::DeviceKind::DefaultDevice));
    #[cfg(not(feature = "wgpu"))]
    Err(missing_feature("wgpu", "the wgpu rows"))
}

/// The error for a row that this build left out to build faster: it names the cargo
/// feature and the alias that builds it (docs/BUILD.md).
#[allow(dead_code)] // unused when every optional feature is on
pub(crate) fn missing_feature(feature: &str, what: &str) -> anyhow::Error {
    let how = match feature {
        "onnx" => "cargo xtask-onnx bench (or cargo xtask-full)",
        _ => "cargo xtask-full bench",
    };
    anyhow::anyhow!(
        "{what} need the `{feature}` feature, which the default build leaves out to build \
         faster; rebuild with it: {how}"
    )
}
