//! Gaussian basis functions of pair distances (Graphormer-3D / Transformer-M's
//! `GaussianLayer`, `gaussian()` in `transformer_m_layers.py` of lsj2408/Transformer-M) as
//! one op each way on the CPU.
//!
//! Why by hand: the features are `[B, N, N, K]` (a million values for the small preset's
//! batch) and Burn computes them as eight broadcast elementwise ops (subtract, divide,
//! square, scale, exp, divide ...) on one thread, with libm's scalar `expf`, and under
//! autodiff as many backward nodes, each reducing a `[B, N, N, K]` gradient to the `[K]`
//! means and widths (perf: 10-15% of a training step). Here, on flex, one pass over the
//! pairs (rows on rayon's threads, the `K` values of a pair with a vector `exp`):
//!
//! ```text
//! sigma_k = |s_k| + eps,   z = (x - mu_k) / sigma_k
//! psi_k   = exp(-z^2 / 2) / (sqrt(2 pi) sigma_k)
//! dx      = sum_k G psi (-z / sigma_k)
//! dmu_k   = sum_pairs G psi z / sigma_k
//! ds_k    = sign(s_k) sum_pairs G psi (z^2 - 1) / sigma_k
//! ```
//!
//! `x` is the pair's affine-mapped distance `gamma_ij d_ij + beta_ij` (Angstrom), `G` the
//! gradient of `psi`.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::NoCheckpointing;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::{Autodiff, Flex};
use burn::prelude::*;
use burn_flex::FlexTensor;
use rayon::prelude::*;

use crate::flex_data::{AdTensor, contiguous, dims_of, on_flex_f32, tensor_from, values};
use crate::simd::{avx2_fma, exp_in_place};

/// Pairs per rayon task.
const PAIRS_PER_TASK: usize = 256;

/// `psi`: `[..., K]` from `x: [..., 1]` (Angstrom) and the `[K]` parameters `means` and
/// `stds` (widths `|stds| + eps`), as in the module documentation with `pi` in the
/// normaliser `sqrt(2 pi)` (the original code uses 3.14159); `None` when `x` is not
/// f32 on flex (the caller then runs its Burn ops, the same function). Under autodiff one
/// graph node with gradients for `x`, `means` and `stds`.
///
/// # Panics
/// If the last dimension of `x` is not 1 or `means` and `stds` differ in length.
pub fn gaussian_basis<const D: usize>(
    x: Tensor<D>,
    means: Tensor<1>,
    stds: Tensor<1>,
    eps: f64,
    pi: f64,
) -> Option<Tensor<D>> {
    if D == 0 || !on_flex_f32(&x) {
        return None;
    }
    assert_eq!(
        x.dims()[D - 1],
        1,
        "gaussian_basis: x must end in a dimension of 1"
    );
    assert_eq!(
        means.dims(),
        stds.dims(),
        "gaussian_basis: means and stds differ"
    );
    if x.is_autodiff() {
        let (Ok(x), Ok(means), Ok(stds)) = (
            x.try_into_primitive::<Autodiff<Flex>>(),
            means.try_into_primitive::<Autodiff<Flex>>(),
            stds.try_into_primitive::<Autodiff<Flex>>(),
        ) else {
            return None;
        };
        return Some(Tensor::from_primitive::<Autodiff<Flex>>(tracked(
            x, means, stds, eps, pi,
        )));
    }
    let (Ok(x), Ok(means), Ok(stds)) = (
        x.try_into_primitive::<Flex>(),
        means.try_into_primitive::<Flex>(),
        stds.try_into_primitive::<Flex>(),
    ) else {
        return None;
    };
    let params = Params::new(&contiguous(means), &contiguous(stds), eps, pi);
    Some(Tensor::from_primitive::<Flex>(forward(
        &contiguous(x),
        &params,
    )))
}

/// The means, widths and their signs, read once.
#[derive(Debug, Clone)]
struct Params {
    means: Vec<f32>,
    sigma: Vec<f32>,
    sign: Vec<f32>,
    /// `1 / (sqrt(2 pi) sigma_k)`.
    norm: Vec<f32>,
}

impl Params {
    fn new(means: &FlexTensor, stds: &FlexTensor, eps: f64, pi: f64) -> Self {
        let stds = values(stds);
        let sigma: Vec<f32> = stds.iter().map(|s| s.abs() + eps as f32).collect();
        let root = (2.0 * pi).sqrt() as f32;
        Self {
            means: values(means).to_vec(),
            norm: sigma.iter().map(|s| 1.0 / (root * s)).collect(),
            sigma,
            // d|s|/ds as Burn's abs: 0 at 0.
            sign: stds
                .iter()
                .map(|&s| {
                    if s > 0.0 {
                        1.0
                    } else if s < 0.0 {
                        -1.0
                    } else {
                        0.0
                    }
                })
                .collect(),
        }
    }
}

/// `psi` for every pair: `[..., K]`.
fn forward(x: &FlexTensor, p: &Params) -> FlexTensor {
    let k = p.means.len();
    let xs = values(x);
    let mut psi = vec![0.0f32; xs.len() * k];
    let avx = avx2_fma();
    let norm = &p.norm;
    if k > 0 {
        psi.par_chunks_mut(k * PAIRS_PER_TASK)
            .zip(xs.par_chunks(PAIRS_PER_TASK))
            .for_each(|(psi, xs)| {
                for (row, &x) in psi.chunks_mut(k).zip(xs) {
                    for ((r, &mu), &s) in row.iter_mut().zip(&p.means).zip(&p.sigma) {
                        let z = (x - mu) / s;
                        *r = -0.5 * z * z;
                    }
                    exp_rows(row, avx);
                    for (r, &c) in row.iter_mut().zip(norm) {
                        *r *= c;
                    }
                }
            });
    }
    let mut dims = dims_of(x);
    *dims.last_mut().expect("rank >= 1") = k;
    tensor_from(psi, &dims)
}

/// `exp` in place through the vector path when the CPU has it.
fn exp_rows(row: &mut [f32], avx: bool) {
    #[cfg(target_arch = "x86_64")]
    if avx {
        // SAFETY: the CPU has AVX2 and FMA.
        unsafe { exp_rows_avx2(row) };
        return;
    }
    let _ = avx;
    exp_in_place::<false>(row);
}

/// # Safety
/// The CPU must have AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn exp_rows_avx2(row: &mut [f32]) {
    exp_in_place::<true>(row);
}

/// `dx` (one per pair) and the `[K]` sums for `dmu` and `ds`.
fn backward(x: &[f32], psi: &[f32], grad: &[f32], p: &Params) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let k = p.means.len();
    let mut dx = vec![0.0f32; x.len()];
    if k == 0 {
        return (dx, Vec::new(), Vec::new());
    }
    let inv: Vec<f32> = p.sigma.iter().map(|s| 1.0 / s).collect();
    let partials: Vec<(Vec<f64>, Vec<f64>)> = dx
        .par_chunks_mut(PAIRS_PER_TASK)
        .zip(x.par_chunks(PAIRS_PER_TASK))
        .zip(psi.par_chunks(k * PAIRS_PER_TASK))
        .zip(grad.par_chunks(k * PAIRS_PER_TASK))
        .map(|(((dx, x), psi), grad)| {
            let mut dmu = vec![0.0f32; k];
            let mut dsigma = vec![0.0f32; k];
            for (((dx, &x), psi), grad) in
                dx.iter_mut().zip(x).zip(psi.chunks(k)).zip(grad.chunks(k))
            {
                let mut sum = 0.0f32;
                for c in 0..k {
                    let z = (x - p.means[c]) * inv[c];
                    let gp = grad[c] * psi[c] * inv[c];
                    sum -= gp * z;
                    dmu[c] += gp * z;
                    dsigma[c] += gp * (z * z - 1.0);
                }
                *dx = sum;
            }
            // Per task in f32 (256 pairs), across tasks in f64.
            (
                dmu.into_iter().map(f64::from).collect(),
                dsigma.into_iter().map(f64::from).collect(),
            )
        })
        .collect();
    let mut dmu = vec![0.0f64; k];
    let mut dsigma = vec![0.0f64; k];
    for (m, s) in partials {
        for c in 0..k {
            dmu[c] += m[c];
            dsigma[c] += s[c];
        }
    }
    let dmu = dmu.into_iter().map(|v| v as f32).collect();
    let ds = dsigma
        .into_iter()
        .zip(&p.sign)
        .map(|(v, &s)| v as f32 * s)
        .collect();
    (dx, dmu, ds)
}

/// The saved forward: `x`, `psi` and the parameters.
#[derive(Debug, Clone)]
struct BasisState {
    x: FlexTensor,
    psi: FlexTensor,
    params: std::sync::Arc<Params>,
}

/// The node (parents: `x`, `means`, `stds`).
#[derive(Debug)]
struct GaussianBasisBackward;

impl Backward<Flex, 3> for GaussianBasisBackward {
    type State = BasisState;

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let BasisState { x, psi, params } = ops.state;
        let grad = contiguous(grads.consume::<Flex>(&ops.node));
        let (dx, dmu, ds) = backward(values(&x), values(&psi), values(&grad), &params);
        let k = dmu.len();
        let [px, pmu, ps] = ops.parents;
        if let Some(node) = px {
            grads.register::<Flex>(node.id, tensor_from(dx, &dims_of(&x)));
        }
        if let Some(node) = pmu {
            grads.register::<Flex>(node.id, tensor_from(dmu, &[k]));
        }
        if let Some(node) = ps {
            grads.register::<Flex>(node.id, tensor_from(ds, &[k]));
        }
    }
}

fn tracked(x: AdTensor, means: AdTensor, stds: AdTensor, eps: f64, pi: f64) -> AdTensor {
    let prep = GaussianBasisBackward
        .prepare::<NoCheckpointing>([x.node(), means.node(), stds.node()])
        .compute_bound()
        .stateful();
    let x = contiguous(x.into_primitive());
    let params = Params::new(
        &contiguous(means.into_primitive()),
        &contiguous(stds.into_primitive()),
        eps,
        pi,
    );
    let psi = forward(&x, &params);
    match prep {
        OpsKind::Tracked(prep) => prep.finish(
            BasisState {
                x,
                psi: psi.clone(),
                params: std::sync::Arc::new(params),
            },
            psi,
        ),
        OpsKind::UnTracked(prep) => prep.finish(psi),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Distribution, Tolerance};

    /// The original code's `pi` (deliberately not `std::f64::consts::PI`).
    #[allow(clippy::approx_constant)]
    const ORIGINAL_PI: f64 = 3.14159;

    /// The Burn ops of the original's `gaussian()` (what the kernel replaces).
    fn reference(x: Tensor<4>, means: Tensor<1>, stds: Tensor<1>, eps: f64, pi: f64) -> Tensor<4> {
        let k = means.dims()[0];
        let mean = means.reshape([1, 1, 1, k]);
        let std = stds.abs().add_scalar(eps).reshape([1, 1, 1, k]);
        let z = (x - mean) / std.clone();
        z.powi_scalar(2)
            .mul_scalar(-0.5)
            .exp()
            .div(std.mul_scalar((2.0 * pi).sqrt()))
    }

    /// Values and the gradients of x, means and stds equal the Burn ops', one width
    /// negative (the abs's sign) and K = 13 (vector tail); a wrong sign or a missing
    /// `-1` in `ds` is off by O(1).
    #[test]
    fn fused_basis_matches_the_burn_ops() {
        let dev = Device::flex().autodiff();
        let k = 13;
        let x = Tensor::<4>::random([2, 7, 7, 1], Distribution::Uniform(0.0, 9.0), &dev);
        let means = Tensor::<1>::random([k], Distribution::Uniform(0.0, 3.0), &dev);
        let stds = Tensor::<1>::random([k], Distribution::Uniform(0.3, 3.0), &dev)
            * Tensor::<1>::from_floats(
                [
                    1.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                ],
                &dev,
            );
        let g = Tensor::<4>::random([2, 7, 7, k], Distribution::Normal(0.0, 1.0), &dev);
        let run = |fused: bool| {
            let (x, means, stds) = (
                x.clone().detach().require_grad(),
                means.clone().detach().require_grad(),
                stds.clone().detach().require_grad(),
            );
            let psi = if fused {
                gaussian_basis(x.clone(), means.clone(), stds.clone(), 1e-5, ORIGINAL_PI).unwrap()
            } else {
                reference(x.clone(), means.clone(), stds.clone(), 1e-5, ORIGINAL_PI)
            };
            let grads = (psi.clone() * g.clone()).sum().backward();
            [
                psi.inner().into_data(),
                x.grad(&grads).unwrap().into_data(),
                means.grad(&grads).unwrap().into_data(),
                stds.grad(&grads).unwrap().into_data(),
            ]
        };
        for (f, r) in run(true).iter().zip(&run(false)) {
            f.assert_approx_eq::<f32>(r, Tolerance::rel_abs(1e-4, 1e-6));
        }
        let plain = gaussian_basis(
            x.clone().inner(),
            means.clone().inner(),
            stds.clone().inner(),
            1e-5,
            ORIGINAL_PI,
        )
        .unwrap();
        plain.into_data().assert_approx_eq::<f32>(
            &reference(x.inner(), means.inner(), stds.inner(), 1e-5, ORIGINAL_PI).into_data(),
            Tolerance::rel_abs(1e-5, 1e-7),
        );
    }
}
