//! `cargo xtask data qm9`, `cargo xtask train --model transformer-m`, `cargo xtask
//! pretrain`: QM9 download and conversion, Transformer-M training and denoising
//! pretraining.

use std::path::{Path, PathBuf};

use crate::data_cmd::{Wheel, extract, fetch_wheel};
use anyhow::{Context, Result, bail};
use burn::tensor::Device;
use models::transformer_m::{Mode, TransformerMConfig};
use train::ModeProbabilities;
use train::TrainOptions;
use train::qm9::{INDEX_FILE, Qm9, convert_qm9_csv};
use train::transformer_m::{
    PretrainSpec, Qm9Subset, TmRunSpec, pretrain_denoising, train_transformer_m,
};

/// The pinned `qm9pack` release (MIT license; 130,831 molecules as CSV with XYZ).
const QM9PACK: Wheel = Wheel {
    requirement: "qm9pack==1.0.3",
    file: "qm9pack-1.0.3-py3-none-any.whl",
    sha256: "1d88c2988007c6778e717ee3224cf511bd60e10732ebe3b7ed500ea5af05c9f0",
};
/// CSV parts inside the wheel, in order.
const PARTS: [&str; 3] = [
    "qm9pack/data/qm9_part1.csv",
    "qm9pack/data/qm9_part2.csv",
    "qm9pack/data/qm9_part3.csv",
];

/// The cache root: `--cache`, else `$MOLATTN_CACHE`, else `$XDG_CACHE_HOME/molattn`,
/// else `~/.cache/molattn`.
pub fn cache_dir(given: Option<PathBuf>) -> PathBuf {
    given
        .or_else(mol_featurize::cache::default_cache_dir)
        .unwrap_or_else(|| PathBuf::from(".cache/molattn"))
}

/// Downloads (pip), verifies and converts QM9 once; returns the converted directory.
pub fn data_qm9(cache: Option<PathBuf>, force: bool) -> Result<PathBuf> {
    let dir = cache_dir(cache).join("qm9");
    if dir.join(INDEX_FILE).exists() && !force {
        let qm9 = Qm9::load(&dir)?;
        println!(
            "QM9 ready in {}: {} molecules ({} of {} rows skipped), source {}",
            dir.display(),
            qm9.len(),
            qm9.index.skipped.len(),
            qm9.index.n_rows,
            qm9.index.source
        );
        return Ok(dir);
    }
    let wheel = fetch_wheel(&QM9PACK, &dir.join("download"))?;
    let raw = dir.join("raw");
    extract(&wheel, &PARTS, &raw)?;
    let parts: Vec<PathBuf> = PARTS.iter().map(|p| raw.join(p)).collect();
    println!("converting {} CSV parts", parts.len());
    let t0 = std::time::Instant::now();
    let index = convert_qm9_csv(
        &parts,
        &dir,
        &format!("{} sha256 {}", QM9PACK.file, QM9PACK.sha256),
    )?;
    std::fs::remove_dir_all(&raw).ok();
    println!(
        "QM9: {} of {} molecules kept in {} ({:.0} s); skipped by reason: {:?}",
        index.smiles.len(),
        index.n_rows,
        dir.display(),
        t0.elapsed().as_secs_f64(),
        index.skipped_by_reason
    );
    Ok(dir)
}

/// Training modes on the command line.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ModeArg {
    /// 2D channel only (graph).
    #[value(name = "2d")]
    TwoD,
    /// 3D channel only (geometry).
    #[value(name = "3d")]
    ThreeD,
    /// Both channels.
    Both,
    /// Transformer-M's mixture (0.2 both / 0.2 2D / 0.6 3D); evaluated with both.
    Mixed,
}

/// Model size overrides of the Transformer-M preset.
#[derive(clap::Args, Clone, Debug)]
pub struct TmSizeArgs {
    /// Encoder layers (overrides the preset).
    #[arg(long)]
    pub layers: Option<usize>,
    /// d_model and FFN width (overrides the preset).
    #[arg(long)]
    pub d_model: Option<usize>,
    /// Attention heads (overrides the preset).
    #[arg(long)]
    pub heads: Option<usize>,
    /// Gaussian kernels K (overrides the preset).
    #[arg(long)]
    pub kernels: Option<usize>,
}

impl TmSizeArgs {
    /// Whether any override was given.
    pub fn any(&self) -> bool {
        self.layers.is_some()
            || self.d_model.is_some()
            || self.heads.is_some()
            || self.kernels.is_some()
    }
}

/// The preset with the overrides applied.
pub fn tm_config(base: bool, size: &TmSizeArgs) -> TransformerMConfig {
    let mut c = if base {
        TransformerMConfig::base()
    } else {
        TransformerMConfig::small()
    };
    if let Some(v) = size.layers {
        c.num_layers = v;
    }
    if let Some(v) = size.d_model {
        c.d_model = v;
        c.ffn_dim = v;
    }
    if let Some(v) = size.heads {
        c.num_heads = v;
    }
    if let Some(v) = size.kernels {
        c.num_kernels = v;
    }
    c
}

/// Everything `train --model transformer-m` needs.
pub struct TmTrain {
    /// Converted QM9 directory.
    pub dataset: PathBuf,
    /// Target column.
    pub target: String,
    /// Subset size.
    pub limit: Option<usize>,
    /// Subset offset.
    pub offset: usize,
    /// Mode.
    pub mode: ModeArg,
    /// Model.
    pub model: TransformerMConfig,
    /// Optimisation.
    pub train: TrainOptions,
    /// Pretraining run directory or model file.
    pub init_from: Option<PathBuf>,
    /// Whether any size flag (--layers, --d-model, --heads, --kernels) was given.
    pub size_given: bool,
    /// Run directory.
    pub out: PathBuf,
}

/// Runs a Transformer-M training and prints its metrics.
pub fn train_tm(args: TmTrain, device: &Device) -> Result<()> {
    let (modes, eval_mode) = match args.mode {
        ModeArg::TwoD => (ModeProbabilities::fixed(Mode::TwoD), Mode::TwoD),
        ModeArg::ThreeD => (ModeProbabilities::fixed(Mode::ThreeD), Mode::ThreeD),
        ModeArg::Both => (ModeProbabilities::fixed(Mode::Both), Mode::Both),
        ModeArg::Mixed => (ModeProbabilities::new(), Mode::Both),
    };
    // --init-from: a pretraining run directory (its pretrain.json gives the model
    // configuration) or a model file (the configuration must be given to match).
    let mut model = args.model;
    let init_from = match args.init_from {
        None => None,
        Some(p) if p.is_dir() => {
            let file = p.join("pretrained_model.bpk");
            let spec_path = p.join("pretrain.json");
            if !file.exists() || !spec_path.exists() {
                bail!(
                    "{}: not a pretraining run (expected pretrained_model.bpk and pretrain.json from `cargo xtask pretrain`)",
                    p.display()
                );
            }
            let pre: PretrainSpec = serde_json::from_str(&std::fs::read_to_string(&spec_path)?)
                .with_context(|| format!("{}: not a pretraining spec", spec_path.display()))?;
            let size = |c: &TransformerMConfig| {
                (
                    c.num_layers,
                    c.d_model,
                    c.ffn_dim,
                    c.num_heads,
                    c.num_kernels,
                )
            };
            if args.size_given && size(&pre.model) != size(&model) {
                bail!(
                    "{}: pretrained with (layers, d_model, ffn, heads, kernels) = {:?}, but this run asks for {:?}; drop the size flags to use the pretrained size",
                    p.display(),
                    size(&pre.model),
                    size(&model)
                );
            }
            println!(
                "initialising from {} (layers {}, d_model {}, heads {}, kernels {})",
                file.display(),
                pre.model.num_layers,
                pre.model.d_model,
                pre.model.num_heads,
                pre.model.num_kernels
            );
            model = pre.model.with_num_targets(model.num_targets);
            Some(file)
        }
        Some(p) if p.is_file() => {
            println!("initialising from {}", p.display());
            Some(p)
        }
        Some(p) => bail!("--init-from {}: no such file or directory", p.display()),
    };
    let spec = TmRunSpec {
        data: Qm9Subset {
            dataset: args.dataset,
            limit: args.limit,
            offset: args.offset,
            subset_seed: 0,
        },
        target: args.target,
        modes,
        eval_mode,
        model,
        train: args.train,
        init_from,
        target_mean: 0.0,
        target_std: 1.0,
    };
    let s = train_transformer_m(&spec, &args.out, true, device)?;
    println!(
        "{}: test MAE {:.5} {}{} (mean predictor {:.5}); valid {:.5}; {} / {} / {} molecules; best epoch {} of {}; {:.0} s training, {:.0} s featurizing; {} parameters",
        s.target,
        s.test_mae,
        s.units,
        s.test_mae_ev
            .map(|v| format!(" = {v:.4} eV"))
            .unwrap_or_default(),
        s.test_mae_of_mean,
        s.valid_mae,
        s.n_train,
        s.n_valid,
        s.n_test,
        s.best_epoch,
        s.epochs,
        s.train_seconds,
        s.featurize_seconds,
        s.n_params
    );
    println!("wrote {}", args.out.join("metrics.json").display());
    Ok(())
}

/// Runs denoising pretraining and prints the loss at the start and end.
pub fn pretrain(spec: PretrainSpec, out: &Path, device: &Device) -> Result<()> {
    let s = pretrain_denoising(&spec, out, true, device)?;
    println!(
        "denoising loss {:.4} (first 10% of steps) -> {:.4} (last 10%) over {} steps on {} molecules, {:.0} s; wrote {}",
        s.loss_start,
        s.loss_end,
        s.loss.len(),
        s.n_molecules,
        s.seconds,
        out.join("pretrained_model.bpk").display()
    );
    Ok(())
}
