//! Canonical SMILES (RDKit's `MolToSmiles` canonical form), the key that tells two
//! spellings of one molecule apart from two molecules, e.g. when datasets are joined.

use chematic::smiles::rdkit_canonical_smiles;

use crate::error::FeaturizeError;
use crate::molecule::{Molecule, guard};

/// RDKit's canonical SMILES of `mol` (the molecule as read: explicit hydrogens removed
/// by RDKit's RemoveHs rules, aromaticity perceived).
///
/// # Errors
/// [`FeaturizeError::Unsupported`] if the port of RDKit's canonical writer cannot write
/// the molecule.
pub fn canonical_smiles(mol: &Molecule) -> Result<String, FeaturizeError> {
    guard(mol.smiles(), || {
        rdkit_canonical_smiles(&mol.parsed).map_err(|e| FeaturizeError::Unsupported {
            smiles: mol.smiles().to_string(),
            reason: format!("canonical SMILES: {e}"),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(s: &str) -> String {
        canonical_smiles(&Molecule::from_smiles(s).unwrap()).unwrap()
    }

    #[test]
    fn spellings_of_one_molecule_agree_with_rdkit() {
        // RDKit 2026.09: Chem.MolToSmiles(Chem.MolFromSmiles(s)).
        assert_eq!(canonical("OCC"), "CCO");
        assert_eq!(canonical("C(C)O"), "CCO");
        assert_eq!(canonical("c1ccccc1O"), "Oc1ccccc1");
        assert_eq!(canonical("OC(=O)C"), "CC(=O)O");
        assert_eq!(canonical("[H]OC([H])([H])C"), "CCO");
    }
}
