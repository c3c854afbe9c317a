//! `cargo xtask explain`: attention and per-atom contributions of a trained run, drawn
//! on each molecule (`train::explain`).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use burn::tensor::Device;

/// Explains every SMILES with the run in `run`, writing one folder per molecule
/// (`out/mol-<k>`); returns the folders. Prints the prediction and the files; a SMILES
/// that fails is reported (row, SMILES, reason) and the others go on.
///
/// # Errors
/// When no SMILES could be explained.
pub fn run(
    run: &Path,
    smiles: &[String],
    layer: Option<usize>,
    head: Option<usize>,
    out: &Path,
    device: &Device,
) -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    let mut failed = Vec::new();
    let results = train::explain::explain_each(run, smiles, (layer, head), out, device);
    for (k, (s, result)) in smiles.iter().zip(results).enumerate() {
        match result {
            Ok(done) => {
                println!(
                    "{s}: prediction {:+.3}; {} files in {}",
                    done.explanation.prediction,
                    done.files.len(),
                    done.dir.display()
                );
                dirs.push(done.dir);
            }
            Err(e) => {
                eprintln!("SMILES {k} ({s}): not explained: {e}");
                failed.push(k);
            }
        }
    }
    if !failed.is_empty() {
        eprintln!(
            "explained {} of {} SMILES; failed: {:?}",
            dirs.len(),
            smiles.len(),
            failed
        );
    }
    if dirs.is_empty() && !smiles.is_empty() {
        bail!("no SMILES could be explained");
    }
    Ok(dirs)
}

/// Flags of `explain`.
#[derive(clap::Args)]
pub struct ExplainArgs {
    /// Training run directory (MAT or Transformer-M).
    #[arg(long)]
    pub run: PathBuf,
    /// One or more SMILES.
    #[arg(long, required = true)]
    pub smiles: Vec<String>,
    /// Layer to draw (default: the last).
    #[arg(long)]
    pub layer: Option<usize>,
    /// Head to draw (default: the mean of the heads).
    #[arg(long)]
    pub head: Option<usize>,
    /// Output folder (one `mol-<k>` folder per SMILES).
    #[arg(long)]
    pub out: PathBuf,
}

/// Runs `explain` on the CPU.
///
/// # Errors
/// As [`run`].
pub fn run_args(args: ExplainArgs) -> Result<()> {
    run(
        &args.run,
        &args.smiles,
        args.layer,
        args.head,
        &args.out,
        &Device::flex(),
    )
    .map(|_| ())
}
