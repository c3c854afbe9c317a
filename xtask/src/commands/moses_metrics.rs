//! `cargo xtask moses-metrics`: the MOSES metrics of generated SMILES (`generate`'s CSV or
//! any CSV with a SMILES column) against MOSES's test sets and training set, or the
//! user's; also run by `generate --moses`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use train::moses_metrics::{BenchmarkSets, DEFAULT_UNIQUE_K, MosesMetrics, SetFiles, read_smiles};

use burn::tensor::Device;
use models::chemnet::ChemNet;

use mol_featurize::cache::cache_root;
use train::datasets::chemnet_weights;

use super::common::DeviceArg;

/// Where the reference sets come from (shared by `moses-metrics` and `generate --moses`).
#[derive(clap::Args, Clone)]
pub struct BenchmarkArgs {
    /// Reference test set (CSV, `--set-column`); default MOSES's test set from
    /// `cargo xtask data moses`.
    #[arg(long)]
    pub test: Option<PathBuf>,
    /// Reference scaffold test set; default MOSES's test_scaffolds.
    #[arg(long)]
    pub test_scaffolds: Option<PathBuf>,
    /// Training set for novelty (compared as written); default MOSES's train set.
    #[arg(long)]
    pub train_set: Option<PathBuf>,
    /// SMILES column of the reference and training files.
    #[arg(long, default_value = "SMILES")]
    pub set_column: String,
    /// The k of unique@k.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_UNIQUE_K,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub unique_k: Vec<usize>,
    /// Cache root (MOSES's files, ChemNet's weights and the reference statistics live
    /// under `moses/`).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Skip the FCD (ChemNet over every reference and generated molecule).
    #[arg(long)]
    pub no_fcd: bool,
    /// ChemNet statistics of each reference set over a seeded sample of this many
    /// molecules instead of all of them (MOSES's test sets: 176k each, about 0.2 GFLOP of
    /// ChemNet a molecule); the JSON notes it.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..))]
    pub fcd_reference_size: Option<usize>,
}

/// Flags of `moses-metrics`.
#[derive(clap::Args)]
pub struct MosesMetricsArgs {
    /// Generated SMILES: a CSV with a header (`generate`'s output).
    #[arg(long = "gen")]
    pub generated: PathBuf,
    /// Column of `--gen` holding the SMILES.
    #[arg(long, default_value = "smiles")]
    pub smiles_column: String,
    /// Write the metrics as JSON here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Backend of ChemNet (FCD).
    #[arg(long, value_enum, default_value = "flex")]
    pub device: DeviceArg,
    /// Reference sets.
    #[command(flatten)]
    pub sets: BenchmarkArgs,
}

/// Runs `moses-metrics`.
///
/// # Errors
/// Unreadable files (MOSES's missing: run `cargo xtask data moses`), an empty `--gen`, I/O.
pub fn run(args: MosesMetricsArgs) -> Result<()> {
    let generated = read_smiles(&args.generated, &args.smiles_column)?;
    if generated.is_empty() {
        anyhow::bail!("{}: no rows to score", args.generated.display());
    }
    let metrics = score(&generated, &args.sets, &args.device.device()?)?;
    report(&metrics, args.out.as_deref())
}

/// The reference and training files of `args` (MOSES's in the cache unless given).
fn set_files(args: &BenchmarkArgs) -> SetFiles {
    let root = cache_root(args.cache.clone()).join("moses");
    let mut files = SetFiles::moses(&root);
    if let Some(p) = &args.test {
        files.references[0].1 = p.clone();
    }
    if let Some(p) = &args.test_scaffolds {
        files.references[1].1 = p.clone();
    }
    if let Some(p) = &args.train_set {
        files.train = Some(p.clone());
    }
    files.smiles_column = args.set_column.clone();
    files
}

/// Checks that every file [`score`] reads exists, so that `generate --moses` fails before
/// it samples rather than after.
///
/// # Errors
/// The first missing file, with the command that makes it.
pub fn check_inputs(args: &BenchmarkArgs) -> Result<()> {
    let files = set_files(args);
    for path in files.references.iter().map(|(_, p)| p).chain(&files.train) {
        if !path.exists() {
            anyhow::bail!(
                "{} is missing: `cargo xtask data moses` fetches MOSES's sets (or name your own \
                 with --test / --test-scaffolds / --train-set)",
                path.display()
            );
        }
    }
    let weights = chemnet_weights(&cache_root(args.cache.clone()));
    if !args.no_fcd && !weights.exists() {
        anyhow::bail!(
            "{} is missing: `cargo xtask data chemnet` fetches it (or pass --no-fcd)",
            weights.display()
        );
    }
    Ok(())
}

/// Scores `generated` against the sets of `args`, with progress bars; ChemNet runs on
/// `device`.
///
/// # Errors
/// As [`run`], and ChemNet's weights missing or unreadable (without `--no-fcd`).
pub fn score(generated: &[String], args: &BenchmarkArgs, device: &Device) -> Result<MosesMetrics> {
    check_inputs(args)?;
    let files = set_files(args);
    let root = cache_root(args.cache.clone()).join("moses");
    let bar = |len: usize, what: &str| -> Result<indicatif::ProgressBar> {
        let bar = indicatif::ProgressBar::new(len as u64).with_style(
            indicatif::ProgressStyle::with_template(
                "{msg} {bar:30} {pos}/{len} molecules, {per_sec}, ETA {eta}",
            )?,
        );
        bar.set_message(what.to_string());
        Ok(bar)
    };
    let chemnet = if args.no_fcd {
        None
    } else {
        let weights = chemnet_weights(&cache_root(args.cache.clone()));
        Some((
            ChemNet::new(device).load_fcd_torch(&weights)?,
            device.clone(),
        ))
    };
    let reference_bar = bar(0, "reference statistics")?;
    let fcd_subset = args.fcd_reference_size;
    let sets = BenchmarkSets::load(
        &files,
        &root.join("stats"),
        chemnet,
        fcd_subset,
        |what, done, total| {
            reference_bar.set_length(total as u64);
            reference_bar.set_message(format!("{what} (cached after the first run)"));
            reference_bar.set_position(done as u64);
        },
    )
    .context("reference sets")?;
    reference_bar.finish_and_clear();
    let gen_bar = bar(generated.len(), "generated set")?;
    let mut metrics = sets.score(generated, &args.unique_k, |done| {
        gen_bar.set_position(done as u64)
    });
    if let Some(n) = fcd_subset.filter(|_| !args.no_fcd) {
        metrics.notes.push(format!(
            "FCD references: ChemNet statistics of a seeded sample of {n} molecules of each \
             reference set (--fcd-reference-size)"
        ));
    }
    gen_bar.finish_and_clear();
    Ok(metrics)
}

/// Prints the metrics and writes them as JSON to `out`.
///
/// # Errors
/// I/O.
pub fn report(metrics: &MosesMetrics, out: Option<&Path>) -> Result<()> {
    print!("{}", metrics.table());
    if let Some(out) = out {
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(out, serde_json::to_string_pretty(metrics)?)?;
        println!("metrics written to {}", out.display());
    }
    Ok(())
}
