//! One labelled molecule as the engine's data loaders hold it, whatever the model's
//! features ([`crate::mat::step::MatExample`], [`crate::transformer_m::TmExample`]).

/// A featurized molecule with its labels.
#[derive(Debug, Clone)]
pub struct Example<F> {
    /// 0-based data row of the input (for error messages and prediction files).
    pub row: usize,
    /// The model's inputs for this molecule.
    pub features: F,
    /// One label per task in target units (NaN = missing); empty for pretraining.
    pub targets: Vec<f32>,
}
