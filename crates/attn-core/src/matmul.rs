//! Matrix products and linear layers through the loaded BLAS on the CPU backend.
//!
//! Why by hand: Burn 0.22.1's CPU backend has no way to choose its GEMM, and its `gemm`
//! crate is the largest single cost of a MAT training step (41% of the engine's epoch,
//! 1.8x slower than PyTorch's BLAS at one thread; docs/BENCHMARKS.md). On flex, with a
//! BLAS loaded ([`crate::blas`]), [`matmul()`] is one op forward (the BLAS product) and,
//! under autodiff, one graph node whose backward is two more BLAS products
//! (`dA = G B^T`, `dB = A^T G`, the transposes read in place). Other backends, other
//! dtypes, broadcast batch dimensions, or no BLAS: Burn's `matmul`, unchanged.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::NoCheckpointing;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, binary};
use burn::backend::ops::FloatTensorOps;
use burn::backend::{Autodiff, Flex};
use burn::nn::Linear;
use burn::prelude::*;
use burn::tensor::DType;
use burn_flex::FlexTensor;
use rayon::prelude::*;

use crate::blas::{self, Blas};
use crate::flex_data::{AdTensor, contiguous, on_flex_f32, tensor_from, values};

/// `lhs.matmul(rhs)` (`[..., m, k] x [..., k, n] -> [..., m, n]`), through the BLAS on
/// flex when one is loaded (see the module documentation); the same values as Burn's
/// `matmul` to float rounding (the summation order differs).
///
/// # Panics
/// As Burn's `matmul`, when the shapes do not multiply (`k` differs, or batch dimensions
/// that neither match nor broadcast).
#[allow(clippy::disallowed_methods)] // the entry itself: Burn's op is its fallback
pub fn matmul<const D: usize>(lhs: Tensor<D>, rhs: Tensor<D>) -> Tensor<D> {
    let Some(blas) = blas_for(&lhs) else {
        return lhs.matmul(rhs);
    };
    if lhs.is_autodiff() {
        if let (Ok(a), Ok(b)) = (
            lhs.clone().try_into_primitive::<Autodiff<Flex>>(),
            rhs.clone().try_into_primitive::<Autodiff<Flex>>(),
        ) && supported(a.primitive(), b.primitive())
        {
            return Tensor::from_primitive::<Autodiff<Flex>>(tracked(blas, a, b));
        }
    } else if let (Ok(a), Ok(b)) = (
        lhs.clone().try_into_primitive::<Flex>(),
        rhs.clone().try_into_primitive::<Flex>(),
    ) && let Some(out) = blas::matmul(blas, &a, &b, None)
    {
        return Tensor::from_primitive::<Flex>(out);
    }
    lhs.matmul(rhs)
}

/// `layer.forward(x)` (`[..., d_input] -> [..., d_output]`, Burn's `Linear`: `x W + b`
/// with `W: [d_input, d_output]`) as one 2D product over all leading rows: on flex with a
/// BLAS, the product with the bias as its initial output and, under autodiff, one graph
/// node (see `biased_product`); else Burn's `Linear::forward` on the 2D view (Burn's
/// `linear` on a 3D input may run B small GEMMs, which leaves a core idle at molecule
/// sizes).
///
/// # Panics
/// When the last dimension of `x` is not the layer's `d_input` (in the product's shape
/// check).
#[allow(clippy::disallowed_methods)] // the entry itself: Burn's op is its fallback
pub fn linear<const D: usize>(layer: &Linear, x: Tensor<D>) -> Tensor<D> {
    if D < 2 {
        return layer.forward(x);
    }
    let dims = x.dims();
    let d_input = dims[D - 1];
    let rows = dims[..D - 1].iter().product();
    let x: Tensor<2> = x.reshape([rows, d_input]);
    let y = match (blas_for(&x), &layer.bias) {
        (Some(blas), Some(bias)) => {
            let (w, b) = (layer.weight.val(), bias.val());
            match biased_product(blas, &x, &w, &b) {
                Some(y) => y,
                None => matmul(x, w) + b.unsqueeze_dim(0),
            }
        }
        (Some(_), None) => matmul(x, layer.weight.val()),
        (None, _) => layer.forward(x),
    };
    let mut out = dims;
    out[D - 1] = y.dims()[1];
    y.reshape(out)
}

/// `x W + b` (`x: [rows, k]`, `W: [k, n]`, `b: [n]`) on flex with a BLAS: the bias is
/// the product's initial output (no second pass over it) and, under autodiff, one graph
/// node whose backward is the two products of [`matmul()`] and the bias gradient as
/// column sums of the output gradient on rayon's threads (Burn's broadcast add would sum
/// it on the calling thread). `None` when the operands are not ones the BLAS path takes.
fn biased_product(
    blas: &'static Blas,
    x: &Tensor<2>,
    w: &Tensor<2>,
    b: &Tensor<1>,
) -> Option<Tensor<2>> {
    if x.is_autodiff() {
        let (Ok(x), Ok(w), Ok(b)) = (
            x.clone().try_into_primitive::<Autodiff<Flex>>(),
            w.clone().try_into_primitive::<Autodiff<Flex>>(),
            b.clone().try_into_primitive::<Autodiff<Flex>>(),
        ) else {
            return None;
        };
        if !supported(x.primitive(), w.primitive()) || !is_bias_of(b.primitive(), w.primitive()) {
            return None;
        }
        return Some(Tensor::from_primitive::<Autodiff<Flex>>(tracked_linear(
            blas, x, w, b,
        )));
    }
    let (Ok(x), Ok(w), Ok(b)) = (
        x.clone().try_into_primitive::<Flex>(),
        w.clone().try_into_primitive::<Flex>(),
        b.clone().try_into_primitive::<Flex>(),
    ) else {
        return None;
    };
    if !is_bias_of(&b, &w) {
        return None;
    }
    let b = contiguous(b);
    blas::matmul(blas, &x, &w, Some(values(&b))).map(Tensor::from_primitive::<Flex>)
}

/// Whether `b` is an f32 vector of `w`'s output width.
fn is_bias_of(b: &FlexTensor, w: &FlexTensor) -> bool {
    let (bs, ws) = (b.layout().shape(), w.layout().shape());
    b.dtype() == DType::F32 && bs.num_dims() == 1 && ws.num_dims() == 2 && bs[0] == ws[1]
}

/// Rows per rayon task of [`column_sums`].
const COLUMN_SUM_ROWS: usize = 256;

/// Sums of the columns of `g` (`[rows, n]` row-major): partial sums over blocks of rows
/// on rayon's threads, added in block order (the same result for any thread count).
fn column_sums(g: &[f32], n: usize) -> Vec<f32> {
    let mut sums = vec![0.0f32; n];
    if n == 0 {
        return sums;
    }
    let partials: Vec<Vec<f32>> = g
        .par_chunks(n * COLUMN_SUM_ROWS)
        .map(|block| {
            let mut acc = vec![0.0f32; n];
            for row in block.chunks_exact(n) {
                for (a, v) in acc.iter_mut().zip(row) {
                    *a += v;
                }
            }
            acc
        })
        .collect();
    for part in partials {
        for (s, p) in sums.iter_mut().zip(part) {
            *s += p;
        }
    }
    sums
}

/// The biased product node (parents `x`, `W`, `b`): its state is `x` (for `W`'s gradient)
/// and `W` (for `x`'s), each kept only when needed.
#[derive(Debug)]
struct BlasLinearBackward {
    blas: &'static Blas,
}

impl Backward<Flex, 3> for BlasLinearBackward {
    type State = (Option<FlexTensor>, Option<FlexTensor>);

    fn backward(
        self,
        ops: Ops<Self::State, 3>,
        grads: &mut Gradients,
        _checkpointer: &mut Checkpointer,
    ) {
        let (x, w) = ops.state;
        let g = grads.consume::<Flex>(&ops.node);
        let [px, pw, pb] = ops.parents;
        if let Some(node) = pb {
            let g = contiguous(g.clone());
            let n = g.layout().shape()[1];
            grads.register::<Flex>(node.id, tensor_from(column_sums(values(&g), n), &[n]));
        }
        if let Some(node) = px {
            let w = w.expect("W kept for x's gradient");
            grads.register::<Flex>(node.id, product(self.blas, g.clone(), transposed(w)));
        }
        if let Some(node) = pw {
            let x = x.expect("x kept for W's gradient");
            grads.register::<Flex>(node.id, product(self.blas, transposed(x), g));
        }
    }
}

/// The biased product as one autodiff node.
fn tracked_linear(blas: &'static Blas, x: AdTensor, w: AdTensor, b: AdTensor) -> AdTensor {
    let (x_tracked, w_tracked) = (x.is_tracked(), w.is_tracked());
    let prep = BlasLinearBackward { blas }
        .prepare::<NoCheckpointing>([x.node(), w.node(), b.node()])
        .compute_bound()
        .stateful();
    let (x, w) = (x.into_primitive(), w.into_primitive());
    let b = contiguous(b.into_primitive());
    let out = match blas::matmul(blas, &x, &w, Some(values(&b))) {
        Some(out) => out,
        // A dimension over i32::MAX: flex's product, then the bias row broadcast.
        None => {
            let n = values(&b).len();
            Flex::float_add(
                Flex::float_matmul(x.clone(), w.clone()),
                Flex::float_reshape(b, Shape::new([1, n])),
            )
        }
    };
    match prep {
        OpsKind::Tracked(prep) => {
            prep.finish((w_tracked.then_some(x), x_tracked.then_some(w)), out)
        }
        OpsKind::UnTracked(prep) => prep.finish(out),
    }
}

/// The BLAS when `x` lives on flex (with or without autodiff) and one is loaded.
fn blas_for<const D: usize>(x: &Tensor<D>) -> Option<&'static Blas> {
    let blas = blas::blas()?;
    on_flex_f32(x).then_some(blas)
}

/// Whether [`blas::matmul`] takes these operands (it may still copy a strided one).
fn supported(lhs: &FlexTensor, rhs: &FlexTensor) -> bool {
    let (l, r) = (lhs.layout().shape(), rhs.layout().shape());
    let n = l.num_dims();
    lhs.dtype() == DType::F32
        && rhs.dtype() == DType::F32
        && n >= 2
        && r.num_dims() == n
        && l[..n - 2] == r[..n - 2]
        && l[n - 1] == r[n - 2]
}

/// The BLAS product, or flex's when the BLAS path declines (for operands that passed
/// [`supported`], only when a dimension or leading dimension exceeds `i32::MAX`).
fn product(blas: &Blas, lhs: FlexTensor, rhs: FlexTensor) -> FlexTensor {
    match blas::matmul(blas, &lhs, &rhs, None) {
        Some(out) => out,
        None => Flex::float_matmul(lhs, rhs),
    }
}

/// Swaps the last two dimensions (a view: no copy).
fn transposed(t: FlexTensor) -> FlexTensor {
    let r = t.layout().shape().num_dims();
    t.transpose(r - 2, r - 1)
}

/// The product node: its state is `lhs` (for `rhs`'s gradient) and `rhs` (for `lhs`'s),
/// each kept only when the other side needs a gradient.
#[derive(Debug)]
struct BlasMatmulBackward {
    blas: &'static Blas,
}

impl Backward<Flex, 2> for BlasMatmulBackward {
    type State = (Option<FlexTensor>, Option<FlexTensor>);

    fn backward(
        self,
        ops: Ops<Self::State, 2>,
        grads: &mut Gradients,
        _checkpointer: &mut Checkpointer,
    ) {
        let (lhs, rhs) = ops.state;
        let blas = self.blas;
        binary::<Flex, _, _>(
            ops.parents,
            ops.node,
            grads,
            // dL/dA = G B^T
            |g| {
                product(
                    blas,
                    g,
                    transposed(rhs.expect("rhs kept for lhs's gradient")),
                )
            },
            // dL/dB = A^T G
            |g| {
                product(
                    blas,
                    transposed(lhs.expect("lhs kept for rhs's gradient")),
                    g,
                )
            },
        );
    }
}

/// The BLAS product as one autodiff node.
fn tracked(blas: &'static Blas, lhs: AdTensor, rhs: AdTensor) -> AdTensor {
    let (lhs_tracked, rhs_tracked) = (lhs.is_tracked(), rhs.is_tracked());
    let prep = BlasMatmulBackward { blas }
        .prepare::<NoCheckpointing>([lhs.node(), rhs.node()])
        .compute_bound()
        .stateful();
    let (a, b) = (lhs.into_primitive(), rhs.into_primitive());
    let out = product(blas, a.clone(), b.clone());
    match prep {
        OpsKind::Tracked(prep) => {
            prep.finish((rhs_tracked.then_some(a), lhs_tracked.then_some(b)), out)
        }
        OpsKind::UnTracked(prep) => prep.finish(out),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // Burn's own op is the reference
mod tests {
    use super::*;
    use burn::tensor::{Distribution, TensorData, Tolerance};

    /// Equal to float rounding. Relative as well as absolute: the gradients reach
    /// hundreds, where a different f32 summation order moves the last digits (~1e-4
    /// absolute); a wrong operand or transpose is off by O(1).
    fn assert_close(ours: &[TensorData], burn: &[TensorData]) {
        for (o, b) in ours.iter().zip(burn) {
            o.assert_approx_eq::<f32>(b, Tolerance::rel_abs(1e-5, 1e-4));
        }
    }

    /// CI sets `MOLATTN_REQUIRE_BLAS=1` (and installs OpenBLAS), so the tests below cannot
    /// pass by falling back to Burn's matmul there.
    fn blas_required() {
        if std::env::var("MOLATTN_REQUIRE_BLAS").is_ok_and(|v| v == "1") {
            assert!(blas::blas().is_some(), "{}", blas::blas_summary());
        }
    }

    /// Values and both gradients equal Burn's matmul: 2D, batched 4D with a transposed
    /// (strided) operand, a single-row product, and the plain (no autodiff) device.
    #[test]
    fn blas_matmul_matches_burns_values_and_gradients() {
        blas_required();
        let dev = Device::flex().autodiff();
        let check = |a_shape: Vec<usize>, b_shape: Vec<usize>, transpose_b: bool| {
            let a = Tensor::<4>::random(a_shape, Distribution::Normal(0.0, 1.0), &dev);
            let b = Tensor::<4>::random(b_shape, Distribution::Normal(0.0, 1.0), &dev);
            let run = |f: &dyn Fn(Tensor<4>, Tensor<4>) -> Tensor<4>| {
                let (la, lb) = (a.clone().require_grad(), b.clone().require_grad());
                let rhs = if transpose_b {
                    lb.clone().swap_dims(2, 3)
                } else {
                    lb.clone()
                };
                let y = f(la.clone(), rhs);
                let grads = y.clone().powi_scalar(2).sum().backward();
                [
                    y.inner().to_data(),
                    la.grad(&grads).unwrap().to_data(),
                    lb.grad(&grads).unwrap().to_data(),
                ]
            };
            assert_close(&run(&|x, y| matmul(x, y)), &run(&|x, y| x.matmul(y)));
        };
        check(vec![1, 1, 70, 33], vec![1, 1, 33, 65], false);
        check(vec![2, 3, 9, 5], vec![2, 3, 7, 5], true);
        check(vec![1, 2, 1, 8], vec![1, 2, 8, 3], false);

        // Heads view of attention: [B, N, H, d_k] swapped to [B, H, N, d_k] (strided
        // batch and row axes, unit column stride).
        let x = Tensor::<4>::random([2, 7, 3, 4], Distribution::Normal(0.0, 1.0), &dev);
        let w = Tensor::<4>::random([2, 3, 4, 6], Distribution::Normal(0.0, 1.0), &dev);
        let heads = x.swap_dims(1, 2);
        assert_close(
            &[matmul(heads.clone(), w.clone()).to_data()],
            &[heads.matmul(w).to_data()],
        );

        let plain = Device::flex();
        let a = Tensor::<2>::random([130, 70], Distribution::Normal(0.0, 1.0), &plain);
        let b = Tensor::<2>::random([40, 70], Distribution::Normal(0.0, 1.0), &plain);
        assert_close(
            &[matmul(a.clone(), b.clone().transpose()).to_data()],
            &[a.matmul(b.transpose()).to_data()],
        );
    }

    /// `linear` equals `Linear::forward` on a 3D input: values and the gradients of the
    /// input, weight and bias (with and without a bias; 600 rows, so the bias gradient sums
    /// several row blocks), and values on the plain device.
    #[test]
    fn linear_matches_burns_linear() {
        blas_required();
        let dev = Device::flex().autodiff();
        for bias in [true, false] {
            let layer = burn::nn::LinearConfig::new(24, 10)
                .with_bias(bias)
                .init(&dev);
            // A non-zero bias (Burn's default initialiser may be any).
            let layer = burn::nn::Linear {
                bias: bias.then(|| {
                    burn::module::Param::from_tensor(Tensor::<1>::random(
                        [10],
                        Distribution::Normal(0.0, 1.0),
                        &dev,
                    ))
                }),
                ..layer
            };
            let x = Tensor::<3>::random([3, 200, 24], Distribution::Normal(0.0, 1.0), &dev);
            let run = |f: &dyn Fn(Tensor<3>) -> Tensor<3>| {
                let x = x.clone().require_grad();
                let y = f(x.clone());
                let grads = y.clone().powi_scalar(2).sum().backward();
                let mut out = vec![
                    y.inner().to_data(),
                    x.grad(&grads).unwrap().to_data(),
                    layer.weight.grad(&grads).unwrap().to_data(),
                ];
                if let Some(b) = &layer.bias {
                    out.push(b.grad(&grads).unwrap().to_data());
                }
                out
            };
            assert_close(&run(&|x| linear(&layer, x)), &run(&|x| layer.forward(x)));

            let plain = layer.valid();
            let x = x.clone().inner();
            assert_close(
                &[linear(&plain, x.clone()).to_data()],
                &[plain.forward(x).to_data()],
            );
        }
    }
}
