//! MAT featurization: atom features, adjacency and distances with a dummy node.
//!
//! Source: Maziarka et al. 2020 (arXiv 2002.08264), ardigen/MAT
//! `src/featurization/data_utils.py`; docs/SPEC.md 1.1.

use serde::{Deserialize, Serialize};

use crate::conformer::{self, ConformerOptions, CoordinateSource};
use crate::error::FeaturizeError;
use crate::molecule::Molecule;
use crate::vocab::{
    MAT_ATOMIC_NUMBER_SLOTS, MAT_D_ATOM, MAT_D_ATOM_RAW_CHARGE, MAT_FORMAL_CHARGES, MAT_HYDROGENS,
    MAT_NEIGHBOURS, atomic_number_index, one_hot_index,
};

/// Distance written into the dummy node's row and column (reference: 1e6).
pub const DUMMY_DISTANCE: f32 = 1e6;

/// How the formal charge enters the feature vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ChargeEncoding {
    /// One-hot over [-1, 0, +1] (3 columns; d_atom 28). Reference default.
    #[default]
    OneHot,
    /// The raw integer charge (1 column; d_atom 26).
    Raw,
}

/// The MAT featurizer's settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatFeaturizer {
    /// Formal charge encoding.
    pub charge_encoding: ChargeEncoding,
    /// Reproduce the reference's quirks: every out-of-list value goes to the last slot
    /// (charge -2 -> the +1 slot). Off by default: values go to the nearest end.
    pub reference_compat: bool,
    /// Coordinates for the distance matrix.
    pub conformer: ConformerOptions,
    /// Also make the [`crate::MAT_D_EDGE`] bond features per pair
    /// ([`MatFeatures::edge_features`], [`crate::mat_edges`]): the input of a MAT with
    /// `use_edge_features`. Off by default (and in settings written before it existed).
    #[serde(default)]
    pub edge_features: bool,
}

impl Default for MatFeaturizer {
    fn default() -> Self {
        Self {
            charge_encoding: ChargeEncoding::OneHot,
            reference_compat: false,
            conformer: ConformerOptions::default(),
            edge_features: false,
        }
    }
}

/// One molecule's MAT inputs, dummy node included (`n_atoms` = heavy atoms + 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatFeatures {
    /// Number of nodes N (dummy node at index 0 + heavy atoms).
    pub n_atoms: usize,
    /// Feature width d_atom (28 with one-hot charge).
    pub d_atom: usize,
    /// Node features `[N, d_atom]`, row-major. Row 0 = `[1, 0, ..., 0]` (dummy flag).
    pub node_features: Vec<f32>,
    /// Adjacency `[N, N]`: 1 on the diagonal of real atoms (self loops) and for every
    /// bond; the dummy row, column and diagonal are 0.
    pub adjacency: Vec<f32>,
    /// Distances `[N, N]` in Angstrom; the dummy row and column are [`DUMMY_DISTANCE`].
    pub distances: Vec<f32>,
    /// Which coordinate method produced `distances`.
    pub coordinate_source: CoordinateSource,
    /// `[N, N, d_edge]` bond features ([`crate::mat_edges::mat_edge_tensor`]; the dummy
    /// node's row and column and the diagonal zero), when the featurizer makes them
    /// ([`MatFeaturizer::edge_features`]).
    #[serde(default)]
    pub edge_features: Option<Vec<f32>>,
}

impl MatFeaturizer {
    /// Feature width: 28 (one-hot charge) or 26 (raw charge), dummy column included.
    pub fn d_atom(&self) -> usize {
        match self.charge_encoding {
            ChargeEncoding::OneHot => MAT_D_ATOM,
            ChargeEncoding::Raw => MAT_D_ATOM_RAW_CHARGE,
        }
    }

    /// The feature vector of atom `i` of `mol` (without the leading dummy column),
    /// in docs/SPEC.md 1.1 order: element (11), heavy neighbours (6), total H (5),
    /// formal charge (3 or 1), in ring (1), aromatic (1).
    pub fn atom_features(&self, mol: &Molecule, i: usize) -> Vec<f32> {
        let atom = &mol.atoms()[i];
        let compat = self.reference_compat;
        let mut f = vec![0.0f32; self.d_atom() - 1];
        let mut at = 0;
        f[at + atomic_number_index(atom.atomic_number)] = 1.0;
        at += MAT_ATOMIC_NUMBER_SLOTS;
        f[at + one_hot_index(mol.degree(i) as i32, &MAT_NEIGHBOURS, compat)] = 1.0;
        at += MAT_NEIGHBOURS.len();
        f[at + one_hot_index(atom.total_hydrogens as i32, &MAT_HYDROGENS, compat)] = 1.0;
        at += MAT_HYDROGENS.len();
        match self.charge_encoding {
            ChargeEncoding::OneHot => {
                f[at + one_hot_index(atom.formal_charge as i32, &MAT_FORMAL_CHARGES, compat)] = 1.0;
                at += MAT_FORMAL_CHARGES.len();
            }
            ChargeEncoding::Raw => {
                f[at] = atom.formal_charge as f32;
                at += 1;
            }
        }
        f[at] = if atom.is_in_ring { 1.0 } else { 0.0 };
        f[at + 1] = if atom.is_aromatic { 1.0 } else { 0.0 };
        f
    }

    /// Featurizes a parsed molecule (computes its conformer as configured).
    ///
    /// # Errors
    /// With [`MatFeaturizer::edge_features`], [`crate::mat_edges::mat_edge_tensor`]'s.
    pub fn featurize(&self, mol: &Molecule) -> Result<MatFeatures, FeaturizeError> {
        let (dist, source) = conformer::distances(mol, &self.conformer);
        self.featurize_with_distances(mol, &dist, source)
    }

    /// Featurizes a molecule whose heavy-atom distance matrix (Angstrom, `[n * n]`
    /// over [`Molecule::atoms`]) is already known, e.g. read from an SDF conformer.
    ///
    /// # Errors
    /// With [`MatFeaturizer::edge_features`], [`crate::mat_edges::mat_edge_tensor`]'s.
    pub fn featurize_with_distances(
        &self,
        mol: &Molecule,
        heavy_distances: &[f64],
        source: CoordinateSource,
    ) -> Result<MatFeatures, FeaturizeError> {
        let n = mol.num_atoms();
        let big_n = n + 1;
        let d_atom = self.d_atom();
        let mut node_features = vec![0.0f32; big_n * d_atom];
        node_features[0] = 1.0;
        for i in 0..n {
            let row = &mut node_features[(i + 1) * d_atom..(i + 2) * d_atom];
            row[1..].copy_from_slice(&self.atom_features(mol, i));
        }
        let mut adjacency = vec![0.0f32; big_n * big_n];
        for i in 1..big_n {
            adjacency[i * big_n + i] = 1.0;
        }
        for b in mol.bonds() {
            let (u, v) = (b.begin + 1, b.end + 1);
            adjacency[u * big_n + v] = 1.0;
            adjacency[v * big_n + u] = 1.0;
        }
        let mut distances = vec![DUMMY_DISTANCE; big_n * big_n];
        for i in 0..n {
            for j in 0..n {
                distances[(i + 1) * big_n + (j + 1)] = heavy_distances[i * n + j] as f32;
            }
        }
        let edge_features = if self.edge_features {
            Some(crate::mat_edges::mat_edge_tensor(mol)?)
        } else {
            None
        };
        Ok(MatFeatures {
            n_atoms: big_n,
            d_atom,
            node_features,
            adjacency,
            distances,
            coordinate_source: source,
            edge_features,
        })
    }

    /// Parses, sanitises and featurizes one SMILES.
    ///
    /// # Errors
    /// Any [`FeaturizeError`] of [`Molecule::from_smiles`].
    pub fn featurize_smiles(&self, smiles: &str) -> Result<MatFeatures, FeaturizeError> {
        let mol = Molecule::from_smiles(smiles)?;
        crate::molecule::guard(mol.smiles(), || self.featurize(&mol))
    }
}
