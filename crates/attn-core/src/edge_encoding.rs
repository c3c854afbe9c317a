//! Graphormer's multi-hop edge encoding (Ying et al. 2021, Eq. 7; Transformer-M's 2D
//! channel) as one multi-threaded pass on the CPU, for inference.
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
//! `1 / (3 path_length)`: the same terms in another order). Under autodiff the caller
//! keeps its ops (no backward here).

use burn::backend::Flex;
use burn::prelude::*;
use rayon::prelude::*;

use crate::flex_data::{contiguous, on_flex_f32, tensor_from, values};

/// The edge encoding `[B, H, N, N]` from the bond-feature embedding `table: [V, H]`, the
/// per-hop weights `hop_weight: [M, H, H]`, `edge_index: [B, N, N, M, 3]` (rows of the
/// table; 0 = no edge, adding nothing) and `path_length: [B, N, N]` (the divisor, e.g.
/// `clamp(SPD, 1, M)`), as the module documentation computes it; `None` off flex, off
/// f32 or on an autodiff device (the caller's ops then run).
///
/// # Panics
/// If the shapes disagree or an index is negative or not below `V`.
pub fn multi_hop_edge_bias(
    table: Tensor<2>,
    hop_weight: Tensor<3>,
    edge_index: &Tensor<5, Int>,
    path_length: &Tensor<3>,
) -> Option<Tensor<4>> {
    if !on_flex_f32(&table) || table.is_autodiff() || hop_weight.is_autodiff() {
        return None;
    }
    if path_length.is_autodiff() {
        return None;
    }
    let [v, h] = table.dims();
    let m = hop_weight.dims()[0];
    assert_eq!(
        hop_weight.dims(),
        [m, h, h],
        "multi_hop_edge_bias: hop_weight must be [M, H, H]"
    );
    // T_m = E W_m for every hop: [M, V, H].
    let hop_tables = crate::matmul(table.unsqueeze_dim::<3>(0).expand([m, v, h]), hop_weight);
    let [b, n, n2, m2, three] = edge_index.dims();
    assert!(
        n == n2 && m == m2 && three == 3,
        "multi_hop_edge_bias: edge_index must be [B, N, N, M, 3] with M = hop_tables' M"
    );
    assert_eq!(
        path_length.dims(),
        [b, n, n],
        "multi_hop_edge_bias: path_length must be [B, N, N]"
    );
    let tables = contiguous(hop_tables.try_into_primitive::<Flex>().ok()?);
    let tables = values(&tables);
    let index: Vec<i64> = edge_index
        .clone()
        .into_data()
        .convert::<i64>()
        .try_to_vec()
        .ok()?;
    let lengths: Vec<f32> = path_length.clone().into_data().try_to_vec().ok()?;
    let nn = n * n;
    let mut out = vec![0.0f32; b * h * nn];
    out.par_chunks_mut((h * nn).max(1))
        .enumerate()
        .for_each(|(bi, out)| {
            let mut acc = vec![0.0f32; h];
            for pair in 0..nn {
                acc.fill(0.0);
                let edges = &index[(bi * nn + pair) * m * 3..(bi * nn + pair + 1) * m * 3];
                for (hop, hop_edges) in edges.chunks_exact(3).enumerate() {
                    for &e in hop_edges {
                        if e == 0 {
                            continue;
                        }
                        let e = usize::try_from(e).expect("multi_hop_edge_bias: negative index");
                        assert!(e < v, "multi_hop_edge_bias: index {e} not below V = {v}");
                        let row = &tables[(hop * v + e) * h..(hop * v + e + 1) * h];
                        for (a, &t) in acc.iter_mut().zip(row) {
                            *a += t;
                        }
                    }
                }
                let scale = 1.0 / (3.0 * lengths[bi * nn + pair]);
                for (hh, &a) in acc.iter().enumerate() {
                    out[hh * nn + pair] = a * scale;
                }
            }
        });
    Some(Tensor::from_primitive::<Flex>(tensor_from(
        out,
        &[b, h, n, n],
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::EmbeddingConfig;
    use burn::tensor::{Distribution, Tolerance};

    /// Against the unfused ops (the Transformer-M encoder's), on 2 molecules of 4 atoms,
    /// 3 hops, 6 edge types with index 0 (no edge) frequent and path lengths 1-3.
    #[test]
    fn fused_edge_encoding_matches_the_unfused_ops() {
        let dev = Device::flex();
        let (b, n, m, v, h) = (2, 4, 3, 6, 5);
        let table = EmbeddingConfig::new(v, h).init(&dev);
        let weight = Tensor::<3>::random([m, h, h], Distribution::Normal(0.0, 1.0), &dev);
        let index: Vec<i64> = (0..b * n * n * m * 3)
            .map(|e| ((e * 7 + e / 5) % 9) as i64 % v as i64 * ((e % 4 != 0) as i64))
            .collect();
        let edge_index = Tensor::<5, Int>::from_data(TensorData::new(index, [b, n, n, m, 3]), &dev);
        let lengths: Vec<f32> = (0..b * n * n).map(|p| (1 + p % 3) as f32).collect();
        let path_length = Tensor::<3>::from_data(TensorData::new(lengths, [b, n, n]), &dev);

        let flat = edge_index.clone().reshape([b, n * n * m * 3]);
        let present = flat
            .clone()
            .not_equal_elem(0)
            .float()
            .reshape([b, n * n * m * 3, 1]);
        let hop = (table.forward(flat) * present)
            .reshape([b * n * n, m, 3, h])
            .mean_dim(2)
            .reshape([b * n * n, m, h])
            .swap_dims(0, 1);
        let want = hop
            .matmul(weight.clone())
            .sum_dim(0)
            .reshape([b, n, n, h])
            .div(path_length.clone().reshape([b, n, n, 1]))
            .permute([0, 3, 1, 2]);

        let got = multi_hop_edge_bias(table.weight.val(), weight, &edge_index, &path_length)
            .expect("on flex");
        got.into_data()
            .assert_approx_eq::<f32>(&want.into_data(), Tolerance::rel_abs(1e-5, 1e-6));
    }
}
