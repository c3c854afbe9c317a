//! `cargo xtask fuzz`: the readers fuzzed and the binary run with bad input and kills
//! (`verify::fuzz`).

use std::path::PathBuf;

use anyhow::Result;

/// Flags of `fuzz`.
#[derive(clap::Args)]
pub struct FuzzArgs {
    /// Time budget in minutes.
    #[arg(long, default_value_t = 1.0)]
    pub minutes: f64,
    /// RNG seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Longest one input may take, in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub input_seconds: f64,
    /// Folder with MAT's dataset CSVs (default: $MOLATTN_DATA, else the shipped ones).
    #[arg(long)]
    pub datasets: Option<PathBuf>,
    /// Output folder.
    #[arg(long, default_value = "runs/fuzz")]
    pub out: PathBuf,
    /// Kills (`kill -9` at seeded random moments) of a training and of a cached
    /// featurization, each followed by a resume or rerun that must give the
    /// uninterrupted result; run before the reader fuzzing.
    #[arg(long, default_value_t = 1)]
    pub process_rounds: usize,
}

/// Runs `fuzz` on MAT's three datasets' SMILES as seeds.
///
/// # Errors
/// Missing datasets, unwritable output, or failures found.
pub fn run_args(args: FuzzArgs) -> Result<()> {
    let dir = super::common::datasets_dir(args.datasets)?;
    let held = verify::fuzz::fuzz_datasets(
        &dir,
        &args.out,
        (args.minutes, args.input_seconds),
        (args.seed, args.process_rounds),
    )?;
    if !held {
        anyhow::bail!("fuzz found failures (see {})", args.out.display());
    }
    Ok(())
}
