//! `cargo xtask featurize`: featurize a CSV, an SDF or XYZ files for MAT or Transformer-M
//! and report skipped rows and coordinate sources; optionally write the features (JSON) or the padded batch
//! (`.npz`, the inputs of the exported model).

mod output;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use models::transformer_m::Mode;
use mol_featurize::{ConformerOptions, Featurizer, GraphormerFeaturizer, MatFeaturizer};
use train::RunKind;
use train::run_file::RunSpecFile;
use train::table_data::{TableData, featurize_table};

use super::common::{CoordsArg, ModelArg, conformer_cache_dir, featurizer};
use super::structure_args::{StructureArgs, coords_for};
use output::{FeatureFormat, Output, export_feeds};

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
    // A run trained on a file's coordinates gets the closest pipeline for a CSV's SMILES
    // (train::predict::conformer_for_smiles).
    let for_data = |options: &ConformerOptions| match (&data.structures, &args.run) {
        (None, Some(run)) => train::predict::conformer_for_smiles(options, run),
        _ => options.clone(),
    };
    if let Some((k, n)) = args.shard {
        println!("shard {k}/{n}: {} rows", rows.len());
    }
    // The run's spec, read once; its family decides the features.
    let spec = match &args.run {
        Some(run) => Some(RunSpecFile::load(run)?),
        None => None,
    };
    let kind = spec.as_ref().map_or(
        match args.model {
            ModelArg::Mat => RunKind::Mat,
            ModelArg::TransformerM => RunKind::TransformerM,
            ModelArg::SmilesGpt => RunKind::SmilesGpt,
        },
        RunSpecFile::kind,
    );
    let out = Output {
        path: args.out,
        format: args.format,
        rows: &rows,
    };
    match kind {
        RunKind::SmilesGpt => {
            anyhow::bail!(
                "smiles-gpt reads SMILES tokens (vocab.json of its run), not molecule features"
            )
        }
        RunKind::Mat => {
            let featurizer = match &spec {
                Some(RunSpecFile::Mat(spec)) => spec.featurizer.clone(),
                _ => featurizer(coords, args.seed, false),
            };
            let featurizer = MatFeaturizer {
                conformer: for_data(&featurizer.conformer),
                ..featurizer
            };
            let featurizer = limited(featurizer, args.max_atoms);
            let features = featurize(&data, &rows, &featurizer, cache)?;
            out.write(&features, |ok| {
                Ok(export_feeds::mat(
                    &mol_featurize::pad_batch(ok).map_err(anyhow::Error::msg)?,
                ))
            })
        }
        RunKind::TransformerM => {
            let (featurizer, limits, mode) = match &spec {
                Some(RunSpecFile::TransformerM(spec)) => {
                    (spec.featurizer(), spec.model.limits, spec.eval_mode)
                }
                _ => {
                    let limits = mol_featurize::graphormer::EncodingLimits::default();
                    let featurizer = GraphormerFeaturizer {
                        max_hops: limits.max_hops,
                        conformer: featurizer(coords, args.seed, false).conformer,
                    };
                    (featurizer, limits, Mode::Both)
                }
            };
            let featurizer = GraphormerFeaturizer {
                conformer: for_data(&featurizer.conformer),
                ..featurizer
            };
            let featurizer = limited(featurizer, args.max_atoms);
            let features = featurize(&data, &rows, &featurizer, cache)?;
            out.write(&features, |ok| {
                let data =
                    mol_featurize::pad_graphormer_batch(ok, &limits).map_err(anyhow::Error::msg)?;
                Ok(export_feeds::transformer_m(&data, mode))
            })
        }
    }
}

/// `featurizer` with the `--max-atoms` limit (default: its own).
fn limited<F: Featurizer>(featurizer: F, max_atoms: Option<u64>) -> mol_featurize::AtomLimit<F> {
    let max_atoms = max_atoms.map_or(featurizer.max_atoms(), |n| n as usize);
    mol_featurize::AtomLimit {
        inner: featurizer,
        max_atoms,
    }
}

/// Featurizes `data` (rows `rows` of the input) and prints the report.
fn featurize<F: Featurizer>(
    data: &TableData,
    rows: &[usize],
    featurizer: &F,
    cache: Option<PathBuf>,
) -> Result<(Vec<Option<F::Features>>, mol_featurize::FeaturizeReport)> {
    let t0 = Instant::now();
    let cache = train::open_conformer_cache(cache.as_deref());
    let (features, mut report) = featurize_table(featurizer, data, true, cache.as_ref())?;
    // Report rows of the input file (a shard featurizes a subset).
    for s in &mut report.skipped {
        s.row = rows[s.row];
    }
    train::conformer_cache::print_featurize_report(&report, t0.elapsed().as_secs_f64());
    Ok((features, report))
}
