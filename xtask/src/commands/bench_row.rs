//! The internal `bench-row` and `bench-gen-row` commands: one row of `bench
//! --compare-torch` or `bench --generate`, measured in its own process (so that its peak
//! memory is its own) and printed as one JSON line.

use std::path::PathBuf;

use anyhow::Result;
use bench::{gen_bench, model_bench};

/// Flags of the internal `bench-gen-row`.
#[derive(clap::Args)]
pub struct BenchGenRowArgs {
    /// What to measure.
    #[arg(long, value_enum)]
    pub mode: gen_bench::GenBenchMode,
    /// A smiles-gpt run's weights (default: the small preset, seeded).
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// Sequences per call (attention rows: 1).
    #[arg(long, default_value_t = 256)]
    pub batch: usize,
    /// Sampling steps per sequence.
    #[arg(long, default_value_t = 64)]
    pub steps: usize,
    /// Tokens per sequence (training, attention).
    #[arg(long, default_value_t = 64)]
    pub seq_len: usize,
    /// Seconds of timed calls.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
}

/// Runs `bench-gen-row` and prints its JSON line.
///
/// # Errors
/// The row failed.
pub fn run_gen_row(args: BenchGenRowArgs) -> Result<()> {
    let row = gen_bench::run_row(
        args.mode,
        args.run.as_deref(),
        args.batch,
        args.steps,
        args.seq_len,
        args.seconds,
    )?;
    println!("{}", serde_json::to_string(&row)?);
    Ok(())
}

/// Flags of the internal `bench-row`.
#[derive(clap::Args)]
pub struct BenchRowArgs {
    /// The batch JSON written by `bench --compare-torch`.
    #[arg(long)]
    pub batch: PathBuf,
    /// Model and size.
    #[arg(long, value_enum)]
    pub model: model_bench::BenchModel,
    /// Forward or training step.
    #[arg(long, value_enum)]
    pub mode: model_bench::BenchMode,
    /// Which runtime of ours.
    #[arg(long, value_enum)]
    pub runtime: model_bench::BenchRuntime,
    /// Seconds of timed calls.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
}

/// Runs `bench-row` and prints its JSON line.
///
/// # Errors
/// The row failed.
pub fn run_row(args: BenchRowArgs) -> Result<()> {
    let row = model_bench::run_row(
        &args.batch,
        args.model,
        args.mode,
        args.runtime,
        args.seconds,
    )?;
    println!("{}", serde_json::to_string(&row)?);
    Ok(())
}
