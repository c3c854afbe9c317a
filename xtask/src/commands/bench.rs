//! `cargo xtask bench`: featurization stages, models side by side with PyTorch, MAT
//! scaling, one ESOL training epoch, the SMILES generator against PyTorch and local vs
//! dense attention, and the default throughput summary; `bench-row` and `bench-gen-row`
//! are one row measured in its own process.

use std::path::PathBuf;

use anyhow::Result;

use bench::{
    compare_torch, epoch_bench, featurize_bench, featurizer, gen_bench, model_bench, scaling_bench,
};
use mol_featurize::conformer::CoordinateMethod;

use super::common::{DeviceArg, datasets_dir, rayon_threads, repo_root, spelling};

/// Flags of `bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Datasets folder (default: $MOLATTN_DATA, else the shipped ones).
    #[arg(long)]
    pub datasets: Option<PathBuf>,
    /// Molecules featurized per measurement (the first of ESOL; with --featurize or
    /// --compare-rdkit, the first of ESOL and the first of BBBP).
    #[arg(long, default_value_t = 200)]
    pub molecules: usize,
    /// Backend.
    #[arg(long, value_enum, default_value = "flex")]
    pub device: DeviceArg,
    /// Only featurization: the time of each stage (parse, ETKDG, UFF, 2D layout,
    /// distances, features) per molecule, 1 thread and all threads, by heavy-atom
    /// count.
    #[arg(long)]
    pub featurize: bool,
    /// Only featurization, against RDKit's pipeline on the same molecules and cores
    /// (needs python3 with rdkit and numpy).
    #[arg(long)]
    pub compare_rdkit: bool,
    /// Only models: MAT small and pretrained-size and Transformer-M small, forward and
    /// training step, ours (flex; wgpu with --device wgpu; ONNX Runtime on the exported
    /// MAT in an `onnx` build) against our PyTorch references on the same batch and
    /// threads; writes bench/results.json.
    #[arg(long, conflicts_with_all = ["featurize", "compare_rdkit"])]
    pub compare_torch: bool,
    /// Only MAT scaling: forward and training-step time and peak memory against atoms
    /// per molecule (16 to 1024), both presets, one molecule per batch; writes
    /// bench/scaling.json and docs/images/scaling.png.
    #[arg(long, conflicts_with_all = ["featurize", "compare_rdkit", "compare_torch"])]
    pub scaling: bool,
    /// Only one MAT small training epoch on ESOL's random-0 training split, ours
    /// against our PyTorch reference on the same batches and threads; writes
    /// bench/esol_epoch.json.
    #[arg(long, conflicts_with_all = ["featurize", "compare_rdkit", "compare_torch", "scaling"])]
    pub esol_epoch: bool,
    /// Only the SMILES generator: KV-cached sampling (molecules/s) and the training step
    /// (tokens/s), ours against a PyTorch reference of the same architecture with the same
    /// weights and threads (bench/torch_gpt.py), and local against dense attention from
    /// 1k tokens up (time and peak memory); writes bench/generate.json and
    /// docs/images/local_vs_dense_{time,memory}.png.
    #[arg(long, conflicts_with_all = ["featurize", "compare_rdkit", "compare_torch", "scaling", "esol_epoch"])]
    pub generate: bool,
    /// --generate: a smiles-gpt run whose weights are measured (default: the small preset,
    /// seeded, with MOSES's 28-token vocabulary).
    #[arg(long, requires = "generate")]
    pub run: Option<PathBuf>,
    /// Threads for every runtime of --compare-torch, --generate or --scaling (default: all
    /// cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seconds of timed calls per row of --compare-torch or --generate (at least 3 calls,
    /// at most 20).
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
}

/// Runs `bench`: the first of `--featurize` / `--compare-rdkit`, `--scaling`,
/// `--esol-epoch`, `--compare-torch` given, else the throughput summary.
///
/// # Errors
/// Missing datasets, Python references or backends.
pub fn run(args: BenchArgs) -> Result<()> {
    if args.featurize || args.compare_rdkit {
        let dir = datasets_dir(args.datasets)?;
        let smiles = featurize_bench::benchmark_smiles(&dir, args.molecules)?;
        if args.featurize {
            featurize_bench::stage_profile(&smiles, &featurizer(CoordinateMethod::Embed3d))?;
        }
        if args.compare_rdkit {
            featurize_bench::compare_rdkit(
                &repo_root(),
                &smiles,
                &featurizer(CoordinateMethod::Embed3d),
                &featurizer(CoordinateMethod::Topological),
            )?;
        }
        return Ok(());
    }
    let threads = args.threads.unwrap_or_else(rayon_threads);
    if args.scaling {
        return scaling_bench::run(&repo_root(), threads);
    }
    if args.generate {
        return gen_bench::run(
            &repo_root(),
            &gen_bench::GenBenchOptions {
                threads,
                seconds: args.seconds,
                run: args.run,
                sample_batch: 256,
                steps: 64,
                train_batch: 64,
                seq_len: 64,
            },
        );
    }
    if args.esol_epoch {
        return epoch_bench::run(&repo_root(), &datasets_dir(args.datasets)?);
    }
    if args.compare_torch {
        return compare_torch::compare_torch(
            &repo_root(),
            &datasets_dir(args.datasets)?,
            threads,
            args.seconds,
            matches!(args.device, DeviceArg::Wgpu),
        );
    }
    model_bench::bench(
        &datasets_dir(args.datasets)?,
        args.molecules,
        (args.device.device()?, &spelling(&args.device)),
    )
}
