//! Why a structure file (SDF / MOL, XYZ) or one of its records could not be read, and
//! the limits a record is held to.

use thiserror::Error;

use crate::error::FeaturizeError;

/// Most atoms (hydrogens included) a MOL block may declare; a larger record is refused
/// before it is parsed (parsing grows faster than linearly: a 5,000-atom molecule took
/// 50 s). Four times [`crate::DEFAULT_MAX_ATOMS`], so that every record within the
/// featurizers' heavy-atom limit is read.
pub const MAX_RECORD_ATOMS: usize = 4 * crate::DEFAULT_MAX_ATOMS;

/// Shortest distance two bonded heavy atoms may have in a file's conformer (Angstrom);
/// closer, the coordinates are not this molecule's (or atoms coincide).
pub const MIN_BOND_ANGSTROM: f64 = 0.5;

/// Why a structure file or one of its records could not be read.
#[derive(Debug, Error)]
pub enum StructureFileError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// A record is not a valid MOL block / XYZ frame.
    #[error("{path} record {record}: {reason}")]
    Format {
        /// File.
        path: String,
        /// Record index (0-based).
        record: usize,
        /// Parser message.
        reason: String,
    },
    /// The record parsed but the molecule was rejected (sanitisation, ...).
    #[error("{path} record {record} ({name}): {source}")]
    Molecule {
        /// File.
        path: String,
        /// Record index (0-based).
        record: usize,
        /// The record's title (or its position when the title is empty).
        name: String,
        /// Why.
        source: FeaturizeError,
    },
    /// The coordinates do not fit the molecule's graph.
    #[error("{name}: coordinates do not match the graph: {reason}")]
    Mismatch {
        /// The molecule (SMILES or record label).
        name: String,
        /// Why.
        reason: String,
    },
}

impl StructureFileError {
    /// Short machine-readable kind for skip reports: `io`, `record-format`, the
    /// molecule error's own kind (`sanitize`, `parse`, ...), `coordinates`.
    pub fn kind(&self) -> &'static str {
        match self {
            StructureFileError::Io { .. } => "io",
            StructureFileError::Format { .. } => "record-format",
            StructureFileError::Molecule { source, .. } => source.kind(),
            StructureFileError::Mismatch { .. } => "coordinates",
        }
    }

    /// The record's title, when the record was read far enough to have one.
    pub fn record_name(&self) -> Option<&str> {
        match self {
            StructureFileError::Molecule { name, .. } => Some(name),
            _ => None,
        }
    }
}
