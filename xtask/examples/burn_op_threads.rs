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
//! linear rows [1056, 128]), and the pretrained size's linear layer ([1056, 1024] x
//! [1024, 1024]). Prints the median microseconds of 200 calls per op (20 for the large
//! product). The `attn_core::matmul` rows are the same products through the BLAS that
//! `attn_core::blas` loads (named on the first line; `MOLATTN_BLAS=off` for none).

use std::time::Instant;

use burn::tensor::activation::softmax;
use burn::tensor::{Bool, Device, Distribution, Tensor};

/// One named op to time.
type Op<'a> = (&'static str, Box<dyn Fn() + 'a>);

fn median_us(mut f: impl FnMut(), calls: usize) -> f64 {
    f();
    let mut times: Vec<f64> = (0..calls)
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
    // SAFETY: first statement of main, no other thread yet.
    unsafe { attn_core::blas::init() };
    let dev = Device::flex();
    let scores = Tensor::<4>::random([32, 8, 33, 33], Distribution::Default, &dev);
    let other = Tensor::<4>::random([32, 8, 33, 33], Distribution::Default, &dev);
    let mask = Tensor::<4>::random([32, 8, 33, 33], Distribution::Default, &dev).greater_elem(0.9);
    let rows = Tensor::<2>::random([1056, 128], Distribution::Default, &dev);
    let weight = Tensor::<2>::random([128, 128], Distribution::Default, &dev);
    let v = Tensor::<4>::random([32, 8, 33, 16], Distribution::Default, &dev);
    let big_rows = Tensor::<2>::random([1056, 1024], Distribution::Default, &dev);
    let big_weight = Tensor::<2>::random([1024, 1024], Distribution::Default, &dev);
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
        (
            "matmul [1056,1024] x [1024,1024]",
            Box::new(|| drop(big_rows.clone().matmul(big_weight.clone()).into_data())),
        ),
        (
            "attn_core::matmul [32,8,33,33] x [32,8,33,16]",
            Box::new(|| sync(attn_core::matmul(scores.clone(), v.clone()))),
        ),
        (
            "attn_core::matmul [1056,128] x [128,128]",
            Box::new(|| drop(attn_core::matmul(rows.clone(), weight.clone()).into_data())),
        ),
        (
            "attn_core::matmul [1056,1024] x [1024,1024]",
            Box::new(|| drop(attn_core::matmul(big_rows.clone(), big_weight.clone()).into_data())),
        ),
    ];
    let threads = std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "all".into());
    println!(
        "Burn 0.22.1 flex, RAYON_NUM_THREADS={threads}, {}",
        attn_core::blas::blas_summary()
    );
    for (name, op) in &ops {
        let calls = if name.contains("1024") { 20 } else { 200 };
        println!("  {name:<44} {:>9.1} us", median_us(op, calls));
    }
}
