//! Dropout with a fast mask on the CPU backend.
//!
//! Why by hand: Burn 0.22.1's `Dropout` draws its Bernoulli mask through
//! `TensorData::random`, which builds a new distribution sampler for every element and
//! runs on one thread. In a MAT small training step on flex that mask is a quarter of the
//! time (`perf`: `DistributionSampler::sample`, `Distribution::sampler`, ChaCha and
//! `TensorData::random` together 24%; docs/BENCHMARKS.md). Here, on flex, the mask is drawn
//! by a small fast generator (xoshiro, `rand::rngs::SmallRng`) on rayon's threads, with the
//! keep-scale `1 / (1 - p)` folded into it; other backends keep Burn's own dropout, which
//! draws on the device. Same semantics as `burn::nn::Dropout::forward`: active only on an
//! autodiff device with the layer's training flag set and `p > 0`.
//!
//! Reproducibility: the mask's seed is drawn from the device's generator (one draw per
//! call), and each chunk of [`CHUNK`] elements has its own stream from that seed, so a
//! seeded run gives the same masks whatever the number of threads.

use burn::nn::Dropout;
use burn::prelude::*;
use burn::tensor::Distribution;
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

/// Elements per independently seeded chunk of a mask.
pub const CHUNK: usize = 1 << 14;

/// `layer` applied to `x` (any shape): during training each element is zeroed with
/// probability `layer.prob` and the others are scaled by `1 / (1 - prob)`; otherwise `x`
/// unchanged. The mask is a constant of the autodiff graph (gradients flow through the kept
/// elements, scaled). On flex the mask comes from [`mask`]; elsewhere from
/// `Dropout::forward`.
#[allow(clippy::disallowed_methods)] // the entry itself: Burn's op is its fallback
pub fn dropout<const D: usize>(layer: &Dropout, x: Tensor<D>) -> Tensor<D> {
    let device = x.device();
    if !is_active(layer, &device) || device.clone().without_autodiff() != Device::flex() {
        return layer.forward(x);
    }
    let shape = x.shape();
    let seed = draw_seed(&device);
    let values = mask(shape.num_elements(), layer.prob, seed);
    x * Tensor::<D>::from_data(TensorData::new(values, shape), &device)
}

/// A dropout mask of `n` elements: 0 with probability `prob`, else `1 / (1 - prob)`, from
/// `seed` (chunk `i` of [`CHUNK`] elements from its own stream, so the mask does not depend
/// on the number of threads).
pub fn mask(n: usize, prob: f64, seed: u64) -> Vec<f32> {
    let scale = (1.0 / (1.0 - prob)) as f32;
    // An element is dropped when a uniform u32 falls below prob * 2^32.
    let threshold = (prob * 4_294_967_296.0).min(u32::MAX as f64) as u32;
    crate::flex_data::par_chunks_filled(n, CHUNK, |i, chunk| {
        let stream = seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rng = SmallRng::seed_from_u64(stream);
        let keep = |draw: u64| if draw as u32 >= threshold { scale } else { 0.0 };
        // Two draws per 64-bit output (xoshiro's `next_u32` discards half of one).
        for pair in chunk.chunks_mut(2) {
            let draws = rng.next_u64();
            pair[0] = keep(draws);
            if let Some(v) = pair.get_mut(1) {
                *v = keep(draws >> 32);
            }
        }
    })
}

/// The keep-mask (keep-scale folded in) that [`dropout()`] would multiply an `n`-element
/// tensor on `device` by, or `None` when `layer` drops nothing there (not training, not on
/// an autodiff device, or `p = 0`). For the fused CPU kernels (flex only).
pub(crate) fn flex_keep_mask(layer: &Dropout, device: &Device, n: usize) -> Option<Vec<f32>> {
    is_active(layer, device).then(|| mask(n, layer.prob, draw_seed(device)))
}

/// Whether `layer` drops anything on `device` (Burn's rule: training, on an autodiff
/// device, `p > 0`).
fn is_active(layer: &Dropout, device: &Device) -> bool {
    layer.training.is_enabled() && device.is_autodiff() && layer.prob > 0.0
}

/// A 64-bit seed from the device's generator (two uniform f32 draws, their bit patterns).
pub(crate) fn draw_seed(device: &Device) -> u64 {
    let plain = device.clone().without_autodiff();
    let draws: Vec<f32> = Tensor::<1>::random([2], Distribution::Default, &plain)
        .try_into_vec_as::<f32>()
        .unwrap_or_default();
    draws
        .iter()
        .fold(0u64, |acc, v| (acc << 32) | u64::from(v.to_bits()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::DropoutConfig;

    #[test]
    fn mask_keeps_the_right_share_scaled_and_ignores_thread_count() {
        let m = mask(200_000, 0.1, 42);
        let kept = m.iter().filter(|v| **v != 0.0).count() as f64 / m.len() as f64;
        // Binomial(200000, 0.9): standard deviation 0.00067.
        assert!((kept - 0.9).abs() < 0.004, "{kept}");
        let scale = (1.0 / 0.9) as f32;
        assert!(m.iter().all(|v| *v == 0.0 || *v == scale));
        let one_thread = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| mask(200_000, 0.1, 42));
        assert_eq!(m, one_thread);
        assert_ne!(m, mask(200_000, 0.1, 43));
        // An odd length (the last draw's second half unused) is the longer mask's prefix.
        assert_eq!(mask(CHUNK + 3, 0.1, 42), m[..CHUNK + 3]);
    }

    /// (That the same device seed gives the same masks is `mask`'s determinism plus one
    /// draw from the device generator; asserting it here would race with the other tests
    /// of this binary, which draw from the same process-wide generator.)
    #[test]
    fn training_drops_the_right_share_and_gradients_pass_the_kept_elements() {
        let device = Device::flex().autodiff();
        let layer = DropoutConfig::new(0.25).init();
        let x = Tensor::<2>::ones([64, 300], &device).require_grad();
        let y = dropout(&layer, x.clone());
        let a: Vec<f32> = y.clone().inner().try_into_vec_as::<f32>().unwrap();
        let dropped = a.iter().filter(|v| **v == 0.0).count() as f64 / a.len() as f64;
        assert!((dropped - 0.25).abs() < 0.02, "{dropped}");
        assert!(
            a.iter()
                .all(|v| *v == 0.0 || (*v - 1.0 / 0.75).abs() < 1e-6)
        );
        // d sum(y) / dx is the mask itself.
        let grads = y.sum().backward();
        let g: Vec<f32> = x.grad(&grads).unwrap().try_into_vec_as::<f32>().unwrap();
        assert_eq!(g, a);
    }

    #[test]
    fn inactive_outside_training() {
        let layer = DropoutConfig::new(0.5).init();
        let plain = Tensor::<1>::ones([1000], &Device::flex());
        let out: Vec<f32> = dropout(&layer, plain).try_into_vec_as::<f32>().unwrap();
        assert!(out.iter().all(|v| *v == 1.0));
        let zero = DropoutConfig::new(0.0).init();
        let ad = Tensor::<1>::ones([1000], &Device::flex().autodiff());
        let out: Vec<f32> = dropout(&zero, ad).inner().try_into_vec_as::<f32>().unwrap();
        assert!(out.iter().all(|v| *v == 1.0));
    }
}
