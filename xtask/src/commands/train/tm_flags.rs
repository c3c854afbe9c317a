//! Transformer-M's own flags: `--mode` and the size overrides (shared with `pretrain`).

use models::transformer_m::{GaussianInit, LayerNormPlacement, Mode, TransformerMConfig};
use train::ModeProbabilities;
use train::transformer_m::SizeOverrides;

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
    /// DropPath (stochastic depth) as the original's `--droppath-prob`: layer i of L drops
    /// whole token positions of its residual branches with probability p * i / (L - 1),
    /// replacing their dropout, in training only. The original pretrains with 0.1 and
    /// fine-tunes QM9 with 0. Kept over a pretraining run's by --init-from.
    #[arg(long, default_value_t = 0.0, value_parser = probability)]
    pub droppath: f64,
    /// The original's --spatial-pos-max: pairs this many bonds apart or more, and pairs
    /// in different fragments, do not attend (20 by default). 1024 is the original's
    /// PCQM4Mv2 setting: nothing masked, the ions of a salt attend through the unreachable
    /// row of the original's 512-row SPD table. 1 to 509, or 511 and above.
    #[arg(long)]
    pub spatial_pos_max: Option<usize>,
}

/// A probability in `[0, 1)` (dropout-like rates: 1 would drop everything).
fn probability(text: &str) -> Result<f64, String> {
    let p: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if (0.0..1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{p} is outside [0, 1)"))
    }
}

/// A finite number above 0 (`--clip-norm`).
pub(super) fn positive(text: &str) -> Result<f64, String> {
    let x: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if x > 0.0 && x.is_finite() {
        Ok(x)
    } else {
        Err(format!("{x} is not a positive number"))
    }
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
    /// The flags as `train`'s [`SizeOverrides`].
    pub fn overrides(&self) -> SizeOverrides {
        SizeOverrides {
            layers: self.layers,
            d_model: self.d_model,
            num_heads: self.num_heads,
            kernels: self.kernels,
            layer_norm: self.layer_norm.map(|l| match l {
                LayerNormArg::Post => LayerNormPlacement::Post,
                LayerNormArg::Pre => LayerNormPlacement::Pre,
            }),
            gaussian_init: match self.gaussian_init {
                GaussianInitArg::Original => GaussianInit::Original,
                GaussianInitArg::Uniform => GaussianInit::Uniform,
            },
            droppath: self.droppath,
            spatial_pos_max: self.spatial_pos_max,
        }
    }
}

/// The preset (`base` or small) with the size flags applied.
///
/// # Errors
/// A `--spatial-pos-max` the original's tables cannot hold.
pub fn tm_config(base: bool, size: &TmSizeArgs) -> anyhow::Result<TransformerMConfig> {
    Ok(size.overrides().config(base)?)
}

/// `--loss` of Transformer-M.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum LossArg {
    /// Mean absolute error.
    L1,
    /// Mean squared error.
    Mse,
}

impl LossArg {
    /// The regression loss it names.
    pub fn kind(self) -> train::masked_loss::LossKind {
        match self {
            LossArg::L1 => train::masked_loss::LossKind::L1,
            LossArg::Mse => train::masked_loss::LossKind::Mse,
        }
    }
}

/// `--readout` of Transformer-M.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ReadoutArg {
    /// The head on the graph token (the original's default).
    Cls,
    /// The head on every atom token, averaged over the molecule's atoms.
    Mean,
    /// The head on every atom token, summed.
    Sum,
}

impl ReadoutArg {
    /// The model setting it names.
    pub fn readout(self) -> models::transformer_m::TmReadout {
        use models::transformer_m::TmReadout;
        match self {
            ReadoutArg::Cls => TmReadout::Cls,
            ReadoutArg::Mean => TmReadout::Mean,
            ReadoutArg::Sum => TmReadout::Sum,
        }
    }
}

/// `--target-scaling` of Transformer-M.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum TargetScalingArg {
    /// The loss on standardised labels (the original's `std_labels`).
    StdLabels,
    /// The loss in target units on `prediction * std + mean` (the original's
    /// `std_logits`, its QM9 default).
    StdLogits,
}

impl TargetScalingArg {
    /// The setting it names.
    pub fn loss_scale(self) -> train::masked_loss::LossScale {
        match self {
            TargetScalingArg::StdLabels => train::masked_loss::LossScale::StdLabels,
            TargetScalingArg::StdLogits => train::masked_loss::LossScale::StdLogits,
        }
    }
}
