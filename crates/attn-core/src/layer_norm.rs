//! Layer normalisation over the last dimension as one op each way on the CPU backend.
//!
//! Why by hand: burn-autodiff 0.22.1 has no layer-norm op, so under autodiff a layer norm is
//! its decomposition (mean, subtract, square, sum, divide, sqrt, add, divide, multiply,
//! add: ten graph nodes forward, more backward, each a pass over `[B, N, d]` on one thread);
//! MAT's norm (unbiased std plus eps, reference `LayerNorm`) has no fused op anywhere in
//! Burn. Here, on flex, the forward is one pass per row and, under autodiff, one graph
//! node whose backward is one more pass per row (rows on rayon's threads):
//!
//! ```text
//! c = x - mean(x),  y = c / s * gamma + beta
//! s = sqrt(sum(c^2) / d + eps)                 torch.nn.LayerNorm   (RowNorm::Standard)
//! s = sqrt(sum(c^2) / (d - 1)) + eps           MAT LayerNorm        (RowNorm::UnbiasedStd)
//! g = dy * gamma
//! dx = (g - mean(g)) / s - c * sum(g * c) * k,  k = 1 / (s^3 d)  or  1 / (s^2 std (d - 1))
//! dgamma = sum_rows(dy * c / s),  dbeta = sum_rows(dy)
//! ```
//!
//! (MAT: a constant row, std 0, gets `k = 0`: its `c` is zero, and the decomposition's
//! `sqrt` backward would give 0 * inf there.) Row statistics are summed in f64.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::NoCheckpointing;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::{Autodiff, Flex};
use burn::nn::LayerNorm;
use burn::prelude::*;
use burn_flex::FlexTensor;
use rayon::prelude::*;

use crate::flex_data::{AdTensor, contiguous, dims_of, on_flex_f32, tensor_from, values};

/// Rows per rayon task: a `[32 x 33, 128]` activation is 17 tasks.
const ROWS_PER_TASK: usize = 64;

/// Which layer norm (see the module documentation for the formulas).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowNorm {
    /// `torch.nn.LayerNorm` / Burn's `LayerNorm`: biased variance, `eps` inside the root.
    Standard {
        /// Added to the variance.
        eps: f64,
    },
    /// MAT's `LayerNorm` (ardigen/MAT `src/transformer.py`): `torch.std` (unbiased, divides
    /// by `d - 1`, at least 1) plus `eps`.
    UnbiasedStd {
        /// Added to the standard deviation.
        eps: f64,
    },
}

/// `gamma * (x - mean) / s + beta` over the last dimension of `x` (`[..., d]`, `gamma`
/// and `beta` `[d]`), with `s` as `kind` says; `None` when `x` is not an f32 tensor on flex
/// (the caller then runs its decomposition, the same function). On flex's autodiff
/// device, one graph node (gradients for `x`, `gamma`, `beta`, whichever are tracked).
///
/// # Panics
/// If `gamma` or `beta` is not `[d]`.
pub fn layer_norm<const D: usize>(
    x: Tensor<D>,
    gamma: Tensor<1>,
    beta: Tensor<1>,
    kind: RowNorm,
) -> Option<Tensor<D>> {
    if D == 0 || !on_flex_f32(&x) {
        return None;
    }
    let d = x.dims()[D - 1];
    assert_eq!(gamma.dims(), [d], "layer_norm: gamma must be [d]");
    assert_eq!(beta.dims(), [d], "layer_norm: beta must be [d]");
    if x.is_autodiff() {
        let (Ok(x), Ok(gamma), Ok(beta)) = (
            x.try_into_primitive::<Autodiff<Flex>>(),
            gamma.try_into_primitive::<Autodiff<Flex>>(),
            beta.try_into_primitive::<Autodiff<Flex>>(),
        ) else {
            return None;
        };
        return Some(Tensor::from_primitive::<Autodiff<Flex>>(tracked(
            x, gamma, beta, kind,
        )));
    }
    let (Ok(x), Ok(gamma), Ok(beta)) = (
        x.try_into_primitive::<Flex>(),
        gamma.try_into_primitive::<Flex>(),
        beta.try_into_primitive::<Flex>(),
    ) else {
        return None;
    };
    let (y, _) = forward(&contiguous(x), &contiguous(gamma), &contiguous(beta), kind);
    Some(Tensor::from_primitive::<Flex>(y))
}

/// `norm.forward(x)` for Burn's `LayerNorm` made with epsilon `eps` (Burn keeps its
/// epsilon private, so the caller passes the one it built the layer with):
/// `gamma * (x - mean) / sqrt(var + eps) + beta` over the last dimension, `x: [..., d]`,
/// the same shape back. The one entry of this op: on flex (f32) the fused op of the
/// module documentation ([`layer_norm()`] with [`RowNorm::Standard`]), elsewhere, or for
/// a layer without `beta`, Burn's own.
///
/// # Panics
/// If the last dimension of `x` is not the layer's `d_model`.
#[allow(clippy::disallowed_methods)] // the entry itself: Burn's op is its fallback
pub fn apply_layer_norm<const D: usize>(norm: &LayerNorm, eps: f64, x: Tensor<D>) -> Tensor<D> {
    let beta = norm.beta.as_ref().map(|b| b.val());
    let kind = RowNorm::Standard { eps };
    beta.and_then(|beta| layer_norm(x.clone(), norm.gamma.val(), beta, kind))
        .unwrap_or_else(|| norm.forward(x))
}

/// The forward of [`layer_norm()`] on raw rows, on the calling thread: `x` holds rows of
/// `d = gamma.len()` values, `out` receives `gamma * (x - mean) / s + beta` per row (the
/// same values as [`layer_norm()`] on flex). For a caller that runs its own threads (the
/// SMILES generator's fused decoding step).
///
/// # Panics
/// If `beta` is not as long as `gamma`, `x` is not whole rows, or `out` is shorter
/// than `x`.
pub fn layer_norm_rows(x: &[f32], gamma: &[f32], beta: &[f32], kind: RowNorm, out: &mut [f32]) {
    let d = gamma.len();
    assert!(
        beta.len() == d && d > 0 && x.len().is_multiple_of(d) && out.len() >= x.len(),
        "layer_norm_rows: rows of {d} values expected"
    );
    for (y, x) in out.chunks_mut(d).zip(x.chunks(d)) {
        normalize_row(x, gamma, beta, kind, y);
    }
}

/// One row of the forward: `y = gamma * (x - mean) / s + beta`; returns the row's
/// statistics (kept for the backward).
#[inline]
fn normalize_row(x: &[f32], gamma: &[f32], beta: &[f32], kind: RowNorm, y: &mut [f32]) -> RowStats {
    let stats = row_stats(x, kind);
    let [mean, s, _] = stats;
    let inv = 1.0 / s;
    for (((y, &x), &g), &b) in y.iter_mut().zip(x).zip(gamma).zip(beta) {
        *y = (x - mean) * inv * g + b;
    }
    stats
}

/// Per row: the mean, `s`, and the backward coefficient `k`.
type RowStats = [f32; 3];

/// The forward pass: `y` and each row's statistics.
fn forward(
    x: &FlexTensor,
    gamma: &FlexTensor,
    beta: &FlexTensor,
    kind: RowNorm,
) -> (FlexTensor, Vec<RowStats>) {
    let dims = dims_of(x);
    let d = *dims.last().expect("rank >= 1");
    let (xs, gamma, beta) = (values(x), values(gamma), values(beta));
    let rows = xs.len().checked_div(d).unwrap_or(0);
    let mut y = vec![0.0f32; xs.len()];
    let mut stats = vec![[0.0f32; 3]; rows];
    if d > 0 {
        y.par_chunks_mut(d * ROWS_PER_TASK)
            .zip(stats.par_chunks_mut(ROWS_PER_TASK))
            .zip(xs.par_chunks(d * ROWS_PER_TASK))
            .for_each(|((y, stats), xs)| {
                for ((y, st), x) in y.chunks_mut(d).zip(stats).zip(xs.chunks(d)) {
                    *st = normalize_row(x, gamma, beta, kind, y);
                }
            });
    }
    (tensor_from(y, &dims), stats)
}

/// The mean, `s` and `k` of one row (see the module documentation).
fn row_stats(x: &[f32], kind: RowNorm) -> RowStats {
    let d = x.len();
    let mean = x.iter().map(|&v| v as f64).sum::<f64>() / d as f64;
    let ss: f64 = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
    let (s, k) = match kind {
        RowNorm::Standard { eps } => {
            let s = (ss / d as f64 + eps).sqrt();
            (s, 1.0 / (s * s * s * d as f64))
        }
        RowNorm::UnbiasedStd { eps } => {
            let denom = (d.max(2) - 1) as f64;
            let std = (ss / denom).sqrt();
            let s = std + eps;
            let k = if std > 0.0 {
                1.0 / (s * s * std * denom)
            } else {
                0.0
            };
            (s, k)
        }
    };
    [mean as f32, s as f32, k as f32]
}

/// The backward pass: `dx` (rows as `x`), `dgamma` and `dbeta` (`[d]`).
fn backward(
    x: &[f32],
    dy: &[f32],
    gamma: &[f32],
    stats: &[RowStats],
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let d = gamma.len();
    let mut dx = vec![0.0f32; x.len()];
    if d == 0 {
        return (dx, Vec::new(), Vec::new());
    }
    // Each task's partial sums of dgamma and dbeta, added up after.
    let partials: Vec<(Vec<f64>, Vec<f64>)> = dx
        .par_chunks_mut(d * ROWS_PER_TASK)
        .zip(x.par_chunks(d * ROWS_PER_TASK))
        .zip(dy.par_chunks(d * ROWS_PER_TASK))
        .zip(stats.par_chunks(ROWS_PER_TASK))
        .map(|(((dx, x), dy), stats)| {
            let mut dgamma = vec![0.0f64; d];
            let mut dbeta = vec![0.0f64; d];
            let mut g = vec![0.0f32; d];
            for (((dx, x), dy), &[mean, s, k]) in dx
                .chunks_mut(d)
                .zip(x.chunks(d))
                .zip(dy.chunks(d))
                .zip(stats)
            {
                let inv = 1.0 / s;
                let (mut sum_g, mut sum_gc) = (0.0f64, 0.0f64);
                for j in 0..d {
                    g[j] = dy[j] * gamma[j];
                    let c = x[j] - mean;
                    sum_g += g[j] as f64;
                    sum_gc += (g[j] * c) as f64;
                    dgamma[j] += (dy[j] * c * inv) as f64;
                    dbeta[j] += dy[j] as f64;
                }
                let mean_g = (sum_g / d as f64) as f32;
                let coef = (sum_gc * k as f64) as f32;
                for j in 0..d {
                    dx[j] = (g[j] - mean_g) * inv - (x[j] - mean) * coef;
                }
            }
            (dgamma, dbeta)
        })
        .collect();
    let mut dgamma = vec![0.0f64; d];
    let mut dbeta = vec![0.0f64; d];
    for (pg, pb) in partials {
        for j in 0..d {
            dgamma[j] += pg[j];
            dbeta[j] += pb[j];
        }
    }
    let to_f32 = |v: Vec<f64>| v.into_iter().map(|a| a as f32).collect();
    (dx, to_f32(dgamma), to_f32(dbeta))
}

/// The saved forward: `x`, `gamma` (contiguous) and the row statistics.
#[derive(Debug, Clone)]
struct NormState {
    x: FlexTensor,
    gamma: FlexTensor,
    stats: std::sync::Arc<Vec<RowStats>>,
}

/// The layer-norm node (parents: `x`, `gamma`, `beta`).
#[derive(Debug)]
struct LayerNormBackward;

impl Backward<Flex, 3> for LayerNormBackward {
    type State = NormState;

    fn backward(
        self,
        ops: Ops<Self::State, 3>,
        grads: &mut Gradients,
        _checkpointer: &mut Checkpointer,
    ) {
        let NormState { x, gamma, stats } = ops.state;
        let dy = contiguous(grads.consume::<Flex>(&ops.node));
        let dims = dims_of(&x);
        let (dx, dgamma, dbeta) = backward(values(&x), values(&dy), values(&gamma), &stats);
        let d = dgamma.len();
        let [px, pgamma, pbeta] = ops.parents;
        if let Some(node) = px {
            grads.register::<Flex>(node.id, tensor_from(dx, &dims));
        }
        if let Some(node) = pgamma {
            grads.register::<Flex>(node.id, tensor_from(dgamma, &[d]));
        }
        if let Some(node) = pbeta {
            grads.register::<Flex>(node.id, tensor_from(dbeta, &[d]));
        }
    }
}

/// The forward as one autodiff node.
fn tracked(x: AdTensor, gamma: AdTensor, beta: AdTensor, kind: RowNorm) -> AdTensor {
    let prep = LayerNormBackward
        .prepare::<NoCheckpointing>([x.node(), gamma.node(), beta.node()])
        .compute_bound()
        .stateful();
    let x = contiguous(x.into_primitive());
    let gamma = contiguous(gamma.into_primitive());
    let beta = contiguous(beta.into_primitive());
    let (y, stats) = forward(&x, &gamma, &beta, kind);
    match prep {
        OpsKind::Tracked(prep) => prep.finish(
            NormState {
                x,
                gamma,
                stats: std::sync::Arc::new(stats),
            },
            y,
        ),
        OpsKind::UnTracked(prep) => prep.finish(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Distribution, Tolerance};

    /// The decomposition each kind replaces (Burn ops only).
    fn decomposed<const D: usize>(
        x: Tensor<D>,
        gamma: Tensor<1>,
        beta: Tensor<1>,
        kind: RowNorm,
    ) -> Tensor<D> {
        let d = x.dims()[D - 1];
        let centred = x.clone() - x.mean_dim(D - 1);
        let ss = centred.clone().square().sum_dim(D - 1);
        let s = match kind {
            RowNorm::Standard { eps } => ss.div_scalar(d as f64).add_scalar(eps).sqrt(),
            RowNorm::UnbiasedStd { eps } => {
                ss.div_scalar((d.max(2) - 1) as f64).sqrt().add_scalar(eps)
            }
        };
        centred / s * gamma.unsqueeze::<D>() + beta.unsqueeze::<D>()
    }

    /// Values and all three gradients equal the decomposition's, both kinds, on flex's
    /// autodiff device and (values) on the plain device; a wrong term in `dx` (the
    /// `mean(g)` or the `k` term) or a swapped `dgamma` is off by O(1).
    #[test]
    fn fused_layer_norm_matches_the_decomposition() {
        let dev = Device::flex().autodiff();
        let d = 37;
        let x = Tensor::<3>::random([3, 70, d], Distribution::Normal(0.5, 2.0), &dev);
        let gamma = Tensor::<1>::random([d], Distribution::Normal(1.0, 0.5), &dev);
        let beta = Tensor::<1>::random([d], Distribution::Normal(0.0, 0.5), &dev);
        let weight = Tensor::<3>::random([3, 70, d], Distribution::Default, &dev);
        for kind in [
            RowNorm::Standard { eps: 1e-5 },
            RowNorm::UnbiasedStd { eps: 1e-6 },
        ] {
            let run = |fused: bool| {
                let (x, gamma, beta) = (
                    x.clone().detach().require_grad(),
                    gamma.clone().detach().require_grad(),
                    beta.clone().detach().require_grad(),
                );
                let y = if fused {
                    layer_norm(x.clone(), gamma.clone(), beta.clone(), kind).expect("on flex")
                } else {
                    decomposed(x.clone(), gamma.clone(), beta.clone(), kind)
                };
                let grads = (y.clone() * weight.clone()).sum().backward();
                [
                    y.inner().into_data(),
                    x.grad(&grads).expect("dx").into_data(),
                    gamma.grad(&grads).expect("dgamma").into_data(),
                    beta.grad(&grads).expect("dbeta").into_data(),
                ]
            };
            for (f, b) in run(true).iter().zip(&run(false)) {
                f.assert_approx_eq::<f32>(b, Tolerance::rel_abs(1e-4, 1e-5));
            }
            let plain = layer_norm(
                x.clone().inner(),
                gamma.clone().inner(),
                beta.clone().inner(),
                kind,
            )
            .expect("on flex");
            plain.into_data().assert_approx_eq::<f32>(
                &decomposed(
                    x.clone().inner(),
                    gamma.clone().inner(),
                    beta.clone().inner(),
                    kind,
                )
                .into_data(),
                Tolerance::rel_abs(1e-5, 1e-6),
            );
        }
    }

    /// A strided input (a transposed view) is read in its logical order.
    #[test]
    fn strided_input_is_normalised_by_logical_rows() {
        let dev = Device::flex();
        let x = Tensor::<2>::random([5, 8], Distribution::Default, &dev);
        let (gamma, beta) = (Tensor::<1>::ones([5], &dev), Tensor::<1>::zeros([5], &dev));
        let kind = RowNorm::UnbiasedStd { eps: 1e-6 };
        let fused = layer_norm(x.clone().transpose(), gamma.clone(), beta.clone(), kind).unwrap();
        let want = decomposed(x.transpose(), gamma, beta, kind);
        fused
            .into_data()
            .assert_approx_eq::<f32>(&want.into_data(), Tolerance::rel_abs(1e-5, 1e-6));
    }

    /// MAT's constant row (std 0): output beta, finite gradients.
    #[test]
    fn constant_row_gives_beta_and_finite_gradients() {
        let dev = Device::flex().autodiff();
        let x = Tensor::<2>::full([2, 4], 3.0, &dev).require_grad();
        let gamma = Tensor::<1>::ones([4], &dev).require_grad();
        let beta = Tensor::<1>::from_floats([0.5, -1.0, 0.0, 2.0], &dev).require_grad();
        let y = layer_norm(x.clone(), gamma, beta, RowNorm::UnbiasedStd { eps: 1e-6 }).unwrap();
        let v: Vec<f32> = y.clone().inner().into_data().try_to_vec().unwrap();
        assert_eq!(v, [0.5, -1.0, 0.0, 2.0, 0.5, -1.0, 0.0, 2.0]);
        let grads = (y * Tensor::<2>::random([2, 4], Distribution::Default, &dev))
            .sum()
            .backward();
        let g: Vec<f32> = x.grad(&grads).unwrap().into_data().try_to_vec().unwrap();
        assert!(g.iter().all(|v| v.is_finite()), "{g:?}");
    }
}
