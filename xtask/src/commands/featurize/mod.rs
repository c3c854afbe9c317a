//! `cargo xtask featurize`: featurize a CSV, an SDF or XYZ files for MAT or Transformer-M
//! and report skipped rows and coordinate sources; optionally write the features (JSON) or the padded batch
//! (`.npz`, the inputs of the exported model).

mod output;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use train::RunKind;
use train::model_inputs::InputFeaturizer;
use train::run_file::RunSpecFile;

use super::common::{CoordsArg, ModelArg, conformer_cache_dir};
use super::structure_args::{StructureArgs, coords_for};
use output::{FeatureFormat, Output};

/// Flags of `featurize`.
#[derive(clap::Args)]
pub struct FeaturizeArgs {
    /// Model family whose inputs to make (taken from the run with --run).
    #[arg(long, value_enum, default_value = "mat")]
    pub model: ModelArg,
    /// Molecules: a CSV with a SMILES column, an SDF (.sdf, .sdf.gz, .mol), or XYZ files
    /// with --labels.
    #[arg(long)]
    pub data: PathBuf,
    /// SDF identity field and XYZ labels.
    #[command(flatten)]
    pub structure: StructureArgs,
    /// Cache folder: the conformer cache and prepared datasets (default:
    /// $MOLATTN_CACHE, else $XDG_CACHE_HOME/molattn, else ~/.cache/molattn).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Embed every molecule; neither read nor write the conformer cache.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
    /// Skip molecules with more heavy atoms than this (default 1000), with the reason in
    /// the report.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_atoms: Option<u64>,
    /// SMILES column.
    #[arg(long, default_value = "smiles")]
    pub smiles_column: String,
    /// Field delimiter of --data (`,`; `;`, `tab`, ... for other exports).
    #[arg(long, default_value = ",", value_parser = train::data::parse_delimiter)]
    pub delimiter: char,
    /// Coordinates: MAT's distance matrices, Transformer-M's 3D channel. Default: `file`
    /// for an SDF or XYZ files, `embed3d` for a CSV.
    #[arg(long, value_enum)]
    pub coords: Option<CoordsArg>,
    /// Conformer seed; `train --seed` uses the same one, so a later `train` with that
    /// seed reads these conformers from the cache.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the features here (see --format).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Featurize exactly as this training run did (its `run.json` featurizer), e.g.
    /// for an exported model; overrides --coords.
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// `json`: features and report; `npz`: one padded batch of every featurized
    /// molecule with the input names of the exported model (MAT: `node_features`,
    /// `key_padding_mask`, `adjacency`, `distances`; Transformer-M: docs/ONNX.md), plus
    /// `row`.
    #[arg(long, value_enum, default_value = "json")]
    pub format: FeatureFormat,
    /// Featurize only shard K of N (0-based K: rows whose index modulo N is K), e.g. one
    /// task of a cluster job array (`--shard $SLURM_ARRAY_TASK_ID/16`). Shards running at
    /// the same time fill the same conformer cache (each write waits for the file's
    /// lock), which a later `train` on the whole CSV then reads.
    #[arg(long, value_parser = train::shards::parse_shard)]
    pub shard: Option<(usize, usize)>,
}

/// Runs `featurize`.
///
/// # Errors
/// Unreadable CSV or run, unwritable output.
pub fn run(args: FeaturizeArgs) -> Result<()> {
    let cache = conformer_cache_dir(args.cache.clone(), args.no_cache);
    let source = args
        .structure
        .source(&args.data, &args.smiles_column, args.delimiter)?;
    let coords = coords_for(args.coords, &source);
    let all = source.read(&[])?;
    let rows = train::shards::shard_rows(all.table.len(), args.shard);
    let data = all.subset(&rows);
    if let Some((k, n)) = args.shard {
        println!("shard {k}/{n}: {} rows", rows.len());
    }
    // The run's spec, read once; its family and featurizer decide the features.
    let spec = match &args.run {
        Some(run) => Some(RunSpecFile::load(run)?),
        None => None,
    };
    let family = RunKind::from(args.model);
    let featurizer = InputFeaturizer::new(
        family,
        args.run.as_deref().zip(spec.as_ref()),
        (coords.into(), args.seed),
        args.max_atoms.map(|n| n as usize),
        data.structures.is_some(),
    )?;
    let t0 = Instant::now();
    let cache = train::open_conformer_cache(cache.as_deref());
    let (features, mut report) = featurizer.featurize(&data, cache.as_ref(), true)?;
    // Report rows of the input file (a shard featurizes a subset).
    for s in &mut report.skipped {
        s.row = rows[s.row];
    }
    train::conformer_cache::print_featurize_report(&report, t0.elapsed().as_secs_f64());
    let out = Output {
        path: args.out,
        format: args.format,
        rows: &rows,
    };
    out.write(&features, &report)
}
