//! MAT molecule attention on a packed batch (no padding rows): the same Eq. 2 as
//! [`MoleculeAttention::forward_prepared`] for every real atom, without computing the
//! padding ([`crate::packing`] says why).

use burn::prelude::*;

use crate::flex_data::{is_tracked, on_flex_f32};
use crate::fused_attention::fused_attention_packed;
use crate::molecule_attention::{MoleculeAttention, PreparedInputs};
use crate::packing::PackedBatch;

/// The layer-invariant terms of Eq. 2 for a packed batch: each molecule's `[n_b, n_b]`
/// block of real-atom pairs, one after another (`sum(n_b^2)` floats).
#[derive(Debug, Clone)]
pub struct PackedInputs {
    /// Where the real atoms go.
    pub batch: PackedBatch,
    /// `g(D)` between real atoms.
    pub p_dist: Tensor<1>,
    /// The row-normalised adjacency between real atoms.
    pub p_adj: Tensor<1>,
}

impl MoleculeAttention {
    /// The packed form of `prepared` (from [`MoleculeAttention::prepare`] with
    /// `key_padding_mask: [B, N]`) for node states `x: [B, N, d_model]`, or `None` where
    /// the padded path must run: trainable lambdas, `x` or the distances not f32 on flex,
    /// distances or adjacency tracked by autodiff, no padding, or a distance or adjacency
    /// weight from a real atom to padding that is not 0 (then the padding takes part in
    /// attention and packing would change the result; MAT's featurised inputs never have
    /// one).
    pub fn prepare_packed(
        &self,
        x: &Tensor<3>,
        prepared: &PreparedInputs,
        key_padding_mask: &Tensor<2, Bool>,
    ) -> Option<PackedInputs> {
        if self.lambdas.is_some()
            || !on_flex_f32(x)
            || !on_flex_f32(&prepared.p_dist)
            || is_tracked(&prepared.p_dist)
            || is_tracked(&prepared.p_adj)
        {
            return None;
        }
        let batch = PackedBatch::from_mask(key_padding_mask)?;
        let read = |t: &Tensor<3>| t.clone().into_data().try_into_vec::<f32>().ok();
        let (dist, adj) = (read(&prepared.p_dist)?, read(&prepared.p_adj)?);
        if !(batch.zero_toward_padding(&dist) && batch.zero_toward_padding(&adj)) {
            return None;
        }
        let device = prepared.p_dist.device();
        let tensor = |v: Vec<f32>| {
            let n = v.len();
            Tensor::<1>::from_data(TensorData::new(v, [n]), &device)
        };
        Some(PackedInputs {
            p_dist: tensor(batch.pack_pairs(&dist)),
            p_adj: tensor(batch.pack_pairs(&adj)),
            batch,
        })
    }

    /// Molecule attention on packed rows `x: [1, R, d_model]` (the real atoms of
    /// `packed.batch`) -> `[1, R, d_model]`: each row equals that atom's row of
    /// [`MoleculeAttention::forward_prepared`] on the padded batch (to f32 rounding; with
    /// dropout, equal in distribution only: the mask is drawn for the packed pairs).
    ///
    /// # Panics
    /// If the module has trainable lambdas or `x` is not f32 on flex (where
    /// [`MoleculeAttention::prepare_packed`] gives `None`), or `x` is not `[1, R, d_model]`.
    pub fn forward_packed(&self, x: Tensor<3>, packed: &PackedInputs) -> Tensor<3> {
        assert!(
            self.lambdas.is_none(),
            "forward_packed: fixed lambdas only (prepare_packed declines trainable ones)"
        );
        let p_mix = self.fixed_mix(packed.p_dist.clone(), packed.p_adj.clone());
        let (cfg, [q, k, v]) = self.fused_projections(x);
        let out = fused_attention_packed(
            cfg,
            q,
            k,
            v,
            packed.batch.lengths(),
            Some(p_mix),
            Some(&self.dropout),
        )
        .expect("forward_packed: f32 on flex (where prepare_packed gives Some)");
        crate::linear(&self.output, out)
    }
}
