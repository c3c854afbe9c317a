//! `cargo xtask predict`: predictions of a trained run (MAT or Transformer-M) for a CSV,
//! an SDF, XYZ files or SMILES, one row per molecule (record) with an error column.

use std::path::PathBuf;

use anyhow::{Result, bail};
use train::predict_stream::{StreamOptions, predict_stream};
use train::trained_run::TrainedRun;

use super::common::conformer_cache_dir;
use super::run_input::RunInputArgs;

/// Flags of `predict`.
#[derive(clap::Args)]
pub struct PredictArgs {
    /// Run folder, molecules, cache and device.
    #[command(flatten)]
    pub input: RunInputArgs,
    /// Output CSV (stdout if absent), written as each chunk of rows finishes.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue an interrupted prediction: keep the rows --out already has (an
    /// incomplete last line is cut) and predict the rest.
    #[arg(long)]
    pub resume: bool,
    /// Rows read, featurized and predicted at a time (memory grows with it, not with
    /// the file).
    #[arg(long, default_value_t = train::predict_stream::DEFAULT_CHUNK_ROWS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub chunk_rows: usize,
    /// With an ensemble (`train --ensemble-size N`): also each member's prediction
    /// (`<task>_pred_<k>`) beside the mean (`<task>_pred`) and std (`<task>_std`).
    #[arg(long)]
    pub members: bool,
    /// MC dropout: K forward passes with dropout on (the run's rate; MAT small 0.1), their
    /// mean (`<task>_pred`) and std (`<task>_std`) as an uncertainty (with an ensemble, K
    /// per member); seeded by --seed.
    #[arg(long, value_name = "K", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..))]
    pub mc_dropout: Option<usize>,
    /// Seed of the MC dropout masks.
    #[arg(long, default_value_t = 0, requires = "mc_dropout")]
    pub seed: u64,
}

/// Runs `predict`: streamed ([`train::predict_stream`]), rows written as each chunk
/// finishes.
///
/// # Errors
/// Unreadable run or input file, nothing to predict, unwritable output.
pub fn run(args: PredictArgs) -> Result<()> {
    let PredictArgs {
        input: args,
        out,
        resume,
        chunk_rows,
        members,
        mc_dropout,
        seed,
    } = args;
    let device = args.device.device()?;
    // MC dropout: dropout is active only on an autodiff device.
    let device = match mc_dropout {
        Some(_) => device.autodiff(),
        None => device,
    };
    let runs = TrainedRun::open_members(&args.run, &device, "used to predict")?;
    // A delimited file without extra SMILES is read a chunk at a time; everything else
    // (structure files, --smiles) is read whole first.
    let input = args.input()?.stream(out.as_deref(), "predict")?;
    let cache = conformer_cache_dir(args.cache.clone(), args.no_cache);
    let cache = train::open_conformer_cache(cache.as_deref());
    let options = StreamOptions {
        chunk_rows,
        resume,
        max_atoms: args.max_atoms(),
        members,
        mc_dropout,
        seed,
        ..Default::default()
    };
    let report = predict_stream(
        &runs,
        input,
        out.as_deref(),
        &options,
        cache.as_ref(),
        &device,
    )?;
    if report.rows_written == 0 {
        if let Some(out) = &out {
            std::fs::remove_file(out).ok();
        }
        let what = args.data.as_ref().map(|p| p.display().to_string());
        bail!(
            "{}: no molecules to predict (the file has no data rows)",
            what.unwrap_or_else(|| "input".into())
        );
    }
    let skipped: usize = report.skipped_by_kind.values().sum();
    if skipped > 0 {
        eprintln!(
            "skipped {skipped} of {} molecules (reason in the error column): {:?}",
            report.rows_predicted, report.skipped_by_kind
        );
    }
    if report.rows_resumed > 0 {
        eprintln!(
            "resumed after row {}: {} rows were already written",
            report.rows_resumed - 1,
            report.rows_resumed
        );
    }
    eprintln!(
        "predicted {} molecules in {:.1} s ({:.1} molecules/s){}",
        report.rows_predicted,
        report.seconds,
        report.rows_predicted as f64 / report.seconds.max(1e-9),
        out.map(|p| format!("; wrote {}", p.display()))
            .unwrap_or_default()
    );
    Ok(())
}
