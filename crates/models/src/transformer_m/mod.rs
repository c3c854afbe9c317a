//! Transformer-M (Luo et al. 2022, "One Transformer Can Understand Both 2D & 3D
//! Molecular Data", arXiv 2210.01765) on Graphormer's encodings (Ying et al. 2021,
//! arXiv 2106.05234), as the original code computes it: lsj2408/Transformer-M commit
//! 45647e1, `modules/transformer_m_encoder.py`, `transformer_m_layers.py`,
//! `transformer_m_encoder_layer.py` (docs/TRANSFORMER_M.md).
//!
//! ```text
//! h_i    = sum_k AtomEmb[x_ik] + m2D * DegreeEmb[deg_i] + m3D * 0.01 * W_3D sum_j psi(i, j)
//! H      = LN_emb([graph token; h_1 .. h_N])                              (B, N+1, d)
//! bias   = m2D * (b_SPD(i,j) + edge(i,j)) + m3D * MLP(psi(i,j))        (B, H, N, N)
//!          row 0 / column 0 (graph token): learned virtual distance t_h;
//!          pairs >= spatial_pos_max bonds apart or in different fragments masked
//! layer  : H = LN(H + MHA(H, bias));  H = LN(H + FFN(H))        (post-LN, GELU)
//! y      = Head(H_0)   (graph token)
//! ```
//!
//! `psi(i, j)_k` is the Gaussian basis of the pair distance with an affine map whose
//! gain and offset are each the sum of a row for atom i's type and a row for atom j's
//! type ([`GaussianLayer`]); the edge encoding is Graphormer's multi-hop mean of per-hop
//! transformed bond embeddings; `m2D`, `m3D` are the per-molecule channel switches
//! ([`Mode`]). The position-denoising head ([`DenoisingHead`]) is the original's
//! `AtomTaskHead`: attention with the full pair bias, each weight times the unit vector
//! `(r_j - r_i)/|r_j - r_i|`, and one biased projection per axis.
//!
//! What differs from the original, each with its reason (docs/TRANSFORMER_M.md has the
//! full table):
//! - [`LayerNormPlacement::Pre`], an option: pre-LN layers with a final LayerNorm and no
//!   embedding LayerNorm (stabler without warm-up; the original is post-LN);
//! - channels are switched per molecule ([`Mode`]), so one batch mixes molecules with and
//!   without coordinates; the original decides 3D per batch at inference (all-zero
//!   positions mean no 3D);
//! - shortest paths through atom 0 keep atom 0 (the original's `algos.pyx` drops it and
//!   reads the pair as bonded), a reference bug fixed on purpose;
//! - degrees above `max_degree` (8) share one row (the original has rows up to 511);
//! - `num_targets > 1` keeps the head's shape with one biased output per target (the
//!   original's head has a single output).
//!
//! One file per part: [`config`] (configuration and initialisation), [`mode`], [`batch`],
//! [`encodings`] (atom and 2D bias encoders), [`gaussian`] (3D channel), [`encoder`]
//! (one layer), [`heads`], [`model`] (the assembled forward pass), [`loader`]
//! (checkpoints in our names and in the original fairseq names), [`original_layout`]
//! (the original's table indices).

pub mod batch;
pub mod config;
pub mod encoder;
pub mod encodings;
pub mod gaussian;
pub mod heads;
pub(crate) mod init;
pub mod loader;
pub mod mode;
pub mod model;
pub mod original_layout;
#[cfg(test)]
mod tests;

pub use batch::TransformerMBatch;
pub use config::{GaussianInit, LayerNormPlacement, TmReadout, TransformerMConfig};
pub use encoder::{EncoderLayer, EncoderLayerConfig};
pub use encodings::{AtomEncoder, AtomEncoderConfig, BiasEncoder, BiasEncoderConfig};
pub use gaussian::{GaussianLayer, GaussianLayerConfig, PairBias3d, PairBias3dConfig};
pub use heads::{DenoisingHead, DenoisingHeadConfig, RegressionHead, RegressionHeadConfig};
pub use loader::{ORIGINAL_PREFIX, Source};
pub use mode::Mode;
pub use model::{Embedded, EncoderOutput, TransformerM};

/// LayerNorm epsilon (fairseq's `LayerNorm` default).
pub const LAYER_NORM_EPS: f64 = 1e-5;
/// Added to `|sigma_k|` in the Gaussian basis (original `GaussianLayer`: `+ 1e-2`).
pub const GAUSSIAN_STD_EPS: f64 = 0.01;
/// The value of pi in the Gaussian normaliser `sqrt(2 pi) s_k`: the original's
/// `gaussian()` hard-codes 3.14159 (a relative difference of 8e-7 from pi, kept so
/// that loaded checkpoints give the original's numbers).
#[allow(clippy::approx_constant)] // the original's truncated value, on purpose
pub const GAUSSIAN_PI: f64 = 3.14159;
/// Added to pair distances before normalising `r_j - r_i` (original `1e-5`).
pub const DELTA_POS_EPS: f64 = 1e-5;
/// Scale of the 3D atom feature added to the atom embeddings (original
/// `merged_edge_features * 0.01`).
pub const ATOM_3D_SCALE: f64 = 0.01;
/// Dropout on the denoising head's attention weights (hard-coded 0.1 in the original
/// `AtomTaskHead`).
pub const DENOISING_ATTENTION_DROPOUT: f64 = 0.1;
