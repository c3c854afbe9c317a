//! Graphormer's multi-hop edge encoding (Ying et al. 2021, Eq. 7; Transformer-M's 2D
//! channel) as one multi-threaded pass each way on the CPU.
//!
//! Why by hand: with Burn's ops on flex the encoding is an embedding gather of
//! `B N N M 3` rows, a mask multiply, a mean, `M` products, a sum over hops, a division
//! and a permute, each a pass over `[B, N, N, M, 3, H]` or `[B, N, N, H]` floats, the
//! reductions on one thread: 20-25% of the Transformer-M small forward (perf), where most
//! pairs are padding or have paths shorter than `M` (their hops are index 0, adding 0).
//! The hop weight is linear, so it is applied to the embedding table once per call
//! (`T_m = E W_m`, `[M, V, H]`), and each pair adds up the rows of its present edges:
//!
//! ```text
//! edge[b, :, i, j] = sum_m sum_k T_m[e(b, i, j, m, k)] / (3 path_length(b, i, j)),
//!                    the terms with e = 0 (no edge: padding past the path's end) left out
//! ```
//!
//! The same values as the unfused ops to f32 rounding (the hop weight is applied before
//! the mean over a hop's three bond features, and the sum is multiplied by
//! `1 / (3 path_length)`: the same terms in another order). Under autodiff the pass is one
//! graph node whose parent is `T` (`[M, V, H]`): its backward adds each pair's scaled
//! gradient into the rows of its present edges, and Burn's product node carries that on
//! to the table and the hop weights.

use std::sync::Arc;

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::NoCheckpointing;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::{Autodiff, Flex};
use burn::prelude::*;
use burn_flex::FlexTensor;
use rayon::prelude::*;

use crate::flex_data::{AdTensor, contiguous, on_flex_f32, tensor_from, values};

/// The edge encoding `[B, H, N, N]` from the bond-feature embedding `table: [V, H]`, the
/// per-hop weights `hop_weight: [M, H, H]`, `edge_index: [B, N, N, M, 3]` (rows of the
/// table; 0 = no edge, adding nothing) and `path_length: [B, N, N]` (the divisor, e.g.
/// `clamp(SPD, 1, M)`; data, no gradient), as the module documentation computes it, with
/// gradients for `table` and `hop_weight` on flex's autodiff device; `None` off flex or
/// off f32 (the caller's ops then run).
///
/// # Panics
/// If the shapes disagree or an index is negative or not below `V`.
pub fn multi_hop_edge_bias(
    table: Tensor<2>,
    hop_weight: Tensor<3>,
    edge_index: &Tensor<5, Int>,
    path_length: &Tensor<3>,
) -> Option<Tensor<4>> {
    if !on_flex_f32(&table) {
        return None;
    }
    let [v, h] = table.dims();
    let m = hop_weight.dims()[0];
    assert_eq!(
        hop_weight.dims(),
        [m, h, h],
        "multi_hop_edge_bias: hop_weight must be [M, H, H]"
    );
    let [b, n, n2, m2, three] = edge_index.dims();
    assert!(
        n == n2 && m == m2 && three == 3,
        "multi_hop_edge_bias: edge_index must be [B, N, N, M, 3] with M = hop_weight's M"
    );
    assert_eq!(
        path_length.dims(),
        [b, n, n],
        "multi_hop_edge_bias: path_length must be [B, N, N]"
    );
    let edges = Edges {
        index: Arc::new(
            edge_index
                .clone()
                .into_data()
                .convert::<i64>()
                .try_to_vec()
                .ok()?,
        ),
        lengths: Arc::new(
            path_length
                .clone()
                .into_data()
                .convert::<f32>()
                .try_to_vec()
                .ok()?,
        ),
        b,
        n,
        m,
        v,
        h,
    };
    // T_m = E W_m for every hop: [M, V, H].
    let hop_tables = crate::matmul(table.unsqueeze_dim::<3>(0).expand([m, v, h]), hop_weight);
    if hop_tables.is_autodiff() {
        let t = hop_tables.try_into_primitive::<Autodiff<Flex>>().ok()?;
        return Some(Tensor::from_primitive::<Autodiff<Flex>>(tracked(t, edges)));
    }
    let t = contiguous(hop_tables.try_into_primitive::<Flex>().ok()?);
    Some(Tensor::from_primitive::<Flex>(edges.forward(values(&t))))
}

/// The no-gradient inputs and sizes of one call.
#[derive(Debug, Clone)]
struct Edges {
    /// `[B, N, N, M, 3]` rows of the table.
    index: Arc<Vec<i64>>,
    /// `[B, N, N]` divisors.
    lengths: Arc<Vec<f32>>,
    b: usize,
    n: usize,
    m: usize,
    v: usize,
    h: usize,
}

impl Edges {
    /// `1 / (3 path_length)` of pair `pair` of molecule `bi`.
    fn scale(&self, bi: usize, pair: usize) -> f32 {
        1.0 / (3.0 * self.lengths[bi * self.n * self.n + pair])
    }

    /// Calls `f(row of T)` for every present edge of pair `pair` of molecule `bi` (row
    /// `hop V + e` of `[M V, H]`).
    #[inline(always)]
    fn for_each_edge(&self, bi: usize, pair: usize, mut f: impl FnMut(usize)) {
        let (nn, m, v) = (self.n * self.n, self.m, self.v);
        let at = bi * nn + pair;
        for (hop, hop_edges) in self.index[at * m * 3..(at + 1) * m * 3]
            .chunks_exact(3)
            .enumerate()
        {
            for &e in hop_edges {
                if e == 0 {
                    continue;
                }
                let e = usize::try_from(e).expect("multi_hop_edge_bias: negative index");
                assert!(e < v, "multi_hop_edge_bias: index {e} not below V = {v}");
                f(hop * v + e);
            }
        }
    }

    /// `[B, H, N, N]` from `T` (`[M, V, H]` values), molecules on rayon's threads.
    fn forward(&self, tables: &[f32]) -> FlexTensor {
        let (b, n, h) = (self.b, self.n, self.h);
        let nn = n * n;
        let mut out = vec![0.0f32; b * h * nn];
        out.par_chunks_mut((h * nn).max(1))
            .enumerate()
            .for_each(|(bi, out)| {
                let mut acc = vec![0.0f32; h];
                for pair in 0..nn {
                    acc.fill(0.0);
                    self.for_each_edge(bi, pair, |row| {
                        for (a, &t) in acc.iter_mut().zip(&tables[row * h..(row + 1) * h]) {
                            *a += t;
                        }
                    });
                    let scale = self.scale(bi, pair);
                    for (hh, &a) in acc.iter().enumerate() {
                        out[hh * nn + pair] = a * scale;
                    }
                }
            });
        tensor_from(out, &[b, h, n, n])
    }

    /// `dT` (`[M, V, H]`) from the output's gradient `g` (`[B, H, N, N]` values): each
    /// present edge's row gets its pair's gradient times the pair's scale. Molecules on
    /// rayon's threads, each fold with its own `dT`, summed at the end.
    fn backward(&self, g: &[f32]) -> FlexTensor {
        let (n, m, v, h) = (self.n, self.m, self.v, self.h);
        let nn = n * n;
        let size = m * v * h;
        let dt = (0..self.b)
            .into_par_iter()
            .fold(
                || vec![0.0f32; size],
                |mut dt, bi| {
                    let g = &g[bi * h * nn..(bi + 1) * h * nn];
                    let mut gp = vec![0.0f32; h];
                    for pair in 0..nn {
                        let scale = self.scale(bi, pair);
                        for (hh, x) in gp.iter_mut().enumerate() {
                            *x = g[hh * nn + pair] * scale;
                        }
                        self.for_each_edge(bi, pair, |row| {
                            for (d, &x) in dt[row * h..(row + 1) * h].iter_mut().zip(&gp) {
                                *d += x;
                            }
                        });
                    }
                    dt
                },
            )
            .reduce(
                || vec![0.0f32; size],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
                    a
                },
            );
        tensor_from(dt, &[m, v, h])
    }
}

/// The edge-encoding node: its parent is `T`, its state the edges.
#[derive(Debug)]
struct EdgeEncodingBackward;

impl Backward<Flex, 1> for EdgeEncodingBackward {
    type State = Edges;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let edges = ops.state;
        unary::<Flex, _>(ops.parents, ops.node, grads, |g| {
            let g = contiguous(g);
            edges.backward(values(&g))
        });
    }
}

fn tracked(t: AdTensor, edges: Edges) -> AdTensor {
    let prep = EdgeEncodingBackward
        .prepare::<NoCheckpointing>([t.node()])
        .compute_bound()
        .stateful();
    let t = contiguous(t.into_primitive());
    let out = edges.forward(values(&t));
    match prep {
        OpsKind::Tracked(prep) => prep.finish(edges, out),
        OpsKind::UnTracked(prep) => prep.finish(out),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // Burn's own op is the reference
mod tests {
    use super::*;
    use burn::tensor::{Distribution, Tolerance};

    /// Against the unfused ops (the Transformer-M encoder's), on 2 molecules of 4 atoms,
    /// 3 hops, 6 edge types with index 0 (no edge) frequent and path lengths 1-3: values on
    /// both devices, and the gradients of the table and the hop weights under autodiff. A
    /// hop's edges read from another hop's table, or index 0 counted, is off by O(1).
    #[test]
    fn fused_edge_encoding_matches_the_unfused_ops() {
        let dev = Device::flex().autodiff();
        let (b, n, m, v, h) = (2, 4, 3, 6, 5);
        let table = Tensor::<2>::random([v, h], Distribution::Normal(0.0, 1.0), &dev);
        let weight = Tensor::<3>::random([m, h, h], Distribution::Normal(0.0, 1.0), &dev);
        let cotangent = Tensor::<4>::random([b, h, n, n], Distribution::Normal(0.0, 1.0), &dev);
        let index: Vec<i64> = (0..b * n * n * m * 3)
            .map(|e| ((e * 7 + e / 5) % 9) as i64 % v as i64 * ((e % 4 != 0) as i64))
            .collect();
        let edge_index = Tensor::<5, Int>::from_data(TensorData::new(index, [b, n, n, m, 3]), &dev);
        let lengths: Vec<f32> = (0..b * n * n).map(|p| (1 + p % 3) as f32).collect();
        let path_length = Tensor::<3>::from_data(TensorData::new(lengths, [b, n, n]), &dev);

        let unfused = |table: Tensor<2>, weight: Tensor<3>| {
            let flat = edge_index.clone().reshape([b, n * n * m * 3]);
            let present = flat
                .clone()
                .not_equal_elem(0)
                .float()
                .reshape([b, n * n * m * 3, 1]);
            let rows = table.select(0, flat.reshape([b * n * n * m * 3]));
            let hop = (rows.reshape([b, n * n * m * 3, h]) * present)
                .reshape([b * n * n, m, 3, h])
                .mean_dim(2)
                .reshape([b * n * n, m, h])
                .swap_dims(0, 1);
            hop.matmul(weight)
                .sum_dim(0)
                .reshape([b, n, n, h])
                .div(path_length.clone().reshape([b, n, n, 1]))
                .permute([0, 3, 1, 2])
        };
        let run = |fused: bool| {
            let (t, w) = (
                table.clone().detach().require_grad(),
                weight.clone().detach().require_grad(),
            );
            let out = if fused {
                multi_hop_edge_bias(t.clone(), w.clone(), &edge_index, &path_length)
                    .expect("on flex")
            } else {
                unfused(t.clone(), w.clone())
            };
            let grads = (out.clone() * cotangent.clone()).sum().backward();
            [
                out.inner().into_data(),
                t.grad(&grads).expect("table grad").into_data(),
                w.grad(&grads).expect("weight grad").into_data(),
            ]
        };
        let (fused, want) = (run(true), run(false));
        for (f, w) in fused.iter().zip(&want) {
            f.assert_approx_eq::<f32>(w, Tolerance::rel_abs(1e-5, 1e-6));
        }
        // The plain device: the same values.
        let plain = multi_hop_edge_bias(
            table.inner(),
            weight.inner(),
            &edge_index.inner(),
            &path_length.inner(),
        )
        .expect("on flex");
        plain
            .into_data()
            .assert_approx_eq::<f32>(&want[0], Tolerance::rel_abs(1e-5, 1e-6));
    }
}
