//! Files of a run directory: written atomically (temporary file, synced, then renamed), read back
//! with errors that name the file. Training checkpoints are burn-train's, written
//! atomically by [`crate::engine::checkpointer`].

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::TrainError;

/// Writes a file atomically ([`mol_featurize::atomic_file::write_atomically`]: a temporary
/// file in the same folder, synced, then renamed over `path`, with `std::fs::write`'s
/// permissions).
///
/// # Errors
/// [`TrainError::Io`] naming the path.
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<(), TrainError> {
    mol_featurize::atomic_file::write_atomically(path, bytes).map_err(|e| TrainError::io(path, e))
}

/// Moves a finished file written elsewhere in `path`'s folder (`written`: a model that Burn
/// saved by path) over `path` atomically, after syncing it to disk.
///
/// # Errors
/// [`TrainError::Io`] naming the path.
pub fn persist_file(written: &Path, path: &Path) -> Result<(), TrainError> {
    fs::File::open(written)
        .and_then(|f| f.sync_all())
        .map_err(|e| TrainError::io(written, e))?;
    fs::rename(written, path).map_err(|e| TrainError::io(path, e))
}

/// Refuses an output path that is one of the command's input files (issue #37: `predict
/// --data x.csv --out x.csv` overwrote its input). Paths are compared after resolving
/// links and `..`; an output that does not exist yet is compared through its folder.
///
/// # Errors
/// [`TrainError::Invalid`] naming both.
pub fn refuse_overwriting_input(out: &Path, inputs: &[&Path]) -> Result<(), TrainError> {
    let resolve = |p: &Path| -> Option<PathBuf> {
        fs::canonicalize(p).ok().or_else(|| {
            let parent = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            Some(fs::canonicalize(parent).ok()?.join(p.file_name()?))
        })
    };
    let Some(target) = resolve(out) else {
        return Ok(());
    };
    for input in inputs {
        if resolve(input).is_some_and(|p| p == target) {
            return Err(TrainError::Invalid(format!(
                "--out {} is the input file {}: write the output elsewhere",
                out.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// Writes `value` as pretty JSON, atomically ([`write_file_atomically`]).
///
/// # Errors
/// [`TrainError::Invalid`] if it cannot be serialised, [`TrainError::Io`] naming the path.
pub fn write_json<T: serde::Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), TrainError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| TrainError::Invalid(e.to_string()))?;
    write_file_atomically(path, &bytes)
}

/// `module` with the weights of `run_dir/best_model.bpk`.
///
/// # Errors
/// [`TrainError::Checkpoint`] naming the file when it is missing or does not fit `module`.
pub fn load_best_model<M: burn::module::Module>(
    module: M,
    run_dir: &Path,
) -> Result<M, TrainError> {
    load_model_file(module, &run_dir.join("best_model.bpk"))
}

/// `module` with the parameters of the model file `path` (a `.bpk` written by the engine).
///
/// # Errors
/// [`TrainError::Checkpoint`] naming `path` if it is missing or does not fit `module`.
pub fn load_model_file<M: burn::module::Module>(module: M, path: &Path) -> Result<M, TrainError> {
    module
        .try_load_file(path)
        .map_err(|e| TrainError::Checkpoint {
            path: path.to_path_buf(),
            reason: format!("{e:?}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #37 item 8: an output naming an input (directly, through `..` or a link)
    /// is refused; another path is not.
    #[test]
    fn an_output_that_is_an_input_is_refused() {
        let dir = std::env::temp_dir().join(format!("molattn-out-{}", std::process::id()));
        fs::create_dir_all(dir.join("sub")).unwrap();
        let input = dir.join("x.csv");
        fs::write(&input, "smiles\nCCO\n").unwrap();
        let e = refuse_overwriting_input(&input, &[&input])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is the input file"), "{e}");
        assert!(refuse_overwriting_input(&dir.join("sub/../x.csv"), &[&input]).is_err());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&input, dir.join("link.csv")).unwrap();
            assert!(refuse_overwriting_input(&dir.join("link.csv"), &[&input]).is_err());
        }
        assert!(refuse_overwriting_input(&dir.join("y.csv"), &[&input]).is_ok());
        fs::remove_dir_all(&dir).ok();
    }
}
