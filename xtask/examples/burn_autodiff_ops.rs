//! Minimal Burn-only benchmark for an upstream report: forward + backward of the ops whose
//! autodiff path costs MAT's training step on Burn's flex CPU backend (issue #12,
//! docs/BENCHMARKS.md "Where the engine's epoch goes"):
//!
//! - `softmax` under autodiff is the default decomposition (max, sub, exp, sum, div),
//!   not flex's fused row kernel, and `Exp`'s backward recomputes `exp`;
//! - `leaky_relu(x, 0)` has no autodiff op (lower_elem + mul_scalar + mask_where), while
//!   `relu`, the same function, is fused both ways;
//! - a -1e12 masked logit sends scalar `expf` down its underflow path;
//! - `gelu` and its backward call libm's scalar `erff` per element on one thread;
//! - `nn::LayerNorm` has no autodiff op: under autodiff it is its decomposition (flex's
//!   fused layer-norm kernel serves inference only).
//!
//! ```sh
//! cargo run -p xtask --example burn_autodiff_ops
//! ```
//!
//! Shapes: MAT small on a batch of 32 molecules of 33 atoms (Transformer-M small's pair
//! features for GELU). Lines marked "ours for comparison" time our fused op
//! (`attn_core`); the others use Burn alone. Prints the median microseconds of 100 calls
//! per case (forward, then `backward` of the sum weighted by a fixed random tensor,
//! gradients read back).

use std::time::Instant;

use burn::nn::LayerNormConfig;
use burn::tensor::activation::{gelu, leaky_relu, relu, softmax};
use burn::tensor::{Device, Distribution, Tensor};

fn median_us(mut f: impl FnMut()) -> f64 {
    f();
    let mut times: Vec<f64> = (0..100)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Forward `op` on a fresh leaf copy of `x`, then backward of `sum(op(x) * g)`, the
/// gradient read back.
fn forward_backward<const D: usize>(
    x: &Tensor<D>,
    g: &Tensor<D>,
    op: &dyn Fn(Tensor<D>) -> Tensor<D>,
) -> f64 {
    median_us(|| {
        let leaf = x.clone().require_grad();
        let grads = (op(leaf.clone()) * g.clone()).sum().backward();
        drop(leaf.grad(&grads).map(Tensor::into_data));
    })
}

fn main() {
    let plain = Device::flex();
    let dev = plain.clone().autodiff();
    let scores = Tensor::<4>::random([32, 8, 33, 33], Distribution::Default, &dev);
    let g4 = Tensor::<4>::random([32, 8, 33, 33], Distribution::Default, &dev);
    // 10% of the keys masked with MAT's -1e12, as padding does.
    let keys = Tensor::<4>::random([32, 1, 1, 33], Distribution::Default, &dev)
        .greater_elem(0.9)
        .expand([32, 8, 33, 33]);
    let masked = scores.clone().mask_fill(keys, -1e12);
    let ffn = Tensor::<3>::random([32, 33, 128], Distribution::Normal(0.0, 1.0), &dev);
    let g3 = Tensor::<3>::random([32, 33, 128], Distribution::Default, &dev);
    let sync = |t: Tensor<4>| drop(t.into_data());
    let inference = scores.clone().inner();

    println!("case | median us");
    println!(
        "softmax [32,8,33,33], inference (flex's fused kernel) | {:.0}",
        median_us(|| sync(softmax(inference.clone(), 3)))
    );
    println!(
        "softmax [32,8,33,33], autodiff forward only | {:.0}",
        median_us(|| sync(softmax(scores.clone().require_grad(), 3)))
    );
    println!(
        "softmax [32,8,33,33], autodiff forward + backward | {:.0}",
        forward_backward(&scores, &g4, &|x| softmax(x, 3))
    );
    println!(
        "softmax [32,8,33,33] with 10% of keys at -1e12, autodiff forward + backward | {:.0}",
        forward_backward(&masked, &g4, &|x| softmax(x, 3))
    );
    println!(
        "ours for comparison: attn_core::softmax::softmax_last (fused, one node), with the same masked keys | {:.0}",
        forward_backward(&masked, &g4, &attn_core::softmax::softmax_last)
    );
    println!(
        "exp [32,8,33,33], autodiff forward + backward | {:.0}",
        forward_backward(&scores, &g4, &|x| x.exp())
    );
    println!(
        "x * 2 [32,8,33,33], autodiff forward + backward (reference) | {:.0}",
        forward_backward(&scores, &g4, &|x| x.mul_scalar(2.0))
    );
    println!(
        "leaky_relu(x, 0) [32,33,128], autodiff forward + backward | {:.0}",
        forward_backward(&ffn, &g3, &|x| leaky_relu(x, 0.0))
    );
    println!(
        "relu [32,33,128], autodiff forward + backward | {:.0}",
        forward_backward(&ffn, &g3, &relu)
    );
    // Transformer-M's pair features: [B, N, N, K] = [32, 32, 32, 32].
    let pairs = Tensor::<4>::random([32, 32, 32, 32], Distribution::Normal(0.0, 1.0), &dev);
    let gp = Tensor::<4>::random([32, 32, 32, 32], Distribution::Default, &dev);
    println!(
        "gelu [32,32,32,32], autodiff forward + backward (scalar libm erff, one thread) | {:.0}",
        forward_backward(&pairs, &gp, &gelu)
    );
    println!(
        "ours for comparison: attn_core::gelu (vectorised, rayon, one node) | {:.0}",
        forward_backward(&pairs, &gp, &attn_core::gelu)
    );
    let norm = LayerNormConfig::new(128).init(&dev);
    println!(
        "nn::LayerNorm(128) [32,33,128], autodiff forward + backward (no autodiff op: decomposed) | {:.0}",
        forward_backward(&ffn, &g3, &|x| norm.forward(x))
    );
    println!(
        "nn::LayerNorm(128) [32,33,128], inference (flex's fused kernel) | {:.0}",
        median_us(|| drop(norm.forward(ffn.clone().inner()).into_data()))
    );
    println!(
        "ours for comparison: attn_core::layer_norm (one node) | {:.0}",
        forward_backward(&ffn, &g3, &|x| {
            attn_core::layer_norm(
                x,
                norm.gamma.val(),
                norm.beta.as_ref().expect("a bias").val(),
                attn_core::RowNorm::Standard { eps: 1e-5 },
            )
            .expect("on flex")
        })
    );
}
