//! Checkpoints that survive `kill -9`: burn-train's file layout
//! (`checkpoint/{model,optim,scheduler}-<epoch>.bpk`), each file written to a temporary
//! name and renamed into place, so a file with its final name is always complete. Resume
//! picks the last epoch whose three files all exist.
//!
//! burn-train's `FileCheckpointer` writes in place (a process killed mid-write leaves a
//! truncated file under the final name); this wrapper adds only the rename.

use std::path::{Path, PathBuf};

use burn::train::checkpoint::{Checkpoint, Checkpointer, CheckpointerError};

/// The three record kinds of a checkpoint, as burn-train names their files.
pub const RECORDS: [&str; 3] = ["model", "optim", "scheduler"];

/// Writes `<dir>/<name>-<epoch>.bpk` atomically (temporary file, then rename).
#[derive(Debug, Clone)]
pub struct AtomicFileCheckpointer {
    dir: PathBuf,
    name: String,
}

impl AtomicFileCheckpointer {
    /// Checkpoints of record kind `name` in `dir` (created if missing).
    pub fn new(dir: &Path, name: &str) -> Self {
        std::fs::create_dir_all(dir).ok();
        Self {
            dir: dir.to_path_buf(),
            name: name.to_string(),
        }
    }

    fn path(&self, epoch: usize) -> PathBuf {
        self.dir.join(format!("{}-{epoch}.bpk", self.name))
    }
}

impl<R: Checkpoint> Checkpointer<R> for AtomicFileCheckpointer {
    fn save(&self, epoch: usize, record: R) -> Result<(), CheckpointerError> {
        let path = self.path(epoch);
        let tmp = path.with_extension("bpk.partial");
        if tmp.exists() {
            std::fs::remove_file(&tmp).map_err(CheckpointerError::IOError)?;
        }
        record.save(tmp.clone())?;
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(CheckpointerError::IOError)?;
        std::fs::rename(&tmp, &path).map_err(CheckpointerError::IOError)
    }

    fn restore(&self, epoch: usize) -> Result<R, CheckpointerError> {
        R::load(self.path(epoch))
    }

    fn delete(&self, epoch: usize) -> Result<(), CheckpointerError> {
        let path = self.path(epoch);
        if path.exists() {
            std::fs::remove_file(path).map_err(CheckpointerError::IOError)?;
        }
        Ok(())
    }
}

/// The last epoch of `dir` (a run's `checkpoint/` folder) with all three record files,
/// or `None`.
pub fn last_complete_epoch(dir: &Path) -> Option<usize> {
    let entries = std::fs::read_dir(dir).ok()?;
    entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let epoch: usize = name
                .strip_prefix("model-")?
                .strip_suffix(".bpk")?
                .parse()
                .ok()?;
            RECORDS
                .iter()
                .all(|r| dir.join(format!("{r}-{epoch}.bpk")).exists())
                .then_some(epoch)
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_epochs_with_every_record_count() {
        let dir = std::env::temp_dir().join(format!("molattn-engine-ckpt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for r in RECORDS {
            std::fs::write(dir.join(format!("{r}-3.bpk")), b"x").unwrap();
        }
        // Epoch 4 was interrupted after its model file.
        std::fs::write(dir.join("model-4.bpk"), b"x").unwrap();
        std::fs::write(dir.join("optim-4.bpk.partial"), b"x").unwrap();
        assert_eq!(last_complete_epoch(&dir), Some(3));
        assert_eq!(last_complete_epoch(&dir.join("missing")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
