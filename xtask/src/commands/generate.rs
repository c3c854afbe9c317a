//! `cargo xtask generate`: sample molecules from a trained SMILES generator into a CSV
//! (SMILES, valid, canonical SMILES, reason) and print validity, uniqueness and novelty.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};
use models::smiles_gpt::sampling::SamplingSettings;
use train::smiles_gpt::{GenerateCondition, GenerateRequest, GptRun, condition_report, generate};

use mol_featurize::properties::MolProperty;

use super::engine_args::EngineArgs;

fn parse_prop(s: &str) -> Result<(MolProperty, f64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected name=value, e.g. logp=2.0"))?;
    let value: f64 = value
        .trim()
        .parse()
        .map_err(|e| format!("{s:?}: value {value:?}: {e}"))?;
    Ok((name.parse()?, value))
}

/// Flags of `generate`.
#[derive(clap::Args)]
pub struct GenerateArgs {
    /// A `train --model smiles-gpt` run folder.
    #[arg(long)]
    pub run: PathBuf,
    /// Sample the run's checkpoint N (`checkpoint/model-N.bpk`; with
    /// `--checkpoints-per-epoch`, N counts parts) instead of its best model: scores a run
    /// that is still training (the engine keeps the last two checkpoints and the best one
    /// while it trains, the best and the last when it ends).
    #[arg(long, value_name = "N")]
    pub checkpoint: Option<usize>,
    /// Samples to draw (MOSES evaluates 30000).
    #[arg(short = 'n', long, default_value_t = 1000)]
    pub n: usize,
    /// Softmax temperature (0: greedy).
    #[arg(long, default_value_t = 1.0)]
    pub temperature: f64,
    /// Sample among the K most likely tokens only.
    #[arg(long)]
    pub top_k: Option<usize>,
    /// Seed: the same seed and flags give the same rows.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Start every sample with this SMILES prefix.
    #[arg(long, default_value = "")]
    pub prefix: String,
    /// A conditional run's property values, one `name=value` per property it was
    /// trained on (`--prop logp=2.0 --prop tpsa=60`; TPSA in square Angstrom).
    #[arg(long = "prop", value_parser = parse_prop)]
    pub props: Vec<(MolProperty, f64)>,
    /// A scaffold-conditioned run's scaffold SMILES (its Bemis-Murcko form is used).
    #[arg(long)]
    pub scaffold: Option<String>,
    /// Sequences decoded together.
    #[arg(long, default_value_t = 256)]
    pub batch_size: usize,
    /// Output CSV.
    #[arg(long)]
    pub out: PathBuf,
    /// Also compute the MOSES metrics of the samples (`moses-metrics`) and write them
    /// beside `--out` as `<out>.moses.json`.
    #[arg(long)]
    pub moses: bool,
    /// Reference sets of `--moses`.
    #[command(flatten)]
    pub sets: super::moses_metrics::BenchmarkArgs,
    /// Devices and progress (the first device samples).
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Runs `generate`.
///
/// # Errors
/// An unreadable run, a bad prefix, an output path equal to the run's corpus, I/O.
pub fn run(args: GenerateArgs) -> Result<()> {
    let device = args.engine.main_device()?;
    if args.moses {
        super::moses_metrics::check_inputs(&args.sets)?;
    }
    let run = match args.checkpoint {
        Some(epoch) => GptRun::open_checkpoint(&args.run, epoch, &device)?,
        None => GptRun::open(&args.run, &device)?,
    };
    if args.out == run.spec.corpus.path {
        bail!("--out {} is the run's training corpus", args.out.display());
    }
    let settings = SamplingSettings {
        temperature: args.temperature,
        top_k: args.top_k,
    };
    let bar = indicatif::ProgressBar::new(args.n as u64).with_style(
        indicatif::ProgressStyle::with_template(
            "{msg} {bar:30} {pos}/{len} samples, {per_sec}, ETA {eta}",
        )?,
    );
    bar.set_message("generate");
    let started = Instant::now();
    let condition = GenerateCondition::named(&run, &args.props, args.scaffold.clone())?;
    let request = GenerateRequest {
        n: args.n,
        batch_size: args.batch_size,
        prefix: args.prefix.clone(),
        settings,
        seed: args.seed,
        condition: condition.clone(),
    };
    let rows = generate(&run, &request, &device, |done| {
        bar.set_position(done as u64)
    })?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut writer = csv::Writer::from_path(&args.out)?;
    for row in &rows {
        writer.serialize(row)?;
    }
    writer.flush()?;
    let train = train::smiles_gpt::generate::corpus_canonical(&run)?;
    let summary = train::smiles_gpt::generate::summarize(&rows, &train, seconds);
    println!("{}", serde_json::to_string_pretty(&summary)?);
    println!(
        "{} samples written to {} ({:.1} samples/s)",
        rows.len(),
        args.out.display(),
        rows.len() as f64 / seconds.max(1e-9)
    );
    if let Some(condition) = &condition {
        let report = condition_report(&run, condition, &rows)?;
        let mut out = args.out.clone().into_os_string();
        out.push(".condition.json");
        std::fs::write(&out, serde_json::to_string_pretty(&report)?)?;
        println!("{}", serde_json::to_string_pretty(&report)?);
        println!(
            "condition report written to {}",
            PathBuf::from(out).display()
        );
    }
    if args.moses {
        let smiles: Vec<String> = rows.into_iter().map(|r| r.smiles).collect();
        let mut metrics = super::moses_metrics::score(&smiles, &args.sets, &device)?;
        if let Some(epoch) = args.checkpoint {
            metrics.notes.push(format!(
                "sampled from checkpoint {epoch} of {} (checkpoint/model-{epoch}.bpk), not its best model",
                args.run.display()
            ));
        }
        let mut out = args.out.into_os_string();
        out.push(".moses.json");
        super::moses_metrics::report(&metrics, Some(std::path::Path::new(&out)))?;
    }
    Ok(())
}
