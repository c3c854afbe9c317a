//! Burn's dropout mask against ours on the CPU backend (docs/BENCHMARKS.md): the same
//! `[32, 8, 33, 33]` tensor (MAT small's attention weights of one batch) on flex's
//! autodiff device, `burn::nn::Dropout::forward` and `attn_core::dropout`, median of 50
//! calls each, alternating. A Burn-only case for an upstream report: `TensorData::random`
//! builds a distribution sampler for every element, on one thread.
//!
//! `cargo run -p attn-core --example dropout_mask` (dev profile: dependencies at opt-level 3)

use std::time::Instant;

use burn::nn::DropoutConfig;
use burn::prelude::*;

#[allow(clippy::disallowed_methods)] // Burn's dropout is what this example measures
fn main() {
    let device = Device::flex().autodiff();
    let layer = DropoutConfig::new(0.1).init();
    let x = Tensor::<4>::ones([32, 8, 33, 33], &device);
    let (mut burn_us, mut ours_us) = (Vec::new(), Vec::new());
    for _ in 0..50 {
        let t = Instant::now();
        let y = layer.forward(x.clone());
        let _ = y.inner().try_into_vec_as::<f32>();
        burn_us.push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        let y = attn_core::dropout(&layer, x.clone());
        let _ = y.inner().try_into_vec_as::<f32>();
        ours_us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (b, o) = (median(&mut burn_us), median(&mut ours_us));
    println!(
        "dropout(0.1) of [32, 8, 33, 33] = {} elements on flex, {} rayon threads: \
         burn::nn::Dropout {b:.0} us, attn_core::dropout {o:.0} us ({:.1}x)",
        32 * 8 * 33 * 33,
        rayon::current_num_threads(),
        b / o
    );
}
