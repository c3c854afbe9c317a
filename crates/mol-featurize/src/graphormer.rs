//! Graphormer / Transformer-M inputs: OGB categorical atom and bond features, degrees,
//! shortest-path distances (SPD) and shortest paths, optional 3D coordinates, and
//! padding into a batch (docs/SPEC.md 2.2, 2.3).
//!
//! Sources: Ying et al. 2021 (Graphormer, arXiv 2106.05234) section 3.1; Luo et al. 2022
//! (Transformer-M, arXiv 2210.01765) section 4; OGB `ogb.utils.smiles2graph`.
//!
//! Shortest paths are the original's: Floyd-Warshall in `algos.pyx`'s loop order, so
//! where several shortest paths exist the same one is chosen, with one difference on
//! purpose: the reconstruction marks "no intermediate atom" with a sentinel, so atom 0
//! stays on the paths through it (the original uses 0 for both and drops it, reading a
//! non-bonded pair as the path's bond; Graphormer fixed it the same way).
//!
//! Also different from the reference preprocessing:
//! - Only the first `multi_hop_max_dist` bonds of each path are stored
//!   ([`GraphormerFeatures::path_bonds`], `N x N x hops`), never an `N x N x 510` tensor,
//!   and pairs in different fragments (salts) simply have no path.

use serde::{Deserialize, Serialize};

use crate::conformer::CoordinateMethod;
use crate::error::{BatchError, FeaturizeError};
use crate::molecule::Molecule;
pub use crate::shortest_paths::{ShortestPaths, UNREACHABLE};

pub use crate::vocab::{
    ATOM_TABLE_ROWS, ATOM_TYPES, ATOM_VOCAB, BOND_TABLE_ROWS, BOND_VOCAB, OGB_ATOM_FEATURES,
    OGB_BOND_FEATURES,
};

/// One molecule's Graphormer / Transformer-M inputs, unpadded (no graph token: the
/// model prepends it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphormerFeatures {
    /// Number of atoms `N` (hydrogen-suppressed).
    pub num_atoms: usize,
    /// OGB atom categories, `N x 9`, each below its [`ATOM_VOCAB`] size.
    pub atom_features: Vec<[u8; OGB_ATOM_FEATURES]>,
    /// Bonds as atom pairs (each bond once).
    pub bonds: Vec<[usize; 2]>,
    /// OGB bond categories of [`GraphormerFeatures::bonds`], each below [`BOND_VOCAB`].
    pub bond_features: Vec<[u8; OGB_BOND_FEATURES]>,
    /// Number of bonded heavy-atom neighbours of each atom (graph degree).
    pub degree: Vec<u16>,
    /// Shortest-path distance in bonds, row-major `N x N`; [`UNREACHABLE`] between
    /// fragments.
    pub spd: Vec<u16>,
    /// Number of hops stored per path (`multi_hop_max_dist`).
    pub max_hops: usize,
    /// Bonds along the shortest path `i -> j`, row-major `N x N x max_hops`: index into
    /// `bonds` plus one, 0 past the path's end (or no path).
    pub path_bonds: Vec<u32>,
    /// Heavy-atom coordinates in Angstrom, `N` rows, when a conformer is known.
    pub coordinates: Option<Vec<[f32; 3]>>,
    /// Where the molecule's coordinates came from (featurization reports count it; a
    /// 2D layout or topological molecule carries no `coordinates`).
    #[serde(default = "unknown_source")]
    pub coordinate_source: CoordinateMethod,
}

/// `coordinate_source` of features deserialized from before the field existed.
fn unknown_source() -> CoordinateMethod {
    CoordinateMethod::File
}

impl GraphormerFeatures {
    /// Checks lengths and index ranges (features built by [`featurize`] always pass;
    /// deserialized ones may not).
    ///
    /// # Errors
    /// What is inconsistent.
    pub fn validate(&self) -> Result<(), BatchError> {
        let n = self.num_atoms;
        let lens = [
            ("atom_features", self.atom_features.len(), n),
            ("degree", self.degree.len(), n),
            ("spd", self.spd.len(), n * n),
            ("path_bonds", self.path_bonds.len(), n * n * self.max_hops),
            ("bond_features", self.bond_features.len(), self.bonds.len()),
        ];
        for (name, got, want) in lens {
            if got != want {
                return Err(BatchError::Inconsistent(format!(
                    "{name} has {got} entries, expected {want}"
                )));
            }
        }
        if let Some(c) = &self.coordinates
            && c.len() != n
        {
            return Err(BatchError::Inconsistent(format!(
                "{} coordinate rows for {n} atoms",
                c.len()
            )));
        }
        if let Some(a) = self.atom_features.iter().position(|f| {
            f.iter()
                .zip(ATOM_VOCAB)
                .any(|(&v, size)| v as usize >= size)
        }) {
            return Err(BatchError::Inconsistent(format!(
                "atom {a}: category out of the OGB vocabulary"
            )));
        }
        if self.bond_features.iter().any(|f| {
            f.iter()
                .zip(BOND_VOCAB)
                .any(|(&v, size)| v as usize >= size)
        }) {
            return Err(BatchError::Inconsistent(
                "bond category out of the OGB vocabulary".into(),
            ));
        }
        if self
            .path_bonds
            .iter()
            .any(|&b| b as usize > self.bonds.len())
        {
            return Err(BatchError::Inconsistent(
                "path refers to a bond that does not exist".into(),
            ));
        }
        Ok(())
    }
}

/// OGB atom categories (one row per atom) and bond categories (one row per bond).
pub type OgbCategories = (Vec<[u8; OGB_ATOM_FEATURES]>, Vec<[u8; OGB_BOND_FEATURES]>);

/// OGB atom and bond categories of `mol` (the graph of `ogb.utils.smiles2graph`), atoms
/// in [`Molecule::atoms`] order. Out-of-vocabulary values are the "misc" index.
///
/// The toolkit computes the categories on the `MolFromSmiles` graph; the fields that
/// [`crate::rdkit_rules`] corrects (atomic number, total degree, total H, aromatic, in
/// ring) are taken from `mol`, so they agree with the MAT features. A double bond whose
/// end received a folded stereo hydrogen has no stereo left (RDKit `STEREONONE`).
///
/// # Errors
/// [`FeaturizeError::Internal`] if the toolkit's hydrogen-suppressed graph disagrees
/// with `mol`'s atoms or bonds (never seen; guards the index mapping).
pub fn ogb_features(mol: &Molecule) -> Result<OgbCategories, FeaturizeError> {
    let internal = |reason: String| FeaturizeError::Internal {
        smiles: mol.smiles().to_string(),
        reason,
    };
    let swapped;
    let source = if mol.pyrrole_donors.is_empty() {
        &mol.parsed
    } else {
        swapped = crate::rdkit_rules::with_pyrrole_donors(&mol.parsed, &mol.pyrrole_donors);
        &swapped
    };
    let graph = chematic::smiles::ogb_graph_features(source)
        .map_err(|e| internal(format!("OGB features: {e}")))?;
    // Graph nodes: the MolFromSmiles atoms in input order, i.e. ours plus folded hydrogens.
    let mut graph_atoms: Vec<usize> = mol
        .source_atoms()
        .iter()
        .chain(&mol.folded_hydrogens)
        .copied()
        .collect();
    graph_atoms.sort_unstable();
    if graph.node_feat.len() != graph_atoms.len() {
        return Err(internal(format!(
            "OGB graph has {} atoms, the molecule {}",
            graph.node_feat.len(),
            graph_atoms.len()
        )));
    }
    // Graph node -> our atom (None for a folded hydrogen).
    let mut ours_of_node = vec![None; graph_atoms.len()];
    for (i, &old) in mol.source_atoms().iter().enumerate() {
        if let Ok(node) = graph_atoms.binary_search(&old) {
            ours_of_node[node] = Some(i);
        }
    }
    let clip = |value: i64, size: usize| value.clamp(0, size as i64 - 1) as u8;
    let mut atoms = vec![[0u8; OGB_ATOM_FEATURES]; mol.num_atoms()];
    for (node, f) in graph.node_feat.iter().enumerate() {
        let Some(i) = ours_of_node[node] else {
            continue;
        };
        let a = &mol.atoms()[i];
        let mut f = *f;
        // OGB's atomic-number list starts at 1: a dummy atom (0) is "misc" (118).
        f[0] = match a.atomic_number {
            0 => ATOM_VOCAB[0] as i64 - 1,
            z => i64::from(z) - 1,
        };
        f[2] = (mol.degree(i) + usize::from(a.total_hydrogens)) as i64;
        f[4] = i64::from(a.total_hydrogens);
        f[7] = i64::from(a.is_aromatic);
        f[8] = i64::from(a.is_in_ring);
        atoms[i] = std::array::from_fn(|k| clip(f[k], ATOM_VOCAB[k]));
    }
    let gained_hydrogen: Vec<usize> = mol
        .folded_hydrogens
        .iter()
        .filter_map(|&h| {
            mol.parsed
                .neighbors(chematic::core::AtomIdx(h as u32))
                .find_map(|(x, _)| mol.source_atoms().iter().position(|&s| s == x.0 as usize))
        })
        .collect();
    // Edges come in both directions: keep one feature row per bond of `mol`.
    let mut bonds: Vec<Option<[u8; 3]>> = vec![None; mol.bonds().len()];
    for (edge, feat) in graph.edge_index.iter().zip(&graph.edge_feat) {
        let (Some(u), Some(v)) = (
            ours_of_node.get(edge[0] as usize).copied().flatten(),
            ours_of_node.get(edge[1] as usize).copied().flatten(),
        ) else {
            continue;
        };
        if let Some(k) = mol
            .bonds()
            .iter()
            .position(|b| (b.begin, b.end) == (u, v) || (b.begin, b.end) == (v, u))
        {
            let mut row: [u8; 3] = std::array::from_fn(|c| clip(feat[c], BOND_VOCAB[c]));
            let bond = &mol.bonds()[k];
            // E/Z (OGB stereo 1..=4) is gone with the folded hydrogen; STEREOANY (5) stays.
            if bond.order == crate::BondOrder::Double
                && (gained_hydrogen.contains(&bond.begin) || gained_hydrogen.contains(&bond.end))
                && (1..=4).contains(&row[1])
            {
                row[1] = 0;
            }
            bonds[k] = Some(row);
        }
    }
    let bonds = bonds
        .into_iter()
        .enumerate()
        .map(|(k, f)| f.ok_or_else(|| internal(format!("bond {k} is missing from the OGB graph"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((atoms, bonds))
}

/// Graphormer features of `mol`, with paths of up to `max_hops` bonds
/// (`multi_hop_max_dist`, 5 in Graphormer and Transformer-M) and optional heavy-atom
/// coordinates (Angstrom, one row per atom).
///
/// # Errors
/// [`ogb_features`]' errors; [`FeaturizeError::Internal`] when `coordinates` has the
/// wrong number of rows.
pub fn featurize(
    mol: &Molecule,
    max_hops: usize,
    coordinates: Option<Vec<[f32; 3]>>,
) -> Result<GraphormerFeatures, FeaturizeError> {
    let n = mol.num_atoms();
    if let Some(c) = &coordinates
        && c.len() != n
    {
        return Err(FeaturizeError::Internal {
            smiles: mol.smiles().to_string(),
            reason: format!("{} coordinate rows for {n} atoms", c.len()),
        });
    }
    let (atom_features, bond_features) = ogb_features(mol)?;
    let bonds: Vec<[usize; 2]> = mol.bonds().iter().map(|b| [b.begin, b.end]).collect();
    let bond_of = |u: usize, v: usize| {
        bonds
            .iter()
            .position(|b| *b == [u, v] || *b == [v, u])
            .expect("consecutive path atoms are bonded")
    };
    let paths = ShortestPaths::new(mol);
    let mut path_bonds = vec![0u32; n * n * max_hops];
    for i in 0..n {
        for j in 0..n {
            if let Some(path) = paths.path(i, j) {
                for (h, w) in path.windows(2).take(max_hops).enumerate() {
                    path_bonds[(i * n + j) * max_hops + h] = bond_of(w[0], w[1]) as u32 + 1;
                }
            }
        }
    }
    Ok(GraphormerFeatures {
        num_atoms: n,
        atom_features,
        bonds,
        bond_features,
        degree: (0..n).map(|i| mol.degree(i) as u16).collect(),
        spd: paths.into_distances(),
        max_hops,
        path_bonds,
        coordinate_source: if coordinates.is_some() {
            CoordinateMethod::File
        } else {
            CoordinateMethod::Topological
        },
        coordinates,
    })
}

/// Limits of the learned encodings, shared by the featurizer's batching and the model
/// (their table sizes follow from them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncodingLimits {
    /// Degrees above this share the last degree index.
    pub max_degree: usize,
    /// SPDs above this share the last distance index (Graphormer's `num_spatial`
    /// minus the padding, self and unreachable rows).
    pub max_distance: usize,
    /// Bonds of a path that enter the edge encoding (`multi_hop_max_dist`).
    pub max_hops: usize,
}

impl Default for EncodingLimits {
    fn default() -> Self {
        Self {
            max_degree: 8,
            max_distance: 20,
            max_hops: 5,
        }
    }
}

impl EncodingLimits {
    /// Rows of the degree table: 0 padding, then degrees `0..=max_degree`.
    pub fn degree_rows(&self) -> usize {
        self.max_degree + 2
    }

    /// Rows of the spatial (SPD) table: 0 padding, `1 + d` for SPD `d` in
    /// `0..=max_distance`, and the last row for unreachable pairs.
    pub fn spatial_rows(&self) -> usize {
        self.max_distance + 3
    }
}

/// A padded batch of [`GraphormerFeatures`]: `B` molecules, `N` = largest atom count
/// (no graph token). Index tensors are flat row-major; index 0 always means padding.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphormerBatchData {
    /// Molecules `B`.
    pub batch_size: usize,
    /// Atoms per molecule after padding `N`.
    pub n_atoms: usize,
    /// Hops per path `M` (`max_hops`).
    pub hops: usize,
    /// `[B, N, OGB_ATOM_FEATURES]` (9) rows of the atom table (`1 + offset + category`).
    pub atom_index: Vec<i64>,
    /// `[B, N]` rows of the degree table (`1 + min(degree, max_degree)`).
    pub degree_index: Vec<i64>,
    /// `[B, N, N]` rows of the spatial table (see [`EncodingLimits::spatial_rows`]).
    pub spatial_index: Vec<i64>,
    /// `[B, N, N, M, 3]` rows of the bond table for the `m`-th bond of the path.
    pub edge_index: Vec<i64>,
    /// `[B, N, N]` divisor of the edge encoding: number of path bonds used,
    /// `clamp(SPD, 1, M)`; 1 for self pairs, unreachable pairs and padding.
    pub path_length: Vec<f32>,
    /// `[B, N]` atom type of the 3D channel: atomic number (1..=118, 119 misc), 0 padding.
    pub atom_type: Vec<i64>,
    /// `[B, N, 3]` coordinates in Angstrom (0 for padding and for 2D-only molecules).
    pub coordinates: Vec<f32>,
    /// `[B, N]` true for padded atoms (`key_padding_mask`).
    pub key_padding_mask: Vec<bool>,
    /// `[B]` true where the molecule carries coordinates.
    pub has_3d: Vec<bool>,
}

/// Pads `molecules` into one batch.
///
/// # Errors
/// An empty batch, a molecule featurized with fewer hops than `limits.max_hops`, or an
/// inconsistent [`GraphormerFeatures`] (see [`GraphormerFeatures::validate`]), naming
/// the molecule's position in the batch.
pub fn pad_graphormer_batch(
    molecules: &[&GraphormerFeatures],
    limits: &EncodingLimits,
) -> Result<GraphormerBatchData, BatchError> {
    let b = molecules.len();
    if b == 0 {
        return Err(BatchError::Empty);
    }
    let m = limits.max_hops;
    if let Some((g, f)) = molecules.iter().enumerate().find(|(_, f)| f.max_hops < m) {
        return Err(BatchError::Molecule {
            molecule: g,
            reason: format!(
                "featurized with {} hops, the encoding needs {m}",
                f.max_hops
            ),
        });
    }
    for (g, f) in molecules.iter().enumerate() {
        f.validate().map_err(|e| BatchError::Molecule {
            molecule: g,
            reason: e.to_string(),
        })?;
    }
    let n = molecules.iter().map(|f| f.num_atoms).max().unwrap_or(0);
    let mut out = GraphormerBatchData {
        batch_size: b,
        n_atoms: n,
        hops: m,
        atom_index: vec![0; b * n * OGB_ATOM_FEATURES],
        degree_index: vec![0; b * n],
        spatial_index: vec![0; b * n * n],
        edge_index: vec![0; b * n * n * m * 3],
        path_length: vec![1.0; b * n * n],
        atom_type: vec![0; b * n],
        coordinates: vec![0.0; b * n * 3],
        key_padding_mask: vec![true; b * n],
        has_3d: molecules.iter().map(|f| f.coordinates.is_some()).collect(),
    };
    let mut atom_offsets = [0usize; OGB_ATOM_FEATURES];
    for k in 1..OGB_ATOM_FEATURES {
        atom_offsets[k] = atom_offsets[k - 1] + ATOM_VOCAB[k - 1];
    }
    let bond_offsets = [0, BOND_VOCAB[0], BOND_VOCAB[0] + BOND_VOCAB[1]];
    for (g, f) in molecules.iter().enumerate() {
        let k = f.num_atoms;
        for i in 0..k {
            let row = g * n + i;
            out.key_padding_mask[row] = false;
            for (c, offset) in atom_offsets.iter().enumerate() {
                out.atom_index[row * OGB_ATOM_FEATURES + c] =
                    (1 + offset + f.atom_features[i][c] as usize) as i64;
            }
            out.degree_index[row] = 1 + (f.degree[i] as usize).min(limits.max_degree) as i64;
            out.atom_type[row] = 1 + f.atom_features[i][0] as i64;
            if let Some(xyz) = &f.coordinates {
                out.coordinates[row * 3..row * 3 + 3].copy_from_slice(&xyz[i]);
            }
            for j in 0..k {
                let pair = (g * n + i) * n + j;
                let d = f.spd[i * k + j];
                out.spatial_index[pair] = if d == UNREACHABLE {
                    limits.spatial_rows() as i64 - 1
                } else {
                    1 + (d as usize).min(limits.max_distance) as i64
                };
                if d != UNREACHABLE {
                    out.path_length[pair] = (d as usize).clamp(1, m) as f32;
                }
                for h in 0..m {
                    let bond = f.path_bonds[(i * k + j) * f.max_hops + h];
                    if bond == 0 {
                        break;
                    }
                    let feats = f.bond_features[bond as usize - 1];
                    for c in 0..3 {
                        out.edge_index[((pair * m) + h) * 3 + c] =
                            (1 + bond_offsets[c] + feats[c] as usize) as i64;
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(smiles: &str) -> ShortestPaths {
        ShortestPaths::new(&Molecule::from_smiles(smiles).unwrap())
    }

    #[test]
    fn ring_distances_wrap_around_and_paths_are_shortest() {
        // Cyclohexane: opposite atoms are 3 bonds apart either way.
        let p = paths("C1CCCCC1");
        let row: Vec<u16> = (0..6).map(|j| p.distance(0, j).unwrap()).collect();
        assert_eq!(row, vec![0, 1, 2, 3, 2, 1]);
        assert_eq!(p.path(0, 4), Some(vec![0, 5, 4]));
        assert_eq!(p.path(1, 5), Some(vec![1, 0, 5]));
        assert_eq!(p.path(2, 2), Some(vec![2]));
    }

    #[test]
    fn chain_paths_include_node_zero() {
        // Pentane 0-1-2-3-4: the path 4 -> 0 ends at node 0 and 1 -> ... passes it in
        // "CC(C)..."-style branches; the reference's reconstruction loses node 0.
        let p = paths("CCCCC");
        assert_eq!(p.path(4, 0), Some(vec![4, 3, 2, 1, 0]));
        assert_eq!(p.path(0, 4), Some(vec![0, 1, 2, 3, 4]));
        // Isobutane: atom 0 is a methyl, atom 1 the centre; 0 -> 3 passes 1, and the
        // branch path 2 -> 0 must end at 0.
        let q = paths("CC(C)C");
        assert_eq!(q.path(2, 0), Some(vec![2, 1, 0]));
        // Node 0 in the middle: propanol written from the central carbon.
        let r = paths("C(C)CO");
        assert_eq!(r.path(1, 3), Some(vec![1, 0, 2, 3]));
        assert_eq!(r.distance(1, 3), Some(3));
    }

    #[test]
    fn salt_fragments_have_no_path() {
        let mol = Molecule::from_smiles("CC(=O)[O-].[Na+]").unwrap();
        let p = ShortestPaths::new(&mol);
        assert_eq!(p.distance(0, 4), None);
        assert_eq!(p.path(4, 1), None);
        assert_eq!(p.distance(4, 4), Some(0));
        let f = featurize(&mol, 5, None).unwrap();
        assert_eq!(f.spd[4], UNREACHABLE);
        assert!(
            f.path_bonds[(4 * 5) * 5..(4 * 5 + 1) * 5]
                .iter()
                .all(|&b| b == 0)
        );
        // Batch: the unreachable pair gets the last spatial row, divisor 1, no bonds.
        let limits = EncodingLimits::default();
        let batch = pad_graphormer_batch(&[&f], &limits).unwrap();
        assert_eq!(batch.spatial_index[4], limits.spatial_rows() as i64 - 1);
        assert_eq!(batch.path_length[4], 1.0);
        assert_eq!(batch.spatial_index[1], 2); // SPD 1 -> row 2
    }

    #[test]
    fn path_bonds_follow_the_path_and_stop_at_max_hops() {
        // Heptane: 0 -> 6 is 6 bonds; with 5 hops only the first 5 are stored.
        let mol = Molecule::from_smiles("CCCCCCC").unwrap();
        let f = featurize(&mol, 5, None).unwrap();
        let n = 7;
        let stored = &f.path_bonds[6 * 5..7 * 5];
        assert_eq!(stored, &[1, 2, 3, 4, 5]);
        let back = &f.path_bonds[(6 * n) * 5..(6 * n) * 5 + 5];
        assert_eq!(back, &[6, 5, 4, 3, 2]);
        let batch = pad_graphormer_batch(&[&f], &EncodingLimits::default()).unwrap();
        assert_eq!(batch.path_length[6], 5.0);
        assert_eq!(batch.path_length[1], 1.0);
        assert_eq!(batch.path_length[0], 1.0);
    }

    #[test]
    fn inconsistent_features_are_an_error_not_a_panic() {
        let mut f = featurize(&Molecule::from_smiles("CCO").unwrap(), 5, None).unwrap();
        f.atom_features[1][0] = 200;
        let e = pad_graphormer_batch(&[&f], &EncodingLimits::default()).unwrap_err();
        assert!(
            matches!(e, BatchError::Molecule { molecule: 0, .. }),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(e.contains("molecule 0") && e.contains("atom 1"), "{e}");
        f.atom_features[1][0] = 5;
        f.spd.pop();
        let e = pad_graphormer_batch(&[&f], &EncodingLimits::default()).unwrap_err();
        assert!(e.to_string().contains("spd"), "{e}");
        assert_eq!(
            pad_graphormer_batch(&[], &EncodingLimits::default()),
            Err(BatchError::Empty)
        );
    }

    #[test]
    fn padding_rows_are_zero_and_offsets_index_one_table() {
        let ethanol = featurize(&Molecule::from_smiles("CCO").unwrap(), 5, None).unwrap();
        let water = featurize(
            &Molecule::from_smiles("O").unwrap(),
            5,
            Some(vec![[0.0, 0.0, 0.0]]),
        )
        .unwrap();
        let batch = pad_graphormer_batch(&[&ethanol, &water], &EncodingLimits::default()).unwrap();
        assert_eq!((batch.batch_size, batch.n_atoms), (2, 3));
        assert_eq!(
            batch.key_padding_mask,
            vec![false, false, false, false, true, true]
        );
        assert_eq!(batch.has_3d, vec![false, true]);
        // Ethanol's O: OGB [7, 0, 2, 5, 1, 0, 2, 0, 0] -> 1 + offset + value.
        assert_eq!(
            &batch.atom_index[2 * 9..3 * 9],
            &[8, 120, 127, 142, 150, 159, 167, 171, 173]
        );
        assert!(batch.atom_index[4 * 9..].iter().all(|&v| v == 0));
        assert_eq!(batch.atom_type, vec![6, 6, 8, 8, 0, 0]);
        assert_eq!(batch.degree_index, vec![2, 3, 2, 1, 0, 0]);
        assert!(
            batch
                .atom_index
                .iter()
                .all(|&v| (v as usize) < ATOM_TABLE_ROWS)
        );
        // C-C bond: single, no stereo, not conjugated -> rows 1, 6, 12.
        assert_eq!(&batch.edge_index[5 * 3..5 * 3 + 3], &[1, 6, 12]);
        assert!(
            batch
                .edge_index
                .iter()
                .all(|&v| (v as usize) < BOND_TABLE_ROWS)
        );
    }
}
