//! `cargo xtask predict`: predictions of a trained run (MAT or Transformer-M) for a CSV,
//! an SDF, XYZ files or SMILES, one row per molecule (record) with an error column.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use train::data::MoleculeTable;
use train::predict_stream::{StreamInput, StreamOptions, predict_stream};
use train::table_data::{MoleculeFormat, TableData};
use train::trained_run::TrainedRun;

use super::common::{DeviceArg, StructureArgs, conformer_cache_dir};

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

/// The flags `predict` and `embed` share: the run, the molecules, the cache, the device.
#[derive(clap::Args)]
pub struct RunInputArgs {
    /// Run directory written by `train` (MAT or Transformer-M; an ensemble's folder).
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
    /// Backend.
    #[arg(long, value_enum, default_value = "flex")]
    pub device: DeviceArg,
}

impl RunInputArgs {
    /// The molecules of `--data` and `--smiles`, refusing an `out` that is one of the
    /// input files (`verb`: what the command does, for the error of an empty input).
    ///
    /// # Errors
    /// An unreadable or empty input, an SDF with `--smiles`, an `out` that is an input.
    pub fn molecules(&self, out: Option<&Path>, verb: &str) -> Result<TableData> {
        let data = match &self.data {
            Some(path) => {
                let source = self
                    .structure
                    .source(path, &self.smiles_column, self.delimiter)?;
                let mut data = source.read(&[])?;
                if !self.smiles.is_empty() {
                    if data.structures.is_some() {
                        bail!("give either a structure file (--data) or --smiles, not both");
                    }
                    data.table.smiles.extend(self.smiles.iter().cloned());
                }
                data
            }
            None => TableData {
                table: MoleculeTable {
                    smiles: self.smiles.clone(),
                    targets: vec![Vec::new(); self.smiles.len()],
                    target_columns: Vec::new(),
                    ids: Vec::new(),
                    label_problems: Vec::new(),
                },
                structures: None,
            },
        };
        if data.table.is_empty() {
            match &self.data {
                Some(path) => bail!(
                    "{}: no molecules to {verb} (the file has no data rows)",
                    path.display()
                ),
                None => bail!("nothing to {verb}: give --data or --smiles"),
            }
        }
        if let Some(out) = out {
            let mut inputs: Vec<&Path> = self.data.iter().map(|p| p.as_path()).collect();
            inputs.extend(self.structure.labels.as_deref());
            train::checkpoint::refuse_overwriting_input(out, &inputs)?;
        }
        Ok(data)
    }

    /// The heavy-atom limit (`--max-atoms`, else [`mol_featurize::DEFAULT_MAX_ATOMS`]).
    pub fn max_atoms(&self) -> usize {
        self.max_atoms
            .map_or(mol_featurize::DEFAULT_MAX_ATOMS, |n| n as usize)
    }
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
    let source = match &args.data {
        Some(path) => Some(
            args.structure
                .source(path, &args.smiles_column, args.delimiter)?,
        ),
        None => None,
    };
    let input = match source {
        Some(source) if source.format == MoleculeFormat::Delimited && args.smiles.is_empty() => {
            if let Some(out) = &out {
                train::checkpoint::refuse_overwriting_input(out, &[source.path.as_path()])?;
            }
            StreamInput::Delimited {
                delimiter: train::data::delimiter_byte(source.delimiter)?,
                path: source.path,
                smiles_column: source.smiles_column,
            }
        }
        _ => StreamInput::Table(args.molecules(out.as_deref(), "predict")?),
    };
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
