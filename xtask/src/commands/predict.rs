//! `cargo xtask predict`: predictions of a trained run (MAT or Transformer-M) for a CSV,
//! an SDF, XYZ files or SMILES, one row per molecule (record) with an error column.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use train::data::MoleculeTable;
use train::table_data::TableData;

use super::common::{DeviceArg, StructureArgs, conformer_cache_dir};

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
    /// Molecules: a CSV, an SDF (.sdf, .sdf.gz, .mol; a run trained with `--coords
    /// file` takes each record's own coordinates), or XYZ files with --labels.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// SDF identity field and XYZ labels.
    #[command(flatten)]
    pub structure: StructureArgs,
    /// SMILES column of --data.
    #[arg(long, default_value = "smiles")]
    pub smiles_column: String,
    /// Field delimiter of --data (`,`; `;`, `tab`, ... for other exports).
    #[arg(long, default_value = ",", value_parser = train::data::parse_delimiter)]
    pub delimiter: char,
    /// One or more SMILES.
    #[arg(long)]
    pub smiles: Vec<String>,
    /// Skip molecules with more heavy atoms than this (default 1000), with the reason in
    /// the error column.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_atoms: Option<u64>,
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
/// Unreadable run or input file, nothing to predict, unwritable output.
pub fn run(args: PredictArgs) -> Result<()> {
    let data = match &args.data {
        Some(path) => {
            let source = args
                .structure
                .source(path, &args.smiles_column, args.delimiter)?;
            let mut data = source.read(&[])?;
            if !args.smiles.is_empty() {
                if data.structures.is_some() {
                    bail!("give either a structure file (--data) or --smiles, not both");
                }
                data.table.smiles.extend(args.smiles.iter().cloned());
            }
            data
        }
        None => TableData {
            table: MoleculeTable {
                smiles: args.smiles.clone(),
                targets: vec![Vec::new(); args.smiles.len()],
                target_columns: Vec::new(),
                ids: Vec::new(),
                label_problems: Vec::new(),
            },
            structures: None,
        },
    };
    if data.table.is_empty() {
        match &args.data {
            Some(path) => bail!(
                "{}: no molecules to predict (the file has no data rows)",
                path.display()
            ),
            None => bail!("nothing to predict: give --data or --smiles"),
        }
    }
    if let Some(out) = &args.out {
        let mut inputs: Vec<&std::path::Path> = args.data.iter().map(|p| p.as_path()).collect();
        inputs.extend(args.structure.labels.as_deref());
        train::checkpoint::refuse_overwriting_input(out, &inputs)?;
    }
    let cache = conformer_cache_dir(args.cache, args.no_cache);
    let train::predict::PredictOutput {
        predictions,
        report,
        target_columns,
        ..
    } = train::predict::predict_table_limited(
        &args.run,
        &data,
        &args.device.device()?,
        cache.as_deref(),
        args.max_atoms.map(|n| n as usize),
    )?;
    let out = args.out;
    let mut w: csv::Writer<Box<dyn std::io::Write>> = match &out {
        Some(p) => csv::Writer::from_writer(Box::new(
            std::fs::File::create(p).with_context(|| p.display().to_string())?,
        )),
        None => csv::Writer::from_writer(Box::new(std::io::stdout())),
    };
    // Records with an identity (SDF title or id field, XYZ file) name it.
    let with_ids = !data.table.ids.is_empty();
    let mut header = vec!["row".to_string()];
    if with_ids {
        header.push("id".into());
    }
    header.push("smiles".into());
    header.extend(target_columns.iter().map(|c| format!("{c}_pred")));
    header.push("error".into());
    w.write_record(&header)?;
    for p in &predictions {
        let mut rec = vec![p.row.to_string()];
        if with_ids {
            rec.push(p.id.clone().unwrap_or_default());
        }
        rec.push(p.smiles.clone());
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
