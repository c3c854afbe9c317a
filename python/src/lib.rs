//! `molattn._molattn`: the extension module under the `molattn` Python package (issue
//! #39). Each function is a thin call into the crates (`train`, `export`) or into the
//! CLI's own commands (`xtask`), with the GIL released while it runs; the Python side
//! (`python/molattn/__init__.py`) turns DataFrames and RDKit molecules into these calls'
//! arguments and their arrays back into DataFrames.
//!
//! Errors: bad arguments and inputs raise `ValueError` (`FileNotFoundError` for a
//! missing file) with the CLI's message; a molecule that cannot be featurized is a row's
//! error, never an exception.

mod errors;
mod featurize;
mod inputs;
mod predicted;
mod run;

use pyo3::prelude::*;

// The allocator `cargo xtask` uses: Burn allocates a buffer per tensor op, which
// mimalloc reuses where glibc's malloc unmaps and re-faults it (docs/BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs a `cargo xtask` command line, e.g. `cli(["train", "--data", "x.csv", "--out",
/// "runs/x"])`: the same flags, defaults, progress output and files. `argv` excludes the
/// program name. `--help` prints the command's help. Progress goes to the process's
/// stdout / stderr (a terminal, or the log of a notebook's kernel), not `sys.stdout`.
///
/// Raises `ValueError` (a flag the command does not take, a bad value, bad input) or
/// `FileNotFoundError` with the CLI's message, `RuntimeError` for other failures.
#[pyfunction]
fn cli(py: Python<'_>, argv: Vec<String>) -> PyResult<()> {
    let argv: Vec<String> = std::iter::once("molattn".to_string()).chain(argv).collect();
    let matches = match xtask::command().try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) if !e.use_stderr() => {
            // --help / --version: printed through Python's `print` (so a notebook shows
            // it), not an error.
            let text = e.render().to_string();
            py.import("builtins")?.getattr("print")?.call1((text,))?;
            return Ok(());
        }
        Err(e) => return Err(errors::value_error(e.render().to_string())),
    };
    py.detach(|| xtask::run(&matches)).map_err(errors::to_py)
}

/// The extension module.
#[pymodule]
fn _molattn(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // SAFETY: as `cargo xtask`'s main (attn_core::blas::init): it may set
    // OPENBLAS_CORETYPE before OpenBLAS loads; at import no molattn thread runs yet.
    unsafe { attn_core::blas::init() };
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(featurize::featurize, m)?)?;
    m.add_class::<run::Run>()?;
    Ok(())
}
