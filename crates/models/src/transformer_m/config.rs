//! Configuration, presets and initialisation of [`TransformerM`].

use burn::nn::DropoutConfig;
use burn::prelude::*;
use mol_featurize::EncodingLimits;
use serde::{Deserialize, Serialize};

use super::encoder::EncoderLayerConfig;
use super::encodings::{AtomEncoderConfig, BiasEncoderConfig};
use super::gaussian::{GaussianLayerConfig, PairBias3dConfig};
use super::heads::{DenoisingHeadConfig, RegressionHeadConfig};
use super::init;
pub use super::init::GaussianInit;
use super::model::TransformerM;

/// Where the encoder layers put their LayerNorms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LayerNormPlacement {
    /// The original: LayerNorm after each residual sum, one LayerNorm on the embeddings
    /// before layer 0 (`encoder_normalize_before`), none after the last layer.
    #[default]
    Post,
    /// LayerNorm before each block, a final LayerNorm after the last layer and none on
    /// the embeddings: trains without warm-up at higher learning rates (Xiong et al.
    /// 2020, arXiv 2002.04745), but is not the released architecture.
    Pre,
}

/// How the regression head's output becomes one prediction per molecule (the
/// original's `--readout-type` of its QM9 criterion, `graph_prediction_qm9` in
/// `criterions/graph_prediction.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TmReadout {
    /// The head on the graph token (`cls`; the original's default and its PCQM4Mv2
    /// criterion).
    #[default]
    Cls,
    /// The head on every atom token, averaged over the molecule's atoms. The original's
    /// `mean` divides by the batch's padded atom count instead, so its prediction for a
    /// molecule depends on the longest molecule of its batch; ours does not (a trained
    /// run predicts the same in any batch), see docs/TRANSFORMER_M.md.
    Mean,
    /// The head on every atom token, summed over the molecule's atoms (`sum`).
    Sum,
}

impl TmReadout {
    /// The module constant that stores it (Burn modules hold plain numbers).
    pub fn code(self) -> usize {
        self as usize
    }

    /// Its `--readout` spelling (`cls`, `mean`, `sum`).
    pub fn flag(self) -> &'static str {
        match self {
            TmReadout::Cls => "cls",
            TmReadout::Mean => "mean",
            TmReadout::Sum => "sum",
        }
    }

    /// The readout a [`TmReadout::code`] stands for (`Sum` past the end).
    pub fn from_code(code: usize) -> Self {
        match code {
            0 => TmReadout::Cls,
            1 => TmReadout::Mean,
            _ => TmReadout::Sum,
        }
    }
}

/// Configuration of [`TransformerM`]; [`TransformerMConfig::base`] is the original's
/// `transformer_m_base` architecture.
#[derive(Config, Debug)]
pub struct TransformerMConfig {
    /// Encoder layers.
    pub num_layers: usize,
    /// d_model.
    pub d_model: usize,
    /// FFN hidden size.
    pub ffn_dim: usize,
    /// Attention heads H.
    pub num_heads: usize,
    /// Gaussian kernels K of the 3D channel.
    pub num_kernels: usize,
    /// Regression outputs.
    #[config(default = 1)]
    pub num_targets: usize,
    /// Degree / SPD / hop limits (table sizes follow).
    #[config(default = "EncodingLimits::default()")]
    pub limits: EncodingLimits,
    /// Pairs at least this many bonds apart, and pairs in different fragments, do not
    /// attend to each other (the original collator's `spatial_pos_max`, 20). Either at most
    /// `limits.max_distance` (SPDs above it share one index, which must be masked), or at
    /// least `max_distance + 2`: then no pair is masked and pairs in different fragments
    /// attend through the spatial table's last (unreachable) row, as the original's
    /// PCQM4Mv2 setting does (`spatial_pos_max` 1024; with `max_distance` 509 the table
    /// has the original's 512 rows and its row 511 is the unreachable one).
    #[config(default = 20)]
    pub spatial_pos_max: usize,
    /// LayerNorm placement.
    #[config(default = "LayerNormPlacement::Post")]
    pub layer_norm: LayerNormPlacement,
    /// Initialisation of the Gaussian layer.
    #[config(default = "GaussianInit::Original")]
    pub gaussian_init: GaussianInit,
    /// Dropout on embeddings, attention output and FFN output.
    #[config(default = 0.0)]
    pub dropout: f64,
    /// Dropout on attention weights.
    #[config(default = 0.1)]
    pub attention_dropout: f64,
    /// Dropout after the FFN activation.
    #[config(default = 0.1)]
    pub activation_dropout: f64,
    /// DropPath (stochastic depth) of the encoder: layer `i` of `L` drops its residual
    /// branches' token positions with probability `droppath * i / (L - 1)` in training
    /// (the original's `--droppath-prob`, `torch.linspace(0, p, L)`; 0.1 in its
    /// PCQM4Mv2 pretraining, 0 in its QM9 fine-tuning). Where positive it replaces that
    /// layer's residual `dropout`, as the original does.
    #[config(default = 0.0)]
    pub droppath: f64,
    /// Build the 3D position-denoising head.
    #[config(default = true)]
    pub denoising_head: bool,
    /// How the regression head reads the encoder ([`TmReadout`]; `cls` is the graph
    /// token, as every run before this setting existed).
    #[config(default = "TmReadout::Cls")]
    pub readout: TmReadout,
}

impl TransformerMConfig {
    /// The original's base model: 12 layers, d 768, FFN 768, 32 heads, K 128.
    pub fn base() -> Self {
        Self::new(12, 768, 768, 32, 128)
    }

    /// The original collator's `spatial_pos_max` as its `--spatial-pos-max` flag means it
    /// (`data/collator.py`: a pair is masked where its SPD `>= spatial_pos_max`, on the raw
    /// SPD of `wrapper.py`, whose `floyd_warshall` gives 510 to pairs in different
    /// fragments; the embedding row is SPD + 1, so those pairs read row 511), on this
    /// configuration's tables:
    /// - `1..=509`: pairs `n`+ bonds apart and fragments masked; the SPD table grows to at
    ///   least `n` distances (`limits.max_distance = max(max_distance, n)`), so every
    ///   unmasked SPD has its own row, as in the original's 512-row table;
    /// - `511` and above (the original's PCQM4Mv2 setting is 1024): nothing masked, the
    ///   original's 512-row table (`max_distance` 509), fragments attend through its row
    ///   511.
    ///
    /// # Errors
    /// 0; 510, which masks only pairs in different fragments (and paths of 510+ bonds):
    /// 509 masks the same pairs in any molecule whose paths are shorter than 509 bonds,
    /// which every molecule the featurizer accepts is. The message names the value.
    pub fn with_original_spatial_pos_max(self, n: usize) -> Result<Self, String> {
        let mut limits = self.limits;
        match n {
            1..=509 => limits.max_distance = limits.max_distance.max(n),
            511.. => limits.max_distance = 509,
            _ => {
                return Err(format!(
                    "spatial_pos_max {n}: give 1 to 509 (pairs that many bonds apart and \
                     fragments masked; 509 for fragments only) or 511 and above (nothing \
                     masked; the original's PCQM4Mv2 setting is 1024)"
                ));
            }
        }
        Ok(self.with_limits(limits).with_spatial_pos_max(n))
    }

    /// A small model for CPU training: 4 layers, d 128, FFN 128, 8 heads, K 32.
    pub fn small() -> Self {
        Self::new(4, 128, 128, 8, 32)
    }

    /// Builds the model on `device` with the original's `apply_init`: every linear and
    /// embedding weight (attention projections, Gaussian means, stds and affine tables
    /// unless [`GaussianInit::Uniform`], graph token, virtual distance, per-hop edge
    /// weights included) from N(0, 0.02), biases 0, LayerNorms 1 and 0. The degree table stands for the original's sum of
    /// an in-degree and an out-degree table, so it is drawn with std 0.02 * sqrt(2).
    ///
    /// # Panics
    /// If `d_model` is not divisible by `num_heads`, `spatial_pos_max` is `max_distance +
    /// 1` (neither setting of [`TransformerMConfig::spatial_pos_max`]), or `droppath` is
    /// outside `[0, 1)` (configuration errors).
    pub fn init(&self, device: &Device) -> TransformerM {
        let unreachable = self.limits.spatial_rows() - 1;
        assert!(
            self.spatial_pos_max <= self.limits.max_distance || self.spatial_pos_max >= unreachable,
            "spatial_pos_max {} needs max_distance >= {} (masking far pairs), or at least \
             {unreachable} (max_distance + 2: nothing masked, fragments attend)",
            self.spatial_pos_max,
            self.spatial_pos_max
        );
        assert!(
            (0.0..1.0).contains(&self.droppath),
            "droppath {} outside [0, 1)",
            self.droppath
        );
        let (d, h, k) = (self.d_model, self.num_heads, self.num_kernels);
        let pre_ln = self.layer_norm == LayerNormPlacement::Pre;
        let layer = EncoderLayerConfig::new(d, self.ffn_dim, h, pre_ln)
            .with_dropout(self.dropout)
            .with_attention_dropout(self.attention_dropout)
            .with_activation_dropout(self.activation_dropout);
        let drop_paths = attn_core::drop_path::layer_probs(self.droppath, self.num_layers);
        TransformerM {
            atom_encoder: AtomEncoderConfig::new(d, self.limits.degree_rows()).init(device),
            bias_encoder: BiasEncoderConfig::new(
                h,
                self.limits.spatial_rows(),
                self.limits.max_hops,
            )
            .init(device),
            gaussian: GaussianLayerConfig::new(k)
                .with_init(self.gaussian_init)
                .init(device),
            pair_bias_3d: PairBias3dConfig::new(k, h).init(device),
            atom_proj_3d: init::normal_linear(k, d, device),
            emb_layer_norm: (!pre_ln).then(|| init::layer_norm(d, device)),
            embedding_dropout: DropoutConfig::new(self.dropout).init(),
            layers: drop_paths
                .iter()
                .map(|&p| layer.clone().with_drop_path(p).init(device))
                .collect(),
            final_layer_norm: pre_ln.then(|| init::layer_norm(d, device)),
            head: RegressionHeadConfig::new(d, self.num_targets).init(device),
            denoise_head: self
                .denoising_head
                .then(|| DenoisingHeadConfig::new(d, h).init(device)),
            num_heads: h,
            spatial_pos_max: self.spatial_pos_max,
            readout: self.readout.code(),
        }
    }
}
