//! What inference reads out of a model for each molecule (a prediction, the molecule
//! embedding or per-atom embeddings), and how a padded batch's outputs become rows.

use burn::prelude::*;

use crate::error::TrainError;

/// What inference reads out of a trained model for each molecule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readout {
    /// The head's raw output, `num_targets` values (standardised regression values or
    /// classification logits: [`crate::Labels::output`] turns them into predictions).
    Prediction,
    /// The molecule embedding, `d_model` values: the vector the head reads (MAT: the
    /// encoder's atom states pooled as its generator pools them; Transformer-M: the
    /// graph token's final state).
    Molecule,
    /// Per-atom embeddings, `n_atoms x d_model` values row-major, heavy atoms in the
    /// molecule's order (the encoder's final atom states; MAT's dummy node and
    /// Transformer-M's graph token left out).
    Atoms,
}

/// `[B, k]` as `B` rows of `k` values.
///
/// # Errors
/// [`TrainError::Invalid`] if the tensor cannot be read back.
pub(crate) fn rows_of(y: Tensor<2>) -> Result<Vec<Vec<f32>>, TrainError> {
    let [_, k] = y.dims();
    let values = y
        .try_into_vec_as::<f32>()
        .map_err(|e| TrainError::Invalid(format!("reading model outputs: {e:?}")))?;
    Ok(values.chunks(k.max(1)).map(<[f32]>::to_vec).collect())
}

/// `[B, N, d]` atom states as `B` rows of `atoms[b] x d` values (padding rows dropped).
///
/// # Errors
/// [`TrainError::Invalid`] if the tensor cannot be read back.
fn atom_rows_of(y: Tensor<3>, atoms: &[usize]) -> Result<Vec<Vec<f32>>, TrainError> {
    let [_, n, d] = y.dims();
    let values = y
        .try_into_vec_as::<f32>()
        .map_err(|e| TrainError::Invalid(format!("reading model outputs: {e:?}")))?;
    Ok(atoms
        .iter()
        .enumerate()
        .map(|(b, &a)| values[b * n * d..(b * n + a.min(n)) * d].to_vec())
        .collect())
}

/// `readout` of one padded batch of `atoms.len()` molecules, cut into `parts` groups run at
/// once on rayon's threads ([`models::parallel::forward_in_parts`]): `prediction`,
/// `molecule` and `atom` give the model's output for molecules `start..end` of the batch
/// (`atoms`: each molecule's heavy atoms, for the per-atom rows).
///
/// # Errors
/// [`TrainError::Invalid`] if an output cannot be read back.
pub(crate) fn read_out(
    readout: Readout,
    (parts, atoms): (usize, &[usize]),
    prediction: impl Fn(usize, usize) -> Tensor<2> + Sync,
    molecule: impl Fn(usize, usize) -> Tensor<2> + Sync,
    atom: impl Fn(usize, usize) -> Tensor<3> + Sync,
) -> Result<Vec<Vec<f32>>, TrainError> {
    use models::parallel::forward_in_parts;
    let b = atoms.len();
    match readout {
        Readout::Prediction => rows_of(forward_in_parts(b, parts, prediction)),
        Readout::Molecule => rows_of(forward_in_parts(b, parts, molecule)),
        Readout::Atoms => atom_rows_of(forward_in_parts(b, parts, atom), atoms),
    }
}
