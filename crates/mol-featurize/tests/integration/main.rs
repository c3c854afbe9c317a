//! Integration tests of `mol-featurize`, gathered into one test binary: each test binary is its
//! own compile and link step (for the crates above mol-featurize, a link of all of
//! Burn), so one per crate instead of one per file (docs/BUILD.md).

mod bad_records;
mod bfgs_packed;
mod conformer_bits;
mod edge_cases;
mod mat_edge_fixture;
mod moses_molecules;
mod ogb_fixtures;
mod properties;
mod rdkit_fixtures;
mod smiles_fuzz;
mod smiles_tokens;
mod structure_records;

/// The crate's directory at run time (`cargo test` sets `CARGO_MANIFEST_DIR` for the test
/// process; the compile-time value is the fallback). Not `env!` alone: a build directory
/// shared between checkouts at different paths can reuse a test binary built elsewhere.
pub fn manifest_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
}
