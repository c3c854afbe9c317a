//! A padded batch without its padding rows ("packed"), for the row-wise layers and the
//! packed fused attention ([`crate::fused_attention_packed`]).
//!
//! Why: an ESOL batch of 32 molecules pads to its largest (33 atoms) while the molecules
//! average 15, so half the rows that every linear layer, norm and attention multiplies are
//! padding whose results are masked away. The PyTorch reference computes them; packed,
//! they are not computed. The real atoms of molecule `b` become consecutive rows of one
//! `[1, R, d]` tensor (`R` = real atoms in the batch), in the batch's order.

use burn::prelude::*;

/// Where the real atoms of a padded `[B, N]` batch go when packed.
#[derive(Debug, Clone)]
pub struct PackedBatch {
    /// Real atoms per molecule, `[B]`.
    lengths: Vec<usize>,
    b: usize,
    n: usize,
    /// The padded positions of each molecule's real atoms, in order.
    positions: Vec<Vec<usize>>,
    /// Flat indices `b N + i` of the real atoms, `[R]`.
    real_rows: Tensor<1, Int>,
    /// For each of the `B N` padded rows its packed row, or `R` (a zero row) for padding.
    unpack_rows: Tensor<1, Int>,
    /// [`PackedBatch::real_pairs`], made on first use.
    pairs: std::sync::OnceLock<std::sync::Arc<RealPairs>>,
}

/// The real pairs of a packed batch (see [`PackedBatch::real_pairs`]).
#[derive(Debug)]
struct RealPairs {
    /// Flat indices `(b N + i) N + j`.
    flat: Vec<i64>,
    /// The packed row of each pair's atom `i`.
    rows: Vec<i64>,
}

impl PackedBatch {
    /// The packing of `key_padding_mask` (`[B, N]`, `true` = padding), or `None` when no
    /// row is padding (packing would only copy).
    pub fn from_mask(key_padding_mask: &Tensor<2, Bool>) -> Option<Self> {
        let [b, n] = key_padding_mask.dims();
        let device = key_padding_mask.device();
        let padding: Vec<bool> = key_padding_mask
            .clone()
            .into_data()
            .convert::<bool>()
            .try_into_vec()
            .ok()?;
        if !padding.contains(&true) {
            return None;
        }
        let positions: Vec<Vec<usize>> = (0..b)
            .map(|bi| (0..n).filter(|&i| !padding[bi * n + i]).collect())
            .collect();
        let real_rows: Vec<i64> = positions
            .iter()
            .enumerate()
            .flat_map(|(bi, p)| p.iter().map(move |&i| (bi * n + i) as i64))
            .collect();
        let r = real_rows.len();
        let mut unpack_rows = vec![r as i64; b * n];
        for (packed, &row) in real_rows.iter().enumerate() {
            unpack_rows[row as usize] = packed as i64;
        }
        let int = |v: Vec<i64>| {
            let len = v.len();
            Tensor::<1, Int>::from_data(TensorData::new(v, [len]), &device)
        };
        Some(Self {
            lengths: positions.iter().map(Vec::len).collect(),
            b,
            n,
            positions,
            real_rows: int(real_rows),
            unpack_rows: int(unpack_rows),
            pairs: std::sync::OnceLock::new(),
        })
    }

    /// [`PackedBatch::from_mask`] where the fused CPU kernels run `x` (f32 on flex), else
    /// `None`: the caller keeps its padded path.
    pub fn for_fused(x: &Tensor<3>, key_padding_mask: &Tensor<2, Bool>) -> Option<Self> {
        if !crate::flex_data::on_flex_f32(x) {
            return None;
        }
        Self::from_mask(key_padding_mask)
    }

    /// A per-head pair tensor `[B, H, N, N]` (an attention bias) -> each molecule's
    /// `[H, n_b, n_b]` block of real pairs in turn, `[H sum(n_b^2)]` (the layout of
    /// [`crate::fused_attention_packed_biased`]). A selection: gradients flow back to the
    /// real pairs.
    ///
    /// # Panics
    /// If `pairs` is not `[B, H, N, N]` for this batch's `B` and `N`.
    pub fn pack_head_pairs(&self, pairs: Tensor<4>) -> Tensor<1> {
        let [b, h, n, n2] = pairs.dims();
        assert!(
            b == self.b && n == self.n && n2 == self.n,
            "pack_head_pairs: pairs must be [B, H, N, N]"
        );
        let mut index = Vec::with_capacity(h * self.lengths.iter().map(|l| l * l).sum::<usize>());
        for (bi, pos) in self.positions.iter().enumerate() {
            for hi in 0..h {
                let base = (bi * h + hi) * n * n;
                for &i in pos {
                    index.extend(pos.iter().map(|&j| (base + i * n + j) as i64));
                }
            }
        }
        let len = index.len();
        let device = pairs.device();
        let index = Tensor::<1, Int>::from_data(TensorData::new(index, [len]), &device);
        pairs.reshape([b * h * n * n]).select(0, index)
    }

    /// Flat indices `(b N + i) N + j` of the real pairs of `[B, N, N]`, each molecule's
    /// `n_b x n_b` block in turn (row `i` then column `j`), and for each pair the packed
    /// row of its atom `i`.
    fn real_pairs(&self) -> &RealPairs {
        self.pairs
            .get_or_init(|| std::sync::Arc::new(self.find_real_pairs()))
    }

    /// [`PackedBatch::real_pairs`], computed.
    fn find_real_pairs(&self) -> RealPairs {
        let n = self.n;
        let pairs: usize = self.lengths.iter().map(|l| l * l).sum();
        let (mut flat, mut rows) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
        let mut row = 0i64;
        for (bi, pos) in self.positions.iter().enumerate() {
            for &i in pos {
                for &j in pos {
                    flat.push(((bi * n + i) * n + j) as i64);
                    rows.push(row);
                }
                row += 1;
            }
        }
        RealPairs { flat, rows }
    }

    /// A pair tensor `[B, N, N, C]` -> its real pairs `[P, C]` (`P = sum(n_b^2)`, the
    /// order of [`PackedBatch::pack_pairs`]). A selection: gradients flow back.
    ///
    /// # Panics
    /// If `pairs` is not `[B, N, N, C]` for this batch's `B` and `N`.
    pub fn pack_pair_features(&self, pairs: Tensor<4>) -> Tensor<2> {
        let [b, n, n2, c] = pairs.dims();
        assert!(
            b == self.b && n == self.n && n2 == self.n,
            "pack_pair_features: pairs must be [B, N, N, C]"
        );
        let index = int_tensor(self.real_pairs().flat.clone(), &pairs.device());
        pairs.reshape([b * n * n, c]).select(0, index)
    }

    /// Sums over `j` of real pairs `[P, C]` ([`PackedBatch::pack_pair_features`]'s order):
    /// `[1, R, C]`, row `i` the sum over atom `i`'s real partners `j` (a scatter-add:
    /// gradients flow back to every pair).
    pub fn sum_pairs_per_row(&self, pairs: Tensor<2>) -> Tensor<3> {
        let [_, c] = pairs.dims();
        let device = pairs.device();
        let index = int_tensor(self.real_pairs().rows.clone(), &device);
        Tensor::<2>::zeros([self.rows(), c], &device)
            .select_assign(0, index, pairs, burn::tensor::IndexingUpdateOp::Add)
            .unsqueeze_dim(0)
    }

    /// Real pairs `[P, C]` -> the padded `[B, C, N, N]` (channel first, as attention biases
    /// are laid out), 0 at every pair with a padded atom. A selection: gradients flow back.
    pub fn unpack_pair_features(&self, pairs: Tensor<2>) -> Tensor<4> {
        let [p, c] = pairs.dims();
        let device = pairs.device();
        let (b, n) = (self.b, self.n);
        let mut index = vec![p as i64; b * n * n];
        for (packed, &at) in self.real_pairs().flat.iter().enumerate() {
            index[at as usize] = packed as i64;
        }
        let with_zero = Tensor::cat(vec![pairs, Tensor::zeros([1, c], &device)], 0);
        with_zero
            .select(0, int_tensor(index, &device))
            .reshape([b, n, n, c])
            .permute([0, 3, 1, 2])
    }

    /// Real atoms per molecule, `[B]` (the spans of [`crate::fused_attention_packed`]).
    pub fn lengths(&self) -> &[usize] {
        &self.lengths
    }

    /// Real atoms in the batch (`R`).
    pub fn rows(&self) -> usize {
        self.lengths.iter().sum()
    }

    /// `x: [B, N, d]` -> `[1, R, d]`, the real atoms' rows (gradients flow back to them).
    pub fn pack(&self, x: Tensor<3>) -> Tensor<3> {
        let d = x.dims()[2];
        let index = self.real_rows.clone().to_device(&x.device());
        x.reshape([self.b * self.n, d])
            .select(0, index)
            .unsqueeze_dim(0)
    }

    /// `x: [1, R, d]` -> `[B, N, d]`, zeros at padding.
    pub fn unpack(&self, x: Tensor<3>) -> Tensor<3> {
        let [_, r, d] = x.dims();
        let device = x.device();
        let with_zero = Tensor::cat(vec![x.reshape([r, d]), Tensor::zeros([1, d], &device)], 0);
        let index = self.unpack_rows.clone().to_device(&device);
        with_zero.select(0, index).reshape([self.b, self.n, d])
    }

    /// Each molecule's `[n_b, n_b]` block of real-atom pairs of `pairs` (`[B, N, N]`
    /// row-major values), one after another (`sum(n_b^2)` floats).
    ///
    /// # Panics
    /// If `pairs` is not `B N N` long.
    pub fn pack_pairs(&self, pairs: &[f32]) -> Vec<f32> {
        let (b, n) = (self.b, self.n);
        assert_eq!(
            pairs.len(),
            b * n * n,
            "pack_pairs: pairs must be [B, N, N]"
        );
        let mut out = Vec::with_capacity(self.lengths.iter().map(|l| l * l).sum());
        for (bi, pos) in self.positions.iter().enumerate() {
            for &i in pos {
                let row = &pairs[(bi * n + i) * n..(bi * n + i + 1) * n];
                out.extend(pos.iter().map(|&j| row[j]));
            }
        }
        out
    }

    /// Whether every entry of `pairs` (`[B, N, N]` values) from a real atom to padding is
    /// 0: then the padding takes no part in a real atom's attention and packing is exact.
    ///
    /// # Panics
    /// If `pairs` is not `B N N` long.
    pub fn zero_toward_padding(&self, pairs: &[f32]) -> bool {
        let (b, n) = (self.b, self.n);
        assert_eq!(
            pairs.len(),
            b * n * n,
            "zero_toward_padding: pairs must be [B, N, N]"
        );
        self.positions.iter().enumerate().all(|(bi, pos)| {
            let mut real = vec![false; n];
            pos.iter().for_each(|&j| real[j] = true);
            pos.iter().all(|&i| {
                let row = &pairs[(bi * n + i) * n..(bi * n + i + 1) * n];
                row.iter().zip(&real).all(|(&x, &r)| r || x == 0.0)
            })
        })
    }
}

/// `values` as a 1-D int tensor on `device`.
fn int_tensor(values: Vec<i64>, device: &Device) -> Tensor<1, Int> {
    let len = values.len();
    Tensor::<1, Int>::from_data(TensorData::new(values, [len]), device)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Molecules of 2, 0 and 3 atoms in a batch padded to 3, padding in the middle of the
    /// first: pack and unpack by hand-checked rows, pair blocks, and the zero check.
    #[test]
    fn packs_and_unpacks_real_rows() {
        let dev = Device::flex();
        let mask = Tensor::<2, Bool>::from_data(
            TensorData::new(
                vec![false, true, false, true, true, true, false, false, false],
                [3, 3],
            ),
            &dev,
        );
        let packed = PackedBatch::from_mask(&mask).expect("has padding");
        assert_eq!(packed.lengths(), [2, 0, 3]);
        assert_eq!(packed.rows(), 5);
        let x = Tensor::<3>::from_data(
            TensorData::new((0..18).map(|v| v as f32).collect::<Vec<_>>(), [3, 3, 2]),
            &dev,
        );
        let p = packed.pack(x);
        assert_eq!(p.dims(), [1, 5, 2]);
        let rows: Vec<f32> = p.clone().into_data().try_to_vec().unwrap();
        assert_eq!(rows, [0., 1., 4., 5., 12., 13., 14., 15., 16., 17.]);
        let back: Vec<f32> = packed.unpack(p).into_data().try_to_vec().unwrap();
        assert_eq!(
            back,
            [
                0., 1., 0., 0., 4., 5., 0., 0., 0., 0., 0., 0., 12., 13., 14., 15., 16., 17.
            ]
        );
        let pairs: Vec<f32> = (0..27).map(|v| v as f32).collect();
        assert_eq!(
            packed.pack_pairs(&pairs),
            [0., 2., 6., 8., 18., 19., 20., 21., 22., 23., 24., 25., 26.]
        );
        assert!(!packed.zero_toward_padding(&pairs));
        let mut zeroed = pairs.clone();
        zeroed[1] = 0.0;
        zeroed[7] = 0.0;
        assert!(packed.zero_toward_padding(&zeroed));
        let none = Tensor::<2, Bool>::from_data(TensorData::new(vec![false; 4], [2, 2]), &dev);
        assert!(PackedBatch::from_mask(&none).is_none());
    }
}
