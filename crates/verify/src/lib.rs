//! molattn's verification tooling, reachable from tests and from `cargo xtask`:
//!
//! - [`parity`]: every component against fixtures made by running the original
//!   implementations (`fixtures/gen/`), as one table (`cargo xtask parity`,
//!   docs/PARITY.md).
//! - [`fuzz`]: the SMILES, SDF and XYZ readers fuzzed against their invariants, and the
//!   `cargo xtask` binary run as a user would, with bad input and `kill -9`
//!   (`cargo xtask fuzz`, docs/CHEMISTRY.md).
//!
//! Application code like xtask (anyhow errors), not a library API.

pub mod fuzz;
pub mod parity;
