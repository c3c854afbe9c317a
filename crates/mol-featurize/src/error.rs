//! The error type of `mol-featurize`.

use thiserror::Error;

/// Why a molecule could not be featurized. Every variant names the input: its SMILES,
/// or for a structure file's record its file, index and title.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum FeaturizeError {
    /// The text is not valid SMILES (syntax: unclosed ring, bad bracket atom, ...).
    #[error("SMILES {smiles:?}: cannot parse: {reason}")]
    Parse {
        /// The input SMILES.
        smiles: String,
        /// Parser message.
        reason: String,
    },
    /// Valid syntax but chemically invalid: RDKit's sanitisation (valence, kekulisation)
    /// would reject it, e.g. pentavalent carbon.
    #[error("SMILES {smiles:?}: chemically invalid: {reason}")]
    Sanitize {
        /// The input SMILES.
        smiles: String,
        /// Sanitiser message.
        reason: String,
    },
    /// The molecule uses a feature the RDKit-compatible model does not cover.
    #[error("SMILES {smiles:?}: unsupported: {reason}")]
    Unsupported {
        /// The input SMILES.
        smiles: String,
        /// What is unsupported.
        reason: String,
    },
    /// The SMILES is empty or has no atom left after hydrogen removal.
    #[error("SMILES {smiles:?}: no atoms")]
    Empty {
        /// The input SMILES.
        smiles: String,
    },
    /// A structure file's record that gave no molecule, or whose coordinates do not fit
    /// its connection table ([`crate::structure_file`]).
    #[error("{reason}")]
    Record {
        /// The record: file, 0-based index and title.
        record: String,
        /// Short machine-readable kind: `record-format` (not a MOL block), the inner
        /// molecule error's kind (`sanitize`, ...), `coordinates` (they do not fit the
        /// connection table), `missing-file` (an XYZ file named by a labels row).
        kind: &'static str,
        /// What is wrong, naming the record.
        reason: String,
    },
    /// More heavy atoms than the featurizer's limit ([`crate::Featurizer::max_atoms`]):
    /// skipped so that one molecule cannot exhaust memory or time (MAT's matrices and
    /// the shortest paths grow with the square and the cube of the atom count).
    #[error(
        "SMILES {smiles:?}: {atoms} heavy atoms, more than the limit of {limit} \
         (raise it with --max-atoms)"
    )]
    TooLarge {
        /// The input SMILES (or record name).
        smiles: String,
        /// Its heavy atoms.
        atoms: usize,
        /// The limit.
        limit: usize,
    },
    /// A third-party routine panicked on this input; caught and reported instead.
    #[error("SMILES {smiles:?}: internal error: {reason}")]
    Internal {
        /// The input SMILES.
        smiles: String,
        /// Panic message.
        reason: String,
    },
}

impl FeaturizeError {
    /// Short machine-readable kind, used in skip reports (`parse`, `sanitize`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            FeaturizeError::Parse { .. } => "parse",
            FeaturizeError::Sanitize { .. } => "sanitize",
            FeaturizeError::Unsupported { .. } => "unsupported",
            FeaturizeError::Empty { .. } => "empty",
            FeaturizeError::Internal { .. } => "internal",
            FeaturizeError::TooLarge { .. } => "too-large",
            FeaturizeError::Record { kind, .. } => kind,
        }
    }
}

/// Why molecules could not be padded into one batch (or features are inconsistent).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BatchError {
    /// No molecule given where a batch needs one.
    #[error("empty batch")]
    Empty,
    /// Molecule `molecule` of the batch does not fit the others or the encoding.
    #[error("molecule {molecule} of the batch: {reason}")]
    Molecule {
        /// Position in the batch.
        molecule: usize,
        /// What does not fit.
        reason: String,
    },
    /// Features that contradict themselves (deserialized ones can).
    #[error("inconsistent features: {0}")]
    Inconsistent(String),
}

/// Why a SMILES could not be turned into tokens of a SMILES language model
/// ([`crate::smiles_tokenizer`]).
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum TokenizeError {
    /// A character that no token of the pattern covers (kept, never dropped).
    #[error(
        "SMILES {smiles:?}: character {character:?} at position {position} is not part of any SMILES token"
    )]
    UnknownCharacter {
        /// The input SMILES.
        smiles: String,
        /// Character position (0-based, in characters).
        position: usize,
        /// The character.
        character: char,
    },
    /// A token that the run's vocabulary does not hold.
    #[error("SMILES {smiles:?}: token {token:?} is not in the vocabulary")]
    UnknownToken {
        /// The input SMILES.
        smiles: String,
        /// The token.
        token: String,
    },
    /// A token id that names no SMILES token (`<unk>`, or outside the vocabulary).
    #[error("token id {id} names no SMILES token (decoded so far: {partial:?})")]
    BadId {
        /// The id.
        id: u32,
        /// The SMILES decoded before it.
        partial: String,
    },
}
