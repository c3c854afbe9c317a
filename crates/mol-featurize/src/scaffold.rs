//! Bemis-Murcko scaffolds (Bemis & Murcko 1996), as RDKit's `MurckoScaffold`.

use chematic::smiles::rdkit_murcko_scaffold;

use crate::error::FeaturizeError;
use crate::molecule::{Molecule, guard};

/// The Bemis-Murcko scaffold of a molecule as canonical SMILES: ring systems, the
/// linkers between them and atoms double-bonded to those, side chains removed.
/// Acyclic molecules give the empty string (as RDKit's
/// `MurckoScaffold.MurckoScaffoldSmiles`), so they all share one scaffold group.
///
/// # Errors
/// [`FeaturizeError::Unsupported`] or [`FeaturizeError::Internal`] if the port of
/// RDKit's `MurckoDecompose` cannot handle the molecule.
pub fn bemis_murcko_scaffold(mol: &Molecule) -> Result<String, FeaturizeError> {
    guard(mol.smiles(), || {
        rdkit_murcko_scaffold(&mol.parsed).map_err(|e| FeaturizeError::Unsupported {
            smiles: mol.smiles().to_string(),
            reason: format!("scaffold: {e}"),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaffold(s: &str) -> String {
        bemis_murcko_scaffold(&Molecule::from_smiles(s).unwrap()).unwrap()
    }

    #[test]
    fn scaffolds_match_rdkit() {
        // Values from RDKit 2026.09 MurckoScaffold.MurckoScaffoldSmiles.
        assert_eq!(scaffold("CCc1ccccc1"), "c1ccccc1");
        assert_eq!(scaffold("c1ccccc1CCc1ccncc1"), "c1ccc(CCc2ccncc2)cc1");
        assert_eq!(scaffold("CCO"), "");
    }
}
