//! `cargo xtask embed`: the molecule vectors (or per-atom vectors) a trained run's head
//! reads, for a CSV, an SDF, XYZ files or SMILES, as `.npy` or `.csv` (issue #38 item 2).

use std::path::PathBuf;

use anyhow::{Result, bail};
use train::embed::embed_table;
use train::trained_run::TrainedRun;

use super::common::conformer_cache_dir;
use super::run_input::RunInputArgs;

/// Flags of `embed`.
#[derive(clap::Args)]
pub struct EmbedArgs {
    /// Run folder, molecules, cache and device.
    #[command(flatten)]
    pub input: RunInputArgs,
    /// Output: `.npy` (float32 `[rows, d_model]`; a skipped molecule is a row of NaN)
    /// or `.csv` (`row`, `smiles`, `e0`...`e{d-1}`, `error`).
    #[arg(long)]
    pub out: PathBuf,
    /// Per-atom vectors: one row per heavy atom in the molecule's order (with `.npy`,
    /// `<out>.index.csv` names each row's molecule and atom index).
    #[arg(long)]
    pub atoms: bool,
    /// With an ensemble: the member whose embeddings to write (their vector spaces
    /// differ, so they are not averaged).
    #[arg(long, default_value_t = 0)]
    pub member: usize,
}

/// Runs `embed`.
///
/// # Errors
/// Unreadable run or input file, nothing to embed, unwritable output.
pub fn run(args: EmbedArgs) -> Result<()> {
    let EmbedArgs {
        input,
        out,
        atoms,
        member,
    } = args;
    let data = input.molecules(Some(&out), "embed")?;
    let device = input.device.device()?;
    let mut runs = TrainedRun::open_members(&input.run, &device, "embedded")?;
    if member >= runs.len() {
        bail!("--member {member}: the run has {} member(s)", runs.len());
    }
    let run = runs.swap_remove(member);
    let cache = conformer_cache_dir(input.cache.clone(), input.no_cache);
    let cache = train::open_conformer_cache(cache.as_deref());
    let embeddings = embed_table(
        &run,
        &data,
        atoms,
        (cache.as_ref(), input.max_atoms()),
        &device,
    )?;
    let written = embeddings.write(&out)?;
    let skipped: Vec<_> = embeddings
        .rows
        .iter()
        .filter(|r| r.error.is_some())
        .collect();
    if !skipped.is_empty() {
        eprintln!(
            "skipped {} of {} molecules (a row of NaN each):",
            skipped.len(),
            embeddings.rows.len()
        );
        for r in skipped.iter().take(20) {
            let reason = r.error.as_deref().unwrap_or_default();
            eprintln!("  row {} ({}): {reason}", r.row, r.smiles);
        }
        if skipped.len() > 20 {
            eprintln!("  ... and {} more", skipped.len() - 20);
        }
    }
    let what = if atoms { "per-atom" } else { "molecule" };
    for path in written {
        eprintln!(
            "wrote {} ({what} embeddings, d = {})",
            path.display(),
            embeddings.dim
        );
    }
    Ok(())
}
