//! `cargo xtask featurize`: featurize a CSV for MAT and report skipped rows and coordinate
//! sources; optionally write the features (JSON) or the padded batch (`.npz`).

#[cfg(feature = "onnx")]
use std::path::Path;
use std::path::PathBuf;
use std::time::Instant;

#[cfg(feature = "onnx")]
use anyhow::bail;
use anyhow::{Context, Result};
use clap::ValueEnum;
use mol_featurize::{MatFeaturizer, featurize_all_cached};
use train::RunSpec;

#[cfg(not(feature = "onnx"))]
use super::common::missing_feature;
use super::common::{CoordsArg, conformer_cache_dir, featurizer};

/// Flags of `featurize`.
#[derive(clap::Args)]
pub struct FeaturizeArgs {
    /// CSV with a SMILES column.
    #[arg(long)]
    pub data: PathBuf,
    /// Cache folder: the conformer cache and prepared datasets (default:
    /// $MOLATTN_CACHE, else $XDG_CACHE_HOME/molattn, else ~/.cache/molattn).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Embed every molecule; neither read nor write the conformer cache.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
    /// SMILES column.
    #[arg(long, default_value = "smiles")]
    pub smiles_column: String,
    /// Field delimiter of --data (`,`; `;`, `tab`, ... for other exports).
    #[arg(long, default_value = ",", value_parser = train::data::parse_delimiter)]
    pub delimiter: char,
    /// Coordinates for the distance matrices.
    #[arg(long, value_enum, default_value = "embed3d")]
    pub coords: CoordsArg,
    /// Write the features here (see --format).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Featurize exactly as this training run did (its `run.json` featurizer), e.g.
    /// for an exported model; overrides --coords.
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// `json`: features and report; `npz`: one padded batch of every featurized
    /// molecule (`node_features`, `key_padding_mask`, `adjacency`, `distances`, `row`),
    /// the inputs of an exported MAT.
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

/// The rows of shard `k` of `n` (every `n`-th row from `k`), as (row, SMILES).
fn shard_rows(smiles: Vec<String>, shard: Option<(usize, usize)>) -> (Vec<usize>, Vec<String>) {
    let (k, n) = shard.unwrap_or((0, 1));
    smiles
        .into_iter()
        .enumerate()
        .filter(|(row, _)| row % n == k)
        .unzip()
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
    let featurizer = match args.run {
        Some(run) => RunSpec::load(&run)?.featurizer,
        None => featurizer(args.coords, 42, false),
    };
    let cache = conformer_cache_dir(args.cache, args.no_cache);
    let smiles = train::data::read_smiles_delimited(
        &args.data,
        &args.smiles_column,
        train::data::delimiter_byte(args.delimiter)?,
    )?;
    let (rows, smiles) = shard_rows(smiles, args.shard);
    if let Some((k, n)) = args.shard {
        println!("shard {k}/{n}: {} rows", rows.len());
    }
    featurize(&smiles, &rows, &featurizer, cache, args.out, args.format)
}

fn featurize(
    smiles: &[String],
    rows: &[usize],
    featurizer: &MatFeaturizer,
    cache: Option<PathBuf>,
    out: Option<PathBuf>,
    format: FeatureFormat,
) -> Result<()> {
    let t0 = Instant::now();
    let cache = train::open_conformer_cache(cache.as_deref());
    let (features, mut report) = featurize_all_cached(smiles, featurizer, true, cache.as_ref());
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
    match (out, format) {
        (None, _) => {}
        (Some(out), FeatureFormat::Json) => {
            let json = serde_json::json!({ "report": report, "rows": rows, "features": features });
            std::fs::write(&out, serde_json::to_vec(&json)?)
                .with_context(|| out.display().to_string())?;
            println!("wrote {}", out.display());
        }
        #[cfg(feature = "onnx")]
        (Some(out), FeatureFormat::Npz) => write_npz(&out, &features, rows)?,
        #[cfg(not(feature = "onnx"))]
        (Some(_), FeatureFormat::Npz) => return Err(missing_feature("onnx", "--format npz")),
    }
    Ok(())
}

#[cfg(feature = "onnx")]
/// Writes every featurized molecule as one padded batch to a NumPy `.npz`: the inputs of
/// an exported MAT plus `row` (input row of each molecule; skipped rows are absent).
fn write_npz(
    out: &Path,
    features: &[Option<mol_featurize::MatFeatures>],
    input_rows: &[usize],
) -> Result<()> {
    use ndarray::{Array1, Array2, Array3};
    let (rows, ok): (Vec<i64>, Vec<&mol_featurize::MatFeatures>) = features
        .iter()
        .zip(input_rows)
        .filter_map(|(f, &row)| f.as_ref().map(|f| (row as i64, f)))
        .unzip();
    if ok.is_empty() {
        bail!(
            "no molecule could be featurized: nothing to write to {}",
            out.display()
        );
    }
    let data = mol_featurize::pad_batch(&ok).map_err(anyhow::Error::msg)?;
    let (b, n, d) = (data.batch_size, data.n_atoms, data.d_atom);
    let file = std::fs::File::create(out).with_context(|| out.display().to_string())?;
    let mut npz = ndarray_npy::NpzWriter::new(file);
    npz.add_array(
        "node_features",
        &Array3::from_shape_vec((b, n, d), data.node_features)?,
    )?;
    npz.add_array(
        "key_padding_mask",
        &Array2::from_shape_vec((b, n), data.key_padding_mask)?,
    )?;
    npz.add_array(
        "adjacency",
        &Array3::from_shape_vec((b, n, n), data.adjacency)?,
    )?;
    npz.add_array(
        "distances",
        &Array3::from_shape_vec((b, n, n), data.distances)?,
    )?;
    npz.add_array("row", &Array1::from_vec(rows))?;
    npz.finish()?;
    println!(
        "wrote {} ({b} molecules padded to {n} atoms, d_atom {d})",
        out.display()
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
        let smiles: Vec<String> = (0..10).map(|i| format!("C{i}")).collect();
        let mut seen: Vec<usize> = (0..3)
            .flat_map(|k| shard_rows(smiles.clone(), Some((k, 3))).0)
            .collect();
        seen.sort();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        assert_eq!(
            shard_rows(smiles.clone(), Some((1, 3))).1,
            vec!["C1", "C4", "C7"]
        );
        assert_eq!(shard_rows(smiles, None).0.len(), 10);
    }
}
