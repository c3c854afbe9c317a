//! Configuration, presets and initialisation of [`TransformerM`].

use attn_core::BiasedMultiHeadAttentionConfig;
use burn::module::Param;
use burn::nn::{
    DropoutConfig, Embedding, EmbeddingConfig, Initializer, LayerNormConfig, Linear, LinearConfig,
};
use burn::prelude::*;
use mol_featurize::EncodingLimits;
use mol_featurize::graphormer::{ATOM_TABLE_ROWS, ATOM_TYPES, BOND_TABLE_ROWS};
use serde::{Deserialize, Serialize};

use super::encoder::EncoderLayer;
use super::encodings::{AtomEncoder, BiasEncoder};
use super::gaussian::{GaussianLayer, PairBias3d};
use super::heads::{DenoisingHead, RegressionHead};
use super::model::TransformerM;
use super::{DENOISING_ATTENTION_DROPOUT, LAYER_NORM_EPS};

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

/// How the Gaussian layer of the 3D channel starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GaussianInit {
    /// The original's `apply_init`: means, stds and the affine rows from N(0, 0.02), so
    /// `gamma d + beta` starts near 0 for every distance and the kernels are 0.01-0.05 A
    /// wide (the 3D channel must learn its gains first).
    #[default]
    Original,
    /// The Gaussian layer's own initialisation, which `apply_init` overwrites in the
    /// original: means and stds U(0, 3), gain rows 1 (so `gamma` = 2), offset rows 0.
    Uniform,
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
    /// attend to each other (the original collator's `spatial_pos_max`, 20). Must not
    /// exceed `limits.max_distance` (SPDs above it share one index, which must be masked).
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
    /// Build the 3D position-denoising head.
    #[config(default = true)]
    pub denoising_head: bool,
}

impl TransformerMConfig {
    /// The original's base model: 12 layers, d 768, FFN 768, 32 heads, K 128.
    pub fn base() -> Self {
        Self::new(12, 768, 768, 32, 128)
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
    /// If `d_model` is not divisible by `num_heads`, or `spatial_pos_max` exceeds
    /// `limits.max_distance` (configuration errors).
    pub fn init(&self, device: &Device) -> TransformerM {
        assert!(
            self.spatial_pos_max <= self.limits.max_distance,
            "spatial_pos_max {} needs max_distance >= {}",
            self.spatial_pos_max,
            self.spatial_pos_max
        );
        let (d, h, k) = (self.d_model, self.num_heads, self.num_kernels);
        let linear = |i: usize, o: usize| normal_linear(i, o, device);
        let m = self.limits.max_hops;
        let pre_ln = self.layer_norm == LayerNormPlacement::Pre;
        let layer_norm = || {
            LayerNormConfig::new(d)
                .with_epsilon(LAYER_NORM_EPS)
                .init(device)
        };
        // Tables with a padding row in the original (`padding_idx = 0`, zeroed by
        // apply_init and never trained).
        let padded =
            |n: usize, dim: usize, std: f64| zero_row_0(normal_embedding(n, dim, std, device));
        TransformerM {
            atom_encoder: AtomEncoder {
                atom_embedding: padded(ATOM_TABLE_ROWS, d, STD),
                degree_embedding: padded(
                    self.limits.degree_rows(),
                    d,
                    STD * std::f64::consts::SQRT_2,
                ),
                graph_token: normal_param([1, d], device),
            },
            bias_encoder: BiasEncoder {
                spatial_embedding: padded(self.limits.spatial_rows(), h, STD),
                edge_embedding: padded(BOND_TABLE_ROWS, h, STD),
                edge_hop_weight: normal_param([m, h, h], device),
                virtual_distance: normal_param([1, h], device),
            },
            gaussian: GaussianLayer {
                means: gaussian_param(self.gaussian_init, k, device),
                stds: gaussian_param(self.gaussian_init, k, device),
                mul_i: affine_rows(self.gaussian_init, 1.0, device),
                mul_j: affine_rows(self.gaussian_init, 1.0, device),
                bias_i: affine_rows(self.gaussian_init, 0.0, device),
                bias_j: affine_rows(self.gaussian_init, 0.0, device),
            },
            pair_bias_3d: PairBias3d {
                dense: linear(k, k),
                out: linear(k, h),
            },
            atom_proj_3d: linear(k, d),
            emb_layer_norm: (!pre_ln).then(layer_norm),
            embedding_dropout: DropoutConfig::new(self.dropout).init(),
            layers: (0..self.num_layers)
                .map(|_| {
                    let mut self_attn = BiasedMultiHeadAttentionConfig::new(d, h)
                        .with_dropout(self.attention_dropout)
                        .init(device);
                    self_attn.q_proj = linear(d, d);
                    self_attn.k_proj = linear(d, d);
                    self_attn.v_proj = linear(d, d);
                    self_attn.out_proj = linear(d, d);
                    EncoderLayer {
                        self_attn_layer_norm: layer_norm(),
                        self_attn,
                        final_layer_norm: layer_norm(),
                        fc1: linear(d, self.ffn_dim),
                        fc2: linear(self.ffn_dim, d),
                        dropout: DropoutConfig::new(self.dropout).init(),
                        activation_dropout: DropoutConfig::new(self.activation_dropout).init(),
                        pre_ln,
                    }
                })
                .collect(),
            final_layer_norm: pre_ln.then(layer_norm),
            head: RegressionHead {
                dense: linear(d, d),
                layer_norm: layer_norm(),
                out: linear(d, self.num_targets),
            },
            denoise_head: self.denoising_head.then(|| DenoisingHead {
                q_proj: linear(d, d),
                k_proj: linear(d, d),
                v_proj: linear(d, d),
                force_proj1: linear(d, 1),
                force_proj2: linear(d, 1),
                force_proj3: linear(d, 1),
                dropout: DropoutConfig::new(DENOISING_ATTENTION_DROPOUT).init(),
                num_heads: h,
            }),
            num_heads: h,
            spatial_pos_max: self.spatial_pos_max,
        }
    }
}

/// The original's `init_params` standard deviation.
const STD: f64 = 0.02;

/// `Linear(i, o)` with weight N(0, 0.02) and bias 0 (Burn would draw the bias from the
/// weight's initializer).
fn normal_linear(i: usize, o: usize, device: &Device) -> Linear {
    let mut linear = LinearConfig::new(i, o)
        .with_initializer(Initializer::Normal {
            mean: 0.0,
            std: STD,
        })
        .init(device);
    linear.bias = linear
        .bias
        .map(|b| b.map(|t| Tensor::zeros(t.shape(), &t.device())));
    linear
}

fn normal_embedding(n: usize, dim: usize, std: f64, device: &Device) -> Embedding {
    EmbeddingConfig::new(n, dim)
        .with_initializer(Initializer::Normal { mean: 0.0, std })
        .init(device)
}

/// `table` with row 0 set to zeros, as a fresh leaf parameter (no autodiff history
/// from the assignment).
fn zero_row_0(table: Embedding) -> Embedding {
    let w = table.weight.val();
    let [_, dim] = w.dims();
    let zeros = Tensor::zeros([1, dim], &w.device());
    Embedding {
        weight: Param::from_tensor(w.slice_assign([0..1, 0..dim], zeros).detach()),
    }
}

/// Gaussian means or stds `[K]` under `init`.
fn gaussian_param(init: GaussianInit, k: usize, device: &Device) -> Param<Tensor<1>> {
    match init {
        GaussianInit::Original => normal_param([k], device),
        GaussianInit::Uniform => Param::from_tensor(Tensor::random(
            [k],
            burn::tensor::Distribution::Uniform(0.0, 3.0),
            device,
        )),
    }
}

/// An affine table of the Gaussian layer `[ATOM_TYPES, 1]` under `init` (`uniform_value`
/// is the constant of [`GaussianInit::Uniform`]).
fn affine_rows(init: GaussianInit, uniform_value: f64, device: &Device) -> Embedding {
    let initializer = match init {
        GaussianInit::Original => Initializer::Normal {
            mean: 0.0,
            std: STD,
        },
        GaussianInit::Uniform => Initializer::Constant {
            value: uniform_value,
        },
    };
    EmbeddingConfig::new(ATOM_TYPES, 1)
        .with_initializer(initializer)
        .init(device)
}

/// A parameter drawn from N(0, 0.02).
fn normal_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D>> {
    Param::from_tensor(Tensor::random(
        shape,
        burn::tensor::Distribution::Normal(0.0, STD),
        device,
    ))
}
