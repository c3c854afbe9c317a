//! The 3D channel: Gaussian basis functions of pair distances with a per-atom-type
//! affine map (original `GaussianLayer`) and the per-head pair bias MLP (original
//! `NonLinear` as `gbf_proj`), from `Molecule3DBias` in `transformer_m_layers.py`.

use attn_core::gelu;
use burn::module::Param;
use burn::nn::{Embedding, Linear};
use burn::prelude::*;

use super::init::GaussianInit;
use super::init::{affine_rows, gaussian_param, normal_linear};
use super::{GAUSSIAN_PI, GAUSSIAN_STD_EPS};

/// Configuration of [`GaussianLayer`].
#[derive(Config, Debug)]
pub struct GaussianLayerConfig {
    /// Gaussian kernels K.
    pub num_kernels: usize,
    /// Initialisation.
    #[config(default = "GaussianInit::Original")]
    pub init: GaussianInit,
}

impl GaussianLayerConfig {
    /// The layer under [`GaussianLayerConfig::init`].
    pub fn init(&self, device: &Device) -> GaussianLayer {
        let k = self.num_kernels;
        GaussianLayer {
            means: gaussian_param(self.init, k, device),
            stds: gaussian_param(self.init, k, device),
            mul_i: affine_rows(self.init, 1.0, device),
            mul_j: affine_rows(self.init, 1.0, device),
            bias_i: affine_rows(self.init, 0.0, device),
            bias_j: affine_rows(self.init, 0.0, device),
        }
    }
}

/// Configuration of [`PairBias3d`].
#[derive(Config, Debug)]
pub struct PairBias3dConfig {
    /// Gaussian kernels K.
    pub num_kernels: usize,
    /// Attention heads H.
    pub num_heads: usize,
}

impl PairBias3dConfig {
    /// The MLP with the original's init.
    pub fn init(&self, device: &Device) -> PairBias3d {
        PairBias3d {
            dense: normal_linear(self.num_kernels, self.num_kernels, device),
            out: normal_linear(self.num_kernels, self.num_heads, device),
        }
    }
}

/// Gaussian basis of pair distances. The affine map's gain and offset are each the sum
/// of a row for atom i's type and a row for atom j's type, so they are not symmetric in
/// i, j (the original looks both up in one table, `node_type_edge`, at different
/// offsets; the loader splits it into the two tables here).
#[derive(Module, Debug)]
pub struct GaussianLayer {
    /// mu_k, `[K]`.
    pub means: Param<Tensor<1>>,
    /// sigma_k, `[K]` (used as `|sigma_k| + 0.01`).
    pub stds: Param<Tensor<1>>,
    /// Gain contribution of atom i's type, `[ATOM_TYPES, 1]`.
    pub mul_i: Embedding,
    /// Gain contribution of atom j's type, `[ATOM_TYPES, 1]`.
    pub mul_j: Embedding,
    /// Offset contribution of atom i's type, `[ATOM_TYPES, 1]`.
    pub bias_i: Embedding,
    /// Offset contribution of atom j's type, `[ATOM_TYPES, 1]`.
    pub bias_j: Embedding,
}

impl GaussianLayer {
    /// `psi[b, i, j, k] = exp(-((gamma d + beta - mu_k)/s_k)^2 / 2) / (sqrt(2 pi) s_k)`
    /// (`pi` = [`GAUSSIAN_PI`], the original's 3.14159)
    /// with `gamma = mul_i[t_i] + mul_j[t_j]`, `beta = bias_i[t_i] + bias_j[t_j]`
    /// (type 0, padding, for both atoms of a pair with a padded atom).
    ///
    /// - `distances`: `[B, N, N]` in Angstrom.
    /// - `atom_type`: `[B, N]` rows of the type tables.
    ///
    /// Returns `[B, N, N, K]`.
    pub fn forward(&self, distances: Tensor<3>, atom_type: Tensor<2, Int>) -> Tensor<4> {
        let [b, n, _] = distances.dims();
        // A pair with a padded atom uses both padding rows (the original collator pads
        // `node_type_edge` as a whole), so even padded positions match the original.
        let padded = atom_type.clone().equal_elem(0);
        let padded_pair = padded
            .clone()
            .reshape([b, n, 1, 1])
            .expand([b, n, n, 1])
            .bool_or(padded.reshape([b, 1, n, 1]).expand([b, n, n, 1]));
        let pair = |row: &Embedding, col: &Embedding| {
            let r = row.forward(atom_type.clone()).reshape([b, n, 1, 1]);
            let c = col.forward(atom_type.clone()).reshape([b, 1, n, 1]);
            let value = r.expand([b, n, n, 1]) + c.expand([b, n, n, 1]);
            let padding = (row.weight.val().slice([0..1, 0..1])
                + col.weight.val().slice([0..1, 0..1]))
            .reshape([1, 1, 1, 1])
            .expand([b, n, n, 1]);
            value.mask_where(padded_pair.clone(), padding)
        };
        let gamma = pair(&self.mul_i, &self.mul_j);
        let beta = pair(&self.bias_i, &self.bias_j);
        self.basis(gamma * distances.reshape([b, n, n, 1]) + beta)
    }

    /// [`GaussianLayer::forward`] on the real pairs of `atoms` only: `[P, K]` in
    /// [`attn_core::PackedBatch::pack_pair_features`]'s order, each row that pair's
    /// `[K]` of the padded forward (the basis, the costly part, skips the padding).
    pub fn forward_pairs(
        &self,
        distances: Tensor<3>,
        atom_type: Tensor<2, Int>,
        atoms: &attn_core::PackedBatch,
    ) -> Tensor<2> {
        let [b, n, _] = distances.dims();
        let pair = |row: &Embedding, col: &Embedding| {
            let r = row.forward(atom_type.clone()).reshape([b, n, 1, 1]);
            let c = col.forward(atom_type.clone()).reshape([b, 1, n, 1]);
            r.expand([b, n, n, 1]) + c.expand([b, n, n, 1])
        };
        let x = pair(&self.mul_i, &self.mul_j) * distances.reshape([b, n, n, 1])
            + pair(&self.bias_i, &self.bias_j);
        let x = atoms.pack_pair_features(x);
        let p = x.dims()[0];
        let psi = self.basis(x.reshape([1, 1, p, 1]));
        let k = psi.dims()[3];
        psi.reshape([p, k])
    }

    /// The Gaussian basis of the affine distances `x: [.., 1]` -> `[.., K]`.
    fn basis(&self, x: Tensor<4>) -> Tensor<4> {
        let k = self.means.dims()[0];
        // On the CPU one fused op each way (attn_core::gaussian_basis), else Burn's ops.
        let (means, stds) = (self.means.val(), self.stds.val());
        if let Some(psi) = attn_core::gaussian_basis(
            x.clone(),
            means.clone(),
            stds.clone(),
            GAUSSIAN_STD_EPS,
            GAUSSIAN_PI,
        ) {
            return psi;
        }
        let mean = means.reshape([1, 1, 1, k]);
        let std = stds
            .abs()
            .add_scalar(GAUSSIAN_STD_EPS)
            .reshape([1, 1, 1, k]);
        let z = (x - mean) / std.clone();
        z.powi_scalar(2)
            .mul_scalar(-0.5)
            .exp()
            .div(std.mul_scalar((2.0 * GAUSSIAN_PI).sqrt()))
    }
}

/// `Linear(K, K) -> GELU -> Linear(K, H)`: the per-head 3D pair bias.
#[derive(Module, Debug)]
pub struct PairBias3d {
    /// First layer (original `gbf_proj.layer1`).
    pub dense: Linear,
    /// Output layer (original `gbf_proj.layer2`).
    pub out: Linear,
}

impl PairBias3d {
    /// `[B, N, N, K]` Gaussian features to `[B, H, N, N]` biases.
    pub fn forward(&self, psi: Tensor<4>) -> Tensor<4> {
        attn_core::linear(&self.out, gelu(attn_core::linear(&self.dense, psi)))
            .permute([0, 3, 1, 2])
    }

    /// [`PairBias3d::forward`] on pairs as rows: `psi: [P, K]` -> `[P, H]`.
    pub fn forward_rows(&self, psi: Tensor<2>) -> Tensor<2> {
        attn_core::linear(&self.out, gelu(attn_core::linear(&self.dense, psi)))
    }
}

/// Pairwise distances `[B, N, N]` (Angstrom) and unit vectors `[B, N, N, 3]`
/// `(r_j - r_i) / (|r_j - r_i| + 1e-5)` of coordinates `[B, N, 3]`.
pub fn geometry(coordinates: Tensor<3>) -> (Tensor<3>, Tensor<4>) {
    let [b, n, _] = coordinates.dims();
    let delta = coordinates.clone().reshape([b, 1, n, 3]) - coordinates.reshape([b, n, 1, 3]);
    // sqrt(x + tiny) keeps the gradient of |0| finite on the diagonal (the original's
    // norm is exactly 0 there; the difference, 1e-6 Angstrom, is below f32 parity).
    let dist = delta
        .clone()
        .powi_scalar(2)
        .sum_dim(3)
        .add_scalar(1e-12)
        .sqrt()
        .reshape([b, n, n]);
    let unit = delta
        / dist
            .clone()
            .add_scalar(super::DELTA_POS_EPS)
            .reshape([b, n, n, 1]);
    (dist, unit)
}
