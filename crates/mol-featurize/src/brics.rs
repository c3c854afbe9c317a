//! BRICS fragments (Degen et al., ChemMedChem 3, 1503 (2008)) as RDKit's
//! `Chem.MolToSmiles(AllChem.FragmentOnBRICSBonds(mol)).split('.')` writes them: the
//! fragments of the MOSES metric Frag (`moses/metrics/utils.py`: `fragmenter`).
//!
//! Written here because `chematic`'s own BRICS (`chematic_chem::brics_fragments`) uses other
//! rules and labels no attachment point. The environments and bond rules are RDKit's
//! (`rdkit/Chem/BRICS.py`, `environs` and `reactionDefs`; the same table drives the C++
//! `fragmentOnBRICSBonds`); the SMARTS matching is `chematic-smarts`', the canonical
//! SMILES `chematic`'s port of RDKit's writer. What RDKit does, step by step:
//! 1. each rule `(La, Lb, bond)`, last to first, matches `[$(La)]bond;!@[$(Lb)]`: a non-ring
//!    bond of that order between an atom of environment `La` and one of `Lb`; a bond is cut
//!    by the first rule that matches it;
//! 2. every cut bond is removed and each of its atoms gets a dummy atom `*`, bonded with the
//!    same order, whose isotope is the atom's own environment number (`[16*]c1ccccc1`);
//! 3. the molecule, now in pieces, is written as one canonical SMILES and split at `.`.

use std::sync::OnceLock;

use chematic::core::{
    Atom as ChemAtom, AtomIdx, BondOrder as ChemBondOrder, Molecule as ChemMolecule,
};
use chematic::perception::find_sssr;
use chematic::smiles::{rdkit_canonical_smiles, rdkit_parsed_molecule};
use chematic_smarts::{QueryMolecule, first_anchored_match_per_atom, parse_smarts};

use crate::error::FeaturizeError;
use crate::molecule::{Molecule, guard};

/// RDKit's BRICS environments (`constructBRICSAtomTypes` in
/// `Code/GraphMol/ChemTransforms/MolFragmenter.cpp`; `environs` of `BRICS.py`, whose `7a`/`7b`,
/// `14b` and `16b` are copies): environment number and SMARTS.
const ENVIRONMENTS: [(u16, &str); 15] = [
    (1, "[C;D3]([#0,#6,#7,#8])(=O)"),
    (3, "[O;D2]-;!@[#0,#6,#1]"),
    (
        5,
        "[N;!D1;!$(N=*);!$(N-[!#6;!#16;!#0;!#1]);!$([N;R]@[C;R]=O)]",
    ),
    (9, "[n;+0;$(n(:[c,n,o,s]):[c,n,o,s])]"),
    (10, "[N;R;$(N(@C(=O))@[C,N,O,S])]"),
    (11, "[S;D2](-;!@[#0,#6])"),
    (12, "[S;D4]([#6,#0])(=O)(=O)"),
    (6, "[C;D3;!R](=O)-;!@[#0,#6,#7,#8]"),
    (13, "[C;$(C(-;@[C,N,O,S])-;@[N,O,S])]"),
    (14, "[c;$(c(:[c,n,o,s]):[n,o,s])]"),
    (15, "[C;$(C(-;@C)-;@C)]"),
    (4, "[C;!D1;!$(C=*)]-;!@[#6]"),
    (7, "[C;D2,D3]-[#6]"),
    (8, "[C;!R;!D1;!$(C!-*)]"),
    (16, "[c;$(c(:c):c)]"),
];

/// RDKit's BRICS bond rules (`constructBRICSBondTypes`, same file; `reactionDefs` of
/// `BRICS.py`) in RDKit's order: the two environments and the bond (`-` single, `=`
/// double), always a non-ring bond. RDKit applies them last to first ("general ->
/// specific, so loop over them backwards").
const RULES: [(u16, u16, char); 46] = [
    (1, 3, '-'),
    (1, 5, '-'),
    (1, 10, '-'),
    (3, 4, '-'),
    (3, 13, '-'),
    (3, 14, '-'),
    (3, 15, '-'),
    (3, 16, '-'),
    (4, 5, '-'),
    (4, 11, '-'),
    (5, 12, '-'),
    (5, 14, '-'),
    (5, 16, '-'),
    (5, 13, '-'),
    (5, 15, '-'),
    (6, 13, '-'),
    (6, 14, '-'),
    (6, 15, '-'),
    (6, 16, '-'),
    (7, 7, '='),
    (8, 9, '-'),
    (8, 10, '-'),
    (8, 13, '-'),
    (8, 14, '-'),
    (8, 15, '-'),
    (8, 16, '-'),
    (9, 13, '-'),
    (9, 14, '-'),
    (9, 15, '-'),
    (9, 16, '-'),
    (10, 13, '-'),
    (10, 14, '-'),
    (10, 15, '-'),
    (10, 16, '-'),
    (11, 13, '-'),
    (11, 14, '-'),
    (11, 15, '-'),
    (11, 16, '-'),
    (13, 14, '-'),
    (13, 15, '-'),
    (13, 16, '-'),
    (14, 14, '-'),
    (14, 15, '-'),
    (14, 16, '-'),
    (15, 16, '-'),
    (16, 16, '-'),
];

fn environment_queries() -> &'static [(u16, QueryMolecule)] {
    static QUERIES: OnceLock<Vec<(u16, QueryMolecule)>> = OnceLock::new();
    QUERIES.get_or_init(|| {
        ENVIRONMENTS
            .iter()
            .map(|(name, smarts)| {
                let query = parse_smarts(smarts)
                    .unwrap_or_else(|e| panic!("BRICS environment L{name} {smarts}: {e:?}"));
                (*name, query)
            })
            .collect()
    })
}

/// The BRICS fragments of `mol` as RDKit writes them (canonical SMILES with labelled dummy
/// atoms, e.g. `["[16*]c1ccccc1", "[3*]O[3*]", "[4*]CCC", "[4*]CCC([6*])=O"]` for
/// `CCCOCCC(=O)c1ccccc1`), in the order of RDKit's SMILES of the fragmented molecule; a
/// molecule without a BRICS bond gives its own canonical SMILES.
///
/// # Errors
/// [`FeaturizeError::Unsupported`] (named by the SMILES) when the port cannot model the
/// molecule as RDKit reads it or cannot write the fragments.
pub fn brics_fragments(mol: &Molecule) -> Result<Vec<String>, FeaturizeError> {
    let unsupported = |reason: String| FeaturizeError::Unsupported {
        smiles: mol.smiles().to_string(),
        reason,
    };
    guard(mol.smiles(), || {
        let target = rdkit_parsed_molecule(&mol.parsed)
            .ok_or_else(|| unsupported("BRICS: RDKit's reading of the molecule".into()))?;
        let n = target.atom_count();
        // Atoms of each environment: those that are query atom 0 of some embedding of its
        // SMARTS (what the recursive `[$(L)]` of RDKit's bond patterns tests; every
        // embedding, not one per atom set).
        let rings = find_sssr(&target);
        let members: Vec<(u16, Vec<bool>)> = environment_queries()
            .iter()
            .map(|(name, query)| {
                let anchored = first_anchored_match_per_atom(&[Some(query)], &target, &rings);
                (*name, anchored.iter().map(Option::is_some).collect())
            })
            .collect();
        let member = |name: u16, a: usize| {
            members
                .iter()
                .find(|(n, _)| *n == name)
                .is_some_and(|(_, m)| m[a])
        };
        let ring_bond = ring_bonds(&target);
        // (atom a, atom b, label of a's dummy, label of b's dummy, order)
        let mut cuts: Vec<(usize, usize, u16, u16, ChemBondOrder)> = Vec::new();
        for (first, second, bond) in RULES.into_iter().rev() {
            for a in 0..n {
                if !member(first, a) {
                    continue;
                }
                let mut neighbours: Vec<(usize, usize)> = target
                    .neighbor_slice(AtomIdx(a as u32))
                    .iter()
                    .map(|(b, bi)| (b.0 as usize, bi.0 as usize))
                    .collect();
                neighbours.sort_unstable();
                for (b, bi) in neighbours {
                    let order = target.bond(chematic::core::BondIdx(bi as u32)).order;
                    let order_fits = match bond {
                        '-' => matches!(
                            order,
                            ChemBondOrder::Single | ChemBondOrder::Up | ChemBondOrder::Down
                        ),
                        _ => order == ChemBondOrder::Double,
                    };
                    let taken = cuts
                        .iter()
                        .any(|c| (c.0, c.1) == (a, b) || (c.0, c.1) == (b, a));
                    if order_fits && !ring_bond[bi] && member(second, b) && !taken {
                        cuts.push((a, b, first, second, order));
                    }
                }
            }
        }
        let mut pieces = target.clone();
        for &(a, b, label_a, label_b, order) in &cuts {
            let (ia, ib) = (AtomIdx(a as u32), AtomIdx(b as u32));
            let bond = pieces
                .neighbor_slice(ia)
                .iter()
                .find(|(x, _)| *x == ib)
                .map(|(_, bi)| *bi)
                .ok_or_else(|| unsupported("BRICS: a cut bond vanished".into()))?;
            pieces.remove_bond(bond);
            for (atom, other, label) in [(ia, ib, label_a), (ib, ia, label_b)] {
                let dummy = pieces.add_atom(ChemAtom::wildcard());
                pieces.set_isotope(dummy, Some(label));
                pieces
                    .add_bond(atom, dummy, order)
                    .map_err(|e| unsupported(format!("BRICS: {e:?}")))?;
                // The dummy takes the cut neighbour's place around a stereocentre (RDKit's
                // `checkChiralityPostMove` keeps the same spatial arrangement).
                if let Some(frame) = pieces.stereo_neighbor_order(atom) {
                    let frame: Vec<u32> = frame
                        .iter()
                        .map(|&n| if n == other.0 { dummy.0 } else { n })
                        .collect();
                    pieces.set_stereo_neighbor_order(atom, frame);
                }
            }
        }
        let smiles = rdkit_canonical_smiles(&pieces)
            .map_err(|e| unsupported(format!("BRICS fragments' SMILES: {e}")))?;
        Ok(smiles.split('.').map(str::to_string).collect())
    })
}

/// Per bond of `mol`: whether it lies on a ring (its atoms stay connected without it).
fn ring_bonds(mol: &ChemMolecule) -> Vec<bool> {
    let n = mol.atom_count();
    mol.bonds()
        .map(|(skip, entry)| {
            let (from, to) = (entry.atom1.0 as usize, entry.atom2.0 as usize);
            let mut seen = vec![false; n];
            let mut stack = vec![from];
            seen[from] = true;
            while let Some(x) = stack.pop() {
                for (y, bi) in mol.neighbor_slice(AtomIdx(x as u32)) {
                    let y = y.0 as usize;
                    if *bi != skip && !seen[y] {
                        seen[y] = true;
                        stack.push(y);
                    }
                }
            }
            seen[to]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fragments(s: &str) -> String {
        brics_fragments(&Molecule::from_smiles(s).unwrap())
            .unwrap()
            .join(".")
    }

    #[test]
    fn fragments_match_rdkit() {
        // RDKit 2026.09: Chem.MolToSmiles(AllChem.FragmentOnBRICSBonds(MolFromSmiles(s))).
        assert_eq!(
            fragments("CCCOCCC(=O)c1ccccc1"),
            "[16*]c1ccccc1.[3*]O[3*].[4*]CCC.[4*]CCC([6*])=O"
        );
        assert_eq!(fragments("CC=CC"), "[7*]=CC.[7*]=CC");
        assert_eq!(fragments("Cn1cccc1"), "Cn1cccc1");
        assert_eq!(
            fragments("O=C(NCc1ccccc1)c1ccncc1"),
            "[1*]C([6*])=O.[16*]c1ccccc1.[16*]c1ccncc1.[4*]C[8*].[5*]N[5*]"
        );
        // Stereocentres keep their configuration with a dummy in the cut neighbour's place.
        assert_eq!(
            fragments("C[C@@H](c1ccc(cc1)CC(C)C)C(=O)O"),
            "[16*]c1ccc([16*])cc1.[8*]CC(C)C.[8*][C@H](C)C(=O)O"
        );
        assert_eq!(
            fragments("N[C@@H](Cc1ccccc1)C(=O)NC"),
            "[1*]C(=O)[C@@H](N)C[8*].[16*]c1ccccc1.[5*]NC"
        );
    }
}
