//! Index layouts of the original Transformer-M's tables (lsj2408/Transformer-M
//! `data/wrapper.py` `convert_to_single_emb`, `data/collator.py`), as functions of our
//! compact rows, and our padded batches in the original collator's index space.

use mol_featurize::graphormer::{ATOM_VOCAB, BOND_VOCAB};

use super::model::TransformerM;

/// Rows per feature block in the original tables (`convert_to_single_emb` offset).
pub const BLOCK: usize = 512;
/// The original's SPD of unreachable pairs (`algos.pyx`).
pub const UNREACHABLE_SPD: usize = 510;

/// `(feature, category)` of our compact row `r >= 1` in a table built from `vocab`.
fn split(mut r: usize, vocab: &[usize]) -> Option<(usize, usize)> {
    r = r.checked_sub(1)?;
    for (f, &size) in vocab.iter().enumerate() {
        if r < size {
            return Some((f, r));
        }
        r -= size;
    }
    None
}

/// Atom table: feature `f`, category `v` is original row `f * 512 + v + 2` (offset
/// `1 + f * 512`, then the collator's `+ 1`); row 0 padding.
pub fn atom_row(_: &TransformerM, r: usize) -> usize {
    split(r, &ATOM_VOCAB).map_or(0, |(f, v)| f * BLOCK + v + 2)
}

/// Bond table: feature `f`, category `v` is original row `f * 512 + v + 3` (offset,
/// the `+ 1` of `attn_edge_type`, the collator's `+ 1`); row 0 no bond.
pub fn bond_row(_: &TransformerM, r: usize) -> usize {
    split(r, &BOND_VOCAB).map_or(0, |(f, v)| f * BLOCK + v + 3)
}

/// Spatial table: SPD `d` is row `d + 1` in both; our last row (unreachable) is the
/// original's row 511.
pub fn spatial_row(model: &TransformerM, r: usize) -> usize {
    let rows = model.bias_encoder.spatial_embedding.weight.dims()[0];
    if r + 1 == rows {
        UNREACHABLE_SPD + 1
    } else {
        r
    }
}

/// Gaussian affine, atom i's type `t` (1 + OGB atomic-number category): original row
/// `t + 2` of `node_type_edge[..., 0]`; padding (t = 0) row 1.
pub fn type_row_i(_: &TransformerM, t: usize) -> usize {
    if t == 0 { 1 } else { t + 2 }
}

/// Gaussian affine, atom j's type `t`: original row `t + 514`; padding row 513.
pub fn type_row_j(_: &TransformerM, t: usize) -> usize {
    if t == 0 { BLOCK + 1 } else { t + BLOCK + 2 }
}

/// A batch in the original collator's index space (`data/collator.py`
/// `collator_3d`), each tensor flat row-major; for running the original code on our
/// featurization, and for checking that featurization against the original's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollatorInputs {
    /// `x` `[B, N, 9]`.
    pub x: Vec<i64>,
    /// `in_degree` (= `out_degree`) `[B, N]`.
    pub in_degree: Vec<i64>,
    /// `spatial_pos` `[B, N, N]` (SPD + 1, unreachable 511, padding 0).
    pub spatial_pos: Vec<i64>,
    /// `edge_input` `[B, N, N, M, 3]`.
    pub edge_input: Vec<i64>,
    /// `node_type_edge` `[B, N, N, 2]`.
    pub node_type_edge: Vec<i64>,
    /// `[B, N + 1, N + 1]` where the collator's `attn_bias` is `-inf`: padded keys,
    /// and pairs `spatial_pos_max`+ bonds apart or in different fragments.
    pub masked: Vec<bool>,
}

/// `data` (padded by [`mol_featurize::pad_graphormer_batch`]) as the original
/// collator would have built it for `model`'s tables.
pub fn collator_inputs(
    model: &TransformerM,
    data: &mol_featurize::GraphormerBatchData,
) -> CollatorInputs {
    let (b, n) = (data.batch_size, data.n_atoms);
    let map = |v: &[i64], f: fn(&TransformerM, usize) -> usize| -> Vec<i64> {
        v.iter().map(|&r| f(model, r as usize) as i64).collect()
    };
    let mut node_type_edge = Vec::with_capacity(b * n * n * 2);
    let mut masked = vec![false; b * (n + 1) * (n + 1)];
    for g in 0..b {
        for i in 0..n {
            for j in 0..n {
                let (mut ti, mut tj) = (data.atom_type[g * n + i], data.atom_type[g * n + j]);
                if ti == 0 || tj == 0 {
                    (ti, tj) = (0, 0);
                }
                node_type_edge.push(type_row_i(model, ti as usize) as i64);
                node_type_edge.push(type_row_j(model, tj as usize) as i64);
                let far = data.spatial_index[(g * n + i) * n + j] as usize > model.spatial_pos_max;
                masked[(g * (n + 1) + i + 1) * (n + 1) + j + 1] =
                    far || data.key_padding_mask[g * n + j];
            }
        }
        for j in 0..n {
            masked[g * (n + 1) * (n + 1) + j + 1] = data.key_padding_mask[g * n + j];
        }
    }
    CollatorInputs {
        x: map(&data.atom_index, atom_row),
        in_degree: data.degree_index.clone(),
        spatial_pos: map(&data.spatial_index, spatial_row),
        edge_input: map(&data.edge_index, bond_row),
        node_type_edge,
        masked,
    }
}
