//! The medicinal-chemistry filters of the MOSES benchmark (`moses/metrics/utils.py`:
//! `mol_passes_filters`), used for the dataset's construction and for the `Filters`
//! metric: a molecule passes when
//! 1. no ring of its SSSR has 8 or more atoms,
//! 2. no atom is charged,
//! 3. every atom is C, N, S, O, F, Cl, Br or H,
//! 4. none of the 22 MCF and 480 PAINS SMARTS (`data/moses/`, the molsets 0.3.1 files)
//!    matches the molecule with explicit hydrogens (RDKit's `AddHs`),
//! 5. its non-isomeric SMILES reads back.
//!
//! The SMARTS matching is `chematic-smarts`' on `chematic`'s port of RDKit's `AddHs`
//! molecule; the rules around it are MOSES's.

use std::sync::OnceLock;

use chematic::smiles::{RdkitSmilesParams, rdkit_added_hs_molecule, rdkit_smiles};
use chematic_smarts::{MatchConfig, QueryMolecule, has_match_with_config, parse_smarts};

use crate::error::FeaturizeError;
use crate::molecule::{Molecule, guard};

/// `moses/metrics/mcf.csv` of molsets 0.3.1 (header `names,smarts`).
const MCF_CSV: &str = include_str!("../data/moses/mcf.csv");
/// `moses/metrics/wehi_pains.csv` of molsets 0.3.1 (no header; `"smarts","<regId=...>"`).
const PAINS_CSV: &str = include_str!("../data/moses/wehi_pains.csv");

/// Atomic numbers MOSES allows: H, C, N, O, F, S, Cl, Br.
const ALLOWED: [u8; 8] = [1, 6, 7, 8, 9, 16, 17, 35];

/// The filters' SMARTS, in MOSES's order: MCF then PAINS (`_mcf.append(_pains)`).
pub fn filter_smarts() -> Vec<String> {
    let mut out = Vec::new();
    for line in MCF_CSV.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let (_, smarts) = line.split_once(',').expect("mcf.csv rows are name,smarts");
        out.push(smarts.trim().trim_matches('"').to_string());
    }
    for line in PAINS_CSV.lines().filter(|l| !l.trim().is_empty()) {
        let smarts = line
            .split('"')
            .nth(1)
            .expect("wehi_pains.csv rows start with a quoted SMARTS");
        out.push(smarts.to_string());
    }
    out
}

fn queries() -> &'static [(String, QueryMolecule)] {
    static QUERIES: OnceLock<Vec<(String, QueryMolecule)>> = OnceLock::new();
    QUERIES.get_or_init(|| {
        filter_smarts()
            .into_iter()
            .map(|s| {
                let q =
                    parse_smarts(&s).unwrap_or_else(|e| panic!("MOSES filter SMARTS {s}: {e:?}"));
                (s, q)
            })
            .collect()
    })
}

/// Why a molecule fails MOSES's filters (the first rule it breaks, in MOSES's order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterVerdict {
    /// Passes every rule.
    Pass,
    /// A ring of 8 or more atoms (its size).
    LargeRing(usize),
    /// A charged atom (its index).
    Charged(usize),
    /// An element outside C, N, S, O, F, Cl, Br, H (its atomic number; 0 for `*`).
    Element(u8),
    /// An MCF or PAINS SMARTS matches (the SMARTS).
    Alert(String),
    /// The non-isomeric SMILES does not read back.
    Unwritable,
}

impl FilterVerdict {
    /// Whether the molecule passes.
    pub fn passes(&self) -> bool {
        matches!(self, FilterVerdict::Pass)
    }
}

/// MOSES's filters applied to `mol` (see the module docs for the rules).
///
/// # Errors
/// [`FeaturizeError::Unsupported`] (named by the SMILES) when the port cannot build RDKit's
/// `AddHs` molecule or its rings.
pub fn moses_filters(mol: &Molecule) -> Result<FilterVerdict, FeaturizeError> {
    let unsupported = |reason: String| FeaturizeError::Unsupported {
        smiles: mol.smiles().to_string(),
        reason,
    };
    guard(mol.smiles(), || {
        let largest = largest_sssr_ring(mol);
        if largest >= 8 {
            return Ok(FilterVerdict::LargeRing(largest));
        }
        if let Some(i) = mol.atoms().iter().position(|a| a.formal_charge != 0) {
            return Ok(FilterVerdict::Charged(i));
        }
        if let Some(a) = mol
            .atoms()
            .iter()
            .find(|a| !ALLOWED.contains(&a.atomic_number))
        {
            return Ok(FilterVerdict::Element(a.atomic_number));
        }
        let with_h = rdkit_added_hs_molecule(&mol.parsed)
            .ok_or_else(|| unsupported("filters: RDKit's AddHs molecule".into()))?;
        let config = MatchConfig::default();
        if let Some((smarts, _)) = queries()
            .iter()
            .find(|(_, q)| has_match_with_config(q, &with_h, &config))
        {
            return Ok(FilterVerdict::Alert(smarts.clone()));
        }
        let params = RdkitSmilesParams {
            isomeric: false,
            ..Default::default()
        };
        match rdkit_smiles(&mol.parsed, &params) {
            Ok(s) if !s.is_empty() && Molecule::from_smiles(&s).is_ok() => Ok(FilterVerdict::Pass),
            _ => Ok(FilterVerdict::Unwritable),
        }
    })
}

/// Size of the largest ring of RDKit's ring information (symmetrized SSSR), 0 if acyclic.
fn largest_sssr_ring(mol: &Molecule) -> usize {
    use chematic::perception::{find_symmetrized_sssr, rdkit_sssr_ring_order};
    match rdkit_sssr_ring_order(&mol.heavy) {
        Some(rings) => rings.iter().map(Vec::len).max().unwrap_or(0),
        None => find_symmetrized_sssr(&mol.heavy)
            .rings()
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(s: &str) -> FilterVerdict {
        moses_filters(&Molecule::from_smiles(s).unwrap()).unwrap()
    }

    #[test]
    fn the_filter_files_are_complete() {
        let smarts = filter_smarts();
        assert_eq!(smarts.len(), 22 + 480);
        assert_eq!(smarts[0], "[#6]=&!@[#6]-[#6]#[#7]");
        assert_eq!(smarts[3], "[H]C([H])([#6])[F,Cl,Br,I]");
        assert_eq!(queries().len(), 502);
    }

    #[test]
    fn rules_in_moses_order() {
        // RDKit 2026.09 + molsets 0.3.1: mol_passes_filters.
        assert!(verdict("CC(=O)Nc1ccc(O)cc1").passes());
        assert_eq!(verdict("C1CCCCCCC1"), FilterVerdict::LargeRing(8));
        assert_eq!(verdict("C[N+](C)(C)C"), FilterVerdict::Charged(1));
        assert_eq!(verdict("CCP"), FilterVerdict::Element(15));
        // MCF4: a CH2 next to a halogen.
        assert!(matches!(verdict("CCCl"), FilterVerdict::Alert(_)));
    }
}
