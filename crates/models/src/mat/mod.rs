//! Molecule Attention Transformer (MAT).
//!
//! Source: Maziarka et al. 2020, "Molecule Attention Transformer", arXiv 2002.08264;
//! reference code ardigen/MAT `src/transformer.py` (`make_model`). One file per box of
//! the paper's figure: [`embedding`], [`encoder`] (with [`feed_forward`]),
//! [`generator`]; [`config`] holds the serde configuration and presets, [`batch`] the
//! named input tensors.

pub mod batch;
pub mod config;
pub mod config_file;
pub mod embedding;
pub mod encoder;
pub mod feed_forward;
pub mod generator;
pub mod loader;
pub mod model;

pub use batch::MatBatch;
pub use config::{Aggregation, MatConfig, MatInit, OutputNonlinearity};
pub use config_file::MatConfigFileError;
pub use loader::{LoadError, LoadParts};
pub use model::MatModel;
