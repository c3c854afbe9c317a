//! Files of a run directory: written atomically (temporary file, then rename), read back
//! with errors that name the file. Training checkpoints are burn-train's, written
//! atomically by [`crate::engine::checkpointer`].

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::TrainError;

/// Writes a file atomically (temporary file in the same directory, named by this process so
/// that two processes writing the same file do not share it, then rename).
///
/// # Errors
/// [`TrainError::Io`] naming the path.
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<(), TrainError> {
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(format!(".tmp.{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    fs::write(&tmp, bytes).map_err(|e| TrainError::io(&tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| TrainError::io(path, e))
}

/// Writes `value` as pretty JSON, atomically ([`write_file_atomically`]).
///
/// # Errors
/// [`TrainError::Invalid`] if it cannot be serialised, [`TrainError::Io`] naming the path.
pub fn write_json<T: serde::Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), TrainError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| TrainError::Invalid(e.to_string()))?;
    write_file_atomically(path, &bytes)
}

/// The `run.json` of `run_dir` as `T`, after checking that the run is of `kind`.
///
/// # Errors
/// [`TrainError::Checkpoint`] naming `run.json` when it is missing, malformed, or the run
/// is of another kind.
pub fn read_run_spec<T: serde::de::DeserializeOwned>(
    run_dir: &Path,
    kind: crate::RunKind,
) -> Result<T, TrainError> {
    let path = run_dir.join("run.json");
    let (json, found) = crate::run_kind::read_run_json(run_dir)?;
    if found != kind {
        return Err(TrainError::Checkpoint {
            path,
            reason: format!("a --model {found} run, not a --model {kind} run"),
        });
    }
    serde_json::from_value(json).map_err(|e| TrainError::Checkpoint {
        path,
        reason: e.to_string(),
    })
}

/// `module` with the weights of `run_dir/best_model.bpk`.
///
/// # Errors
/// [`TrainError::Checkpoint`] naming the file when it is missing or does not fit `module`.
pub fn load_best_model<M: burn::module::Module>(
    module: M,
    run_dir: &Path,
) -> Result<M, TrainError> {
    let path = run_dir.join("best_model.bpk");
    module
        .try_load_file(&path)
        .map_err(|e| TrainError::Checkpoint {
            path,
            reason: format!("{e:?}"),
        })
}
