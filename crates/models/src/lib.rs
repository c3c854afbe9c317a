//! Molecular attention models on Burn.
//!
//! - [`mat`]: the Molecule Attention Transformer (Maziarka et al. 2020,
//!   arXiv 2002.08264), with the reference defaults and the pretrained configuration.
//! - [`msa`]: AlphaFold's MSA column global attention (Jumper et al. 2021, Suppl.
//!   Alg. 19), loadable from AlphaFold-named haiku parameters.
//! - [`transformer_m`]: Transformer-M (Luo et al. 2022) on Graphormer encodings, 2D and
//!   3D channels, regression and 3D denoising heads.
//! - [`smiles_gpt`]: the SMILES generator, a GPT-style causal Transformer over SMILES
//!   tokens (MolGPT's architecture) with KV-cached decoding and top-k sampling.
//! - [`chemnet`]: ChemNet, the network of the Fréchet ChemNet Distance (MOSES's FCD),
//!   with fcd_torch's weights.
//! - [`load`]: the error type of the reference-checkpoint loaders.
//!
//! Models are backend-agnostic: build them on any [`burn::tensor::Device`].

#![warn(missing_docs)]

pub mod chemnet;
pub mod load;
pub mod mat;
pub mod msa;
pub mod parallel;
pub mod smiles_gpt;
pub mod transformer_m;

pub use load::LoadError;
pub use mat::{MatBatch, MatConfig, MatModel};
pub use msa::{MsaColumnGlobalAttention, MsaColumnGlobalAttentionConfig};
pub use smiles_gpt::{SmilesGpt, SmilesGptConfig};
pub use transformer_m::{Mode, TransformerM, TransformerMBatch, TransformerMConfig};
