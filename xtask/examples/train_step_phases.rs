//! Where a MAT training step goes: forward (autodiff), backward and Adam step timed apart,
//! on random inputs of the benchmark's shapes (batch 32, 33 atoms, dropout 0); medians.
//!
//! ```sh
//! cargo run -p xtask --features full --example train_step_phases -- [small|pretrained] [burn-adam]
//! ```
//!
//! `burn-adam` steps with Burn's `Adam` instead of ours (`train::engine::fused_adam`),
//! the same update op by op: the Burn-only case for an upstream report.
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use burn::nn::loss::{MseLoss, Reduction};
use burn::optim::GradientsParams;
use burn::prelude::*;
use burn::tensor::Distribution;
use models::{MatBatch, MatConfig};
use train::engine::fused_adam::FusedAdamConfig;

fn main() {
    unsafe { attn_core::blas::init() };
    let which = std::env::args().nth(1).unwrap_or("small".into());
    let cfg = if which == "small" {
        MatConfig::small()
    } else {
        MatConfig::pretrained()
    }
    .with_dropout(0.0);
    let dev = Device::flex().autodiff();
    let (b, n, d) = (32, 33, cfg.d_atom);
    let mask: Vec<bool> = (0..b * n).map(|i| (i % n) >= 20 + (i / n) % 13).collect();
    let batch = MatBatch {
        node_features: Tensor::random([b, n, d], Distribution::Default, &dev),
        // Bonds between real atoms only, as featurized batches have (so the encoder
        // skips the padding rows, `attn_core::packing`).
        adjacency: Tensor::random([b, n, n], Distribution::Bernoulli(0.2), &dev)
            * Tensor::<3>::from_data(
                TensorData::new(
                    (0..b * n * n)
                        .map(|e| {
                            let (m, i, j) = (e / (n * n), e / n % n, e % n);
                            f32::from(u8::from(!mask[m * n + i] && !mask[m * n + j]))
                        })
                        .collect::<Vec<f32>>(),
                    [b, n, n],
                ),
                &dev,
            ),
        distances: Tensor::random([b, n, n], Distribution::Uniform(0.0, 8.0), &dev),
        key_padding_mask: Tensor::from_data(TensorData::new(mask, [b, n]), &dev),
        edge_features: None,
    };
    let target = Tensor::<2>::random([b, 1], Distribution::Default, &dev);
    let mut net = Some(cfg.init(&dev));
    let mut optim = if std::env::args().any(|a| a == "burn-adam") {
        burn::optim::AdamConfig::new().with_epsilon(1e-8).init()
    } else {
        FusedAdamConfig::new().with_epsilon(1e-8).init()
    };
    let reps = if which == "small" { 40 } else { 4 };
    let (mut tf, mut tb, mut to) = (vec![], vec![], vec![]);
    for i in 0..reps + 2 {
        let m = net.take().unwrap();
        let t0 = Instant::now();
        let loss = MseLoss::new().forward(m.forward(&batch), target.clone(), Reduction::Mean);
        let _ = loss.clone().into_data();
        let t1 = Instant::now();
        let grads = GradientsParams::from_grads(loss.backward(), &m);
        let t2 = Instant::now();
        let m = optim.step(1e-4, m, grads);
        m.generator.proj.weight.val().into_data();
        let t3 = Instant::now();
        net = Some(m);
        if i >= 2 {
            tf.push((t1 - t0).as_secs_f64() * 1e3);
            tb.push((t2 - t1).as_secs_f64() * 1e3);
            to.push((t3 - t2).as_secs_f64() * 1e3);
        }
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "{which}: forward {:.2} ms, backward {:.2} ms, adam {:.2} ms ({})",
        med(tf),
        med(tb),
        med(to),
        if std::env::args().any(|a| a == "burn-adam") {
            "Burn's Adam"
        } else {
            "FusedAdam"
        }
    );
}
