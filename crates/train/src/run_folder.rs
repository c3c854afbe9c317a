//! One training process per run folder, and resumes that continue the same run (issue
//! #37): an exclusive lock, a refusal to overwrite a run without `force`, and a resume
//! refused, with nothing on disk touched, when the data file or a recorded setting
//! differs from the run's.
//!
//! The lock is the operating system's advisory lock on `run.lock` (`File::try_lock`,
//! `flock` on Linux): the kernel releases it when its process exits, however it exits,
//! so a lock left by a killed run is not stale: the next run takes it. The file holds
//! the holder's process id for the message.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::checkpoint::write_json;
use crate::error::TrainError;

/// Files whose presence means a folder holds a run.
const RUN_FILES: [&str; 5] = [
    "run.json",
    "pretrain.json",
    "checkpoint",
    "best_model.bpk",
    "metrics.json",
];

/// The data a run was trained on (`run_dir/data.json`): each file's path, size and
/// SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataFingerprint {
    /// One entry per input file (molecules, split file).
    pub files: Vec<DataFile>,
}

/// One input file of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataFile {
    /// The path as given.
    pub path: PathBuf,
    /// Bytes.
    pub bytes: u64,
    /// SHA-256 of the contents, hex.
    pub sha256: String,
}

impl DataFingerprint {
    /// Hashes `paths` (read in 1 MiB blocks; a folder: its files in name order).
    ///
    /// # Errors
    /// [`TrainError::Io`] naming an unreadable file.
    pub fn of(paths: &[&Path]) -> Result<Self, TrainError> {
        let files = paths
            .iter()
            .map(|&path| {
                let mut hasher = Sha256::new();
                let mut bytes = 0u64;
                // A folder (of XYZ files): its files in name order, names hashed too.
                let files: Vec<PathBuf> = if path.is_dir() {
                    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                        .map_err(|e| TrainError::io(path, e))?
                        .flatten()
                        .map(|e| e.path())
                        .filter(|p| p.is_file())
                        .collect();
                    files.sort();
                    files
                } else {
                    vec![path.to_path_buf()]
                };
                let mut buf = vec![0u8; 1 << 20];
                for f in &files {
                    if f.as_path() != path {
                        hasher.update(f.file_name().unwrap_or_default().as_encoded_bytes());
                    }
                    let mut file = File::open(f).map_err(|e| TrainError::io(f, e))?;
                    loop {
                        let n = file.read(&mut buf).map_err(|e| TrainError::io(f, e))?;
                        if n == 0 {
                            break;
                        }
                        bytes += n as u64;
                        hasher.update(&buf[..n]);
                    }
                }
                Ok(DataFile {
                    path: path.to_path_buf(),
                    bytes,
                    sha256: format!("{:x}", hasher.finalize()),
                })
            })
            .collect::<Result<_, TrainError>>()?;
        Ok(Self { files })
    }
}

/// A claimed run folder: holds the lock until dropped (the end of the run).
#[derive(Debug)]
pub struct RunFolder {
    _lock: File,
    dir: PathBuf,
    resume: bool,
}

impl RunFolder {
    /// Claims `run_dir` for one training process: creates it, takes its lock, and checks
    /// that the run may start there:
    /// - a fresh run (`resume` false) into a folder that holds a run needs `force`;
    /// - a resumed run must see the data it was trained on (`data`, compared with
    ///   `data.json`; a run written before `data.json` existed is resumed unchecked).
    ///
    /// Nothing in the folder is changed before every check has passed; then a fresh run
    /// records `data.json`.
    ///
    /// # Errors
    /// [`TrainError::Invalid`] naming the folder and the reason: in use by another
    /// process, holds a run, or the data changed; [`TrainError::Io`].
    pub fn claim(
        run_dir: &Path,
        resume: bool,
        force: bool,
        data: &[&Path],
    ) -> Result<Self, TrainError> {
        std::fs::create_dir_all(run_dir).map_err(|e| TrainError::io(run_dir, e))?;
        let lock_path = run_dir.join("run.lock");
        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| TrainError::io(&lock_path, e))?;
        if let Err(e) = lock.try_lock() {
            let mut holder = String::new();
            lock.read_to_string(&mut holder).ok();
            return Err(TrainError::Invalid(match e {
                std::fs::TryLockError::WouldBlock => format!(
                    "{}: another training process ({}) is writing this run folder; wait for \
                     it to end or train into another --out",
                    run_dir.display(),
                    match holder.trim() {
                        "" => "process id unknown".to_string(),
                        pid => format!("process {pid}"),
                    }
                ),
                std::fs::TryLockError::Error(e) => {
                    format!("{}: cannot lock: {e}", lock_path.display())
                }
            }));
        }
        lock.set_len(0).map_err(|e| TrainError::io(&lock_path, e))?;
        lock.rewind().map_err(|e| TrainError::io(&lock_path, e))?;
        writeln!(lock, "{}", std::process::id()).map_err(|e| TrainError::io(&lock_path, e))?;

        let fingerprint = DataFingerprint::of(data)?;
        let recorded_path = run_dir.join("data.json");
        if resume {
            if let Ok(text) = std::fs::read_to_string(&recorded_path) {
                let recorded: DataFingerprint =
                    serde_json::from_str(&text).map_err(|e| TrainError::Checkpoint {
                        path: recorded_path.clone(),
                        reason: e.to_string(),
                    })?;
                if let Some(why) = data_change(&recorded, &fingerprint) {
                    return Err(TrainError::Invalid(format!(
                        "{}: resume refused, nothing changed on disk: {why}; train the new \
                         data into another --out (or --force a fresh run here)",
                        run_dir.display()
                    )));
                }
            }
        } else {
            if let Some(found) = RUN_FILES.iter().find(|f| run_dir.join(f).exists())
                && !force
            {
                return Err(TrainError::Invalid(format!(
                    "{}: holds a run already ({found}): pass --resume to continue it or \
                     --force to overwrite it",
                    run_dir.display()
                )));
            }
            write_json(&recorded_path, &fingerprint)?;
        }
        Ok(Self {
            _lock: lock,
            dir: run_dir.to_path_buf(),
            resume,
        })
    }

    /// Writes the run's definition to `run.json`. A resumed run's must equal the one
    /// recorded (every setting, the target scaling included): otherwise the resume is
    /// refused naming the settings that differ, and the file is left as it was.
    ///
    /// # Errors
    /// [`TrainError::Invalid`] naming the differing settings; I/O errors.
    pub fn write_spec<T: Serialize + DeserializeOwned>(&self, spec: &T) -> Result<(), TrainError> {
        self.write_definition("run.json", spec)
    }

    /// [`RunFolder::write_spec`] into the folder's file `name` (`pretrain.json`).
    ///
    /// The recorded file is read as a `T` first (through its compatibility readers) and
    /// written again before the comparison, so that a setting added since the run started
    /// (read with its default) does not count as changed; a file that does not read as a
    /// `T` is compared as it is.
    ///
    /// # Errors
    /// As [`RunFolder::write_spec`].
    pub fn write_definition<T: Serialize + DeserializeOwned>(
        &self,
        name: &str,
        spec: &T,
    ) -> Result<(), TrainError> {
        let path = self.dir.join(name);
        let new = serde_json::to_value(spec).map_err(|e| TrainError::Invalid(e.to_string()))?;
        if self.resume
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            let raw: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| TrainError::Checkpoint {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
            let old = serde_json::from_value::<T>(raw.clone())
                .ok()
                .and_then(|typed| serde_json::to_value(typed).ok())
                .unwrap_or(raw);
            let mut differ = Vec::new();
            json_differences("", &old, &new, &mut differ);
            if !differ.is_empty() {
                return Err(TrainError::Invalid(format!(
                    "{}: resume refused, nothing changed on disk: the run was started with \
                     other settings: {}; resume with the run's own settings, or train into \
                     another --out",
                    self.dir.display(),
                    differ.join("; ")
                )));
            }
        }
        write_json(&path, &new)
    }
}

/// Why `now` is not the data of `recorded`, in words; `None` when it is.
fn data_change(recorded: &DataFingerprint, now: &DataFingerprint) -> Option<String> {
    if recorded.files.len() != now.files.len() {
        return Some(format!(
            "the run was trained on {} data files, this resume gives {}",
            recorded.files.len(),
            now.files.len()
        ));
    }
    recorded.files.iter().zip(&now.files).find_map(|(a, b)| {
        (a.sha256 != b.sha256).then(|| {
            format!(
                "{} is not the file the run was trained on ({} bytes, SHA-256 {} then; {} \
                 bytes, SHA-256 {} now)",
                b.path.display(),
                a.bytes,
                &a.sha256[..12.min(a.sha256.len())],
                b.bytes,
                &b.sha256[..12.min(b.sha256.len())]
            )
        })
    })
}

/// Dotted paths where `a` and `b` differ, with both values (`at` = the path so far).
fn json_differences(at: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let key = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => json_differences(&key, p, q, out),
                    (p, q) => out.push(format!(
                        "{key} was {} and is now {}",
                        p.map_or("absent".into(), Value::to_string),
                        q.map_or("absent".into(), Value::to_string)
                    )),
                }
            }
        }
        _ if a != b => out.push(format!(
            "{} was {a} and is now {b}",
            if at.is_empty() { "the spec" } else { at }
        )),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("molattn-folder-{name}-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Issue #37 item 5: a second claim of a folder in use is refused, naming the
    /// holder; once the first ends, the folder can be claimed again (a dead holder's
    /// lock does not stay). A folder holding a run is not overwritten without `force`.
    #[test]
    fn one_process_per_folder_and_no_silent_overwrite() {
        let dir = folder("lock");
        let data = dir.join("d.csv");
        std::fs::write(&data, "smiles,y\nCCO,1\n").unwrap();
        let run = dir.join("run");
        let first = RunFolder::claim(&run, false, false, &[&data]).unwrap();
        let e = RunFolder::claim(&run, false, true, &[&data])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("another training process")
                && e.contains(&format!("process {}", std::process::id())),
            "{e}"
        );
        first
            .write_spec(&serde_json::json!({"train": {"batch_size": 32}}))
            .unwrap();
        drop(first);
        let e = RunFolder::claim(&run, false, false, &[&data])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("holds a run already (run.json)") && e.contains("--force"),
            "{e}"
        );
        assert!(RunFolder::claim(&run, false, true, &[&data]).is_ok());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Issue #37 items 3 and 4: a resume after the data file changed, or with another
    /// setting, is refused naming what differs, and `run.json` / `data.json` stay as
    /// they were; the same data and settings resume.
    #[test]
    fn resume_refuses_other_data_or_settings_and_touches_nothing() {
        let dir = folder("resume");
        let data = dir.join("d.csv");
        std::fs::write(&data, "smiles,y\nCCO,1\n").unwrap();
        let run = dir.join("run");
        let spec =
            serde_json::json!({"train": {"batch_size": 32, "seed": 0}, "target_mean": [1.0]});
        RunFolder::claim(&run, false, false, &[&data])
            .unwrap()
            .write_spec(&spec)
            .unwrap();
        let before = |f: &str| std::fs::read(run.join(f)).unwrap();
        let (spec_before, data_before) = (before("run.json"), before("data.json"));

        let other =
            serde_json::json!({"train": {"batch_size": 7, "seed": 0}, "target_mean": [1.0]});
        let claim = RunFolder::claim(&run, true, false, &[&data]).unwrap();
        let e = claim.write_spec(&other).unwrap_err().to_string();
        assert!(e.contains("train.batch_size was 32 and is now 7"), "{e}");
        drop(claim);
        assert_eq!(before("run.json"), spec_before);

        std::fs::write(&data, "smiles,y\nCCO,10\n").unwrap();
        let e = RunFolder::claim(&run, true, false, &[&data])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not the file the run was trained on"), "{e}");
        assert_eq!(
            (before("run.json"), before("data.json")),
            (spec_before.clone(), data_before)
        );

        std::fs::write(&data, "smiles,y\nCCO,1\n").unwrap();
        let claim = RunFolder::claim(&run, true, false, &[&data]).unwrap();
        claim.write_spec(&spec).unwrap();
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A run started before a setting existed resumes: the recorded file is read with the
    /// setting's default (here `init_from: null`, `droppath: 0`) before the comparison.
    #[test]
    fn a_setting_added_since_the_run_started_is_not_a_change() {
        #[derive(Serialize, Deserialize)]
        struct Spec {
            batch_size: usize,
            #[serde(default)]
            init_from: Option<String>,
            #[serde(default)]
            droppath: f64,
        }
        let dir = folder("added");
        let data = dir.join("d.csv");
        std::fs::write(&data, "smiles,y\nCCO,1\n").unwrap();
        let run = dir.join("run");
        RunFolder::claim(&run, false, false, &[&data])
            .unwrap()
            .write_spec(&serde_json::json!({"batch_size": 32}))
            .unwrap();
        let now = Spec {
            batch_size: 32,
            init_from: None,
            droppath: 0.0,
        };
        let claim = RunFolder::claim(&run, true, false, &[&data]).unwrap();
        claim.write_spec(&now).unwrap();
        drop(claim);
        // A real change is still refused.
        let other = Spec {
            droppath: 0.1,
            ..now
        };
        let claim = RunFolder::claim(&run, true, false, &[&data]).unwrap();
        let e = claim.write_spec(&other).unwrap_err().to_string();
        assert!(e.contains("droppath was 0.0 and is now 0.1"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
