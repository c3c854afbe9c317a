//! `cargo xtask featurize`: featurize a CSV, an SDF or XYZ files for MAT or Transformer-M
//! and report skipped rows and coordinate sources; optionally write the features (JSON) or the padded batch
//! (`.npz`, the inputs of the exported model).

#[cfg(feature = "onnx")]
use std::path::Path;
use std::path::PathBuf;
use std::time::Instant;

#[cfg(feature = "onnx")]
use anyhow::bail;
use anyhow::{Context, Result};
use clap::ValueEnum;
use models::transformer_m::Mode;
use mol_featurize::{ConformerOptions, Featurizer, GraphormerFeaturizer, MatFeaturizer};
use serde::Serialize;
use train::table_data::{TableData, featurize_table};
use train::transformer_m::TmRunSpec;
use train::{RunKind, RunSpec};

#[cfg(not(feature = "onnx"))]
use super::common::missing_feature;
use super::common::{
    CoordsArg, ModelArg, StructureArgs, conformer_cache_dir, coords_for, featurizer,
};

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
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
}

/// `K/N` with 0 <= K < N.
fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let (k, n) = text
        .split_once('/')
        .ok_or_else(|| format!("{text:?}: expected K/N, e.g. 0/4"))?;
    let k: usize = k
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: K is not a number"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: N is not a number"))?;
    if n == 0 || k >= n {
        return Err(format!("{text:?}: K must be 0..N-1 and N at least 1"));
    }
    Ok((k, n))
}

/// The rows of shard `k` of `n` (every `n`-th row from `k`) of a table of `len` rows.
fn shard_rows(len: usize, shard: Option<(usize, usize)>) -> Vec<usize> {
    let (k, n) = shard.unwrap_or((0, 1));
    (0..len).filter(|row| row % n == k).collect()
}

/// `--format` of `featurize`.
#[derive(Clone, Copy, ValueEnum)]
pub enum FeatureFormat {
    /// JSON with the featurization report.
    Json,
    /// NumPy `.npz` of the padded batch (float32, bool, int64 arrays).
    Npz,
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
    let rows = shard_rows(all.table.len(), args.shard);
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
    let kind = match &args.run {
        Some(run) => train::run_kind(run)?,
        None => match args.model {
            ModelArg::Mat => RunKind::Mat,
            ModelArg::TransformerM => RunKind::TransformerM,
            ModelArg::SmilesGpt => RunKind::SmilesGpt,
        },
    };
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
            let featurizer = match &args.run {
                Some(run) => RunSpec::load(run)?.featurizer,
                None => featurizer(coords, args.seed, false),
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
            let (featurizer, limits, mode) = match &args.run {
                Some(run) => {
                    let spec = TmRunSpec::load(run)?;
                    (spec.featurizer(), spec.model.limits, spec.eval_mode)
                }
                None => {
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
    let secs = t0.elapsed().as_secs_f64();
    train::print_cache_report(&report);
    println!(
        "featurized {} of {} molecules in {secs:.1}s ({:.1} mol/s); skipped {}",
        report.n_ok,
        report.n_total,
        report.n_total as f64 / secs,
        report.n_skipped
    );
    for (method, count) in &report.coordinate_sources {
        println!("  coordinates from {method:?}: {count}");
    }
    for s in &report.skipped {
        println!("  skipped row {}: {}", s.row, s.reason);
    }
    Ok((features, report))
}

/// Where and how `featurize` writes its result.
struct Output<'a> {
    path: Option<PathBuf>,
    format: FeatureFormat,
    rows: &'a [usize],
}

impl Output<'_> {
    /// Writes `features` as JSON, or as the padded batch that `feeds` makes of the
    /// featurized molecules (`.npz`).
    fn write<T: Serialize>(
        &self,
        (features, report): &(Vec<Option<T>>, mol_featurize::FeaturizeReport),
        #[allow(unused_variables)] feeds: impl Fn(&[&T]) -> Result<export_feeds::Feeds>,
    ) -> Result<()> {
        let Some(out) = &self.path else {
            return Ok(());
        };
        match self.format {
            FeatureFormat::Json => {
                let json = serde_json::json!({ "report": report, "rows": self.rows, "features": features });
                std::fs::write(out, serde_json::to_vec(&json)?)
                    .with_context(|| out.display().to_string())?;
                println!("wrote {}", out.display());
                Ok(())
            }
            #[cfg(feature = "onnx")]
            FeatureFormat::Npz => {
                let (rows, ok): (Vec<i64>, Vec<&T>) = features
                    .iter()
                    .zip(self.rows)
                    .filter_map(|(f, &row)| f.as_ref().map(|f| (row as i64, f)))
                    .unzip();
                if ok.is_empty() {
                    bail!(
                        "no molecule could be featurized: nothing to write to {}",
                        out.display()
                    );
                }
                write_npz(out, &feeds(&ok)?, rows)
            }
            #[cfg(not(feature = "onnx"))]
            FeatureFormat::Npz => Err(missing_feature("onnx", "--format npz")),
        }
    }
}

/// The exported models' input arrays of a padded batch (`export`'s feeds; empty without
/// the `onnx` feature, where `--format npz` is refused before they are asked for).
mod export_feeds {
    use super::*;

    #[cfg(feature = "onnx")]
    pub type Feeds = Vec<export::Feed>;
    /// Nothing: `--format npz` needs the `onnx` feature.
    #[cfg(not(feature = "onnx"))]
    pub struct Feeds;

    /// MAT's inputs.
    pub fn mat(data: &mol_featurize::MatBatchData) -> Feeds {
        #[cfg(feature = "onnx")]
        return export::mat_feeds(data);
        #[cfg(not(feature = "onnx"))]
        {
            let _ = data;
            Feeds
        }
    }

    /// Transformer-M's inputs, every molecule in `mode`.
    pub fn transformer_m(data: &mol_featurize::GraphormerBatchData, mode: Mode) -> Feeds {
        #[cfg(feature = "onnx")]
        return export::transformer_m::transformer_m_feeds(data, &vec![mode; data.batch_size]);
        #[cfg(not(feature = "onnx"))]
        {
            let _ = (data, mode);
            Feeds
        }
    }
}

#[cfg(feature = "onnx")]
/// Writes one padded batch's input arrays (float32, bool, int64) and `row` (input row of
/// each molecule; skipped rows are absent) to a NumPy `.npz`.
fn write_npz(out: &Path, feeds: &[export::Feed], rows: Vec<i64>) -> Result<()> {
    use export::FeedData;
    use ndarray::{Array1, ArrayD, IxDyn};
    let file = std::fs::File::create(out).with_context(|| out.display().to_string())?;
    let mut npz = ndarray_npy::NpzWriter::new(file);
    for feed in feeds {
        let shape = IxDyn(&feed.shape);
        match &feed.data {
            FeedData::F32(v) => {
                npz.add_array(&*feed.name, &ArrayD::from_shape_vec(shape, v.clone())?)?
            }
            FeedData::Bool(v) => {
                npz.add_array(&*feed.name, &ArrayD::from_shape_vec(shape, v.clone())?)?
            }
            FeedData::I64(v) => {
                npz.add_array(&*feed.name, &ArrayD::from_shape_vec(shape, v.clone())?)?
            }
        }
    }
    let n = rows.len();
    npz.add_array("row", &Array1::from_vec(rows))?;
    npz.finish()?;
    println!(
        "wrote {} ({n} molecules, inputs {})",
        out.display(),
        feeds
            .iter()
            .map(|f| format!("{} {:?}", f.name, f.shape))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_rows() {
        assert_eq!(parse_shard("1/4"), Ok((1, 4)));
        assert!(
            parse_shard("4/4").is_err() && parse_shard("1").is_err() && parse_shard("0/0").is_err()
        );
        let mut seen: Vec<usize> = (0..3).flat_map(|k| shard_rows(10, Some((k, 3)))).collect();
        seen.sort();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        assert_eq!(shard_rows(10, Some((1, 3))), vec![1, 4, 7]);
        assert_eq!(shard_rows(10, None).len(), 10);
    }
}
