//! The error type of `train`.

use std::path::PathBuf;

use thiserror::Error;

/// Errors of dataset loading, training and prediction.
#[derive(Debug, Error)]
pub enum TrainError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The CSV is malformed or lacks a column.
    #[error("{path}: {reason}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// What is wrong (row and column named).
        reason: String,
    },
    /// A split file is malformed or lacks the requested split.
    #[error("split file {path}: {reason}")]
    Split {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A checkpoint or run directory is missing or inconsistent.
    #[error("checkpoint {path}: {reason}")]
    Checkpoint {
        /// The file or directory.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Training stopped on request ([`crate::RunControl::interrupt_after_batches`])
    /// before the last epoch; the checkpoint allows `--resume`.
    #[error("training stopped after epoch {epochs_done}; resume to continue")]
    Interrupted {
        /// Epochs completed so far.
        epochs_done: usize,
    },
    /// Invalid options or data (e.g. an empty training set).
    #[error("{0}")]
    Invalid(String),
}

impl TrainError {
    /// Wraps an I/O error with its path.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TrainError::Io {
            path: path.into(),
            source,
        }
    }

    /// The error for a command that takes a property model given a SMILES generator run
    /// (`verb`: what would have been done to it, e.g. "explained").
    pub fn generator_run(run_dir: &std::path::Path, verb: &str) -> Self {
        TrainError::Invalid(format!(
            "{}: a smiles-gpt run generates molecules (cargo xtask generate); it predicts no \
             property and cannot be {verb}",
            run_dir.display()
        ))
    }
}
