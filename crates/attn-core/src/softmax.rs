//! Softmax over the last dimension with a fused autodiff op on the CPU backend.
//!
//! Why by hand: burn-autodiff 0.22.1 has no softmax of its own, so under autodiff Burn runs
//! the backend-default decomposition (`max_dim`, `sub`, `exp`, `sum_dim`, `div`: five graph
//! nodes, `exp` in scalar libm on one thread, and `Exp`'s backward computing `exp` again),
//! not flex's fused row kernel. For MAT's attention weights `[32, 8, 33, 33]` that is
//! 2.9 ms forward + backward against 0.6 ms for the fused forward alone
//! (`cargo run -p xtask --example burn_autodiff_ops`; docs/BENCHMARKS.md). Here, on flex's
//! autodiff device, the forward is flex's fused softmax and the backward is the softmax
//! Jacobian-vector product `y * (g - sum_j(g * y))` from the saved output `y`: one graph
//! node. Other backends, and flex without autodiff, use Burn's `softmax`.

use burn::backend::BackendTypes;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::NoCheckpointing;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::ops::{ActivationOps, FloatTensorOps};
use burn::backend::{Autodiff, Flex};
use burn::prelude::*;
use burn::tensor::activation;

/// `softmax(x)` along the last dimension of `x` (any rank `D >= 1`), the same values as
/// `burn::tensor::activation::softmax(x, D - 1)`; on flex's autodiff device one fused op
/// each way (see the module documentation).
#[allow(clippy::disallowed_methods)] // the entry itself: Burn's op is its fallback
pub fn softmax_last<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    let dim = D - 1;
    if !x.is_autodiff() || x.device().without_autodiff() != Device::flex() {
        return activation::softmax(x, dim);
    }
    match x.clone().try_into_primitive::<Autodiff<Flex>>() {
        Ok(primitive) => Tensor::from_primitive::<Autodiff<Flex>>(fused(primitive, dim)),
        // Another checkpointing strategy or backend layout: Burn's softmax.
        Err(_) => activation::softmax(x, dim),
    }
}

/// The softmax node: its state is the forward output `y` (on the inner backend).
#[derive(Debug)]
struct SoftmaxBackward {
    dim: usize,
}

impl Backward<Flex, 1> for SoftmaxBackward {
    type State = <Flex as BackendTypes>::FloatTensorPrimitive;

    fn backward(
        self,
        ops: Ops<Self::State, 1>,
        grads: &mut Gradients,
        _checkpointer: &mut Checkpointer,
    ) {
        let y = ops.state;
        let dim = self.dim;
        unary::<Flex, _>(ops.parents, ops.node, grads, |g| {
            // dL/dx = y * g - y * sum_j(y * g)
            let yg = Flex::float_mul(g, y.clone());
            let sum = Flex::float_sum_dim(yg.clone(), dim);
            Flex::float_sub(yg, Flex::float_mul(y, sum))
        });
    }
}

/// Flex's fused softmax along `dim` as one autodiff node.
fn fused(
    x: <Autodiff<Flex> as BackendTypes>::FloatTensorPrimitive,
    dim: usize,
) -> <Autodiff<Flex> as BackendTypes>::FloatTensorPrimitive {
    let node = x.node();
    let prep = SoftmaxBackward { dim }
        .prepare::<NoCheckpointing>([node])
        .compute_bound()
        .stateful();
    let y = Flex::softmax(x.into_primitive(), dim);
    match prep {
        OpsKind::Tracked(prep) => prep.finish(y.clone(), y),
        OpsKind::UnTracked(prep) => prep.finish(y),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // Burn's own op is the reference
mod tests {
    use super::*;
    use burn::tensor::{Distribution, Tolerance};

    /// Values and gradients equal Burn's softmax (its decomposition) on flex's autodiff
    /// device, with masked keys at -1e12 and one row masked entirely (uniform weights, as
    /// Burn gives); the plain device takes Burn's path.
    #[test]
    fn fused_softmax_matches_burns_values_and_gradients() {
        let dev = Device::flex().autodiff();
        let x = Tensor::<4>::random([3, 2, 5, 7], Distribution::Normal(0.0, 3.0), &dev);
        let keys = Tensor::<4, Bool>::from_data(
            TensorData::new(
                (0..3 * 7)
                    .map(|k| k % 7 >= 5 || k >= 14)
                    .collect::<Vec<_>>(),
                [3, 1, 1, 7],
            ),
            &dev,
        )
        .expand([3, 2, 5, 7]);
        let x = x.mask_fill(keys, -1e12);
        let g = Tensor::<4>::random([3, 2, 5, 7], Distribution::Default, &dev);
        let run = |f: &dyn Fn(Tensor<4>) -> Tensor<4>| {
            let leaf = x.clone().detach().require_grad();
            let y = f(leaf.clone());
            let grads = (y.clone() * g.clone()).sum().backward();
            (y.inner(), leaf.grad(&grads).expect("a gradient"))
        };
        let (y_fused, g_fused) = run(&|t| softmax_last(t));
        let (y_burn, g_burn) = run(&|t| activation::softmax(t, 3));
        y_fused
            .to_data()
            .assert_approx_eq::<f32>(&y_burn.to_data(), Tolerance::absolute(1e-6));
        g_fused
            .to_data()
            .assert_approx_eq::<f32>(&g_burn.to_data(), Tolerance::absolute(1e-6));
        // Batch 2 is masked entirely: uniform weights, no NaN.
        let last: Vec<f32> = y_fused
            .slice([2..3, 0..1, 0..1, 0..7])
            .to_data()
            .try_to_vec::<f32>()
            .unwrap();
        assert!(
            last.iter().all(|&w| (w - 1.0 / 7.0).abs() < 1e-6),
            "{last:?}"
        );
        // Without autodiff: Burn's own softmax, the same values.
        let plain = x.clone().inner();
        softmax_last(plain.clone())
            .to_data()
            .assert_approx_eq::<f32>(&y_burn.to_data(), Tolerance::absolute(1e-6));
    }
}
