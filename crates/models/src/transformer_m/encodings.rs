//! Graphormer's 2D encodings as Transformer-M uses them: atom features with the degree
//! (centrality) encoding (original `AtomFeature`), and the spatial (SPD) and multi-hop
//! edge attention biases (original `MoleculeAttnBias`, `edge_type = "multi_hop"`).

use burn::module::Param;
use burn::nn::Embedding;
use burn::prelude::*;

use super::batch::TransformerMBatch;
use super::init::{STD, normal_param, padded_table};
use mol_featurize::graphormer::{ATOM_TABLE_ROWS, BOND_TABLE_ROWS};

/// Configuration of [`AtomEncoder`].
#[derive(Config, Debug)]
pub struct AtomEncoderConfig {
    /// d_model.
    pub d_model: usize,
    /// Rows of the degree table (`EncodingLimits::degree_rows`).
    pub degree_rows: usize,
}

impl AtomEncoderConfig {
    /// The encoder with the original's init; the degree table stands for the sum of the
    /// original's in- and out-degree tables, so its std is 0.02 * sqrt(2).
    pub fn init(&self, device: &Device) -> AtomEncoder {
        let d = self.d_model;
        AtomEncoder {
            atom_embedding: padded_table(ATOM_TABLE_ROWS, d, STD, device),
            degree_embedding: padded_table(
                self.degree_rows,
                d,
                STD * std::f64::consts::SQRT_2,
                device,
            ),
            graph_token: normal_param([1, d], device),
        }
    }
}

/// Configuration of [`BiasEncoder`].
#[derive(Config, Debug)]
pub struct BiasEncoderConfig {
    /// Attention heads H.
    pub num_heads: usize,
    /// Rows of the spatial table (`EncodingLimits::spatial_rows`).
    pub spatial_rows: usize,
    /// Hops of the edge encoding (`multi_hop_max_dist`).
    pub max_hops: usize,
}

impl BiasEncoderConfig {
    /// The encoder with the original's init.
    pub fn init(&self, device: &Device) -> BiasEncoder {
        let h = self.num_heads;
        BiasEncoder {
            spatial_embedding: padded_table(self.spatial_rows, h, STD, device),
            edge_embedding: padded_table(BOND_TABLE_ROWS, h, STD, device),
            edge_hop_weight: normal_param([self.max_hops, h, h], device),
            virtual_distance: normal_param([1, h], device),
        }
    }
}

/// Atom features: OGB category embeddings (summed), degree embedding, graph token.
#[derive(Module, Debug)]
pub struct AtomEncoder {
    /// One table for all nine OGB atom features (`[ATOM_TABLE_ROWS, d]`, row 0 padding;
    /// the original `atom_encoder`, see the loader for its row layout).
    pub atom_embedding: Embedding,
    /// Degree (centrality) encoding `[max_degree + 2, d]`: the original's
    /// `in_degree_encoder + out_degree_encoder` (equal indices on undirected graphs).
    pub degree_embedding: Embedding,
    /// The graph token `[1, d]`.
    pub graph_token: Param<Tensor<2>>,
}

impl AtomEncoder {
    /// Atom features `[B, N, d]` (before the graph token): OGB embeddings summed, plus
    /// the degree encoding where the 2D channel is on.
    pub fn forward(&self, batch: &TransformerMBatch) -> Tensor<3> {
        let [b, n, f] = batch.atom_index.dims();
        let atoms = self
            .atom_embedding
            .forward(batch.atom_index.clone().reshape([b, n * f]));
        let d = atoms.dims()[2];
        let atoms = atoms.reshape([b, n, f, d]).sum_dim(2).reshape([b, n, d]);
        let degree = self.degree_embedding.forward(batch.degree_index.clone());
        atoms + degree * batch.use_2d.clone().reshape([b, 1, 1])
    }
}

/// Graphormer's 2D attention biases: spatial (SPD) and multi-hop edge encodings, and
/// the graph token's virtual distance.
#[derive(Module, Debug)]
pub struct BiasEncoder {
    /// `b_SPD`: `[max_distance + 3, H]` (row 0 padding, row `1 + d` for SPD `d`, last
    /// row unreachable).
    pub spatial_embedding: Embedding,
    /// Bond feature embedding `[BOND_TABLE_ROWS, H]` (row 0 = no bond).
    pub edge_embedding: Embedding,
    /// Per-hop `H x H` transform of the edge encoding, `[max_hops, H, H]` (the
    /// original `edge_dis_encoder`, reshaped).
    pub edge_hop_weight: Param<Tensor<3>>,
    /// Graph token distance `t_h`, `[1, H]`.
    pub virtual_distance: Param<Tensor<2>>,
}

impl BiasEncoder {
    /// Graphormer's spatial encoding `[B, H, N, N]`: `b_SPD(i, j)` per head.
    pub fn spatial(&self, batch: &TransformerMBatch) -> Tensor<4> {
        let [b, n, _] = batch.spatial_index.dims();
        let h = self.virtual_distance.dims()[1];
        self.spatial_embedding
            .forward(batch.spatial_index.clone().reshape([b, n * n]))
            .reshape([b, n, n, h])
            .permute([0, 3, 1, 2])
    }

    /// Graphormer's multi-hop edge encoding `[B, H, N, N]`: the mean over each hop's
    /// three bond-feature embeddings, times the hop's `H x H` weight, summed over hops
    /// and divided by `clamp(SPD, 1, M)`. Hops past the path's end contribute 0 (the
    /// original's zero padding row).
    pub fn edge(&self, batch: &TransformerMBatch) -> Tensor<4> {
        let [b, n, _, m, _] = batch.edge_index.dims();
        let h = self.virtual_distance.dims()[1];
        // On the CPU: one fused pass each way (attn_core::edge_encoding), the hop
        // weights applied to the table once.
        if let Some(edge) = attn_core::multi_hop_edge_bias(
            self.edge_embedding.weight.val(),
            self.edge_hop_weight.val(),
            &batch.edge_index,
            &batch.path_length,
        ) {
            return edge;
        }
        let rows = b * n * n;
        let index = batch.edge_index.clone().reshape([b, n * n * m * 3]);
        let present = index
            .clone()
            .not_equal_elem(0)
            .float()
            .reshape([b, n * n * m * 3, 1]);
        let hop = (self.edge_embedding.forward(index) * present)
            .reshape([rows, m, 3, h])
            .mean_dim(2)
            .reshape([rows, m, h])
            .swap_dims(0, 1); // [M, rows, H]
        // One BLAS product per hop on the CPU (attn_core::matmul), Burn's elsewhere.
        let edge = attn_core::matmul(hop, self.edge_hop_weight.val())
            .sum_dim(0)
            .reshape([b, n, n, h])
            / batch.path_length.clone().reshape([b, n, n, 1]);
        edge.permute([0, 3, 1, 2])
    }
}
