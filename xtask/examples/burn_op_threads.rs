//! Minimal Burn-only benchmark for an upstream report: time per op of MAT-sized tensors on
//! Burn's flex CPU backend. Run it with 1 and with 2 threads and compare the scaling with
//! PyTorch's (`bench/torch_ops.py`, the same ops and shapes):
//!
//! ```sh
//! RAYON_NUM_THREADS=1 cargo run -p xtask --example burn_op_threads
//! RAYON_NUM_THREADS=2 cargo run -p xtask --example burn_op_threads
//! ```
//!
//! Shapes: MAT small on a batch of 32 molecules of 33 atoms (attention [32, 8, 33, 33],
//! linear rows [1056, 128]). Prints the median microseconds of 200 calls per op.

use std::time::Instant;

use burn::tensor::activation::softmax;
use burn::tensor::{Bool, Device, Distribution, Tensor};

/// One named op to time.
type Op<'a> = (&'static str, Box<dyn Fn() + 'a>);

fn median_us(mut f: impl FnMut()) -> f64 {
    f();
    let mut times: Vec<f64> = (0..200)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let dev = Device::flex();
    let scores = Tensor::<4>::random([32, 8, 33, 33], Distribution::Default, &dev);
    let other = Tensor::<4>::random([32, 8, 33, 33], Distribution::Default, &dev);
    let mask = Tensor::<4>::random([32, 8, 33, 33], Distribution::Default, &dev).greater_elem(0.9);
    let rows = Tensor::<2>::random([1056, 128], Distribution::Default, &dev);
    let weight = Tensor::<2>::random([128, 128], Distribution::Default, &dev);
    let v = Tensor::<4>::random([32, 8, 33, 16], Distribution::Default, &dev);
    let sync = |t: Tensor<4>| drop(t.into_data());
    let ops: Vec<Op> = vec![
        (
            "softmax [32,8,33,33] last dim",
            Box::new(|| sync(softmax(scores.clone(), 3))),
        ),
        ("exp [32,8,33,33]", Box::new(|| sync(scores.clone().exp()))),
        (
            "a * 0.3 + b [32,8,33,33]",
            Box::new(|| sync(scores.clone().mul_scalar(0.3) + other.clone())),
        ),
        (
            "mask_fill [32,8,33,33]",
            Box::new(|| {
                let m: Tensor<4, Bool> = mask.clone();
                sync(scores.clone().mask_fill(m, -1e9))
            }),
        ),
        (
            "matmul [32,8,33,33] x [32,8,33,16]",
            Box::new(|| sync(scores.clone().matmul(v.clone()))),
        ),
        (
            "matmul [1056,128] x [128,128]",
            Box::new(|| drop(rows.clone().matmul(weight.clone()).into_data())),
        ),
    ];
    let threads = std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "all".into());
    println!("Burn 0.22.1 flex, RAYON_NUM_THREADS={threads}");
    for (name, op) in &ops {
        println!("  {name:<36} {:>9.1} us", median_us(op));
    }
}
