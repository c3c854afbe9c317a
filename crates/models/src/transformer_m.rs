//! Transformer-M (Luo et al. 2022, "One Transformer Can Understand Both 2D & 3D
//! Molecular Data", arXiv 2210.01765) on Graphormer's encodings (Ying et al. 2021,
//! arXiv 2106.05234). SPEC.md sections 2.2 and 2.3.
//!
//! ```text
//! h_i    = sum_k AtomEmb[x_ik] + m2D * DegreeEmb[deg_i] + m3D * W_3D sum_j psi(i, j)
//! H      = [graph token; h_1 .. h_N]                                   (B, N+1, d)
//! bias   = m2D * (b_SPD(i,j) + edge(i,j)) + m3D * MLP(psi(i,j))       (B, H, N, N)
//!          row 0 / column 0 (graph token): learned virtual distance t_h
//! layer  : H += MHA(LN(H), bias);  H += FFN(LN(H))                  (pre-LN, GELU)
//! y      = Head(LN(H)_0)   (graph token)
//! ```
//!
//! `psi(i, j)_k` is the Gaussian basis of the pair distance (SPEC 2.3), the edge
//! encoding is Graphormer's multi-hop mean of per-hop transformed bond embeddings, and
//! `m2D`, `m3D` are the per-molecule channel switches (2D, 3D or both; [`Mode`]).
//! The position-denoising head ([`DenoisingHead`]) is Transformer-M's `NodeTaskHead`:
//! attention with the 3D bias, each weight times the unit vector
//! `(r_j - r_i)/|r_j - r_i|`, then a projection to one number per axis. The reference
//! uses three separate biased projections (one per axis), which breaks rotation
//! equivariance; SPEC 2.3 asks for an equivariant head, so one bias-free projection
//! is shared by the three axes (tested: the output rotates with the molecule).
//!
//! Where this follows SPEC.md rather than the lsj2408/Transformer-M code (on purpose;
//! parity is against our PyTorch reference of the same choices):
//! - gamma/beta of the Gaussian affine come from one table indexed by the unordered
//!   atom-type pair, initialised to 1 and 0 (the code sums two per-type rows, so its
//!   gamma starts at 2);
//! - the 3D atom feature is added unscaled (the code multiplies it by 0.01);
//! - no LayerNorm on the embeddings before the first layer;
//! - the denoising head attends with the 3D pair bias only (the code passes the full
//!   2D + 3D bias).

use std::f64::consts::PI;
use std::path::Path;

use attn_core::mask::MASKED_LOGIT;
use attn_core::{BiasedMultiHeadAttention, BiasedMultiHeadAttentionConfig};
use burn::module::Param;
use burn::nn::{
    Dropout, DropoutConfig, Embedding, EmbeddingConfig, Initializer, LayerNorm, LayerNormConfig,
    Linear, LinearConfig,
};
use burn::prelude::*;
use burn::store::{ApplyResult, ModuleSnapshot, PyTorchToBurnAdapter, SafetensorsStore};
use burn::tensor::activation::{gelu, softmax};
use mol_featurize::graphormer::{
    ATOM_TABLE_ROWS, ATOM_TYPES, BOND_TABLE_ROWS, EncodingLimits, GraphormerBatchData,
};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::load::LoadError;

/// Epsilon of every LayerNorm (PyTorch's default).
pub const LAYER_NORM_EPS: f64 = 1e-5;
/// Added to `|sigma_k|` in the Gaussian basis (SPEC 2.3).
pub const GAUSSIAN_STD_EPS: f64 = 0.01;
/// Added to pair distances before normalising `r_j - r_i` (Transformer-M `1e-5`).
pub const DELTA_POS_EPS: f64 = 1e-5;

/// Which channels a molecule uses (Transformer-M section 4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Graph structure only (degree, SPD, edge encodings).
    TwoD,
    /// Geometry only (Gaussian pair bias, 3D atom feature).
    ThreeD,
    /// Both channels.
    Both,
}

impl Mode {
    /// `(m2D, m3D)` switches.
    pub fn switches(self) -> (f32, f32) {
        match self {
            Mode::TwoD => (1.0, 0.0),
            Mode::ThreeD => (0.0, 1.0),
            Mode::Both => (1.0, 1.0),
        }
    }

    /// The mode a molecule actually runs in: the requested one, except that a molecule
    /// without coordinates can only use the 2D channel (SPEC 2.3: inference uses what
    /// the input carries).
    pub fn for_input(self, has_3d: bool) -> Mode {
        if has_3d { self } else { Mode::TwoD }
    }

    /// [`Mode::switches`] of each molecule of a batch after [`Mode::for_input`]:
    /// `(use_2d, use_3d)`, each `[B]`.
    ///
    /// # Panics
    /// If `modes` and `has_3d` differ in length.
    pub fn batch_switches(modes: &[Mode], has_3d: &[bool]) -> (Vec<f32>, Vec<f32>) {
        assert_eq!(modes.len(), has_3d.len(), "one mode per molecule");
        modes
            .iter()
            .zip(has_3d)
            .map(|(m, &geometry)| m.for_input(geometry).switches())
            .unzip()
    }
}

/// Probabilities of the training-time modes of a molecule with coordinates (SPEC 2.3;
/// the reference's 0.2 / 0.2 / 0.6 for 2D+3D / 2D / 3D). Molecules without coordinates
/// always use 2D.
#[derive(Config, Debug, PartialEq)]
pub struct ModeProbabilities {
    /// P(2D + 3D).
    #[config(default = 0.2)]
    pub both: f64,
    /// P(2D only).
    #[config(default = 0.2)]
    pub two_d: f64,
    /// P(3D only).
    #[config(default = 0.6)]
    pub three_d: f64,
}

impl ModeProbabilities {
    /// Always the given mode (for 2D-only or 3D-only training runs).
    pub fn fixed(mode: Mode) -> Self {
        let (both, two_d, three_d) = match mode {
            Mode::Both => (1.0, 0.0, 0.0),
            Mode::TwoD => (0.0, 1.0, 0.0),
            Mode::ThreeD => (0.0, 0.0, 1.0),
        };
        Self {
            both,
            two_d,
            three_d,
        }
    }

    /// Draws one mode per molecule; `has_3d[b]` false forces [`Mode::TwoD`].
    pub fn sample(&self, has_3d: &[bool], rng: &mut impl Rng) -> Vec<Mode> {
        let total = self.both + self.two_d + self.three_d;
        has_3d
            .iter()
            .map(|&geometry| {
                if !geometry {
                    return Mode::TwoD;
                }
                let u = rng.random::<f64>() * total;
                if u < self.both {
                    Mode::Both
                } else if u < self.both + self.two_d {
                    Mode::TwoD
                } else {
                    Mode::ThreeD
                }
            })
            .collect()
    }
}

/// Configuration of [`TransformerM`]; [`TransformerMConfig::base`] is the paper's.
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
    /// The paper's base model: 12 layers, d 768, FFN 768, 32 heads, K 128.
    pub fn base() -> Self {
        Self::new(12, 768, 768, 32, 128)
    }

    /// A small model for CPU training: 4 layers, d 128, FFN 128, 8 heads, K 32.
    pub fn small() -> Self {
        Self::new(4, 128, 128, 8, 32)
    }

    /// Builds the model on `device` (Graphormer init: linear and embedding weights
    /// N(0, 0.02), biases 0; attention with DGL's init; Gaussian means and sigmas
    /// U(0, 3), gamma 1, beta 0).
    ///
    /// # Panics
    /// If `d_model` is not divisible by `num_heads`.
    pub fn init(&self, device: &Device) -> TransformerM {
        let (d, h, k) = (self.d_model, self.num_heads, self.num_kernels);
        let normal = Initializer::Normal {
            mean: 0.0,
            std: 0.02,
        };
        let linear = |i: usize, o: usize| {
            LinearConfig::new(i, o)
                .with_initializer(normal.clone())
                .init(device)
        };
        let embedding = |n: usize, dim: usize| {
            EmbeddingConfig::new(n, dim)
                .with_initializer(normal.clone())
                .init(device)
        };
        let m = self.limits.max_hops;
        let pairs = ATOM_TYPES * ATOM_TYPES;
        TransformerM {
            atom_encoder: AtomEncoder {
                atom_embedding: embedding(ATOM_TABLE_ROWS, d),
                degree_embedding: embedding(self.limits.degree_rows(), d),
                graph_token: normal_param([1, d], device),
            },
            bias_encoder: BiasEncoder {
                spatial_embedding: embedding(self.limits.spatial_rows(), h),
                edge_embedding: embedding(BOND_TABLE_ROWS, h),
                edge_hop_weight: normal_param([m, h, h], device),
                virtual_distance: normal_param([1, h], device),
            },
            gaussian: GaussianLayer {
                means: Param::from_tensor(Tensor::random(
                    [k],
                    burn::tensor::Distribution::Uniform(0.0, 3.0),
                    device,
                )),
                stds: Param::from_tensor(Tensor::random(
                    [k],
                    burn::tensor::Distribution::Uniform(0.0, 3.0),
                    device,
                )),
                mul: EmbeddingConfig::new(pairs, 1)
                    .with_initializer(Initializer::Constant { value: 1.0 })
                    .init(device),
                bias: EmbeddingConfig::new(pairs, 1)
                    .with_initializer(Initializer::Zeros)
                    .init(device),
            },
            pair_bias_3d: PairBias3d {
                dense: linear(k, k),
                out: linear(k, h),
            },
            atom_proj_3d: linear(k, d),
            embedding_dropout: DropoutConfig::new(self.dropout).init(),
            layers: (0..self.num_layers)
                .map(|_| EncoderLayer {
                    self_attn_layer_norm: LayerNormConfig::new(d)
                        .with_epsilon(LAYER_NORM_EPS)
                        .init(device),
                    self_attn: BiasedMultiHeadAttentionConfig::new(d, h)
                        .with_dropout(self.attention_dropout)
                        .init(device),
                    final_layer_norm: LayerNormConfig::new(d)
                        .with_epsilon(LAYER_NORM_EPS)
                        .init(device),
                    fc1: linear(d, self.ffn_dim),
                    fc2: linear(self.ffn_dim, d),
                    dropout: DropoutConfig::new(self.dropout).init(),
                    activation_dropout: DropoutConfig::new(self.activation_dropout).init(),
                })
                .collect(),
            final_layer_norm: LayerNormConfig::new(d)
                .with_epsilon(LAYER_NORM_EPS)
                .init(device),
            head: RegressionHead {
                dense: linear(d, d),
                layer_norm: LayerNormConfig::new(d)
                    .with_epsilon(LAYER_NORM_EPS)
                    .init(device),
                out: linear(d, self.num_targets),
            },
            denoise_head: self.denoising_head.then(|| DenoisingHead {
                q_proj: linear(d, d),
                k_proj: linear(d, d),
                v_proj: linear(d, d),
                force_proj: LinearConfig::new(d, 1)
                    .with_bias(false)
                    .with_initializer(normal.clone())
                    .init(device),
                num_heads: h,
            }),
            num_heads: h,
        }
    }
}

/// A parameter drawn from N(0, 0.02) (Graphormer's init).
fn normal_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D>> {
    Param::from_tensor(Tensor::random(
        shape,
        burn::tensor::Distribution::Normal(0.0, 0.02),
        device,
    ))
}

/// Atom features: OGB category embeddings (summed), degree embedding, graph token.
#[derive(Module, Debug)]
pub struct AtomEncoder {
    /// One table for all nine OGB atom features (`[ATOM_TABLE_ROWS, d]`, row 0 padding).
    pub atom_embedding: Embedding,
    /// Degree (centrality) encoding `[max_degree + 2, d]`.
    pub degree_embedding: Embedding,
    /// The graph token `[1, d]`.
    pub graph_token: Param<Tensor<2>>,
}

/// Graphormer's 2D attention biases: spatial (SPD) and multi-hop edge encodings, and
/// the graph token's virtual distance.
#[derive(Module, Debug)]
pub struct BiasEncoder {
    /// `b_SPD`: `[max_distance + 3, H]` (row 0 padding, last row unreachable).
    pub spatial_embedding: Embedding,
    /// Bond feature embedding `[BOND_TABLE_ROWS, H]` (row 0 = no bond).
    pub edge_embedding: Embedding,
    /// Per-hop `H x H` transform of the edge encoding, `[max_hops, H, H]`.
    pub edge_hop_weight: Param<Tensor<3>>,
    /// Graph token distance `t_h`, `[1, H]`.
    pub virtual_distance: Param<Tensor<2>>,
}

/// Gaussian basis functions of pair distances with an atom-pair affine transform
/// (SPEC 2.3; Transformer-M `GaussianLayer`).
#[derive(Module, Debug)]
pub struct GaussianLayer {
    /// mu_k, `[K]`.
    pub means: Param<Tensor<1>>,
    /// sigma_k, `[K]` (used as `|sigma_k| + 0.01`).
    pub stds: Param<Tensor<1>>,
    /// gamma per unordered atom-type pair, `[ATOM_TYPES^2, 1]`.
    pub mul: Embedding,
    /// beta per unordered atom-type pair, `[ATOM_TYPES^2, 1]`.
    pub bias: Embedding,
}

impl GaussianLayer {
    /// `psi[b, i, j, k] = exp(-((gamma d + beta - mu_k)/s_k)^2 / 2) / (sqrt(2 pi) s_k)`.
    ///
    /// - `distances`: `[B, N, N]` in Angstrom.
    /// - `pair_type`: `[B, N, N]` rows of `mul`/`bias`.
    ///
    /// Returns `[B, N, N, K]`.
    pub fn forward(&self, distances: Tensor<3>, pair_type: Tensor<3, Int>) -> Tensor<4> {
        let [b, n, _] = distances.dims();
        let k = self.means.dims()[0];
        let flat = pair_type.reshape([b, n * n]);
        let gamma = self.mul.forward(flat.clone()).reshape([b, n, n, 1]);
        let beta = self.bias.forward(flat).reshape([b, n, n, 1]);
        let x = gamma * distances.reshape([b, n, n, 1]) + beta;
        let mean = self.means.val().reshape([1, 1, 1, k]);
        let std = self
            .stds
            .val()
            .abs()
            .add_scalar(GAUSSIAN_STD_EPS)
            .reshape([1, 1, 1, k]);
        let z = (x - mean) / std.clone();
        z.powi_scalar(2)
            .mul_scalar(-0.5)
            .exp()
            .div(std.mul_scalar((2.0 * PI).sqrt()))
    }
}

/// `Linear(K, K) -> GELU -> Linear(K, H)`: the per-head 3D pair bias.
#[derive(Module, Debug)]
pub struct PairBias3d {
    /// First layer.
    pub dense: Linear,
    /// Output layer.
    pub out: Linear,
}

/// One pre-LN encoder layer: `x += MHA(LN(x), bias)`, `x += FFN(LN(x))`, GELU.
#[derive(Module, Debug)]
pub struct EncoderLayer {
    /// LN before attention.
    pub self_attn_layer_norm: LayerNorm,
    /// Biased attention.
    pub self_attn: BiasedMultiHeadAttention,
    /// LN before the FFN.
    pub final_layer_norm: LayerNorm,
    /// FFN in.
    pub fc1: Linear,
    /// FFN out.
    pub fc2: Linear,
    /// Dropout on both residual branches.
    pub dropout: Dropout,
    /// Dropout after GELU.
    pub activation_dropout: Dropout,
}

impl EncoderLayer {
    /// `x`: `[B, T, d]`; `attn_bias`: `[B, H, T, T]`; `attn_mask`: `[B, T, T]`
    /// (`true` = masked). Returns `[B, T, d]`.
    pub fn forward(
        &self,
        x: Tensor<3>,
        attn_bias: Tensor<4>,
        attn_mask: Tensor<3, Bool>,
    ) -> Tensor<3> {
        if x.device().is_autodiff() {
            return self.forward_with_weights(x, attn_bias, attn_mask).0;
        }
        // Inference: Burn's fused attention kernel (same math, no dropout; the graph
        // token keeps every query row unmasked).
        let h = self.self_attn.forward_heads_first_fused(
            self.self_attn_layer_norm.forward(x.clone()),
            Some(attn_bias),
            Some(attn_mask),
        );
        let x = x + h;
        let h = gelu(self.fc1.forward(self.final_layer_norm.forward(x.clone())));
        x + self.fc2.forward(h)
    }

    /// [`EncoderLayer::forward`], also returning the attention weights `[B, H, T, T]`
    /// the layer applied.
    pub fn forward_with_weights(
        &self,
        x: Tensor<3>,
        attn_bias: Tensor<4>,
        attn_mask: Tensor<3, Bool>,
    ) -> (Tensor<3>, Tensor<4>) {
        let (h, weights) = self.self_attn.forward_heads_first_with_weights(
            self.self_attn_layer_norm.forward(x.clone()),
            Some(attn_bias),
            Some(attn_mask),
        );
        let x = x + self.dropout.forward(h);
        let h = gelu(self.fc1.forward(self.final_layer_norm.forward(x.clone())));
        let h = self.fc2.forward(self.activation_dropout.forward(h));
        (x + self.dropout.forward(h), weights)
    }
}

/// Graph-level regression head on the graph token: `Linear -> GELU -> LN -> Linear`.
#[derive(Module, Debug)]
pub struct RegressionHead {
    /// Transform.
    pub dense: Linear,
    /// LN after GELU.
    pub layer_norm: LayerNorm,
    /// Output, `d -> num_targets`.
    pub out: Linear,
}

/// Transformer-M's position-denoising head (`NodeTaskHead`), made exactly
/// rotation-equivariant by one shared bias-free output projection.
#[derive(Module, Debug)]
pub struct DenoisingHead {
    /// W_q.
    pub q_proj: Linear,
    /// W_k.
    pub k_proj: Linear,
    /// W_v.
    pub v_proj: Linear,
    /// Output projection shared by the three components, without bias (so the head is
    /// exactly rotation-equivariant; the reference's three biased projections are not).
    pub force_proj: Linear,
    /// H.
    pub num_heads: usize,
}

impl DenoisingHead {
    /// Predicted noise per atom, `[B, N, 3]` (Angstrom direction; the loss is cosine).
    ///
    /// - `atoms`: `[B, N, d]` encoder output without the graph token.
    /// - `bias_3d`: `[B, H, N, N]` 3D pair bias (padded keys already masked).
    /// - `delta_pos`: `[B, N, N, 3]` unit vectors `(r_j - r_i) / (|r_j - r_i| + 1e-5)`.
    pub fn forward(&self, atoms: Tensor<3>, bias_3d: Tensor<4>, delta_pos: Tensor<4>) -> Tensor<3> {
        let [b, n, d] = atoms.dims();
        let h = self.num_heads;
        let dk = d / h;
        let heads = |t: Tensor<3>| t.reshape([b, n, h, dk]).swap_dims(1, 2);
        let q = heads(self.q_proj.forward(atoms.clone())).mul_scalar((dk as f64).powf(-0.5));
        let k = heads(self.k_proj.forward(atoms.clone()));
        let v = heads(self.v_proj.forward(atoms));
        let probs = softmax(q.matmul(k.swap_dims(2, 3)) + bias_3d, 3); // [B,H,N,N]
        // [B, H, 3, N, N]: weights times each component of the unit vectors.
        let rot = probs.reshape([b, h, 1, n, n])
            * delta_pos.permute([0, 3, 1, 2]).reshape([b, 1, 3, n, n]);
        let v = v.reshape([b, h, 1, n, dk]).expand([b, h, 3, n, dk]);
        let out = rot
            .reshape([b, h * 3, n, n])
            .matmul(v.reshape([b, h * 3, n, dk]))
            .reshape([b, h, 3, n, dk])
            .permute([0, 3, 2, 1, 4])
            .reshape([b, n, 3, d]);
        self.force_proj.forward(out).reshape([b, n, 3])
    }
}

/// The Transformer-M encoder with a regression head and an optional denoising head.
#[derive(Module, Debug)]
pub struct TransformerM {
    /// Atom features and graph token.
    pub atom_encoder: AtomEncoder,
    /// 2D attention biases.
    pub bias_encoder: BiasEncoder,
    /// Gaussian basis of the 3D channel.
    pub gaussian: GaussianLayer,
    /// 3D pair bias MLP.
    pub pair_bias_3d: PairBias3d,
    /// `Linear(K, d)` of the summed Gaussian features (3D atom feature).
    pub atom_proj_3d: Linear,
    /// Dropout on the input embeddings.
    pub embedding_dropout: Dropout,
    /// Encoder layers.
    pub layers: Vec<EncoderLayer>,
    /// LN after the last layer.
    pub final_layer_norm: LayerNorm,
    /// Graph-level head.
    pub head: RegressionHead,
    /// 3D denoising head (pretraining).
    pub denoise_head: Option<DenoisingHead>,
    /// H.
    pub num_heads: usize,
}

/// Model inputs on a device, built from [`GraphormerBatchData`] (`B` molecules, `N`
/// atoms, `M` hops).
#[derive(Debug, Clone)]
pub struct TransformerMBatch {
    /// `[B, N, 9]` atom table rows.
    pub atom_index: Tensor<3, Int>,
    /// `[B, N]` degree table rows.
    pub degree_index: Tensor<2, Int>,
    /// `[B, N, N]` spatial table rows.
    pub spatial_index: Tensor<3, Int>,
    /// `[B, N, N, M, 3]` bond table rows along each path.
    pub edge_index: Tensor<5, Int>,
    /// `[B, N, N]` divisor of the edge encoding.
    pub path_length: Tensor<3>,
    /// `[B, N, N]` unordered atom-type pair rows of the Gaussian affine.
    pub pair_type: Tensor<3, Int>,
    /// `[B, N, 3]` coordinates (Angstrom).
    pub coordinates: Tensor<3>,
    /// `[B, N]` `true` = padded atom.
    pub padding: Tensor<2, Bool>,
    /// `[B]` 1 where the 2D channel is on.
    pub use_2d: Tensor<1>,
    /// `[B]` 1 where the 3D channel is on.
    pub use_3d: Tensor<1>,
}

impl TransformerMBatch {
    /// Uploads `data` with one requested [`Mode`] per molecule (`modes.len() == B`);
    /// molecules without coordinates run in 2D whatever is requested
    /// ([`Mode::for_input`]), never on zero coordinates.
    ///
    /// # Panics
    /// If `modes` has the wrong length.
    pub fn from_data(data: &GraphormerBatchData, modes: &[Mode], device: &Device) -> Self {
        let (b, n, m) = (data.batch, data.atoms, data.hops);
        assert_eq!(modes.len(), b, "one mode per molecule");
        let int =
            |v: &[i64]| Tensor::<1, Int>::from_data(TensorData::new(v.to_vec(), [v.len()]), device);
        let pair_type = pair_types(data);
        let (s2, s3) = Mode::batch_switches(modes, &data.has_3d);
        Self {
            atom_index: int(&data.atom_index).reshape([b, n, 9]),
            degree_index: int(&data.degree_index).reshape([b, n]),
            spatial_index: int(&data.spatial_index).reshape([b, n, n]),
            edge_index: int(&data.edge_index).reshape([b, n, n, m, 3]),
            path_length: Tensor::from_data(
                TensorData::new(data.path_length.clone(), [b, n, n]),
                device,
            ),
            pair_type: int(&pair_type).reshape([b, n, n]),
            coordinates: Tensor::from_data(
                TensorData::new(data.coordinates.clone(), [b, n, 3]),
                device,
            ),
            padding: Tensor::from_data(TensorData::new(data.padding.clone(), [b, n]), device),
            use_2d: Tensor::from_data(TensorData::new(s2, [b]), device),
            use_3d: Tensor::from_data(TensorData::new(s3, [b]), device),
        }
    }

    /// Molecules `start..end` of the batch (every tensor cut along the batch axis).
    ///
    /// # Panics
    /// If `start > end` or `end` exceeds the batch size.
    pub fn molecules(&self, start: usize, end: usize) -> Self {
        let len = end - start;
        Self {
            atom_index: self.atom_index.clone().narrow(0, start, len),
            degree_index: self.degree_index.clone().narrow(0, start, len),
            spatial_index: self.spatial_index.clone().narrow(0, start, len),
            edge_index: self.edge_index.clone().narrow(0, start, len),
            path_length: self.path_length.clone().narrow(0, start, len),
            pair_type: self.pair_type.clone().narrow(0, start, len),
            coordinates: self.coordinates.clone().narrow(0, start, len),
            padding: self.padding.clone().narrow(0, start, len),
            use_2d: self.use_2d.clone().narrow(0, start, len),
            use_3d: self.use_3d.clone().narrow(0, start, len),
        }
    }

    /// The same inputs with coordinates replaced (denoising: noisy positions).
    pub fn with_coordinates(mut self, coordinates: Tensor<3>) -> Self {
        self.coordinates = coordinates;
        self
    }
}

/// The encoder's inputs, from [`TransformerM::embed`].
#[derive(Debug, Clone)]
pub struct Embedded {
    /// `[B, N + 1, d]` token states, graph token first.
    pub states: Tensor<3>,
    /// `[B, H, N + 1, N + 1]` attention bias.
    pub attn_bias: Tensor<4>,
    /// `[B, N + 1, N + 1]` `true` = padded key.
    pub attn_mask: Tensor<3, Bool>,
    /// `[B, H, N, N]` 3D pair bias, padded keys masked.
    pub bias_3d: Tensor<4>,
    /// `[B, N, N, 3]` unit vectors between atoms.
    pub delta_pos: Tensor<4>,
}

/// `[B, N, N]` rows of the Gaussian layer's affine tables: the unordered pair of atom
/// types, `min(t_i, t_j) * ATOM_TYPES + max(t_i, t_j)` (0 pairs padding with padding).
pub fn pair_types(data: &GraphormerBatchData) -> Vec<i64> {
    let (b, n) = (data.batch, data.atoms);
    let mut pair_type = vec![0i64; b * n * n];
    for g in 0..b {
        for i in 0..n {
            for j in 0..n {
                let (ti, tj) = (data.atom_type[g * n + i], data.atom_type[g * n + j]);
                pair_type[(g * n + i) * n + j] = ti.min(tj) * ATOM_TYPES as i64 + ti.max(tj);
            }
        }
    }
    pair_type
}

/// What the encoder returns.
#[derive(Debug, Clone)]
pub struct EncoderOutput {
    /// `[B, N + 1, d]` final states (index 0 = graph token), after the final LN.
    pub states: Tensor<3>,
    /// `[B, H, N, N]` 3D pair bias with padded keys masked (for the denoising head).
    pub bias_3d: Tensor<4>,
    /// `[B, N, N, 3]` unit vectors between atoms.
    pub delta_pos: Tensor<4>,
}

impl TransformerM {
    /// Pairwise distances `[B, N, N]` (Angstrom) and unit vectors `[B, N, N, 3]`.
    pub fn geometry(coordinates: Tensor<3>) -> (Tensor<3>, Tensor<4>) {
        let [b, n, _] = coordinates.dims();
        let delta = coordinates.clone().reshape([b, 1, n, 3]) - coordinates.reshape([b, n, 1, 3]);
        // sqrt(x + tiny) keeps the gradient of |0| finite on the diagonal.
        let dist = delta
            .clone()
            .powi_scalar(2)
            .sum_dim(3)
            .add_scalar(1e-12)
            .sqrt()
            .reshape([b, n, n]);
        let unit = delta / dist.clone().add_scalar(DELTA_POS_EPS).reshape([b, n, n, 1]);
        (dist, unit)
    }

    /// Atom features `[B, N, d]` (before the graph token): OGB embeddings summed, plus
    /// the degree encoding where the 2D channel is on.
    pub fn atom_features(&self, batch: &TransformerMBatch) -> Tensor<3> {
        let [b, n, _] = batch.atom_index.dims();
        let e = &self.atom_encoder;
        let atoms = e
            .atom_embedding
            .forward(batch.atom_index.clone().reshape([b, n * 9]));
        let d = atoms.dims()[2];
        let atoms = atoms.reshape([b, n, 9, d]).sum_dim(2).reshape([b, n, d]);
        let degree = e.degree_embedding.forward(batch.degree_index.clone());
        atoms + degree * batch.use_2d.clone().reshape([b, 1, 1])
    }

    /// Graphormer's spatial encoding `[B, H, N, N]`: `b_SPD(i, j)` per head.
    pub fn spatial_bias(&self, batch: &TransformerMBatch) -> Tensor<4> {
        let [b, n, _] = batch.spatial_index.dims();
        self.bias_encoder
            .spatial_embedding
            .forward(batch.spatial_index.clone().reshape([b, n * n]))
            .reshape([b, n, n, self.num_heads])
            .permute([0, 3, 1, 2])
    }

    /// Graphormer's multi-hop edge encoding `[B, H, N, N]`: the mean over each hop's
    /// three bond-feature embeddings, times the hop's `H x H` weight, summed over hops
    /// and divided by `clamp(SPD, 1, M)`. Hops past the path's end contribute 0.
    pub fn edge_bias(&self, batch: &TransformerMBatch) -> Tensor<4> {
        let [b, n, _, m, _] = batch.edge_index.dims();
        let e = &self.bias_encoder;
        let h = self.num_heads;
        let rows = b * n * n;
        let index = batch.edge_index.clone().reshape([b, n * n * m * 3]);
        let present = index
            .clone()
            .not_equal_elem(0)
            .float()
            .reshape([b, n * n * m * 3, 1]);
        let hop = (e.edge_embedding.forward(index) * present)
            .reshape([rows, m, 3, h])
            .mean_dim(2)
            .reshape([rows, m, h])
            .swap_dims(0, 1); // [M, rows, H]
        let edge = hop
            .matmul(e.edge_hop_weight.val())
            .sum_dim(0)
            .reshape([b, n, n, h])
            / batch.path_length.clone().reshape([b, n, n, 1]);
        edge.permute([0, 3, 1, 2])
    }

    /// The 3D channel: Gaussian features `[B, N, N, K]` (zero for padded pairs), the
    /// pair bias `[B, H, N, N]` and the unit vectors.
    pub fn channel_3d(&self, batch: &TransformerMBatch) -> (Tensor<4>, Tensor<4>, Tensor<4>) {
        let [b, n] = batch.padding.dims();
        let (dist, unit) = Self::geometry(batch.coordinates.clone());
        let psi = self.gaussian.forward(dist, batch.pair_type.clone());
        let k = psi.dims()[3];
        let pad_pair = batch
            .padding
            .clone()
            .reshape([b, 1, n])
            .expand([b, n, n])
            .bool_or(batch.padding.clone().reshape([b, n, 1]).expand([b, n, n]));
        let psi = psi.mask_fill(pad_pair.reshape([b, n, n, 1]).expand([b, n, n, k]), 0.0);
        let bias = self
            .pair_bias_3d
            .out
            .forward(gelu(self.pair_bias_3d.dense.forward(psi.clone())))
            .permute([0, 3, 1, 2]);
        (psi, bias, unit)
    }

    /// The encoder's inputs: token states `[B, N + 1, d]` (graph token first), the full
    /// attention bias `[B, H, N + 1, N + 1]`, the key padding mask `[B, N + 1, N + 1]`,
    /// and the 3D bias / unit vectors for the denoising head.
    pub fn embed(&self, batch: &TransformerMBatch) -> Embedded {
        let [b, n] = batch.padding.dims();
        let h = self.num_heads;
        let s2 = batch.use_2d.clone().reshape([b, 1, 1, 1]);
        let s3 = batch.use_3d.clone().reshape([b, 1, 1, 1]);
        let (psi, bias_3d, delta_pos) = self.channel_3d(batch);
        let k = psi.dims()[3];
        let atom_3d = self.atom_proj_3d.forward(psi.sum_dim(2).reshape([b, n, k]));
        let atoms = self.atom_features(batch) + atom_3d * s3.clone().reshape([b, 1, 1]);
        let d = atoms.dims()[2];
        let token = self
            .atom_encoder
            .graph_token
            .val()
            .reshape([1, 1, d])
            .expand([b, 1, d]);
        let states = self
            .embedding_dropout
            .forward(Tensor::cat(vec![token, atoms], 1));

        let inner = (self.spatial_bias(batch) + self.edge_bias(batch)) * s2 + bias_3d.clone() * s3;
        let t = self
            .bias_encoder
            .virtual_distance
            .val()
            .reshape([1, h, 1, 1]);
        let column = t.clone().expand([b, h, n, 1]);
        let row = t.expand([b, h, 1, n + 1]);
        let attn_bias = Tensor::cat(vec![row, Tensor::cat(vec![column, inner], 3)], 2);

        let token_padding =
            Tensor::<2, Bool>::from_data(TensorData::new(vec![false; b], [b, 1]), &states.device());
        let key_padding = Tensor::cat(vec![token_padding, batch.padding.clone()], 1);
        let attn_mask = key_padding.reshape([b, 1, n + 1]).expand([b, n + 1, n + 1]);
        let key_mask_3d = batch
            .padding
            .clone()
            .reshape([b, 1, 1, n])
            .expand([b, h, n, n]);
        Embedded {
            states,
            attn_bias,
            attn_mask,
            bias_3d: bias_3d.mask_fill(key_mask_3d, MASKED_LOGIT),
            delta_pos,
        }
    }

    /// Runs the encoder.
    pub fn encode(&self, batch: &TransformerMBatch) -> EncoderOutput {
        let e = self.embed(batch);
        let mut x = e.states;
        for layer in &self.layers {
            x = layer.forward(x, e.attn_bias.clone(), e.attn_mask.clone());
        }
        EncoderOutput {
            states: self.final_layer_norm.forward(x),
            bias_3d: e.bias_3d,
            delta_pos: e.delta_pos,
        }
    }

    /// The encoder on already embedded inputs ([`TransformerM::embed`]; gradients reach
    /// `embedded.states`), with each layer's attention weights `[B, H, N + 1, N + 1]`
    /// as the layers applied them (index 0 = graph token). The same math as
    /// [`TransformerM::encode`], through the explicit (unfused) attention path.
    pub fn encode_embedded(&self, embedded: Embedded) -> (EncoderOutput, Vec<Tensor<4>>) {
        let e = embedded;
        let mut x = e.states;
        let mut weights = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            let (y, w) = layer.forward_with_weights(x, e.attn_bias.clone(), e.attn_mask.clone());
            x = y;
            weights.push(w);
        }
        let out = EncoderOutput {
            states: self.final_layer_norm.forward(x),
            bias_3d: e.bias_3d,
            delta_pos: e.delta_pos,
        };
        (out, weights)
    }

    /// Graph-level predictions `[B, num_targets]` from an encoder output.
    pub fn predict(&self, out: &EncoderOutput) -> Tensor<2> {
        let [b, _, d] = out.states.dims();
        let token = out.states.clone().slice([0..b, 0..1, 0..d]).reshape([b, d]);
        let h = &self.head;
        h.out
            .forward(h.layer_norm.forward(gelu(h.dense.forward(token))))
    }

    /// `encode` then `predict`: `[B, num_targets]`.
    pub fn forward(&self, batch: &TransformerMBatch) -> Tensor<2> {
        self.predict(&self.encode(batch))
    }

    /// [`forward`](Self::forward) with the batch cut into `parts` contiguous groups of
    /// molecules run at once on rayon's threads; `[B, num_targets]` in the batch's order,
    /// each molecule's values those of `forward` (molecules do not interact).
    ///
    /// For CPU inference, as [`crate::MatModel::forward_parallel`]: Burn's flex backend
    /// runs elementwise ops (the Gaussian basis, GELU) on one thread. Not for training
    /// (burn-autodiff serialises concurrent graphs). `parts` is clamped to `1..=B`.
    pub fn forward_parallel(&self, batch: &TransformerMBatch, parts: usize) -> Tensor<2> {
        crate::parallel::forward_in_parts(batch.padding.dims()[0], parts, |start, end| {
            self.forward(&batch.molecules(start, end))
        })
    }

    /// Predicted coordinate noise `[B, N, 3]`, or `None` without a denoising head.
    pub fn denoise(&self, out: &EncoderOutput) -> Option<Tensor<3>> {
        let head = self.denoise_head.as_ref()?;
        let [b, t, d] = out.states.dims();
        let atoms = out.states.clone().slice([0..b, 1..t, 0..d]);
        Some(head.forward(atoms, out.bias_3d.clone(), out.delta_pos.clone()))
    }

    /// Loads parameters from a `.safetensors` file with PyTorch naming (Linear weights
    /// `[out, in]`, LayerNorm `weight`/`bias`) and this module's paths, as written by
    /// `fixtures/gen/transformer_m_reference.py`.
    ///
    /// # Errors
    /// [`LoadError::Read`] for unreadable files, [`LoadError::Mismatch`] for missing,
    /// unexpected or mis-shaped tensors.
    pub fn load_pytorch_safetensors(mut self, path: &Path) -> Result<Self, LoadError> {
        let shown = path.display().to_string();
        let mut store = SafetensorsStore::from_file(path)
            .with_from_adapter(PyTorchToBurnAdapter)
            .allow_partial(true)
            .validate(false);
        let result: ApplyResult = self.load_from(&mut store).map_err(|e| LoadError::Read {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        let missing = result.missing.iter().map(|(p, _)| p.clone()).collect();
        let unexpected = result.unused.clone();
        LoadError::check(shown, missing, unexpected, &result)?;
        Ok(self)
    }
}

/// Transformer-M's denoising loss: `1 - cos(predicted, true noise)` per real atom,
/// averaged over the atoms of each molecule, then over molecules.
///
/// `predicted`, `noise`: `[B, N, 3]` (Angstrom; only directions matter); `padding`:
/// `[B, N]`, `true` = padded atom (excluded). Returns a scalar `[1]`.
pub fn denoising_loss(
    predicted: Tensor<3>,
    noise: Tensor<3>,
    padding: Tensor<2, Bool>,
) -> Tensor<1> {
    let [b, n, _] = predicted.dims();
    let dot = (predicted.clone() * noise.clone()).sum_dim(2);
    // sqrt(|v|^2 + eps): finite gradient where a vector is exactly 0 (a one-atom
    // molecule's prediction, padded rows).
    let norm = |t: Tensor<3>| t.powi_scalar(2).sum_dim(2).add_scalar(1e-12).sqrt();
    let cos = dot / (norm(predicted) * norm(noise));
    let real = padding.bool_not().float().reshape([b, n, 1]);
    let per_atom = (cos.neg().add_scalar(1.0)) * real.clone();
    let per_mol = per_atom.sum_dim(1).reshape([b]) / real.sum_dim(1).reshape([b]).clamp_min(1.0);
    per_mol.mean()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mol_featurize::graphormer::featurize;
    use mol_featurize::{Molecule, pad_graphormer_batch};
    use rand::SeedableRng;

    fn device() -> Device {
        Device::flex()
    }

    fn tiny() -> TransformerMConfig {
        TransformerMConfig::new(2, 16, 16, 4, 8)
            .with_attention_dropout(0.0)
            .with_activation_dropout(0.0)
    }

    /// Ethanol and acetic acid with made-up (but fixed) coordinates.
    fn molecules() -> Vec<mol_featurize::GraphormerFeatures> {
        let xyz = |n: usize| -> Vec<[f32; 3]> {
            (0..n)
                .map(|i| {
                    let t = i as f32;
                    [1.4 * t, 0.3 * (t * 1.7).sin(), 0.2 * t * t - 0.5]
                })
                .collect()
        };
        ["CCO", "CC(=O)O"]
            .iter()
            .map(|s| {
                let mol = Molecule::from_smiles(s).unwrap();
                let n = mol.num_atoms();
                featurize(&mol, 5, Some(xyz(n))).unwrap()
            })
            .collect()
    }

    fn batch(feats: &[&mol_featurize::GraphormerFeatures], mode: Mode) -> TransformerMBatch {
        let data = pad_graphormer_batch(feats, &EncodingLimits::default()).unwrap();
        TransformerMBatch::from_data(&data, &vec![mode; feats.len()], &device())
    }

    fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
        t.try_into_vec_as::<f32>().unwrap()
    }

    #[test]
    fn forward_parallel_gives_each_molecule_the_values_of_forward() {
        let model = tiny().init(&device());
        let feats = molecules();
        // 4 molecules (2 distinct, twice): groups of 1, 2, 3 (uneven) and more than B.
        let all = [&feats[0], &feats[1], &feats[1], &feats[0]];
        let b = batch(&all, Mode::Both);
        let want = values(model.forward(&b));
        assert_eq!(want.len(), 4);
        for parts in [1, 2, 3, 4, 9] {
            let got = values(model.forward_parallel(&b, parts));
            assert_eq!(got.len(), want.len(), "parts {parts}");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-5,
                    "parts {parts}, molecule {i}: {g} vs {w}"
                );
            }
        }
    }

    /// Rotation about a skew axis plus a translation.
    fn moved(xyz: &[[f32; 3]]) -> Vec<[f32; 3]> {
        let (c, s) = (0.6f32, 0.8f32);
        xyz.iter()
            .map(|p| {
                let (x, y, z) = (p[0], p[1], p[2]);
                // Rz then Rx.
                let (x1, y1) = (c * x - s * y, s * x + c * y);
                let (y2, z2) = (c * y1 - s * z, s * y1 + c * z);
                [x1 + 3.0, y2 - 1.0, z2 + 0.5]
            })
            .collect()
    }

    /// The fused inference path of the encoder layers (Burn's attention kernel) and the
    /// explicit path that returns the attention weights give the same states, padded
    /// atoms included; the weights are softmax rows over the real keys.
    #[test]
    fn fused_and_explicit_attention_agree() {
        let dev = device();
        let model = tiny().init(&dev);
        let feats = molecules();
        let refs: Vec<_> = feats.iter().collect();
        let b = batch(&refs, Mode::Both);
        let fused = values(model.encode(&b).states);
        let (explicit, weights) = model.encode_embedded(model.embed(&b));
        let explicit = values(explicit.states);
        let worst = fused
            .iter()
            .zip(&explicit)
            .map(|(a, e)| (a - e).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-5, "max difference {worst}");
        assert_eq!(weights.len(), 2);
        let [bs, h, t, _] = weights[0].dims();
        let w = values(weights[0].clone());
        let padding: Vec<bool> = b.padding.clone().into_data().try_to_vec::<bool>().unwrap();
        let n = t - 1;
        for g in 0..bs {
            for row in w[g * h * t * t..(g + 1) * h * t * t].chunks(t) {
                assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
                for j in 0..n {
                    if padding[g * n + j] {
                        assert!(row[j + 1] < 1e-6, "padded key attended");
                    }
                }
            }
        }
    }

    #[test]
    fn padding_does_not_change_a_molecules_prediction() {
        let dev = device();
        dev.seed(11);
        let model = tiny().init(&dev);
        let mols = molecules();
        for mode in [Mode::TwoD, Mode::ThreeD, Mode::Both] {
            let alone = values(model.forward(&batch(&[&mols[0]], mode)));
            let padded = values(model.forward(&batch(&[&mols[0], &mols[1]], mode)));
            assert!(
                (alone[0] - padded[0]).abs() < 1e-5,
                "{mode:?}: {alone:?} vs {padded:?}"
            );
        }
    }

    #[test]
    fn three_d_prediction_is_invariant_and_denoising_equivariant() {
        let dev = device();
        dev.seed(12);
        let model = tiny().init(&dev);
        let mols = molecules();
        let mut rotated = mols[1].clone();
        rotated.coordinates = Some(moved(mols[1].coordinates.as_ref().unwrap()));
        let a = model.encode(&batch(&[&mols[1]], Mode::Both));
        let b = model.encode(&batch(&[&rotated], Mode::Both));
        let (pa, pb) = (values(model.predict(&a)), values(model.predict(&b)));
        assert!((pa[0] - pb[0]).abs() < 1e-4, "{pa:?} vs {pb:?}");
        // Noise predictions rotate with the molecule (no translation for vectors).
        let (na, nb) = (
            values(model.denoise(&a).unwrap()),
            values(model.denoise(&b).unwrap()),
        );
        let turned: Vec<f32> = na
            .chunks(3)
            .flat_map(|v| {
                let r = moved(&[[v[0], v[1], v[2]]])[0];
                let o = moved(&[[0.0, 0.0, 0.0]])[0];
                [r[0] - o[0], r[1] - o[1], r[2] - o[2]]
            })
            .collect();
        for (x, y) in turned.iter().zip(&nb) {
            assert!((x - y).abs() < 1e-4, "{turned:?} vs {nb:?}");
        }
        assert!(na.iter().any(|v| v.abs() > 1e-4));
    }

    #[test]
    fn modes_switch_the_channels() {
        let dev = device();
        dev.seed(13);
        let model = tiny().init(&dev);
        let mols = molecules();
        let mut other_geometry = mols[0].clone();
        other_geometry.coordinates = Some(vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [5.0, 2.0, 0.0]]);
        let p =
            |f: &mol_featurize::GraphormerFeatures, m| values(model.forward(&batch(&[f], m)))[0];
        // 2D ignores coordinates; 3D and 2D+3D see them.
        assert_eq!(p(&mols[0], Mode::TwoD), p(&other_geometry, Mode::TwoD));
        assert!((p(&mols[0], Mode::ThreeD) - p(&other_geometry, Mode::ThreeD)).abs() > 1e-6);
        assert!((p(&mols[0], Mode::Both) - p(&other_geometry, Mode::Both)).abs() > 1e-6);
        // A molecule without coordinates runs in 2D whatever is requested.
        let mut no_geometry = mols[0].clone();
        no_geometry.coordinates = None;
        assert_eq!(p(&no_geometry, Mode::ThreeD), p(&mols[0], Mode::TwoD));
        // Molecules without coordinates are always sampled 2D.
        let sampled = ModeProbabilities::new().sample(
            &[true, false, true, true, true, true, true, true],
            &mut rand::rngs::StdRng::seed_from_u64(0),
        );
        assert_eq!(sampled[1], Mode::TwoD);
        assert!(sampled.iter().any(|m| *m != Mode::TwoD));
    }

    #[test]
    fn denoising_loss_is_one_minus_cosine_over_real_atoms() {
        let dev = device();
        let pred = Tensor::<3>::from_data(
            TensorData::new(
                vec![1.0f32, 0.0, 0.0, 0.0, 2.0, 0.0, 9.0, 9.0, 9.0],
                [1, 3, 3],
            ),
            &dev,
        );
        let noise = Tensor::<3>::from_data(
            TensorData::new(
                vec![1.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0],
                [1, 3, 3],
            ),
            &dev,
        );
        let padding =
            Tensor::<2, Bool>::from_data(TensorData::new(vec![false, false, true], [1, 3]), &dev);
        // Atom 0: cos 1 -> 0; atom 1: cos 0 -> 1; atom 2 padded. Mean 0.5.
        let loss = denoising_loss(pred, noise, padding).into_scalar::<f32>();
        assert!((loss - 0.5).abs() < 1e-6, "{loss}");
    }
}
