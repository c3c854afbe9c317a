//! Transformer-M's 3D position-denoising loss (original `criterions/graph_prediction.py`:
//! `1 - CosineSimilarity(node_output, noise)` per atom, averaged over each molecule's
//! atoms). The original then sums over molecules and divides by the batch size, counting
//! molecules that were not in 3D-only mode as 0; ours averages over the molecules given
//! (pretraining runs every molecule in 3D, where the two agree).

use burn::prelude::*;

/// Transformer-M's denoising loss: `1 - cos(predicted, true noise)` per real atom,
/// averaged over the atoms of each molecule, then over molecules.
///
/// `predicted`, `noise`: `[B, N, 3]` (Angstrom; only directions matter); `key_padding_mask`:
/// `[B, N]`, `true` = padded atom (excluded). Returns a scalar `[1]`.
pub fn denoising_loss(
    predicted: Tensor<3>,
    noise: Tensor<3>,
    key_padding_mask: Tensor<2, Bool>,
) -> Tensor<1> {
    let [b, n, _] = predicted.dims();
    let dot = (predicted.clone() * noise.clone()).sum_dim(2);
    // sqrt(|v|^2 + eps): finite gradient where a vector is exactly 0 (a one-atom
    // molecule's prediction, padded rows).
    let norm = |t: Tensor<3>| t.powi_scalar(2).sum_dim(2).add_scalar(1e-12).sqrt();
    let cos = dot / (norm(predicted) * norm(noise));
    let real = key_padding_mask.bool_not().float().reshape([b, n, 1]);
    let per_atom = (cos.neg().add_scalar(1.0)) * real.clone();
    let per_mol = per_atom.sum_dim(1).reshape([b]) / real.sum_dim(1).reshape([b]).clamp_min(1.0);
    per_mol.mean()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denoising_loss_is_one_minus_cosine_over_real_atoms() {
        let dev = Device::flex();
        let pred = Tensor::<3>::from_data(
            TensorData::new(
                vec![1.0f32, 0.0, 0.0, 0.0, 2.0, 0.0, 9.0, 9.0, 9.0],
                [1, 3, 3],
            ),
            &dev,
        );
        let noise = Tensor::<3>::from_data(
            TensorData::new(
                vec![1.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0],
                [1, 3, 3],
            ),
            &dev,
        );
        let padding =
            Tensor::<2, Bool>::from_data(TensorData::new(vec![false, false, true], [1, 3]), &dev);
        // Atom 0: cos 1 -> 0; atom 1: cos 0 -> 1; atom 2 padded. Mean 0.5.
        let loss = denoising_loss(pred, noise, padding).into_scalar::<f32>();
        assert!((loss - 0.5).abs() < 1e-6, "{loss}");
    }
}
