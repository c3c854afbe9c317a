//! Pretrained MAT models that ship inside molattn (issue #40): `--init-from
//! pretrained:mat-small` names one; it resolves to a pretraining run folder, so everything
//! that takes a `pretrain --model mat` run takes it too.
//!
//! The files live in `crates/train/pretrained/<name>/` (with the README that says which
//! command, corpus and commit made them) and are compiled into the library, so a wheel or an
//! installed binary carries them without the repository. On first use they are written to
//! `<cache>/pretrained/<name>-<sha256 prefix>/` ([`mol_featurize::cache::default_cache_dir`])
//! and read from there, like any run folder.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::init_from::PRETRAINED_MODEL;
use crate::error::TrainError;

/// The prefix that names a shipped model instead of a folder: `pretrained:<name>`.
pub const SHIPPED_PREFIX: &str = "pretrained:";

/// One shipped MAT pretraining run: its name and the files of its run folder.
struct Shipped {
    name: &'static str,
    /// `pretrain.json`: the architecture, featurizer and pretraining settings.
    spec: &'static str,
    /// `pretrain_metrics.json`: losses and masked-atom accuracy.
    metrics: &'static str,
    /// `pretrained_model.bpk`: the embedding, encoder and (untrained) generator.
    model: &'static [u8],
}

const SHIPPED: &[Shipped] = &[Shipped {
    name: "mat-small",
    spec: include_str!("../../pretrained/mat-small/pretrain.json"),
    metrics: include_str!("../../pretrained/mat-small/pretrain_metrics.json"),
    model: include_bytes!("../../pretrained/mat-small/pretrained_model.bpk"),
}];

/// The names `pretrained:<name>` accepts.
pub fn shipped_names() -> Vec<&'static str> {
    SHIPPED.iter().map(|s| s.name).collect()
}

/// The run folder `run` names: itself, or for `pretrained:<name>` the shipped model's
/// folder in the cache (written on first use, in `cache` or else
/// [`mol_featurize::cache::cache_root`]'s default).
///
/// # Errors
/// [`TrainError::Checkpoint`]: an unknown name (the known ones are listed), or the cache
/// folder cannot be written.
pub fn locate_pretraining_run(run: &Path, cache: Option<&Path>) -> Result<PathBuf, TrainError> {
    let Some(name) = run.to_str().and_then(|s| s.strip_prefix(SHIPPED_PREFIX)) else {
        return Ok(run.to_path_buf());
    };
    let bad = |path: PathBuf, reason: String| TrainError::Checkpoint { path, reason };
    let Some(shipped) = SHIPPED.iter().find(|s| s.name == name) else {
        return Err(bad(
            run.to_path_buf(),
            format!(
                "no shipped pretrained model named {name:?}; shipped: {}",
                shipped_names()
                    .iter()
                    .map(|n| format!("{SHIPPED_PREFIX}{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    let digest = Sha256::digest(shipped.model);
    let tag: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    let root = mol_featurize::cache::cache_root(cache.map(Path::to_path_buf));
    let parent = root.join("pretrained");
    let dir = parent.join(format!("{name}-{tag}"));
    if holds(&dir, shipped) {
        return Ok(dir);
    }
    // Written into a fresh sibling folder (unique per call, threads included) and renamed,
    // so that a run interrupted half-way, or two at once, never leaves a folder with a
    // truncated model file under the final name.
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(&parent)?;
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}-{tag}."))
            .tempdir_in(&parent)?;
        std::fs::write(tmp.path().join("pretrain.json"), shipped.spec)?;
        std::fs::write(tmp.path().join("pretrain_metrics.json"), shipped.metrics)?;
        std::fs::write(tmp.path().join(PRETRAINED_MODEL), shipped.model)?;
        if dir.exists() && !holds(&dir, shipped) {
            // A folder left damaged (edited, truncated by a full disk): moved aside under
            // a name of its own (atomic; a concurrent writer may have moved it first) and
            // deleted, so that no reader ever sees a half-deleted folder.
            let trash = tempfile::Builder::new()
                .prefix(&format!(".{name}-{tag}.damaged."))
                .tempdir_in(&parent)?;
            match std::fs::rename(&dir, trash.path().join("old")) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                // Another writer replaced it meanwhile with a good copy.
                Err(_) if holds(&dir, shipped) => {}
                Err(e) => return Err(e),
            }
        }
        match std::fs::rename(tmp.path(), &dir) {
            // Another process or thread wrote the same bytes first; `tmp` is removed on drop.
            Err(_) if holds(&dir, shipped) => Ok(()),
            Err(e) => Err(e),
            Ok(()) => {
                // Renamed away: nothing left for the drop to remove.
                let _ = tmp.keep();
                Ok(())
            }
        }
    };
    write().map_err(|e| {
        bad(
            dir.clone(),
            format!("cannot write the shipped model {SHIPPED_PREFIX}{name} there: {e}"),
        )
    })?;
    Ok(dir)
}

/// Whether `dir` holds exactly `shipped`'s files, byte for byte (a 0.8 MB read per use:
/// nothing beside a training run).
fn holds(dir: &Path, shipped: &Shipped) -> bool {
    let same = |file: &str, bytes: &[u8]| std::fs::read(dir.join(file)).is_ok_and(|b| b == bytes);
    same(PRETRAINED_MODEL, shipped.model)
        && same("pretrain.json", shipped.spec.as_bytes())
        && same("pretrain_metrics.json", shipped.metrics.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_itself_and_an_unknown_name_lists_the_shipped_ones() {
        let p = Path::new("runs/pre");
        assert_eq!(locate_pretraining_run(p, None).unwrap(), p);
        let err = locate_pretraining_run(Path::new("pretrained:mat-huge"), None).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("\"mat-huge\""), "{msg}");
        assert!(msg.contains("pretrained:mat-small"), "{msg}");
    }

    #[test]
    fn the_shipped_model_is_written_once_with_its_files() {
        let cache = tempfile::tempdir().unwrap();
        let a =
            locate_pretraining_run(Path::new("pretrained:mat-small"), Some(cache.path())).unwrap();
        assert!(
            a.starts_with(cache.path().join("pretrained")),
            "{}",
            a.display()
        );
        let model = std::fs::read(a.join(PRETRAINED_MODEL)).unwrap();
        assert_eq!(model, SHIPPED[0].model);
        let spec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(a.join("pretrain.json")).unwrap())
                .unwrap();
        assert_eq!(spec["kind"], "mat");
        // Found again without rewriting; no temporary folder left behind.
        let b =
            locate_pretraining_run(Path::new("pretrained:mat-small"), Some(cache.path())).unwrap();
        assert_eq!(a, b);
        let entries = std::fs::read_dir(cache.path().join("pretrained"))
            .unwrap()
            .count();
        assert_eq!(entries, 1);
        // A damaged copy (one byte changed, the length kept) is written again.
        let mut damaged = SHIPPED[0].model.to_vec();
        damaged[1000] ^= 0xff;
        std::fs::write(a.join(PRETRAINED_MODEL), damaged).unwrap();
        let c =
            locate_pretraining_run(Path::new("pretrained:mat-small"), Some(cache.path())).unwrap();
        assert_eq!(c, a);
        assert_eq!(
            std::fs::read(c.join(PRETRAINED_MODEL)).unwrap(),
            SHIPPED[0].model
        );
        // Eight threads of one process at once: one folder, every call sees whole files.
        let dirs: Vec<PathBuf> = std::thread::scope(|s| {
            let other = tempfile::tempdir().unwrap();
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let root = other.path().to_path_buf();
                    s.spawn(move || {
                        locate_pretraining_run(Path::new("pretrained:mat-small"), Some(&root))
                            .unwrap()
                    })
                })
                .collect();
            let dirs: Vec<PathBuf> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            for d in &dirs {
                assert_eq!(
                    std::fs::read(d.join(PRETRAINED_MODEL)).unwrap(),
                    SHIPPED[0].model
                );
            }
            assert_eq!(
                std::fs::read_dir(other.path().join("pretrained"))
                    .unwrap()
                    .count(),
                1
            );
            dirs
        });
        assert!(dirs.windows(2).all(|w| w[0] == w[1]));
    }
}
