//! Named MAT input tensors.

use burn::prelude::*;
use mol_featurize::MatBatchData;

/// A padded batch of molecules as MAT expects it (B = batch, N = atoms after padding,
/// dummy node included).
#[derive(Debug, Clone)]
pub struct MatBatch {
    /// `[B, N, d_atom]` atom features.
    pub node_features: Tensor<3>,
    /// `[B, N, N]` adjacency with self loops.
    pub adjacency: Tensor<3>,
    /// `[B, N, N]` distances in Angstrom.
    pub distances: Tensor<3>,
    /// `[B, N]`, `true` = padding.
    pub key_padding_mask: Tensor<2, Bool>,
    /// `[B, N, N, d_edge]` bond features ([`mol_featurize::mat_edges`]), for a MAT with
    /// `use_edge_features`; `None` when the featurizer made none.
    pub edge_features: Option<Tensor<4>>,
}

impl MatBatch {
    /// Moves featurized data onto `device`.
    pub fn from_data(data: &MatBatchData, device: &Device) -> Self {
        let (b, n, d) = (data.batch_size, data.n_atoms, data.d_atom);
        Self {
            node_features: Tensor::from_data(
                TensorData::new(data.node_features.clone(), [b, n, d]),
                device,
            ),
            adjacency: Tensor::from_data(
                TensorData::new(data.adjacency.clone(), [b, n, n]),
                device,
            ),
            distances: Tensor::from_data(
                TensorData::new(data.distances.clone(), [b, n, n]),
                device,
            ),
            key_padding_mask: Tensor::from_data(
                TensorData::new(data.key_padding_mask.clone(), [b, n]),
                device,
            ),
            edge_features: data.edge_features.as_ref().map(|e| {
                Tensor::from_data(
                    TensorData::new(e.clone(), [b, n, n, mol_featurize::MAT_D_EDGE]),
                    device,
                )
            }),
        }
    }

    /// Molecules `start..end` of the batch (every tensor cut along the batch axis; the
    /// padded atom axis N is kept).
    ///
    /// # Panics
    /// If `start > end` or `end` exceeds the batch size.
    pub fn molecules(&self, start: usize, end: usize) -> Self {
        let len = end - start;
        Self {
            node_features: self.node_features.clone().narrow(0, start, len),
            adjacency: self.adjacency.clone().narrow(0, start, len),
            distances: self.distances.clone().narrow(0, start, len),
            key_padding_mask: self.key_padding_mask.clone().narrow(0, start, len),
            edge_features: self
                .edge_features
                .as_ref()
                .map(|e| e.clone().narrow(0, start, len)),
        }
    }
}
