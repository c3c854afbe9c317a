//! Model inputs on a device.

use burn::prelude::*;
use mol_featurize::graphormer::{GraphormerBatchData, OGB_ATOM_FEATURES};

use super::mode::Mode;

/// Model inputs on a device, built from [`GraphormerBatchData`] (`B` molecules, `N`
/// atoms, `M` hops).
#[derive(Debug, Clone)]
pub struct TransformerMBatch {
    /// `[B, N, OGB_ATOM_FEATURES]` (9) atom table rows.
    pub atom_index: Tensor<3, Int>,
    /// `[B, N]` degree table rows.
    pub degree_index: Tensor<2, Int>,
    /// `[B, N, N]` spatial table rows (`1 + SPD`, see
    /// [`mol_featurize::EncodingLimits::spatial_rows`]).
    pub spatial_index: Tensor<3, Int>,
    /// `[B, N, N, M, 3]` bond table rows along each path.
    pub edge_index: Tensor<5, Int>,
    /// `[B, N, N]` divisor of the edge encoding.
    pub path_length: Tensor<3>,
    /// `[B, N]` atom type of the Gaussian affine: atomic number (1..=118, 119 misc),
    /// 0 padding.
    pub atom_type: Tensor<2, Int>,
    /// `[B, N, 3]` coordinates (Angstrom).
    pub coordinates: Tensor<3>,
    /// `[B, N]` `true` = padded atom (`key_padding_mask`).
    pub key_padding_mask: Tensor<2, Bool>,
    /// `[B]` 1 where the 2D channel is on.
    pub use_2d: Tensor<1>,
    /// `[B]` 1 where the 3D channel is on.
    pub use_3d: Tensor<1>,
}

impl TransformerMBatch {
    /// Uploads `data` with one requested [`Mode`] per molecule (`modes.len() == B`);
    /// molecules without coordinates run in 2D whatever is requested
    /// ([`Mode::for_input`]), never on zero coordinates.
    ///
    /// # Panics
    /// If `modes` has the wrong length.
    pub fn from_data(data: &GraphormerBatchData, modes: &[Mode], device: &Device) -> Self {
        let (b, n, m) = (data.batch_size, data.n_atoms, data.hops);
        assert_eq!(modes.len(), b, "one mode per molecule");
        let int =
            |v: &[i64]| Tensor::<1, Int>::from_data(TensorData::new(v.to_vec(), [v.len()]), device);
        let (s2, s3) = Mode::batch_switches(modes, &data.has_3d);
        Self {
            atom_index: int(&data.atom_index).reshape([b, n, OGB_ATOM_FEATURES]),
            degree_index: int(&data.degree_index).reshape([b, n]),
            spatial_index: int(&data.spatial_index).reshape([b, n, n]),
            edge_index: int(&data.edge_index).reshape([b, n, n, m, 3]),
            path_length: Tensor::from_data(
                TensorData::new(data.path_length.clone(), [b, n, n]),
                device,
            ),
            atom_type: int(&data.atom_type).reshape([b, n]),
            coordinates: Tensor::from_data(
                TensorData::new(data.coordinates.clone(), [b, n, 3]),
                device,
            ),
            key_padding_mask: Tensor::from_data(
                TensorData::new(data.key_padding_mask.clone(), [b, n]),
                device,
            ),
            use_2d: Tensor::from_data(TensorData::new(s2, [b]), device),
            use_3d: Tensor::from_data(TensorData::new(s3, [b]), device),
        }
    }

    /// Molecules `start..end` of the batch (every tensor cut along the batch axis).
    ///
    /// # Panics
    /// If `start > end` or `end` exceeds the batch size.
    pub fn molecules(&self, start: usize, end: usize) -> Self {
        let len = end - start;
        Self {
            atom_index: self.atom_index.clone().narrow(0, start, len),
            degree_index: self.degree_index.clone().narrow(0, start, len),
            spatial_index: self.spatial_index.clone().narrow(0, start, len),
            edge_index: self.edge_index.clone().narrow(0, start, len),
            path_length: self.path_length.clone().narrow(0, start, len),
            atom_type: self.atom_type.clone().narrow(0, start, len),
            coordinates: self.coordinates.clone().narrow(0, start, len),
            key_padding_mask: self.key_padding_mask.clone().narrow(0, start, len),
            use_2d: self.use_2d.clone().narrow(0, start, len),
            use_3d: self.use_3d.clone().narrow(0, start, len),
        }
    }

    /// The same inputs with coordinates `[B, N, 3]` (Angstrom) replaced (denoising:
    /// noisy positions).
    pub fn with_coordinates(mut self, coordinates: Tensor<3>) -> Self {
        self.coordinates = coordinates;
        self
    }
}
