//! The SMILES generator: a GPT-style causal Transformer over the tokens of
//! `mol_featurize::smiles_tokenizer`, decoded incrementally through a KV cache per layer.
//!
//! - [`SmilesGptConfig`]: sizes (MolGPT's preset and a small one) and attention pattern.
//! - [`SmilesGpt`]: the model; one `forward` for training (whole sequences) and for
//!   decoding (new tokens with the layers' caches).
//! - [`Condition`]: MolGPT's property and scaffold conditioning positions.
//! - [`CpuDecoder`]: the one-token decoding step on the CPU as raw-buffer passes (what
//!   sampling uses there; the same logits as `forward`).
//! - [`sampling`]: temperature and top-k sampling from the last position's logits,
//!   seeded, separate from the model (as llama-burn's `sampling.rs`).

mod condition;
#[cfg(test)]
mod condition_tests;
mod config;
mod cpu_decoder;
#[cfg(test)]
mod cpu_decoder_tests;
mod model;
pub mod sampling;
#[cfg(test)]
mod tests;

pub use condition::Condition;
pub use config::SmilesGptConfig;
pub use cpu_decoder::{CpuDecoder, CpuWeights};
pub use model::{Block, DecoderCache, SmilesGpt};
