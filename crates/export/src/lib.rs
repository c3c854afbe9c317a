//! ONNX export of molattn models, with our own graph builder on `onnx-protobuf`.
//!
//! Burn's trace-based ONNX exporter (burn-onnx 0.22 `export`) cannot lower softmax,
//! transposes, reductions or masking, so each model has a hand-written lowering that reads
//! the weights of the Burn module and emits the same arithmetic, op for op, in opset
//! [`graph::OPSET`]:
//! - [`mat::mat_to_onnx`]: the Molecule Attention Transformer, its row-wise work on the
//!   real atoms only ([`packing`]).
//! - [`msa::msa_global_attention_to_onnx`]: AlphaFold MSA column global attention.
//! - [`transformer_m::transformer_m_to_onnx`]: Transformer-M (2D and 3D channels).
//! - [`smiles_gpt::smiles_gpt_step_to_onnx`]: the SMILES generator's decoder step, past
//!   keys and values in and out; [`smiles_gpt::verify_greedy`] decodes through it in ONNX
//!   Runtime.
//!
//! Batch-like axes are symbolic (`batch`/`atoms`, `sequences`/`residues`): one file serves
//! every batch and molecule size. Masks are bool inputs, `true` = padding, applied with
//! `Where` / additive finite constants, so padded rows never produce NaN.
//!
//! [`verify`] runs an exported file in ONNX Runtime (the `libonnxruntime` shared library
//! of the pip `onnxruntime` wheel, loaded at run time) and in `tract-onnx`, and calls the
//! ONNX checker of the pip `onnx` package.

#![warn(missing_docs)]

pub mod graph;
pub mod mat;
pub mod msa;
pub mod npz;
pub mod packing;
pub mod run_export;
pub mod smiles_gpt;
pub mod transformer_m;
pub mod verify;

use thiserror::Error;

pub use graph::{GraphBuilder, write_model};
pub use mat::{mat_batch_feeds, mat_feeds, mat_to_onnx};
pub use msa::msa_global_attention_to_onnx;
pub use smiles_gpt::smiles_gpt_step_to_onnx;
pub use transformer_m::transformer_m_to_onnx;
pub use verify::{Case, Feed, FeedData};

/// Why an export or its verification failed.
#[derive(Debug, Error)]
pub enum ExportError {
    /// The ONNX file could not be written.
    #[error("{path}: cannot write ONNX model: {reason}")]
    Write {
        /// The file.
        path: String,
        /// Encoder or I/O message.
        reason: String,
    },
    /// A runtime or the checker rejected or failed to run the model.
    #[error("{runtime}: {reason}")]
    Runtime {
        /// `onnxruntime`, `tract` or `onnx.checker`.
        runtime: &'static str,
        /// Its message.
        reason: String,
    },
    /// A trained run could not be read (its spec, model or data).
    #[error(transparent)]
    Run(#[from] train::TrainError),
    /// Inputs or settings that cannot be exported or verified, with the reason (a run of
    /// another kind, too few held-out molecules, a runtime that differs from Burn).
    #[error("{0}")]
    Invalid(String),
}
