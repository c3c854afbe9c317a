//! One module per `cargo xtask` subcommand: its clap flags and the glue that calls the
//! crates; `common` holds the flags and helpers several commands share.

pub mod bench;
pub mod bench_row;
pub mod common;
pub mod data;
pub mod demo;
pub mod embed;
pub mod engine_args;
pub mod explain;
pub mod export;
pub mod featurize;
pub mod fuzz;
pub mod generate;
pub mod moses_metrics;
pub mod msa_bench;
pub mod onnx_roundtrip;
pub mod parity;
pub mod predict;
pub mod pretrain;
pub mod run_input;
pub mod structure_args;
pub mod train;
