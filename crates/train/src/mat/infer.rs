//! MAT's batched inference: a readout per molecule ([`infer_mat`]) and the raw
//! predictions a table run evaluates ([`predict_raw`]).

use burn::prelude::*;
use models::{MatBatch, MatModel};
use mol_featurize::{MatFeatures, pad_batch};

use crate::error::TrainError;
use crate::readout::{Readout, read_out};

/// Raw outputs `[n][num_targets]` of `model` (evaluation mode) for `features`: logits
/// for classification, scaled values for regression (apply [`crate::mat::RunSpec::unscale`]);
/// [`infer_mat`] with [`Readout::Prediction`].
pub fn predict_raw(
    model: &MatModel,
    features: &[&MatFeatures],
    batch_size: usize,
    device: &Device,
) -> Vec<Vec<f32>> {
    // Reading a flex or wgpu tensor back does not fail; an empty result stands in.
    infer_mat(model, features, batch_size, Readout::Prediction, device).unwrap_or_default()
}

/// Runs `model` (evaluation mode) over `features` in batches of at most `batch_size`
/// grouped by size ([`crate::size_batches`]) and returns `readout` per molecule in input
/// order; on the flex CPU device each batch is split across rayon's threads
/// ([`models::parallel::forward_in_parts`]).
///
/// # Errors
/// [`TrainError::Invalid`] if an output cannot be read back.
pub fn infer_mat(
    model: &MatModel,
    features: &[&MatFeatures],
    batch_size: usize,
    readout: Readout,
    device: &Device,
) -> Result<Vec<Vec<f32>>, TrainError> {
    let parts = models::parallel::inference_parts(device);
    let sizes: Vec<usize> = features.iter().map(|f| f.n_atoms).collect();
    crate::size_batches::predict_grouped(&sizes, batch_size, |batch| {
        let chunk: Vec<&MatFeatures> = batch.iter().map(|&i| features[i]).collect();
        let data = pad_batch(&chunk).map_err(|e| TrainError::Invalid(e.to_string()))?;
        let x = MatBatch::from_data(&data, device);
        let atoms: Vec<usize> = chunk.iter().map(|f| f.n_atoms - 1).collect();
        read_out(
            readout,
            (parts, &atoms),
            |s, e| model.forward(&x.molecules(s, e)),
            |s, e| model.molecule_embedding(&x.molecules(s, e)),
            |s, e| model.atom_embeddings(&x.molecules(s, e)),
        )
    })
}
