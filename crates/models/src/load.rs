//! Errors shared by the reference-checkpoint loaders (MAT `state_dict`s, AlphaFold haiku
//! parameters).

use burn::store::ApplyResult;
use thiserror::Error;

/// Why a reference checkpoint could not be loaded.
#[derive(Debug, Error)]
pub enum LoadError {
    /// The file could not be read or parsed.
    #[error("{path}: cannot read checkpoint: {reason}")]
    Read {
        /// The checkpoint.
        path: String,
        /// Reader message.
        reason: String,
    },
    /// The checkpoint does not fit the model configuration.
    #[error(
        "{path}: checkpoint does not match the model:\n  missing (in the model, not the file): {missing:?}\n  unexpected (in the file, not the model): {unexpected:?}\n  mismatched: {mismatched:?}"
    )]
    Mismatch {
        /// The checkpoint.
        path: String,
        /// Model parameters the file lacks (our paths).
        missing: Vec<String>,
        /// File tensors the model has no place for (reference keys after mapping).
        unexpected: Vec<String>,
        /// Shape or dtype mismatches.
        mismatched: Vec<String>,
    },
}

impl LoadError {
    /// `Ok` when nothing is missing, unexpected or mismatched (the shape/dtype errors of
    /// `result`); otherwise [`LoadError::Mismatch`] listing all three.
    pub(crate) fn check(
        path: String,
        missing: Vec<String>,
        unexpected: Vec<String>,
        result: &ApplyResult,
    ) -> Result<(), LoadError> {
        let mismatched: Vec<String> = result.errors.iter().map(|e| e.to_string()).collect();
        if missing.is_empty() && unexpected.is_empty() && mismatched.is_empty() {
            Ok(())
        } else {
            Err(LoadError::Mismatch {
                path,
                missing,
                unexpected,
                mismatched,
            })
        }
    }
}
