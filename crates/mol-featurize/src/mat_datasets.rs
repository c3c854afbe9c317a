//! MAT's three datasets (ESOL, FreeSolv, BBBP) and their split files, compiled into the
//! library so that a clone, a binary or a wheel needs no folder beside it (issue #38).
//!
//! The files are ardigen/MAT's (`data/<name>/`, commit 1c7af06, MIT licence), gzipped
//! under `crates/mol-featurize/data/mat/` with their provenance and SHA-256 (its
//! README.md; made by `fixtures/gen/mat_datasets.py`). [`dir`] unpacks them once into the
//! cache folder, checking each file's SHA-256, and returns the folder, laid out as
//! `<name>/<name>.csv` and `<name>/<name>.splits.json`. `$MOLATTN_DATA` names another
//! folder of the same layout instead.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use thiserror::Error;

/// One shipped file: its path in the dataset folder, its gzipped bytes and the SHA-256
/// (hex) of its uncompressed bytes.
struct Shipped {
    path: &'static str,
    gz: &'static [u8],
    sha256: &'static str,
}

macro_rules! shipped {
    ($path:literal, $sha:literal) => {
        Shipped {
            path: $path,
            gz: include_bytes!(concat!("../data/mat/", $path, ".gz")),
            sha256: $sha,
        }
    };
}

const FILES: [Shipped; 6] = [
    shipped!(
        "esol/esol.csv",
        "9ba9293ddd65a458d369fd1bb50b74133333d2a0ab301606e9ae6071a7331afb"
    ),
    shipped!(
        "esol/esol.splits.json",
        "52c70802fb1d48c7487a68c87d8456f94620eb4e1bde10bb6ea2058029f4d444"
    ),
    shipped!(
        "freesolv/freesolv.csv",
        "53df8c32125f7a8e85bf6c1c5fdda3292e2653ec419dd95a8d4414ac25291283"
    ),
    shipped!(
        "freesolv/freesolv.splits.json",
        "8369c659b15376b10f4b08b3e7c74e6b1f21088248d1c78944762bf54a73452f"
    ),
    shipped!(
        "bbbp/bbbp.csv",
        "cddcfa778105d2b3ad3e90cc68bf0bc15af4b1b82c205d46318d5025ab666f70"
    ),
    shipped!(
        "bbbp/bbbp.splits.json",
        "4b9e1428f75b695d1fdef91db50232ecca9175ce15b95971643ae64ed4f6c00e"
    ),
];

/// The datasets shipped: `esol`, `freesolv`, `bbbp`.
pub const NAMES: [&str; 3] = ["esol", "freesolv", "bbbp"];

/// Why the datasets folder could not be given.
#[derive(Debug, Error)]
pub enum DatasetsError {
    /// `$MOLATTN_DATA` names something that is not a folder.
    #[error("MOLATTN_DATA={0} is not a folder (unset it to use the datasets molattn ships)")]
    NotAFolder(PathBuf),
    /// A file could not be written.
    #[error("writing {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A shipped file does not unpack to its recorded SHA-256 (a damaged build).
    #[error("shipped dataset file {path} is damaged: {reason}")]
    Damaged {
        /// Its path in the dataset folder.
        path: String,
        /// What was wrong.
        reason: String,
    },
}

/// MAT's datasets folder: `$MOLATTN_DATA` when set, else the shipped files unpacked into
/// `<cache>/datasets/mat` (the cache folder of [`crate::cache::default_cache_dir`], else
/// the system's temporary folder), unpacked on first use and checked.
///
/// # Errors
/// [`DatasetsError`]: `$MOLATTN_DATA` is not a folder, the cache cannot be written, or a
/// shipped file is damaged.
pub fn dir() -> Result<PathBuf, DatasetsError> {
    if let Some(given) = std::env::var_os("MOLATTN_DATA").filter(|v| !v.is_empty()) {
        let given = PathBuf::from(given);
        return if given.is_dir() {
            Ok(given)
        } else {
            Err(DatasetsError::NotAFolder(given))
        };
    }
    let cache = crate::cache::default_cache_dir()
        .unwrap_or_else(|| std::env::temp_dir().join("molattn"))
        .join("datasets")
        .join("mat");
    unpack(&cache)?;
    Ok(cache)
}

/// Writes the shipped files into `out` (`<name>/<name>.csv`, `<name>/<name>.splits.json`),
/// leaving a file that is already there with the right SHA-256 untouched. Each file is
/// written to a temporary name and renamed, so a reader never sees half a file.
///
/// # Errors
/// [`DatasetsError::Io`] or [`DatasetsError::Damaged`].
pub fn unpack(out: &Path) -> Result<(), DatasetsError> {
    for file in &FILES {
        let path = out.join(file.path);
        if std::fs::read(&path).is_ok_and(|b| sha256_hex(&b) == file.sha256) {
            continue;
        }
        let bytes = inflate(file)?;
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| DatasetsError::Io { path, source }
        };
        let parent = path.parent().unwrap_or(out);
        std::fs::create_dir_all(parent).map_err(io(parent))?;
        // Another process unpacking at the same time, or a crash, never leaves a torn file.
        crate::atomic_file::write_atomically(&path, &bytes).map_err(io(&path))?;
    }
    Ok(())
}

/// The uncompressed bytes of `file`, checked against its SHA-256.
fn inflate(file: &Shipped) -> Result<Vec<u8>, DatasetsError> {
    let damaged = |reason: String| DatasetsError::Damaged {
        path: file.path.to_string(),
        reason,
    };
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(file.gz)
        .read_to_end(&mut bytes)
        .map_err(|e| damaged(e.to_string()))?;
    let got = sha256_hex(&bytes);
    if got != file.sha256 {
        return Err(damaged(format!("SHA-256 {got}, expected {}", file.sha256)));
    }
    Ok(bytes)
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shipped file unpacks to its recorded hash, the CSVs have MAT's row counts,
    /// and a damaged file on disk is replaced.
    #[test]
    fn shipped_files_unpack_checked_and_repair_a_damaged_copy() {
        let out = std::env::temp_dir().join(format!("molattn-mat-data-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        unpack(&out).unwrap();
        for (name, rows) in NAMES.iter().zip([1128, 642, 2039]) {
            let csv = std::fs::read_to_string(out.join(format!("{name}/{name}.csv"))).unwrap();
            assert_eq!(csv.lines().count(), rows + 1, "{name}");
            assert!(csv.starts_with("smiles,y\n"), "{name}");
            let splits = out.join(format!("{name}/{name}.splits.json"));
            assert!(
                std::fs::read_to_string(splits)
                    .unwrap()
                    .contains("-5\": {\"train\"")
            );
        }
        let esol = out.join("esol/esol.csv");
        std::fs::write(&esol, "smiles,y\nCCO,1\n").unwrap();
        unpack(&out).unwrap();
        assert_eq!(sha256_hex(&std::fs::read(&esol).unwrap()), FILES[0].sha256);
        let bad = Shipped {
            path: "esol/esol.csv",
            gz: FILES[0].gz,
            sha256: FILES[1].sha256,
        };
        let e = inflate(&bad).unwrap_err().to_string();
        assert!(e.contains("esol/esol.csv") && e.contains("expected"), "{e}");
        std::fs::remove_dir_all(&out).unwrap();
    }
}
