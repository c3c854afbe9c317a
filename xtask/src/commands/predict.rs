//! `cargo xtask predict`: predictions of a trained run (MAT or Transformer-M) for a CSV or
//! SMILES, one row per molecule with an error column.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use train::predict::predict_smiles;

use super::common::{DeviceArg, conformer_cache_dir};

/// Flags of `predict`.
#[derive(clap::Args)]
pub struct PredictArgs {
    /// Run directory written by `train` (any model family).
    #[arg(long)]
    pub run: PathBuf,
    /// Cache folder: the conformer cache and prepared datasets (default:
    /// $MOLATTN_CACHE, else $XDG_CACHE_HOME/molattn, else ~/.cache/molattn).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Embed every molecule; neither read nor write the conformer cache.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
    /// CSV of molecules.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// SMILES column of --data.
    #[arg(long, default_value = "smiles")]
    pub smiles_column: String,
    /// Field delimiter of --data (`,`; `;`, `tab`, ... for other exports).
    #[arg(long, default_value = ",", value_parser = train::data::parse_delimiter)]
    pub delimiter: char,
    /// One or more SMILES.
    #[arg(long)]
    pub smiles: Vec<String>,
    /// Output CSV (stdout if absent).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Backend.
    #[arg(long, value_enum, default_value = "flex")]
    pub device: DeviceArg,
}

/// Runs `predict`.
///
/// # Errors
/// Unreadable run or CSV, nothing to predict, unwritable output.
pub fn run(args: PredictArgs) -> Result<()> {
    predict(
        &args.run,
        args.data,
        (&args.smiles_column, args.delimiter),
        args.smiles,
        args.out,
        args.device,
        conformer_cache_dir(args.cache, args.no_cache),
    )
}

fn predict(
    run: &Path,
    data: Option<PathBuf>,
    (smiles_column, delimiter): (&str, char),
    mut smiles: Vec<String>,
    out: Option<PathBuf>,
    device: DeviceArg,
    cache: Option<PathBuf>,
) -> Result<()> {
    if let Some(path) = data {
        smiles.extend(train::data::read_smiles_delimited(
            &path,
            smiles_column,
            train::data::delimiter_byte(delimiter)?,
        )?);
    }
    if smiles.is_empty() {
        bail!("nothing to predict: give --data or --smiles");
    }
    let train::predict::PredictOutput {
        predictions,
        report,
        target_columns,
        ..
    } = predict_smiles(run, &smiles, &device.device()?, cache.as_deref())?;
    let mut w: csv::Writer<Box<dyn std::io::Write>> = match &out {
        Some(p) => csv::Writer::from_writer(Box::new(
            std::fs::File::create(p).with_context(|| p.display().to_string())?,
        )),
        None => csv::Writer::from_writer(Box::new(std::io::stdout())),
    };
    let mut header = vec!["row".to_string(), "smiles".to_string()];
    header.extend(target_columns.iter().map(|c| format!("{c}_pred")));
    header.push("error".into());
    w.write_record(&header)?;
    for p in &predictions {
        let mut rec = vec![p.row.to_string(), p.smiles.clone()];
        match &p.values {
            Some(v) => rec.extend(v.iter().map(|x| x.to_string())),
            None => rec.extend(target_columns.iter().map(|_| String::new())),
        }
        rec.push(p.error.clone().unwrap_or_default());
        w.write_record(&rec)?;
    }
    w.flush()?;
    if report.n_skipped > 0 {
        eprintln!(
            "skipped {} of {} molecules (reason in the error column)",
            report.n_skipped, report.n_total
        );
    }
    if let Some(p) = out {
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}
