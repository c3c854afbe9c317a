//! One module per `cargo xtask` subcommand: its clap flags and the glue that calls the
//! crates; `common` holds the flags and helpers several commands share.

pub mod bench;
pub mod common;
pub mod data;
pub mod demo;
pub mod embed;
pub mod engine_args;
pub mod explain;
pub mod export;
pub mod featurize;
pub mod fuzz;
pub mod fuzz_runs;
pub mod generate;
pub mod moses_metrics;
pub mod msa_bench;
pub mod onnx_roundtrip;
pub mod parity;
pub mod predict;
pub mod pretrain;
pub mod train;
pub mod train_smiles_gpt;
pub mod train_transformer_m;
