//! The molecular properties MolGPT conditions its generator on (Bagal et al., J. Chem.
//! Inf. Model. 2022; devalab/molgpt `train/train.py --props`), computed as RDKit computes
//! them through `chematic-chem`'s ports: Crippen logP, TPSA and QED.
//!
//! MolGPT's fourth property, the synthetic accessibility score (RDKit Contrib
//! `SA_Score`), is left out: `chematic_chem::sa_score` hashes its fragments with its own
//! scheme, not RDKit's Morgan invariants that `fpscores.pkl.gz` is keyed by, and differs
//! from RDKit by up to 7 units on fixtures/properties/rdkit_properties.csv.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::FeaturizeError;
use crate::molecule::{Molecule, guard};

/// A property a generator can be conditioned on. The names are MolGPT's column names
/// (`logp`, `tpsa`, `qed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MolProperty {
    /// Wildman-Crippen logP (octanol / water, log10 units; RDKit `Crippen.MolLogP`).
    Logp,
    /// Topological polar surface area (square Angstrom, N and O only; RDKit
    /// `rdMolDescriptors.CalcTPSA`).
    Tpsa,
    /// Quantitative estimate of drug-likeness, 0 to 1 (Bickerton et al. 2012; RDKit
    /// `QED.qed`).
    Qed,
}

impl MolProperty {
    /// Every property, in MolGPT's order.
    pub const ALL: [MolProperty; 3] = [Self::Logp, Self::Tpsa, Self::Qed];

    /// The property's name (`logp`, `tpsa`, `qed`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Logp => "logp",
            Self::Tpsa => "tpsa",
            Self::Qed => "qed",
        }
    }

    /// The property of `mol`.
    ///
    /// # Errors
    /// [`FeaturizeError::Internal`] naming the SMILES if the toolkit fails on the
    /// molecule, or [`FeaturizeError::Unsupported`] for a value that is not finite.
    pub fn compute(self, mol: &Molecule) -> Result<f64, FeaturizeError> {
        let value = guard(mol.smiles(), || {
            Ok(match self {
                Self::Logp => chematic_chem::logp_crippen(&mol.parsed),
                Self::Tpsa => chematic_chem::rdkit_tpsa(&mol.parsed),
                Self::Qed => chematic_chem::qed(&mol.parsed),
            })
        })?;
        if !value.is_finite() {
            return Err(FeaturizeError::Unsupported {
                smiles: mol.smiles().to_string(),
                reason: format!("{self} is {value}"),
            });
        }
        Ok(value)
    }
}

impl fmt::Display for MolProperty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MolProperty {
    type Err = String;

    /// Parses a property name, case-insensitively.
    fn from_str(s: &str) -> Result<Self, String> {
        let lower = s.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|p| p.name() == lower)
            .ok_or_else(|| {
                format!(
                    "unknown property {s:?} (known: {})",
                    Self::ALL.map(|p| p.name()).join(", ")
                )
            })
    }
}

/// The values of `properties` for `mol`, in their order.
///
/// # Errors
/// As [`MolProperty::compute`], the property named.
pub fn compute_properties(
    mol: &Molecule,
    properties: &[MolProperty],
) -> Result<Vec<f64>, FeaturizeError> {
    properties.iter().map(|p| p.compute(mol)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in MolProperty::ALL {
            assert_eq!(p.name().parse::<MolProperty>(), Ok(p));
            assert_eq!(
                serde_json::to_string(&p).unwrap(),
                format!("\"{}\"", p.name())
            );
        }
        assert_eq!("TPSA".parse::<MolProperty>(), Ok(MolProperty::Tpsa));
        assert!("sas".parse::<MolProperty>().unwrap_err().contains("logp"));
    }
}
