//! Transformer-M's 3D position-denoising loss (original `criterions/graph_prediction.py`:
//! `1 - CosineSimilarity(node_output, noise)` per atom, averaged over each molecule's
//! atoms). The original then sums over molecules and divides by the batch size, counting
//! molecules that were not in 3D-only mode as 0: [`denoising_loss_counted`] (the joint
//! objective); [`denoising_loss`] averages over the molecules given (denoising-only
//! pretraining runs every molecule in 3D, where the two agree).

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
    denoising_per_molecule(predicted, noise, key_padding_mask).mean()
}

/// The original's joint-pretraining denoising term (`graph_prediction`): each molecule's
/// mean `1 - cos` over its real atoms, summed over the molecules in 3D-only mode
/// (`counted`, `[B]`, 1 or 0: the original multiplies the atom output of every other
/// molecule by 0 and masks it), divided by the batch size B (fairseq's `sample_size`,
/// every molecule). Shapes as in [`denoising_loss`]; returns `[1]`.
pub fn denoising_loss_counted(
    predicted: Tensor<3>,
    noise: Tensor<3>,
    key_padding_mask: Tensor<2, Bool>,
    counted: Tensor<1>,
) -> Tensor<1> {
    let b = predicted.dims()[0];
    (denoising_per_molecule(predicted, noise, key_padding_mask) * counted)
        .sum()
        .div_scalar(b.max(1) as f64)
}

/// `1 - cos(predicted, noise)` averaged over each molecule's real atoms: `[B]`.
fn denoising_per_molecule(
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
    per_atom.sum_dim(1).reshape([b]) / real.sum_dim(1).reshape([b]).clamp_min(1.0)
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
        let loss = denoising_loss(pred.clone(), noise.clone(), padding.clone());
        let loss = loss.into_scalar::<f32>();
        assert!((loss - 0.5).abs() < 1e-6, "{loss}");
        // The joint objective's form: a batch of two, only the first counted, divided
        // by 2.
        let two = |t: Tensor<3>| Tensor::cat(vec![t.clone(), t], 0);
        let counted = Tensor::<1>::from_floats([1.0, 0.0], &dev);
        let joint = denoising_loss_counted(
            two(pred),
            two(noise),
            Tensor::cat(vec![padding.clone(), padding], 0),
            counted,
        )
        .into_scalar::<f32>();
        assert!((joint - 0.25).abs() < 1e-6, "{joint}");
    }
}
