//! Morgan (ECFP-like) bit fingerprints as RDKit's
//! `AllChem.GetMorganFingerprintAsBitVect(mol, radius, nBits)` computes them (default atom
//! invariants, no chirality), and the Tanimoto similarity between them: the fingerprints
//! of the MOSES metrics SNN and IntDiv (`moses/metrics/utils.py`: `fingerprint(...,
//! fp_type='morgan', morgan__r=2, morgan__n=1024)`).
//!
//! The bits come from `chematic-fp`'s port of RDKit's Morgan generator (bit-exact with RDKit
//! on its test sets); this module only stores them as packed words so that similarity
//! searches over hundreds of thousands of molecules are popcounts.

use chematic_fp::{RdkitMorganConfig, RdkitMorganFpSize, RdkitMorganRadius, rdkit_morgan_bitvec};

use crate::error::FeaturizeError;
use crate::molecule::{Molecule, guard};

/// A folded Morgan fingerprint: `n_bits` bits packed into 64-bit words (bit `i` is bit
/// `i % 64` of word `i / 64`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MorganFingerprint {
    words: Vec<u64>,
}

impl MorganFingerprint {
    /// RDKit's Morgan bit vector of `mol` with `radius` (1, 2 or 3) and `n_bits` (128, 256,
    /// 512, 1024 or 2048) bits, without chirality. MOSES uses radius 2 and 1024 bits.
    ///
    /// # Errors
    /// [`FeaturizeError::Unsupported`] for another radius or size, or when the port cannot
    /// perceive the molecule the way RDKit does (named by its SMILES).
    pub fn rdkit(mol: &Molecule, radius: u32, n_bits: usize) -> Result<Self, FeaturizeError> {
        let unsupported = |reason: String| FeaturizeError::Unsupported {
            smiles: mol.smiles().to_string(),
            reason,
        };
        let radius = match radius {
            1 => RdkitMorganRadius::R1,
            2 => RdkitMorganRadius::R2,
            3 => RdkitMorganRadius::R3,
            r => return Err(unsupported(format!("Morgan radius {r} (1, 2 or 3)"))),
        };
        let fp_size = match n_bits {
            128 => RdkitMorganFpSize::B128,
            256 => RdkitMorganFpSize::B256,
            512 => RdkitMorganFpSize::B512,
            1024 => RdkitMorganFpSize::B1024,
            2048 => RdkitMorganFpSize::B2048,
            n => {
                return Err(unsupported(format!(
                    "{n} Morgan bits (128, 256, 512, 1024 or 2048)"
                )));
            }
        };
        let config = RdkitMorganConfig {
            radius,
            fp_size,
            include_chirality: false,
        };
        guard(mol.smiles(), || {
            let bits = rdkit_morgan_bitvec(&mol.parsed, &config)
                .map_err(|e| unsupported(format!("Morgan fingerprint: {e:?}")))?;
            let mut words = vec![0u64; n_bits.div_ceil(64)];
            for i in (0..n_bits).filter(|&i| bits.get(i)) {
                words[i / 64] |= 1 << (i % 64);
            }
            Ok(Self { words })
        })
    }

    /// A fingerprint from its packed words (as [`MorganFingerprint::words`] gives them).
    pub fn from_words(words: Vec<u64>) -> Self {
        Self { words }
    }

    /// The packed words.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Indices of the set bits, ascending.
    pub fn on_bits(&self) -> Vec<usize> {
        (0..self.words.len() * 64)
            .filter(|&i| self.words[i / 64] >> (i % 64) & 1 == 1)
            .collect()
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// Tanimoto similarity `|a & b| / (|a| + |b| - |a & b|)`, 1 when both are empty (as
    /// MOSES's `average_agg_tanimoto` sets its 0/0 entries).
    ///
    /// # Panics
    /// If the two fingerprints have different lengths.
    pub fn tanimoto(&self, other: &Self) -> f64 {
        assert_eq!(self.words.len(), other.words.len(), "fingerprint lengths");
        let common: u32 = self
            .words
            .iter()
            .zip(&other.words)
            .map(|(a, b)| (a & b).count_ones())
            .sum();
        let union = self.count_ones() + other.count_ones() - common;
        if union == 0 {
            1.0
        } else {
            f64::from(common) / f64::from(union)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(s: &str) -> MorganFingerprint {
        MorganFingerprint::rdkit(&Molecule::from_smiles(s).unwrap(), 2, 1024).unwrap()
    }

    #[test]
    fn bits_match_rdkit() {
        // RDKit 2026.09: list(GetMorganFingerprintAsBitVect(MolFromSmiles(s), 2, nBits=1024)
        // .GetOnBits()).
        assert_eq!(fp("CCO").on_bits(), vec![33, 80, 222, 294, 386, 807]);
        assert_eq!(
            fp("c1ccccc1O").on_bits(),
            vec![64, 65, 175, 356, 389, 578, 726, 745, 754, 807, 849]
        );
    }

    #[test]
    fn tanimoto_of_known_pairs() {
        let (a, b) = (fp("CCO"), fp("CCN"));
        assert_eq!(a.tanimoto(&a), 1.0);
        let common = a
            .on_bits()
            .iter()
            .filter(|i| b.on_bits().contains(i))
            .count();
        let union = a.on_bits().len() + b.on_bits().len() - common;
        assert!((a.tanimoto(&b) - common as f64 / union as f64).abs() < 1e-12);
        let empty = MorganFingerprint::from_words(vec![0; 16]);
        assert_eq!(empty.tanimoto(&empty), 1.0);
        assert_eq!(empty.tanimoto(&a), 0.0);
    }

    #[test]
    fn other_sizes_are_errors() {
        let mol = Molecule::from_smiles("CCO").unwrap();
        assert!(MorganFingerprint::rdkit(&mol, 4, 1024).is_err());
        assert!(MorganFingerprint::rdkit(&mol, 2, 1000).is_err());
    }
}
