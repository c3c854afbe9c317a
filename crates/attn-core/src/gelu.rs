//! GELU (the exact, erf form) as one multi-threaded, vectorised op each way on the CPU.
//!
//! Why by hand: flex's `gelu` and `gelu_backward` call libm's scalar `erff` per element
//! on one thread; Transformer-M applies GELU to its `[B, N, N, K]` Gaussian pair features
//! and its feed-forward layers, where this was the largest elementwise cost (perf: 11% of
//! the small preset's forward). Here, on flex, `erf` is Abramowitz & Stegun 7.1.26
//! (absolute error under 1.5e-7; the form PyTorch's vectorised CPU GELU uses) with a
//! vector `exp`, 8 lanes at a time, in chunks on rayon's threads:
//!
//! ```text
//! gelu(x)  = x Phi(x),             Phi(x) = (1 + erf(x / sqrt 2)) / 2
//! gelu'(x) = Phi(x) + x phi(x),    phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
//! ```
//!
//! Under autodiff one graph node, its state the input.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::NoCheckpointing;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::{Autodiff, Flex};
use burn::prelude::*;
use burn::tensor::activation;
use burn_flex::FlexTensor;

use crate::flex_data::{
    AdTensor, contiguous, dims_of, on_flex_f32, par_chunks_filled, tensor_from, values,
};
use crate::simd::avx2_fma;

/// Elements per rayon task.
const CHUNK: usize = 1 << 14;

/// `gelu(x)` elementwise (any shape); on flex the fused op of the module documentation,
/// elsewhere Burn's `gelu`.
#[allow(clippy::disallowed_methods)] // the entry itself: Burn's op is its fallback
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    if !on_flex_f32(&x) {
        return activation::gelu(x);
    }
    if x.is_autodiff() {
        return match x.clone().try_into_primitive::<Autodiff<Flex>>() {
            Ok(p) => Tensor::from_primitive::<Autodiff<Flex>>(tracked(p)),
            Err(_) => activation::gelu(x),
        };
    }
    match x.clone().try_into_primitive::<Flex>() {
        Ok(p) => Tensor::from_primitive::<Flex>(map(&contiguous(p), None)),
        Err(_) => activation::gelu(x),
    }
}

/// `out[i] = gelu(xs[i])` on the calling thread, the same values as [`gelu()`] on flex
/// (the vector path where the CPU has AVX2 and FMA). For a caller that runs its own
/// threads on raw buffers (the SMILES generator's fused decoding step).
///
/// # Panics
/// If `out` is shorter than `xs`.
pub fn gelu_into(xs: &[f32], out: &mut [f32]) {
    assert!(
        out.len() >= xs.len(),
        "gelu_into: output shorter than input"
    );
    #[cfg(target_arch = "x86_64")]
    if avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA (checked above).
        unsafe { chunk_avx2(xs, None, out) };
        return;
    }
    chunk_portable(xs, None, out);
}

/// `gelu(x)` (no `grad`) or `grad * gelu'(x)`, elementwise, in parallel chunks.
fn map(x: &FlexTensor, grad: Option<&[f32]>) -> FlexTensor {
    let all = values(x);
    let avx = avx2_fma();
    let out = par_chunks_filled(all.len(), CHUNK, |c, out| {
        let xs = &all[c * CHUNK..c * CHUNK + out.len()];
        let grad = grad.map(|g| &g[c * CHUNK..c * CHUNK + xs.len()]);
        if avx {
            // SAFETY: the CPU has AVX2 and FMA (checked above).
            #[cfg(target_arch = "x86_64")]
            unsafe {
                chunk_avx2(xs, grad, out)
            };
        } else {
            chunk_portable(xs, grad, out);
        }
    });
    tensor_from(out, &dims_of(x))
}

/// Abramowitz & Stegun 7.1.26 coefficients: `erf(z) ~ 1 - t P(t) exp(-z^2)`,
/// `t = 1 / (1 + p |z|)`.
const AS_P: f32 = 0.327_591_1;
const AS_A: [f32; 5] = [
    0.254_829_6,
    -0.284_496_74,
    1.421_413_8,
    -1.453_152_1,
    1.061_405_4,
];

/// `(Phi(x), phi(x))` for one value (the portable path).
fn cdf_pdf(x: f32) -> (f32, f32) {
    let z = (x * std::f32::consts::FRAC_1_SQRT_2).abs();
    let t = 1.0 / (1.0 + AS_P * z);
    let poly = t * (AS_A[0] + t * (AS_A[1] + t * (AS_A[2] + t * (AS_A[3] + t * AS_A[4]))));
    let e = (-0.5 * x * x).exp();
    let erf_abs = 1.0 - poly * e;
    let erf = if x < 0.0 { -erf_abs } else { erf_abs };
    (0.5 * (1.0 + erf), e * 0.398_942_3)
}

fn chunk_portable(xs: &[f32], grad: Option<&[f32]>, out: &mut [f32]) {
    match grad {
        None => {
            for (o, &x) in out.iter_mut().zip(xs) {
                *o = x * cdf_pdf(x).0;
            }
        }
        Some(grad) => {
            for ((o, &x), &g) in out.iter_mut().zip(xs).zip(grad) {
                let (cdf, pdf) = cdf_pdf(x);
                *o = g * (cdf + x * pdf);
            }
        }
    }
}

/// [`chunk_portable`] 8 lanes at a time (the tail padded into one vector).
///
/// # Safety
/// The CPU must have AVX2 and FMA.
///
/// # Panics
/// If `out` or `grad` is shorter than `xs`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn chunk_avx2(xs: &[f32], grad: Option<&[f32]>, out: &mut [f32]) {
    use std::arch::x86_64::*;
    assert!(out.len() >= xs.len() && grad.is_none_or(|g| g.len() >= xs.len()));
    let lanes = |x: __m256, g: Option<__m256>| -> __m256 {
        // SAFETY: AVX2 and FMA, as this function requires.
        unsafe {
            let sign = _mm256_set1_ps(-0.0);
            let z = _mm256_andnot_ps(
                sign,
                _mm256_mul_ps(x, _mm256_set1_ps(std::f32::consts::FRAC_1_SQRT_2)),
            );
            let one = _mm256_set1_ps(1.0);
            let t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(AS_P), z, one));
            let mut poly = _mm256_set1_ps(AS_A[4]);
            for c in [AS_A[3], AS_A[2], AS_A[1], AS_A[0]] {
                poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(c));
            }
            poly = _mm256_mul_ps(poly, t);
            let e = crate::simd::exp8(_mm256_mul_ps(_mm256_set1_ps(-0.5), _mm256_mul_ps(x, x)));
            let erf_abs = _mm256_fnmadd_ps(poly, e, one);
            // erf takes the sign of x.
            let erf = _mm256_or_ps(erf_abs, _mm256_and_ps(x, sign));
            let cdf = _mm256_mul_ps(_mm256_set1_ps(0.5), _mm256_add_ps(one, erf));
            match g {
                None => _mm256_mul_ps(x, cdf),
                Some(g) => {
                    let pdf = _mm256_mul_ps(e, _mm256_set1_ps(0.398_942_3));
                    _mm256_mul_ps(g, _mm256_fmadd_ps(x, pdf, cdf))
                }
            }
        }
    };
    let n = xs.len();
    let mut i = 0;
    // SAFETY: every access is `i .. i + 8` with `i + 8 <= n`, or the padded buffers.
    unsafe {
        while i + 8 <= n {
            let x = _mm256_loadu_ps(xs.as_ptr().add(i));
            let g = grad.map(|g| _mm256_loadu_ps(g.as_ptr().add(i)));
            _mm256_storeu_ps(out.as_mut_ptr().add(i), lanes(x, g));
            i += 8;
        }
        if i < n {
            let (mut xb, mut gb, mut ob) = ([0.0f32; 8], [0.0f32; 8], [0.0f32; 8]);
            xb[..n - i].copy_from_slice(&xs[i..]);
            if let Some(g) = grad {
                gb[..n - i].copy_from_slice(&g[i..]);
            }
            let g = grad.map(|_| _mm256_loadu_ps(gb.as_ptr()));
            _mm256_storeu_ps(ob.as_mut_ptr(), lanes(_mm256_loadu_ps(xb.as_ptr()), g));
            out[i..].copy_from_slice(&ob[..n - i]);
        }
    }
}

/// The GELU node: its state is the input.
#[derive(Debug)]
struct GeluBackward;

impl Backward<Flex, 1> for GeluBackward {
    type State = FlexTensor;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let x = ops.state;
        unary::<Flex, _>(ops.parents, ops.node, grads, |g| {
            let g = contiguous(g);
            map(&x, Some(values(&g)))
        });
    }
}

fn tracked(x: AdTensor) -> AdTensor {
    let prep = GeluBackward
        .prepare::<NoCheckpointing>([x.node()])
        .compute_bound()
        .stateful();
    let x = contiguous(x.into_primitive());
    let y = map(&x, None);
    match prep {
        OpsKind::Tracked(prep) => prep.finish(x, y),
        OpsKind::UnTracked(prep) => prep.finish(y),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // Burn's own op is the reference
mod tests {
    use super::*;
    use burn::tensor::{Distribution, Tolerance};

    /// Values and gradients equal Burn's exact GELU (libm `erff`) to 3e-7 absolute on
    /// [-8, 8] plus random values, through both the vector and the portable path; a
    /// wrong sign branch or a missing `x phi(x)` term is off by O(0.1).
    #[test]
    fn fused_gelu_matches_burns() {
        let dev = Device::flex().autodiff();
        let n = 50_001;
        let grid: Vec<f32> = (0..n)
            .map(|i| -8.0 + 16.0 * i as f32 / (n - 1) as f32)
            .collect();
        let x = Tensor::<1>::cat(
            vec![
                Tensor::from_data(TensorData::new(grid, [n]), &dev),
                Tensor::random([999], Distribution::Normal(0.0, 2.0), &dev),
            ],
            0,
        );
        let g = Tensor::<1>::random([n + 999], Distribution::Normal(0.0, 1.0), &dev);
        let run = |fused: bool| {
            let leaf = x.clone().detach().require_grad();
            let y = if fused {
                gelu(leaf.clone())
            } else {
                activation::gelu(leaf.clone())
            };
            let grads = (y.clone() * g.clone()).sum().backward();
            [
                y.inner().into_data(),
                leaf.grad(&grads).unwrap().into_data(),
            ]
        };
        let (fused, burn) = (run(true), run(false));
        let tol = Tolerance::rel_abs(1e-6, 3e-7);
        fused[0].assert_approx_eq::<f32>(&burn[0], tol);
        // The gradient is g * gelu'(x): relative to |g| ~ 1.
        fused[1].assert_approx_eq::<f32>(&burn[1], Tolerance::rel_abs(1e-6, 1e-6));
        // The portable path, the same values.
        let xs: Vec<f32> = x.clone().inner().into_data().try_to_vec().unwrap();
        let mut portable = vec![0.0; xs.len()];
        chunk_portable(&xs, None, &mut portable);
        TensorData::new(portable, [xs.len()]).assert_approx_eq::<f32>(&burn[0], tol);
        // Without autodiff: the same values as on the autodiff device.
        gelu(x.inner())
            .into_data()
            .assert_approx_eq::<f32>(&fused[0], Tolerance::absolute(0.0));
    }
}
