//! Padding and batching of MAT features.

use crate::error::BatchError;
use crate::mat::MatFeatures;
use crate::mat_edges::MAT_D_EDGE;

/// A padded batch of MAT inputs as flat row-major arrays (B = batch, N = largest
/// molecule of the batch, dummy node included).
#[derive(Debug, Clone, PartialEq)]
pub struct MatBatchData {
    /// B.
    pub batch_size: usize,
    /// N.
    pub n_atoms: usize,
    /// d_atom.
    pub d_atom: usize,
    /// `[B, N, d_atom]`, zero-padded.
    pub node_features: Vec<f32>,
    /// `[B, N, N]`, zero-padded.
    pub adjacency: Vec<f32>,
    /// `[B, N, N]` in Angstrom, zero-padded (as the reference).
    pub distances: Vec<f32>,
    /// `[B, N]`, `true` = padding (the workspace convention). Derived from the features
    /// as in the reference: a node is real iff any of its features is non-zero.
    pub key_padding_mask: Vec<bool>,
    /// `[B, N, N, d_edge]` bond features, zero-padded, when the molecules carry them
    /// ([`MatFeatures::edge_features`]; all of a batch or none).
    pub edge_features: Option<Vec<f32>>,
}

/// Zero-pads molecules to the largest one and stacks them.
///
/// All molecules must share `d_atom` and either all carry edge features or none (they
/// come from one featurizer); an empty slice gives an empty batch. Panics never: a
/// mismatch is a programming error reported as [`BatchError::Molecule`] naming the
/// molecule's position.
pub fn pad_batch(molecules: &[&MatFeatures]) -> Result<MatBatchData, BatchError> {
    let batch_size = molecules.len();
    let n = molecules.iter().map(|m| m.n_atoms).max().unwrap_or(0);
    let d_atom = molecules.first().map_or(0, |m| m.d_atom);
    let mut node_features = vec![0.0f32; batch_size * n * d_atom];
    let mut adjacency = vec![0.0f32; batch_size * n * n];
    let mut distances = vec![0.0f32; batch_size * n * n];
    let mut key_padding_mask = vec![true; batch_size * n];
    let with_edges = molecules.first().is_some_and(|m| m.edge_features.is_some());
    let mut edge_features = with_edges.then(|| vec![0.0f32; batch_size * n * n * MAT_D_EDGE]);
    for (b, m) in molecules.iter().enumerate() {
        if m.d_atom != d_atom {
            return Err(BatchError::Molecule {
                molecule: b,
                reason: format!("d_atom {} instead of {d_atom}", m.d_atom),
            });
        }
        match (&mut edge_features, &m.edge_features) {
            (Some(out), Some(e)) if e.len() == m.n_atoms * m.n_atoms * MAT_D_EDGE => {
                let k = m.n_atoms;
                let row = k * MAT_D_EDGE;
                for i in 0..k {
                    let dst = (b * n + i) * n * MAT_D_EDGE;
                    out[dst..dst + row].copy_from_slice(&e[i * row..(i + 1) * row]);
                }
            }
            (None, None) => {}
            (_, e) => {
                return Err(BatchError::Molecule {
                    molecule: b,
                    reason: format!(
                        "edge features {} where the batch's first molecule has {}",
                        e.as_ref()
                            .map_or("missing".into(), |e| format!("of {} values", e.len())),
                        if with_edges { "them" } else { "none" }
                    ),
                });
            }
        }
        let k = m.n_atoms;
        for i in 0..k {
            let src = &m.node_features[i * d_atom..(i + 1) * d_atom];
            node_features[(b * n + i) * d_atom..(b * n + i + 1) * d_atom].copy_from_slice(src);
            key_padding_mask[b * n + i] = src.iter().all(|&v| v == 0.0);
            let dst = (b * n + i) * n;
            adjacency[dst..dst + k].copy_from_slice(&m.adjacency[i * k..(i + 1) * k]);
            distances[dst..dst + k].copy_from_slice(&m.distances[i * k..(i + 1) * k]);
        }
    }
    Ok(MatBatchData {
        batch_size,
        n_atoms: n,
        d_atom,
        node_features,
        adjacency,
        distances,
        key_padding_mask,
        edge_features,
    })
}
