//! Rust errors as Python exceptions: what a user did wrong is a `ValueError` (a missing
//! file a `FileNotFoundError`), with the CLI's message; anything else a `RuntimeError`.
//! The CLI's own argument checks (`bail!` in xtask's commands: "--ensemble-size needs
//! ...") are plain messages with no typed cause, and count as the user's.

use pyo3::PyErr;
use pyo3::exceptions::{PyFileNotFoundError, PyRuntimeError, PyValueError};
use train::TrainError;

/// A `ValueError` with `message`.
pub fn value_error(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// The exception for `e`, by its first cause that says whose fault it is.
pub fn to_py(e: anyhow::Error) -> PyErr {
    let message = format!("{e:#}");
    for cause in e.chain() {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::NotFound {
                return PyFileNotFoundError::new_err(message);
            }
            break;
        }
        if cause.downcast_ref::<clap::Error>().is_some() {
            return PyValueError::new_err(message);
        }
        if let Some(t) = cause.downcast_ref::<TrainError>() {
            match t {
                TrainError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                    return PyFileNotFoundError::new_err(message);
                }
                TrainError::Csv { path, .. } if !std::path::Path::new(path).exists() => {
                    return PyFileNotFoundError::new_err(message);
                }
                TrainError::Invalid(_)
                | TrainError::Csv { .. }
                | TrainError::Split { .. }
                | TrainError::Checkpoint { .. } => return PyValueError::new_err(message),
                _ => {}
            }
        }
    }
    // A plain message (`bail!("...")`, `anyhow!("{x}")`) with nothing under it: the
    // commands' argument checks. Typed failures (a model, a runtime) keep RuntimeError.
    let plain = e.downcast_ref::<String>().is_some() || e.downcast_ref::<&'static str>().is_some();
    if plain && e.chain().count() == 1 {
        return PyValueError::new_err(message);
    }
    PyRuntimeError::new_err(message)
}
