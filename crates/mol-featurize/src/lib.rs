//! Molecules to model inputs for attention-based molecular machine learning.
//!
//! Plain Rust data out, no Burn dependency. The pipeline for the Molecule Attention
//! Transformer (MAT; Maziarka et al. 2020, arXiv 2002.08264) is:
//!
//! 1. [`Molecule::from_smiles`]: parse and sanitise a SMILES string with RDKit's
//!    semantics (aromaticity, hydrogen counts; explicit `[H]` atoms folded into their
//!    heavy atom, as `Chem.RemoveHs`) through the pure-Rust `chematic` toolkit.
//! 2. [`conformer::coordinates`]: one 3D conformer per molecule (RDKit's ETKDG and UFF
//!    through `chematic`'s ports, each fragment embedded on its own and placed apart),
//!    with bounded work and a counted fallback chain 3D -> 2D layout -> topological;
//!    [`cache::ConformerCache`] keeps them on disk so a dataset is embedded once.
//! 3. [`mat::featurize`]: the 28-column MAT atom features, adjacency with self loops and
//!    the distance matrix, a dummy node prepended at index 0 (docs/SPEC.md 1.1).
//! 4. [`batch::pad_batch`]: zero padding to the largest molecule, with the key padding
//!    mask derived from the features.
//!
//! For Graphormer / Transformer-M (docs/SPEC.md 2), [`graphormer::featurize`] gives OGB atom
//! and bond categories, degrees, shortest-path distances and paths, with coordinates
//! from a conformer, an SDF/MOL file or an XYZ geometry ([`structure_file`]), and
//! [`graphormer::pad_graphormer_batch`] pads them.
//!
//! For SMILES language models, [`smiles_tokenizer`] splits a SMILES into the regex tokens
//! of MolGPT and maps them through a [`SmilesVocab`] built from training data.
//!
//! For the MOSES generation metrics, [`morgan`] (RDKit's Morgan bit vectors),
//! [`brics`] (RDKit's BRICS fragments), [`scaffold::moses_scaffold`] and
//! [`moses_filters`] (MCF and PAINS alerts) give the per-molecule pieces, and
//! [`chemnet_input`] ChemNet's one-hot SMILES for the FCD.
//!
//! [`dataset::featurize_all`] runs steps 1-3 over many SMILES in parallel (rayon) with
//! a progress bar and a report of every molecule that was skipped and why.

#![warn(missing_docs)]

pub mod atomic_file;
pub mod batch;
pub mod brics;
pub mod cache;
pub mod canonical;
pub mod chemnet_input;
pub mod conformer;
pub mod coordinate_match;
pub mod dataset;
pub mod depict;
pub mod error;
pub mod featurizer;
#[cfg(feature = "tooling")]
pub mod fuzz;
pub mod graphormer;
pub mod mat;
pub mod mat_datasets;
pub mod mat_edges;
pub mod molecular_graph;
pub mod molecule;
pub mod morgan;
pub mod moses_filters;
#[cfg(feature = "tooling")]
pub mod profile;
pub mod properties;
pub mod rdkit_rules;
#[cfg(feature = "tooling")]
pub mod reference;
pub mod scaffold;
mod sdf_record;
pub mod shortest_paths;
pub mod smiles_syntax;
pub mod smiles_tokenizer;
pub mod structure_error;
pub mod structure_file;
pub mod vocab;

pub use batch::{MatBatchData, pad_batch};
pub use cache::ConformerCache;
pub use canonical::canonical_smiles;
pub use conformer::{ConformerOptions, CoordinateMethod, CoordinateSource};
pub use dataset::{
    CacheReport, FeaturizeReport, GivenStructure, SkippedMolecule, featurize_all,
    featurize_all_cached, featurize_all_with_coordinates, featurize_given,
};
pub use error::{BatchError, FeaturizeError, TokenizeError};
pub use featurizer::{
    AtomLimit, DEFAULT_MAX_ATOMS, Featurizer, GraphormerFeaturizer, check_atom_limit,
    within_atom_limit,
};
pub use graphormer::{
    EncodingLimits, GraphormerBatchData, GraphormerFeatures, ShortestPaths, pad_graphormer_batch,
};
pub use mat::{ChargeEncoding, MatFeatures, MatFeaturizer};
pub use mat_edges::{MAT_D_EDGE, MAT_EDGE_FEATURES};
pub use molecule::{Atom, Bond, BondOrder, Molecule};
pub use morgan::MorganFingerprint;
pub use smiles_tokenizer::{SmilesVocab, tokenize};

/// Version of this featurizer crate (recorded in exported models' metadata so a consumer
/// can tell which featurization their inputs must match).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
