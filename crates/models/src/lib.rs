//! Molecular attention models on Burn.
//!
//! - [`mat`]: the Molecule Attention Transformer (Maziarka et al. 2020,
//!   arXiv 2002.08264), with the reference defaults and the pretrained configuration.
//!
//! Models are backend-agnostic: build them on any [`burn::tensor::Device`].

#![warn(missing_docs)]

pub mod mat;

pub use mat::{MatBatch, MatConfig, MatModel};
