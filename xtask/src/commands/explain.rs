//! `cargo xtask explain`: attention and per-atom contributions of a trained run, drawn
//! on each molecule (`train::explain`).

use std::path::{Path, PathBuf};

use anyhow::Result;
use burn::tensor::Device;

/// Explains every SMILES with the run in `run`, writing one folder per molecule
/// (`out/mol-<k>`); returns the folders. Prints the prediction and the files.
pub fn run(
    run: &Path,
    smiles: &[String],
    layer: Option<usize>,
    head: Option<usize>,
    out: &Path,
    device: &Device,
) -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for (k, s) in smiles.iter().enumerate() {
        let explanation = train::explain::explain(run, s, device)?;
        let dir = out.join(format!("mol-{k}"));
        let files = train::explain::render(&explanation, layer, head, &dir)?;
        println!(
            "{s}: prediction {:+.3}; {} files in {}",
            explanation.prediction,
            files.len(),
            dir.display()
        );
        dirs.push(dir);
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
