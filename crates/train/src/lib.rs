//! Training, evaluation and prediction for molattn models.
//!
//! - [`data`]: molecule tables from CSV (a SMILES column and target columns).
//! - [`splits`]: split files (`{"random-0": {"train": [...], ...}}`), seeded random
//!   splits and Bemis-Murcko scaffold splits.
//! - [`metrics`]: RMSE, MAE, ROC-AUC.
//! - [`trainer`]: the MAT training loop (Adam + Noam warm-up, early stopping, best
//!   checkpoint, atomic checkpoints, exact `--resume`), writing `metrics.json` and
//!   `curves.png`.
//! - [`predict`]: predictions of a trained run.

#![warn(missing_docs)]

pub mod checkpoint;
pub mod data;
pub mod error;
pub mod metrics;
pub mod plot;
pub mod predict;
pub mod splits;
pub mod trainer;

pub use error::TrainError;
pub use trainer::{RunControl, RunSpec, SplitSpec, Task, TrainOptions, TrainSummary, train_run};
