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

/// The scaffold MOSES counts for its Scaf metric (`moses/metrics/utils.py`:
/// `compute_scaffold`, `min_rings=2`): the Bemis-Murcko scaffold's canonical SMILES when
/// it has at least `min_rings` rings (RDKit's `NumRings`, its symmetrized SSSR), `None`
/// otherwise (acyclic molecules included).
///
/// # Errors
/// As [`bemis_murcko_scaffold`], or [`FeaturizeError::Unsupported`] if the scaffold's
/// SMILES does not read back.
pub fn moses_scaffold(mol: &Molecule, min_rings: usize) -> Result<Option<String>, FeaturizeError> {
    let scaffold = bemis_murcko_scaffold(mol)?;
    if scaffold.is_empty() {
        return Ok(None);
    }
    let parsed = chematic::smiles::parse(&scaffold).map_err(|e| FeaturizeError::Unsupported {
        smiles: mol.smiles().to_string(),
        reason: format!("scaffold {scaffold}: {e}"),
    })?;
    let rings = guard(mol.smiles(), || Ok(chematic_chem::rdkit_num_rings(&parsed)))?;
    Ok((rings >= min_rings).then_some(scaffold))
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

    #[test]
    fn moses_keeps_scaffolds_of_two_rings_or_more() {
        // molsets 0.3.1 compute_scaffold(s) with RDKit 2026.09.
        let moses = |s: &str| moses_scaffold(&Molecule::from_smiles(s).unwrap(), 2).unwrap();
        assert_eq!(moses("CCc1ccccc1"), None);
        assert_eq!(
            moses("c1ccccc1CCc1ccncc1").as_deref(),
            Some("c1ccc(CCc2ccncc2)cc1")
        );
        assert_eq!(moses("CCO"), None);
        assert_eq!(
            moses("O=C(O)c1ccc2ccccc2c1").as_deref(),
            Some("c1ccc2ccccc2c1")
        );
    }
}
