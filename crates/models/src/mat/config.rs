//! MAT configuration (serde) with the reference defaults and the pretrained preset.

use attn_core::{DistanceKernel, NormKind};
use burn::prelude::*;

/// How atom states are pooled into one molecule vector (reference `aggregation_type`).
#[derive(Config, Debug, Copy, PartialEq, Eq)]
pub enum Aggregation {
    /// Masked mean over atoms, dummy node included.
    Mean,
    /// Masked sum over atoms.
    Sum,
    /// The dummy node's state (row 0).
    DummyNode,
}

impl Aggregation {
    /// The module constant that stores it (Burn modules hold plain numbers).
    pub fn code(self) -> usize {
        self as usize
    }

    /// The aggregation a [`Aggregation::code`] stands for (`DummyNode` past the end).
    pub fn from_code(code: usize) -> Self {
        match code {
            0 => Aggregation::Mean,
            1 => Aggregation::Sum,
            _ => Aggregation::DummyNode,
        }
    }
}

/// Nonlinearity after the last FFN layer (reference `dense_output_nonlinearity`).
#[derive(Config, Debug, Copy, PartialEq, Eq)]
pub enum OutputNonlinearity {
    /// LeakyReLU with `leaky_relu_slope` (slope 0 = ReLU).
    Relu,
    /// tanh.
    Tanh,
    /// Identity.
    None,
}

impl OutputNonlinearity {
    /// The module constant that stores it (Burn modules hold plain numbers).
    pub fn code(self) -> usize {
        self as usize
    }

    /// The nonlinearity a [`OutputNonlinearity::code`] stands for (`None` past the end).
    pub fn from_code(code: usize) -> Self {
        match code {
            0 => OutputNonlinearity::Relu,
            1 => OutputNonlinearity::Tanh,
            _ => OutputNonlinearity::None,
        }
    }
}

/// How the weight matrices of a fresh MAT are drawn (reference `init_type`, applied by
/// `make_model` to every parameter with more than one dimension; vectors keep their
/// layer's own initialisation).
#[derive(Config, Debug, Copy, PartialEq, Eq)]
pub enum MatInit {
    /// Xavier (Glorot) uniform, `U(-a, a)` with `a = sqrt(6 / (fan_in + fan_out))`
    /// (`'uniform'`, the default).
    Uniform,
    /// Xavier (Glorot) normal, `N(0, 2 / (fan_in + fan_out))` (`'normal'`).
    Normal,
}

/// MAT hyper-parameters. Defaults are the reference `make_model` defaults
/// (docs/SPEC.md 1.2); [`MatConfig::pretrained`] is the published pretrained model.
#[derive(Config, Debug)]
pub struct MatConfig {
    /// Input feature width (28 with one-hot formal charge, dummy flag included).
    #[config(default = 28)]
    pub d_atom: usize,
    /// d_model.
    #[config(default = 128)]
    pub d_model: usize,
    /// Number of encoder layers.
    #[config(default = 2)]
    pub num_layers: usize,
    /// Number of attention heads H.
    #[config(default = 8)]
    pub num_heads: usize,
    /// Number of Linear layers of each position-wise FFN (0 = identity).
    #[config(default = 2)]
    pub n_dense: usize,
    /// Dropout everywhere (embedding, attention weights, sublayers, FFN).
    #[config(default = 0.1)]
    pub dropout: f64,
    /// lambda_a of Eq. 2.
    #[config(default = 0.3)]
    pub lambda_attention: f64,
    /// lambda_d of Eq. 2.
    #[config(default = 0.3)]
    pub lambda_distance: f64,
    /// Learn the lambdas.
    #[config(default = false)]
    pub trainable_lambda: bool,
    /// Distance kernel g.
    #[config(default = "DistanceKernel::Softmax")]
    pub distance_kernel: DistanceKernel,
    /// Negative slope of every LeakyReLU.
    #[config(default = 0.0)]
    pub leaky_relu_slope: f64,
    /// Nonlinearity after the last FFN layer.
    #[config(default = "OutputNonlinearity::Relu")]
    pub dense_output_nonlinearity: OutputNonlinearity,
    /// LayerNorm (reference) or ScaleNorm.
    #[config(default = "NormKind::LayerNorm")]
    pub norm: NormKind,
    /// Pooling of atom states.
    #[config(default = "Aggregation::Mean")]
    pub aggregation: Aggregation,
    /// Number of outputs (tasks); `n_output` in the reference and in run.json files
    /// written before the rename (`train::run_compat::mat_config` reads them).
    #[config(default = 1)]
    pub num_targets: usize,
    /// Layers of the generator head (1 = a single Linear).
    #[config(default = 1)]
    pub n_generator_layers: usize,
    /// Initialisation of the weight matrices (reference `init_type`).
    #[config(default = "MatInit::Uniform")]
    pub init: MatInit,
    /// Bond features in place of the adjacency (reference `use_edge_features`): each
    /// layer's adjacency term is `relu(w . e_ij)` of the [`mol_featurize::MAT_D_EDGE`]
    /// bond features of [`crate::MatBatch::edge_features`], row-normalised
    /// ([`attn_core::MoleculeAttention::edge_adjacency`]).
    #[config(default = false)]
    pub use_edge_features: bool,
    /// With `use_edge_features`: `g(D)` is one more edge channel (reference
    /// `integrated_distances`). Ignored without edge features, as in the original.
    #[config(default = false)]
    pub integrated_distances: bool,
}

impl MatConfig {
    /// The reference `make_model` defaults: d 128, 2 layers, 8 heads, N_dense 2,
    /// dropout 0.1, lambdas 0.3/0.3, softmax kernel, slope 0, mean pooling.
    pub fn small() -> Self {
        Self::new()
    }

    /// The published pretrained MAT: d 1024, 8 layers, 16 heads, N_dense 1,
    /// lambdas 0.33/0.33, slope 0.1, exp kernel, dropout 0, mean pooling, d_atom 28.
    pub fn pretrained() -> Self {
        Self::new()
            .with_d_model(1024)
            .with_num_layers(8)
            .with_num_heads(16)
            .with_n_dense(1)
            .with_lambda_attention(0.33)
            .with_lambda_distance(0.33)
            .with_leaky_relu_slope(0.1)
            .with_distance_kernel(DistanceKernel::Exp)
            .with_dropout(0.0)
    }
}
