//! MAT's edge features: 11 bond features per pair of bonded atoms, the input of the
//! original's `use_edge_features` variant.
//!
//! ardigen/MAT's `make_model(use_edge_features=True)` replaces the adjacency of Eq. 2 by
//! `relu(w . e_ij)` of an `edges_att` tensor with `d_edge = 11` channels
//! (`EdgeFeaturesLayer` and `MultiHeadedAttention` in `src/transformer.py`); the release
//! ships no code that makes those features (its featurizer returns node features,
//! adjacency and distances, and its example passes `edges_att=None`). The 11 columns here
//! are molattn's, chosen from RDKit's bond properties to fill exactly that width:
//! [`MAT_EDGE_FEATURES`]. They are checked against RDKit on 320 molecules
//! (`fixtures/mat_edge_features.json`, written by `fixtures/gen/mat_edge_features.py`).

use crate::error::FeaturizeError;
use crate::graphormer::ogb_features;
use crate::molecule::Molecule;

/// Number of bond features per pair (the original's `d_edge` without
/// `integrated_distances`).
pub const MAT_D_EDGE: usize = 11;

/// The [`MAT_D_EDGE`] columns, in order: bond type one-hot (single, double, triple,
/// aromatic; a dative or other bond sets none), conjugated, in a ring, and the stereo
/// one-hot (RDKit `STEREOANY`, `STEREOZ`, `STEREOE`, `STEREOCIS`, `STEREOTRANS`;
/// `STEREONONE` sets none).
pub const MAT_EDGE_FEATURES: [&str; MAT_D_EDGE] = [
    "single",
    "double",
    "triple",
    "aromatic",
    "conjugated",
    "in_ring",
    "stereo_any",
    "stereo_z",
    "stereo_e",
    "stereo_cis",
    "stereo_trans",
];

/// The [`MAT_D_EDGE`] features of every bond of `mol`, in [`Molecule::bonds`] order.
///
/// Bond type, stereo and conjugation are the OGB categories of
/// [`crate::graphormer::ogb_features`] (RDKit's values, checked by the OGB fixture);
/// ring membership is [`Molecule::bonds_in_ring`].
///
/// # Errors
/// [`FeaturizeError::Internal`] as [`crate::graphormer::ogb_features`].
pub fn bond_features(mol: &Molecule) -> Result<Vec<[f32; MAT_D_EDGE]>, FeaturizeError> {
    let (_, bonds) = ogb_features(mol)?;
    Ok(bonds
        .iter()
        .zip(mol.bonds_in_ring())
        .map(|(&[kind, stereo, conjugated], &in_ring)| {
            let mut f = [0.0f32; MAT_D_EDGE];
            // OGB bond type: SINGLE, DOUBLE, TRIPLE, AROMATIC, misc (4).
            if kind < 4 {
                f[kind as usize] = 1.0;
            }
            f[4] = f32::from(conjugated);
            f[5] = f32::from(u8::from(in_ring));
            // OGB stereo: NONE, Z, E, CIS, TRANS, ANY -> our columns ANY, Z, E, CIS, TRANS.
            match stereo {
                5 => f[6] = 1.0,
                1..=4 => f[6 + stereo as usize] = 1.0,
                _ => {}
            }
            f
        })
        .collect())
}

/// The edge-feature tensor of one molecule as MAT's encoder reads it: `[N, N, d_edge]`
/// row-major over MAT's nodes (`N` = heavy atoms + 1, the dummy node at index 0, as in
/// [`crate::MatFeatures`]), each bond's [`bond_features`] at `(i, j)` and `(j, i)`, every
/// other pair (the diagonal and the dummy node's row and column included) zero.
///
/// # Errors
/// As [`bond_features`].
pub fn mat_edge_tensor(mol: &Molecule) -> Result<Vec<f32>, FeaturizeError> {
    let big_n = mol.num_atoms() + 1;
    let mut out = vec![0.0f32; big_n * big_n * MAT_D_EDGE];
    for (bond, f) in mol.bonds().iter().zip(bond_features(mol)?) {
        let (u, v) = (bond.begin + 1, bond.end + 1);
        for (a, b) in [(u, v), (v, u)] {
            let at = (a * big_n + b) * MAT_D_EDGE;
            out[at..at + MAT_D_EDGE].copy_from_slice(&f);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The features of the bond between atoms `u` and `v`.
    fn features(smiles: &str, u: usize, v: usize) -> [f32; MAT_D_EDGE] {
        let mol = Molecule::from_smiles(smiles).unwrap();
        let k = mol
            .bonds()
            .iter()
            .position(|b| (b.begin, b.end) == (u, v) || (b.begin, b.end) == (v, u))
            .unwrap();
        bond_features(&mol).unwrap()[k]
    }

    /// Hand-checked rows: E-2-butene's double bond, biphenyl's link (not in a ring),
    /// an aromatic ring bond (conjugated, in a ring).
    #[test]
    fn hand_checked_rows() {
        let butene = "C/C=C/C";
        let e = [0., 1., 0., 0., 0., 0., 0., 0., 1., 0., 0.];
        assert_eq!(features(butene, 1, 2), e);
        assert_eq!(
            features(butene, 0, 1),
            [1., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0.]
        );
        let biphenyl = "c1ccccc1-c1ccccc1";
        assert_eq!(
            features(biphenyl, 0, 1),
            [0., 0., 0., 1., 1., 1., 0., 0., 0., 0., 0.]
        );
        assert_eq!(
            features(biphenyl, 5, 6),
            [1., 0., 0., 0., 1., 0., 0., 0., 0., 0., 0.]
        );
    }

    #[test]
    fn the_tensor_is_symmetric_with_an_empty_dummy_node_and_diagonal() {
        let mol = Molecule::from_smiles("CC=O").unwrap();
        let t = mat_edge_tensor(&mol).unwrap();
        let n = 4;
        let at = |i: usize, j: usize| &t[(i * n + j) * MAT_D_EDGE..(i * n + j + 1) * MAT_D_EDGE];
        assert_eq!(at(1, 2), at(2, 1));
        assert_eq!(at(2, 3)[1], 1.0);
        for k in 0..n {
            assert!(
                at(0, k)
                    .iter()
                    .chain(at(k, 0))
                    .chain(at(k, k))
                    .all(|&v| v == 0.0)
            );
        }
        assert!(at(1, 3).iter().all(|&v| v == 0.0));
    }

    /// Padding keeps each molecule's pairs at their place and zeros the rest; a batch
    /// mixing molecules with and without edge features is refused, naming the molecule.
    #[test]
    fn batches_pad_edges_and_refuse_a_mixed_batch() {
        use crate::conformer::{ConformerOptions, CoordinateMethod};
        let mut featurizer = crate::MatFeaturizer {
            conformer: ConformerOptions {
                method: CoordinateMethod::Topological,
                ..Default::default()
            },
            edge_features: true,
            ..Default::default()
        };
        let small = featurizer.featurize_smiles("C#N").unwrap();
        let large = featurizer.featurize_smiles("CC=O").unwrap();
        let batch = crate::pad_batch(&[&small, &large]).unwrap();
        let e = batch.edge_features.as_ref().unwrap();
        let n = batch.n_atoms;
        assert_eq!((n, e.len()), (4, 2 * 4 * 4 * MAT_D_EDGE));
        let at = |b: usize, i: usize, j: usize| {
            let k = ((b * n + i) * n + j) * MAT_D_EDGE;
            &e[k..k + MAT_D_EDGE]
        };
        // C#N: the triple bond between nodes 1 and 2; its padded node 3 empty.
        assert_eq!(at(0, 1, 2)[2], 1.0);
        assert!((0..n).all(|k| at(0, 3, k).iter().chain(at(0, k, 3)).all(|&v| v == 0.0)));
        assert_eq!(at(1, 2, 3)[1], 1.0);
        featurizer.edge_features = false;
        let plain = featurizer.featurize_smiles("CO").unwrap();
        let err = crate::pad_batch(&[&small, &plain]).unwrap_err().to_string();
        assert!(err.contains("molecule 1"), "{err}");
        assert!(err.contains("edge features missing"), "{err}");
        assert!(crate::pad_batch(&[&plain]).unwrap().edge_features.is_none());
    }
}
