//! Atomic checkpoint directories: everything is written into `<dir>.tmp`, then swapped
//! in with renames, so a crash never leaves a half-written checkpoint behind.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::TrainError;

/// Writes a checkpoint directory atomically: `write` fills a fresh temporary directory,
/// which then replaces `dir` (the previous one is kept as `<dir>.old` until the swap is
/// done, so [`resolve`] can always find a complete checkpoint).
///
/// # Errors
/// [`TrainError::Io`] naming the path that failed, or whatever `write` returns.
pub fn write_atomically(
    dir: &Path,
    write: impl FnOnce(&Path) -> Result<(), TrainError>,
) -> Result<(), TrainError> {
    let tmp = sibling(dir, "tmp");
    let old = sibling(dir, "old");
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(|e| TrainError::io(&tmp, e))?;
    }
    fs::create_dir_all(&tmp).map_err(|e| TrainError::io(&tmp, e))?;
    write(&tmp)?;
    if dir.exists() {
        if old.exists() {
            fs::remove_dir_all(&old).map_err(|e| TrainError::io(&old, e))?;
        }
        fs::rename(dir, &old).map_err(|e| TrainError::io(dir, e))?;
    }
    fs::rename(&tmp, dir).map_err(|e| TrainError::io(&tmp, e))?;
    if old.exists() {
        fs::remove_dir_all(&old).map_err(|e| TrainError::io(&old, e))?;
    }
    Ok(())
}

/// The complete checkpoint for `dir`: `dir` itself, or `<dir>.old` when a crash hit
/// between the two renames of [`write_atomically`]. `None` if neither exists.
pub fn resolve(dir: &Path) -> Option<PathBuf> {
    [dir.to_path_buf(), sibling(dir, "old")]
        .into_iter()
        .find(|p| p.is_dir())
}

fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".{suffix}"));
    dir.with_file_name(name)
}

/// Writes a file atomically (temporary file in the same directory, then rename).
///
/// # Errors
/// [`TrainError::Io`] naming the path.
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<(), TrainError> {
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(".tmp");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_replaces_and_failed_write_keeps_previous() {
        let root = std::env::temp_dir().join(format!("molattn-ckpt-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let dir = root.join("checkpoint");
        write_atomically(&dir, |d| {
            fs::write(d.join("a"), "1").map_err(|e| TrainError::io(d, e))
        })
        .unwrap();
        write_atomically(&dir, |d| {
            fs::write(d.join("a"), "2").map_err(|e| TrainError::io(d, e))
        })
        .unwrap();
        assert_eq!(fs::read_to_string(dir.join("a")).unwrap(), "2");
        let failed = write_atomically(&dir, |_| Err(TrainError::Invalid("boom".into())));
        assert!(failed.is_err());
        assert_eq!(
            fs::read_to_string(resolve(&dir).unwrap().join("a")).unwrap(),
            "2"
        );
        fs::remove_dir_all(&root).unwrap();
    }
}
