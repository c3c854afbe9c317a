//! Where the toolkit's RDKit port (`chematic` 1.2.1) and the MAT reference recipe on
//! RDKit 2026.09 disagree, and how [`crate::Molecule`] closes the gap (docs/CHEMISTRY.md).
//!
//! 1. Macrocycle bridges. RDKit treats a neutral, two-connected, singly bonded O or S as
//!    no pi donor when the first SSSR ring it meets has 9 or more atoms
//!    (`Aromaticity.cpp`, "aliphatic ether oxygens ... in macrocycles"). RDKit 2026.09
//!    sorts the SSSR by ring size (`FindRings.cpp`, `ringComparer`), so the smallest ring
//!    decides; the port keeps the legacy ring order, in which a furan or thiophene bridged
//!    inside a macrocycle is met through the macrocycle first and loses its aromaticity.
//!    [`macrocycle_bridge_donors`] finds these atoms and [`with_pyrrole_donors`] rewrites
//!    them as `[nH]` for perception only: a pyrrole NH is the same two-electron donor and
//!    candidate in every ring, so the port then reaches RDKit's aromaticity whatever its
//!    ring order; elements, charges and hydrogen counts still come from the real molecule.
//! 2. Stereo hydrogens. `MolFromSmiles` keeps a hydrogen atom that alone defines a double
//!    bond's stereo (`[H]/C=C\Cl`); the recipe's later `RemoveHs` (after `AddHs`) drops it
//!    unless its heavy atom still has no other neighbour and the bond's stereo is real
//!    (`AddHs.cpp`, `shouldRemoveH`, github #1810). [`stereo_hydrogens_to_fold`] applies
//!    that rule.
//! 3. Dative bonds do not close rings (`findSSSR` ignores them): see
//!    `Molecule::bond_ring_membership`.

use chematic::core::{AtomIdx, BondOrder as ChemBondOrder, Element, Molecule as ChemMolecule};
use chematic::perception::rdkit_symmetrized_sssr;
use chematic::smiles::rdkit_legacy_stereo;

use crate::molecular_graph::{Atom, Bond, BondOrder};

/// RDKit's macrocycle threshold: rings of this many atoms or more (`Aromaticity.cpp`).
pub const MACROCYCLE_RING_SIZE: usize = 9;

/// Atoms of `parsed` that RDKit 2026.09 counts as pi donors but the port may not: neutral
/// O or S with two neighbours, no hydrogen, no double or triple bond, in an SSSR ring of
/// fewer than [`MACROCYCLE_RING_SIZE`] atoms and in one of at least that many.
pub(crate) fn macrocycle_bridge_donors(parsed: &ChemMolecule) -> Vec<AtomIdx> {
    let candidate = |i: usize| {
        let atom = parsed.atom(AtomIdx(i as u32));
        let n = atom.element.atomic_number();
        (n == 8 || n == 16)
            && atom.charge == 0
            && !atom.wildcard
            && atom.hydrogen_count.unwrap_or(0) == 0
            && parsed.neighbors(AtomIdx(i as u32)).count() == 2
            && parsed.neighbors(AtomIdx(i as u32)).all(|(_, b)| {
                !matches!(
                    parsed.bond(b).order,
                    ChemBondOrder::Double | ChemBondOrder::Triple
                )
            })
    };
    if !(0..parsed.atom_count()).any(candidate) {
        return Vec::new();
    }
    let bonds: Vec<(usize, usize, bool)> = parsed
        .rdkit_bond_order()
        .iter()
        .map(|&b| {
            let e = parsed.bond(b);
            let closes_rings = !matches!(e.order, ChemBondOrder::Dative | ChemBondOrder::Zero);
            (e.atom1.0 as usize, e.atom2.0 as usize, closes_rings)
        })
        .collect();
    let Some(rings) = rdkit_symmetrized_sssr(parsed.atom_count(), &bonds) else {
        return Vec::new();
    };
    (0..parsed.atom_count())
        .filter(|&i| candidate(i))
        .filter(|&i| {
            let sizes = rings.iter().filter(|r| r.contains(&i)).map(Vec::len);
            let (small, large) = sizes.fold((false, false), |(s, l), n| {
                (
                    s || n < MACROCYCLE_RING_SIZE,
                    l || n >= MACROCYCLE_RING_SIZE,
                )
            });
            small && large
        })
        .map(|i| AtomIdx(i as u32))
        .collect()
}

/// `parsed` with each atom of `donors` written as a pyrrole-type `[nH]` (aromatic flag as
/// written), for aromaticity perception only.
pub(crate) fn with_pyrrole_donors(parsed: &ChemMolecule, donors: &[AtomIdx]) -> ChemMolecule {
    let mut swapped = parsed.clone();
    for &idx in donors {
        let aromatic = parsed.atom(idx).aromatic;
        swapped.set_element(idx, Element::N);
        swapped.set_hydrogen_count(idx, Some(1));
        swapped.set_atom_aromatic(idx, aromatic);
    }
    swapped
}

/// Hydrogen atoms among `atoms` (bonded by `bonds`, as read by `MolFromSmiles`) that the
/// recipe's `RemoveHs` after `AddHs` removes: each was kept only to define a double bond's
/// stereo, and either its heavy atom gains a hydrogen from `AddHs` (so it is no longer
/// that end's only neighbour) or RDKit's stereo perception found the bond not
/// stereogenic. `heavy` is the toolkit molecule of `atoms` / `bonds` (same indices).
/// Returns `(hydrogen, heavy neighbour)` pairs.
pub(crate) fn stereo_hydrogens_to_fold(
    atoms: &[Atom],
    bonds: &[Bond],
    isotopes: &[bool],
    heavy: &ChemMolecule,
) -> Vec<(usize, usize)> {
    let n = atoms.len();
    let mut incident: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, b) in bonds.iter().enumerate() {
        incident[b.begin].push(k);
        incident[b.end].push(k);
    }
    let other = |k: usize, i: usize| {
        let b = &bonds[k];
        if b.begin == i { b.end } else { b.begin }
    };
    // (hydrogen, heavy atom, double bond index)
    let candidates: Vec<(usize, usize, usize)> = (0..n)
        .filter_map(|h| {
            let a = &atoms[h];
            if a.atomic_number != 1 || a.formal_charge != 0 || isotopes[h] {
                return None;
            }
            let [k] = incident[h][..] else { return None };
            let x = other(k, h);
            if atoms[x].atomic_number <= 1 || incident[x].len() != 2 {
                return None;
            }
            let double = incident[x]
                .iter()
                .copied()
                .find(|&d| d != k && bonds[d].order == BondOrder::Double)?;
            Some((h, x, double))
        })
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let stereo = rdkit_legacy_stereo(heavy).ok();
    candidates
        .into_iter()
        .filter(|&(_, x, double)| {
            let gains_hydrogen = atoms[x].total_hydrogens > 0;
            // Bond::BondStereo: 0 none, 1 any, >= 2 a defined E/Z (or cis/trans).
            let stereogenic = stereo
                .as_ref()
                .is_none_or(|s| s.bond_stereo.get(double).is_none_or(|&v| v >= 2));
            gains_hydrogen || !stereogenic
        })
        .map(|(h, x, _)| (h, x))
        .collect()
}
