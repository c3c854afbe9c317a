//! MAT runs: the spec (`run.json`, [`spec`]), the training step on the engine
//! ([`step`]) and the table run ([`table`]: MAT as a [`crate::table_run`] family).
//! Transformer-M has the same shape in [`crate::transformer_m`].

pub mod infer;
pub mod init_from;
pub mod pretrain;
pub mod shipped;
pub mod spec;
pub mod step;
pub mod table;

pub use infer::{infer_mat, predict_raw};
pub use init_from::{load_pretrained_encoder, read_mat_pretrain_spec, resolve_mat_init_from};
pub use pretrain::{MatPretrainSpec, MatPretrainSummary, pretrain_mat};
pub use shipped::{SHIPPED_PREFIX, locate_pretraining_run, shipped_names};
pub use spec::RunSpec;
pub use step::{MatBatcher, MatExample, MatLearner};
pub use table::{check_edge_features, train_run};
