//! What a model's featurizer provides to the shared pipeline ([`crate::dataset`]):
//! parallel parsing, conformer coordinates from the cache or ETKDG, the skip report.
//! MAT ([`MatFeaturizer`]) and Graphormer / Transformer-M ([`GraphormerFeaturizer`])
//! implement it, so every model gets batching, caching and reporting the same way.

use serde::{Deserialize, Serialize};

use crate::conformer::{self, ConformerOptions, CoordinateMethod};
use crate::error::FeaturizeError;
use crate::graphormer::{self, GraphormerFeatures};
use crate::mat::{MatFeatures, MatFeaturizer};
use crate::molecule::Molecule;

/// A model's featurizer: model inputs of one molecule from its graph and its conformer.
pub trait Featurizer: Sync {
    /// One molecule's inputs.
    type Features: Send;

    /// How coordinates are made (method, seed, budgets); also keys the conformer cache.
    fn conformer_options(&self) -> &ConformerOptions;

    /// Molecules with more heavy atoms than this are skipped (reason
    /// [`FeaturizeError::TooLarge`]) before any work is done on them; default
    /// [`DEFAULT_MAX_ATOMS`], another limit through [`AtomLimit`].
    fn max_atoms(&self) -> usize {
        DEFAULT_MAX_ATOMS
    }

    /// Inputs of `mol` given its heavy-atom coordinates in Angstrom (`None`: none could
    /// be made, the topological fallback) and where they came from.
    ///
    /// # Errors
    /// Why this molecule cannot be featurized (naming it).
    fn features(
        &self,
        mol: &Molecule,
        coordinates: Option<&[[f64; 3]]>,
        source: CoordinateMethod,
    ) -> Result<Self::Features, FeaturizeError>;
}

/// Default heavy-atom limit of every featurizer. Issue #37 measured MAT's featurization
/// at 0.8 s for 1,000 atoms, 6.9 s for 2,000 and 93 s for 5,000 (about cubic); a whole
/// `predict` of one 1,000-atom molecule takes 0.74 s and 130 MB here. The largest
/// molecule of MAT's three datasets has 132 heavy atoms (BBBP) (docs/RELIABILITY.md).
pub const DEFAULT_MAX_ATOMS: usize = 1000;

/// `inner` with another heavy-atom limit ([`Featurizer::max_atoms`]).
#[derive(Debug, Clone)]
pub struct AtomLimit<F> {
    /// The featurizer.
    pub inner: F,
    /// Heavy atoms allowed per molecule.
    pub max_atoms: usize,
}

impl<F: Featurizer> Featurizer for AtomLimit<F> {
    type Features = F::Features;

    fn conformer_options(&self) -> &ConformerOptions {
        self.inner.conformer_options()
    }

    fn max_atoms(&self) -> usize {
        self.max_atoms
    }

    fn features(
        &self,
        mol: &Molecule,
        coordinates: Option<&[[f64; 3]]>,
        source: CoordinateMethod,
    ) -> Result<Self::Features, FeaturizeError> {
        self.inner.features(mol, coordinates, source)
    }
}

impl<F: Featurizer> Featurizer for &F {
    type Features = F::Features;

    fn conformer_options(&self) -> &ConformerOptions {
        (**self).conformer_options()
    }

    fn max_atoms(&self) -> usize {
        (**self).max_atoms()
    }

    fn features(
        &self,
        mol: &Molecule,
        coordinates: Option<&[[f64; 3]]>,
        source: CoordinateMethod,
    ) -> Result<Self::Features, FeaturizeError> {
        (**self).features(mol, coordinates, source)
    }
}

/// `mol` when it has at most `limit` heavy atoms.
///
/// # Errors
/// [`FeaturizeError::TooLarge`] naming it.
pub fn within_atom_limit(mol: Molecule, limit: usize) -> Result<Molecule, FeaturizeError> {
    check_atom_limit(mol.smiles(), mol.num_atoms(), limit).map(|()| mol)
}

/// Refuses a molecule (`smiles`, for the message) of `atoms` heavy atoms when that is
/// more than `limit`; the count may come from a parsed molecule or, before parsing, from
/// [`crate::smiles_tokenizer::heavy_atom_tokens`].
///
/// # Errors
/// [`FeaturizeError::TooLarge`] naming the molecule, its count and the limit.
pub fn check_atom_limit(smiles: &str, atoms: usize, limit: usize) -> Result<(), FeaturizeError> {
    if atoms > limit {
        return Err(FeaturizeError::TooLarge {
            smiles: smiles.to_string(),
            atoms,
            limit,
        });
    }
    Ok(())
}

impl Featurizer for MatFeaturizer {
    type Features = MatFeatures;

    fn conformer_options(&self) -> &ConformerOptions {
        &self.conformer
    }

    /// MAT features with the distance matrix of `coordinates`, or shortest-path
    /// distances without them (docs/SPEC.md 1.1).
    fn features(
        &self,
        mol: &Molecule,
        coordinates: Option<&[[f64; 3]]>,
        source: CoordinateMethod,
    ) -> Result<MatFeatures, FeaturizeError> {
        let dist = match coordinates {
            Some(xyz) => conformer::distance_matrix(xyz),
            None => conformer::topological_distance_matrix(mol),
        };
        self.featurize_with_distances(mol, &dist, source)
    }
}

/// Graphormer / Transformer-M inputs ([`graphormer::featurize`]) with conformer
/// coordinates for the 3D channel. Only a 3D conformer (ETKDG, or the file's own) feeds
/// that channel: a molecule whose coordinates are a flat 2D layout or topological
/// carries none and runs in 2D, whatever mode was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphormerFeaturizer {
    /// Bonds of a path kept for the edge encoding (`multi_hop_max_dist`).
    pub max_hops: usize,
    /// Conformer settings of the 3D coordinates.
    pub conformer: ConformerOptions,
}

impl Featurizer for GraphormerFeaturizer {
    type Features = GraphormerFeatures;

    fn conformer_options(&self) -> &ConformerOptions {
        &self.conformer
    }

    fn features(
        &self,
        mol: &Molecule,
        coordinates: Option<&[[f64; 3]]>,
        source: CoordinateMethod,
    ) -> Result<GraphormerFeatures, FeaturizeError> {
        let xyz = coordinates
            .filter(|_| matches!(source, CoordinateMethod::Embed3d | CoordinateMethod::File))
            .map(|c| c.iter().map(|p| p.map(|v| v as f32)).collect());
        let mut features = graphormer::featurize(mol, self.max_hops, xyz)?;
        features.coordinate_source = source;
        Ok(features)
    }
}
