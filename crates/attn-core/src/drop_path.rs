//! DropPath (stochastic depth) as Transformer-M applies it (`modules/droppath.py` of
//! lsj2408/Transformer-M, used by `modules/transformer_m_encoder_layer.py`).
//!
//! The original draws one keep / drop per index of its input's first axis: `floor(keep +
//! U[0, 1))` of shape `(x.shape[0], 1, ...)`, then `x / keep * mask`. Its docstring says
//! "per sample", but the encoder layer's input is fairseq's `T x B x C`, so what it drops
//! is a **token position** (graph token, atom or padding) of every molecule in the batch at
//! once. In our `[B, T, d]` layout that is a mask of shape `[1, T, 1]`. Faithful to the
//! code, not the docstring.

use burn::nn::Dropout;
use burn::prelude::*;

use crate::dropout::{draw_seed, mask};

/// `x` (`[B, T, d]`) with whole token positions dropped: during training each position
/// `t` is zeroed in every molecule of the batch with probability `prob`, and kept positions
/// are scaled by `1 / (1 - prob)`; outside training `x` unchanged. Training is read off
/// `flag` as [`crate::dropout()`] reads it (the layer's training flag, an autodiff
/// device), so freezing the layer's `Dropout` turns DropPath off with it; `prob = 0` is the
/// identity. The mask is a constant of the autodiff graph.
///
/// # Panics
/// If `prob` is not in `[0, 1)` (a configuration error).
pub fn drop_path(flag: &Dropout, prob: f64, x: Tensor<3>) -> Tensor<3> {
    assert!(
        (0.0..1.0).contains(&prob),
        "drop-path probability {prob} outside [0, 1)"
    );
    let device = x.device();
    if prob == 0.0 || !flag.training.is_enabled() || !device.is_autodiff() {
        return x;
    }
    let [_, t, _] = x.dims();
    let values = mask(t, prob, draw_seed(&device));
    x * Tensor::<3>::from_data(TensorData::new(values, [1, t, 1]), &device)
}

/// The drop-path probability of each of `num_layers` encoder layers for a model-wide
/// `prob`: `torch.linspace(0, prob, num_layers)` as the original's encoder computes it
/// (`modules/transformer_m_encoder.py`): 0 for the first layer, `prob` for the last.
pub fn layer_probs(prob: f64, num_layers: usize) -> Vec<f64> {
    match num_layers {
        0 => vec![],
        1 => vec![0.0],
        n => (0..n).map(|i| prob * i as f64 / (n - 1) as f64).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::DropoutConfig;

    #[test]
    fn drops_whole_positions_shared_by_the_batch_and_keeps_the_expected_share() {
        let device = Device::flex().autodiff();
        let flag = DropoutConfig::new(0.0).init();
        let (b, t, d) = (3, 4000, 5);
        let x = Tensor::<3>::ones([b, t, d], &device).require_grad();
        let y = drop_path(&flag, 0.2, x.clone());
        let v: Vec<f32> = y.clone().inner().try_into_vec_as::<f32>().unwrap();
        let scale = 1.0 / 0.8;
        // Per position: one value for every molecule and channel, 0 or 1 / keep.
        let mut kept = 0;
        for ti in 0..t {
            let first = v[ti * d];
            assert!(first == 0.0 || (first - scale).abs() < 1e-6, "{first}");
            for bi in 0..b {
                for di in 0..d {
                    assert_eq!(v[(bi * t + ti) * d + di], first, "b {bi} t {ti} d {di}");
                }
            }
            kept += usize::from(first != 0.0);
        }
        // Binomial(4000, 0.8): standard deviation 0.0063.
        let share = kept as f64 / t as f64;
        assert!((share - 0.8).abs() < 0.03, "{share}");
        // The expectation is kept: mean of y is 1 within the sampling error.
        let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
        assert!((mean - 1.0).abs() < 0.04, "{mean}");
        // Gradients pass the kept positions, scaled.
        let grads = y.sum().backward();
        let g: Vec<f32> = x.grad(&grads).unwrap().try_into_vec_as::<f32>().unwrap();
        assert_eq!(g, v);
    }

    #[test]
    fn identity_at_eval_and_at_zero() {
        let x = Tensor::<3>::ones([2, 50, 3], &Device::flex());
        let flag = DropoutConfig::new(0.5).init();
        let out: Vec<f32> = drop_path(&flag, 0.5, x).try_into_vec_as::<f32>().unwrap();
        assert!(out.iter().all(|v| *v == 1.0));
        let ad = Tensor::<3>::ones([2, 50, 3], &Device::flex().autodiff());
        let out: Vec<f32> = drop_path(&flag, 0.0, ad.clone())
            .inner()
            .try_into_vec_as::<f32>()
            .unwrap();
        assert!(out.iter().all(|v| *v == 1.0));
        // A frozen layer (training flag off) drops nothing on an autodiff device either.
        let frozen = burn::module::Module::freeze(flag);
        let out: Vec<f32> = drop_path(&frozen, 0.5, ad)
            .inner()
            .try_into_vec_as::<f32>()
            .unwrap();
        assert!(out.iter().all(|v| *v == 1.0));
    }

    #[test]
    fn layer_probabilities_follow_torch_linspace() {
        // torch.linspace(0, 0.1, 4) = [0, 0.0333, 0.0667, 0.1].
        let p = layer_probs(0.1, 4);
        let want = [0.0, 0.1 / 3.0, 0.2 / 3.0, 0.1];
        assert_eq!(p.len(), 4);
        for (a, b) in p.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{p:?}");
        }
        assert_eq!(layer_probs(0.1, 1), vec![0.0]);
        assert!(layer_probs(0.1, 0).is_empty());
    }
}
