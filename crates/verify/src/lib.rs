//! molattn's verification tooling, reachable from tests and from `cargo xtask`:
//!
//! - [`parity`]: every component against fixtures made by running the original
//!   implementations (`fixtures/gen/`), as one table (`cargo xtask parity`,
//!   docs/PARITY.md).
//! - [`fuzz`]: the SMILES, SDF and XYZ readers fuzzed against their invariants, and the
//!   `cargo xtask` binary run as a user would, with bad input and `kill -9`
//!   (`cargo xtask fuzz`, docs/CHEMISTRY.md).
//! - `onnx_roundtrip` (feature `onnx`): the small reference MAT exported to ONNX and
//!   imported back with burn-onnx (`cargo xtask-onnx onnx-roundtrip`, docs/ONNX.md).
//!
//! Application code like xtask (anyhow errors), not a library API.

pub mod fuzz;
#[cfg(feature = "onnx")]
pub mod onnx_roundtrip;
pub mod parity;
