//! The engine's files in a run directory: preparing it for a fresh or a resumed run,
//! what a resume must match (`engine.json`), the training time across invocations, and
//! pruning the checkpoints burn-train's strategies forget after a resume.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::checkpointer::last_complete_epoch;
use super::progress::Progress;
use crate::error::TrainError;

#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct TrainingTime {
    pub(super) seconds: f64,
}

/// Epoch to resume after (`None`: a fresh run). A fresh run clears the logs and
/// checkpoints of an earlier run in the same directory; a resumed one drops the logs of
/// the epoch it was interrupted in.
pub(super) fn prepare_run_dir(
    run_dir: &Path,
    resume: bool,
    identity: &RunIdentity,
    progress: Progress,
) -> Result<Option<usize>, TrainError> {
    let checkpoints = run_dir.join("checkpoint");
    let identity_path = run_dir.join("engine.json");
    let resume_after = if resume {
        match last_complete_epoch(&checkpoints) {
            Some(epoch) => {
                if let Ok(text) = std::fs::read_to_string(&identity_path) {
                    let before: RunIdentity =
                        serde_json::from_str(&text).map_err(|e| TrainError::Checkpoint {
                            path: identity_path.clone(),
                            reason: e.to_string(),
                        })?;
                    if before != *identity {
                        return Err(TrainError::Checkpoint {
                            path: identity_path.clone(),
                            reason: format!(
                                "the run was started with {before:?} and is resumed with \
                                 {identity:?}: resume with the same seed, batch size, devices \
                                 and step budget"
                            ),
                        });
                    }
                }
                Some(epoch)
            }
            None => {
                // Killed before its first checkpoint: nothing to resume, start afresh.
                if progress != Progress::Quiet {
                    eprintln!(
                        "{}: no complete checkpoint yet, training from epoch 1",
                        checkpoints.display()
                    );
                }
                None
            }
        }
    } else {
        None
    };
    let keep = resume_after.unwrap_or(0);
    for split in ["train", "valid"] {
        let dir = run_dir.join(split);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            let epoch: Option<usize> = name.strip_prefix("epoch-").and_then(|e| e.parse().ok());
            if epoch.is_some_and(|e| e > keep) {
                std::fs::remove_dir_all(entry.path())
                    .map_err(|e| TrainError::io(entry.path(), e))?;
            }
        }
    }
    if resume_after.is_none() {
        for stale in ["checkpoint", "best_model.bpk", "training_time.json"] {
            let path = run_dir.join(stale);
            if path.is_dir() {
                std::fs::remove_dir_all(&path).map_err(|e| TrainError::io(&path, e))?;
            } else if path.exists() {
                std::fs::remove_file(&path).map_err(|e| TrainError::io(&path, e))?;
            }
        }
    }
    crate::checkpoint::write_json(&identity_path, identity)?;
    Ok(resume_after)
}

/// What a resumed run must share with the run it continues (`run_dir/engine.json`): the
/// seeding, batching and step budget, so that its epochs are the ones the interrupted run
/// would have trained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct RunIdentity {
    pub(super) seed: u64,
    pub(super) batch_size: usize,
    pub(super) devices: usize,
    pub(super) max_steps: Option<usize>,
    /// Loader epochs per data epoch (runs before the option have 1).
    #[serde(default = "one")]
    pub(super) checkpoints_per_epoch: usize,
}

fn one() -> usize {
    1
}

/// Deletes the checkpoint files of `dir` except those of the epochs in `keep` (burn-train's
/// strategies forget the epochs they saw before a resume, so their files would stay).
pub(super) fn prune_checkpoints(dir: &Path, keep: &[usize]) -> Result<(), TrainError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let epoch = name
            .strip_suffix(".bpk")
            .and_then(|n| n.rsplit_once('-'))
            .and_then(|(_, e)| e.parse::<usize>().ok());
        if epoch.is_some_and(|e| !keep.contains(&e)) {
            std::fs::remove_file(entry.path()).map_err(|e| TrainError::io(entry.path(), e))?;
        }
    }
    Ok(())
}
