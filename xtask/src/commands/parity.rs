//! `cargo xtask parity`: every component against the reference fixtures (the rows are in
//! `crate::parity`); non-zero exit on a failure.

use std::path::PathBuf;

use anyhow::{Result, bail};

use super::common::{datasets_dir, repo_root};

/// Flags of `parity`.
#[derive(clap::Args)]
pub struct ParityArgs {
    /// Datasets folder (default: $MOLATTN_DATA, else the shipped ones).
    #[arg(long)]
    pub datasets: Option<PathBuf>,
    /// Also compare 3D conformers with RDKit over the three datasets (minutes).
    #[arg(long)]
    pub conformers: bool,
    /// Write the table to this Markdown file (e.g. docs/PARITY.md).
    #[arg(long)]
    pub write_doc: Option<PathBuf>,
}

/// Runs `parity`.
///
/// # Errors
/// Missing fixtures or datasets, or a row over its tolerance.
pub fn run(args: ParityArgs) -> Result<()> {
    let options = verify::parity::ParityOptions {
        root: repo_root(),
        datasets: datasets_dir(args.datasets)?,
        conformers: args.conformers,
        write_doc: args.write_doc,
    };
    if verify::parity::run(&options)? {
        Ok(())
    } else {
        bail!("parity failures (see the table)")
    }
}
