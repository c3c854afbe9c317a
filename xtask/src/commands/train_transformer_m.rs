//! `cargo xtask train --model transformer-m` and `cargo xtask pretrain`: Transformer-M
//! training on QM9 and denoising pretraining (flags, presets, `--init-from`).

use std::path::{Path, PathBuf};

use super::engine_args::EngineArgs;
use anyhow::{Context, Result};
use models::transformer_m::{GaussianInit, LayerNormPlacement, Mode, TransformerMConfig};
use train::ModeProbabilities;
use train::TrainOptions;
use train::transformer_m::{
    PretrainSpec, Qm9Subset, TmData, TmRunSpec, pretrain_denoising, resolve_init_from,
    train_transformer_m,
};

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

impl ModeArg {
    /// Training-time mode probabilities and the evaluation mode.
    pub fn probabilities(self) -> (ModeProbabilities, Mode) {
        match self {
            ModeArg::TwoD => (ModeProbabilities::fixed(Mode::TwoD), Mode::TwoD),
            ModeArg::ThreeD => (ModeProbabilities::fixed(Mode::ThreeD), Mode::ThreeD),
            ModeArg::Both => (ModeProbabilities::fixed(Mode::Both), Mode::Both),
            ModeArg::Mixed => (ModeProbabilities::new(), Mode::Both),
        }
    }
}

/// `--init-from`: the model file to start from and the configuration to build (a
/// pretraining run's size replaces the preset's unless `size` sets one; see
/// [`resolve_init_from`]); prints what it loads.
///
/// # Errors
/// Not a pretraining run or model file; a size conflict.
pub fn resolve_tm_init(
    init_from: Option<&Path>,
    model: TransformerMConfig,
    size: &TmSizeArgs,
) -> Result<(Option<PathBuf>, TransformerMConfig)> {
    let Some(p) = init_from else {
        return Ok((None, model));
    };
    let (file, model) = resolve_init_from(p, model, size.any())
        .with_context(|| format!("--init-from {}", p.display()))?;
    println!(
        "initialising from {} (layers {}, d_model {}, heads {}, kernels {})",
        file.display(),
        model.num_layers,
        model.d_model,
        model.num_heads,
        model.num_kernels
    );
    Ok((Some(file), model))
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
    #[arg(long, alias = "heads")]
    pub num_heads: Option<usize>,
    /// Gaussian kernels K (overrides the preset).
    #[arg(long)]
    pub kernels: Option<usize>,
    /// LayerNorm placement: `post` is the original Transformer-M (embedding LayerNorm,
    /// LayerNorm after each residual sum); `pre` normalises before each block and after
    /// the last layer (docs/TRANSFORMER_M.md). Default: post.
    #[arg(long, value_enum)]
    pub layer_norm: Option<LayerNormArg>,
    /// Gaussian layer initialisation: `original` (apply_init, N(0, 0.02)) or `uniform`
    /// (means and stds U(0, 3), gain 2; docs/RESULTS.md compares them on QM9).
    #[arg(long, value_enum, default_value = "original")]
    pub gaussian_init: GaussianInitArg,
}

/// `--gaussian-init` values.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum GaussianInitArg {
    /// The original's apply_init.
    Original,
    /// The Gaussian layer's own U(0, 3) initialisation.
    Uniform,
}

/// `--layer-norm` values.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum LayerNormArg {
    /// The original's post-LN.
    Post,
    /// Pre-LN with a final LayerNorm.
    Pre,
}

impl TmSizeArgs {
    /// Whether any override was given.
    pub fn any(&self) -> bool {
        self.layers.is_some()
            || self.d_model.is_some()
            || self.num_heads.is_some()
            || self.kernels.is_some()
            || self.layer_norm.is_some()
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
    if let Some(v) = size.num_heads {
        c.num_heads = v;
    }
    if let Some(v) = size.kernels {
        c.num_kernels = v;
    }
    c.gaussian_init = match size.gaussian_init {
        GaussianInitArg::Original => GaussianInit::Original,
        GaussianInitArg::Uniform => GaussianInit::Uniform,
    };
    if let Some(placement) = size.layer_norm {
        c.layer_norm = match placement {
            LayerNormArg::Post => LayerNormPlacement::Post,
            LayerNormArg::Pre => LayerNormPlacement::Pre,
        };
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
    /// Regression loss.
    pub loss: train::masked_loss::LossKind,
    /// Pretraining run directory or model file.
    pub init_from: Option<PathBuf>,
    /// Size flags (--layers, --d-model, --num-heads, --kernels, --layer-norm).
    pub size: TmSizeArgs,
    /// Run directory.
    pub out: PathBuf,
    /// Devices, resume, progress.
    pub engine: EngineArgs,
}

/// Runs a Transformer-M training and prints its metrics.
pub fn train_tm(args: TmTrain) -> Result<()> {
    let control = args.engine.control()?;
    let device = &args.engine.main_device()?;
    let (modes, eval_mode) = args.mode.probabilities();
    let (init_from, model) = resolve_tm_init(args.init_from.as_deref(), args.model, &args.size)?;
    let spec = TmRunSpec {
        kind: train::RunKind::TransformerM,
        data: TmData::Qm9(Qm9Subset {
            dataset: args.dataset,
            limit: args.limit,
            offset: args.offset,
            subset_seed: 0,
        }),
        target_columns: vec![args.target],
        task: train::Task::Regression,
        loss: args.loss,
        units: None,
        modes,
        eval_mode,
        model,
        train: args.train,
        init_from,
        target_mean: Vec::new(),
        target_std: Vec::new(),
    };
    let s = train_transformer_m(&spec, &args.out, &control, device)?;
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

/// Runs denoising pretraining (conformers cached in `conformer_cache`) and prints the
/// loss at the start and end.
pub fn pretrain(
    spec: PretrainSpec,
    out: &Path,
    engine: &EngineArgs,
    conformer_cache: Option<PathBuf>,
) -> Result<()> {
    let control = train::RunControl {
        conformer_cache,
        ..engine.control()?
    };
    let s = pretrain_denoising(&spec, out, &control, &engine.main_device()?)?;
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
