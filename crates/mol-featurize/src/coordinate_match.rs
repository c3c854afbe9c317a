//! Matching a coordinate list that has its own atom order (an XYZ file, QM9's DFT
//! geometry) to a molecule read from SMILES, recognising bonded atoms by covalent radii
//! (the radii also serve the SDF bond-length check, `structure_file::misfit_bond`).

use crate::molecule::Molecule;
use crate::structure_error::StructureFileError;

/// Covalent radius in Angstrom (Cordero et al. 2008; sp3 carbon), 1.5 for elements not
/// listed. Used only to recognise bonded atom pairs.
pub(crate) fn covalent_radius(atomic_number: u8) -> f64 {
    match atomic_number {
        1 => 0.31,
        5 => 0.84,
        6 => 0.76,
        7 => 0.71,
        8 => 0.66,
        9 => 0.57,
        14 => 1.11,
        15 => 1.07,
        16 => 1.05,
        17 => 1.02,
        35 => 1.20,
        53 => 1.39,
        _ => 1.5,
    }
}

/// Slack added to the sum of covalent radii when deciding a pair is bonded (Angstrom).
pub const BOND_TOLERANCE_ANGSTROM: f64 = 0.45;

/// Depth-first assignment of geometry rows (`slots`: element, position) to the atoms
/// of `mol`, in atom order; a row fits when it has the atom's element and lies within
/// bonding distance of the rows of the atom's already-assigned neighbours.
struct Matcher<'a> {
    mol: &'a Molecule,
    z: Vec<u8>,
    /// Total hydrogens of each atom of `mol`.
    hydrogens: Vec<u8>,
    /// Hydrogen rows nearest to each slot, when the geometry lists hydrogens.
    h_counts: Option<Vec<u8>>,
    slots: Vec<(u8, [f64; 3])>,
    assigned: Vec<usize>,
    used: Vec<bool>,
    budget: usize,
}

impl Matcher<'_> {
    fn bonded(&self, a: usize, sa: usize, b: usize, sb: usize) -> bool {
        let (p, q) = (self.slots[sa].1, self.slots[sb].1);
        let d = ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
        d <= covalent_radius(self.z[a]) + covalent_radius(self.z[b]) + BOND_TOLERANCE_ANGSTROM
    }

    fn search(&mut self, atom: usize) -> bool {
        if atom == self.z.len() {
            return true;
        }
        for slot in 0..self.slots.len() {
            if self.used[slot]
                || self.slots[slot].0 != self.z[atom]
                || self
                    .h_counts
                    .as_ref()
                    .is_some_and(|h| h[slot] != self.hydrogens[atom])
            {
                continue;
            }
            if self.budget == 0 {
                return false;
            }
            self.budget -= 1;
            let fits = self.mol.neighbours(atom).iter().all(|&nb| {
                self.assigned[nb] == usize::MAX || self.bonded(atom, slot, nb, self.assigned[nb])
            });
            if !fits {
                continue;
            }
            self.assigned[atom] = slot;
            self.used[slot] = true;
            if self.search(atom + 1) {
                return true;
            }
            self.assigned[atom] = usize::MAX;
            self.used[slot] = false;
        }
        false
    }
}

/// Heavy-atom coordinates of `mol` taken from a coordinate list with its own atom order
/// (e.g. QM9's DFT geometry for its SMILES). Hydrogen rows are ignored; every heavy atom
/// of `mol` is assigned one heavy row of the same element such that every bond of
/// `mol` is at most the sum of covalent radii plus [`BOND_TOLERANCE_ANGSTROM`] long
/// and, when the geometry lists hydrogens, the row has as many nearest hydrogen rows
/// as the atom has hydrogens (a backtracking search, trying the rows in their own
/// order first).
///
/// # Errors
/// [`StructureFileError::Mismatch`] when element counts differ or no assignment fits
/// the bonds (the geometry is not this molecule's).
pub fn match_coordinates(
    mol: &Molecule,
    elements: &[u8],
    coordinates: &[[f64; 3]],
) -> Result<Vec<[f32; 3]>, StructureFileError> {
    let mismatch = |reason: String| StructureFileError::Mismatch {
        name: mol.smiles().to_string(),
        reason,
    };
    if let Some(row) = coordinates
        .iter()
        .position(|p| p.iter().any(|v| !v.is_finite()))
    {
        return Err(mismatch(format!(
            "coordinate row {} ({:?}) is not finite",
            row + 1,
            coordinates[row]
        )));
    }
    if elements.len() != coordinates.len() {
        return Err(mismatch(format!(
            "{} elements but {} coordinate rows",
            elements.len(),
            coordinates.len()
        )));
    }
    let rows: Vec<usize> = (0..elements.len()).filter(|&r| elements[r] != 1).collect();
    let n = mol.num_atoms();
    if rows.len() != n {
        return Err(mismatch(format!(
            "{} heavy atoms in the geometry, {n} in the graph",
            rows.len()
        )));
    }
    // Hydrogen rows, when the geometry has them, go to their nearest heavy row; a row
    // then only fits an atom with that many hydrogens (tells C=O from C-OH apart).
    let h_counts = elements.contains(&1).then(|| {
        let mut counts = vec![0u8; rows.len()];
        for h in (0..elements.len()).filter(|&r| elements[r] == 1) {
            let d2 = |r: usize| -> f64 {
                (0..3)
                    .map(|c| (coordinates[r][c] - coordinates[h][c]).powi(2))
                    .sum()
            };
            if let Some(slot) = (0..rows.len()).min_by(|&a, &b| d2(rows[a]).total_cmp(&d2(rows[b])))
            {
                counts[slot] = counts[slot].saturating_add(1);
            }
        }
        counts
    });
    let mut matcher = Matcher {
        mol,
        z: mol.atoms().iter().map(|a| a.atomic_number).collect(),
        hydrogens: mol.atoms().iter().map(|a| a.total_hydrogens).collect(),
        h_counts,
        slots: rows
            .iter()
            .map(|&r| (elements[r], coordinates[r]))
            .collect(),
        assigned: vec![usize::MAX; n],
        used: vec![false; rows.len()],
        budget: 1_000_000,
    };
    if !matcher.search(0) {
        return Err(mismatch(if matcher.budget == 0 {
            "no atom assignment found within the search budget".into()
        } else {
            "no assignment of the geometry's atoms fits the bonds".into()
        }));
    }
    let assigned = matcher.assigned;
    Ok(assigned
        .iter()
        .map(|&slot| {
            let p = coordinates[rows[slot]];
            [p[0] as f32, p[1] as f32, p[2] as f32]
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structure_file::read_xyz;

    #[test]
    fn xyz_geometry_matches_a_smiles_in_another_atom_order() {
        // QM9-like: ethanol's geometry listed O first, hydrogens last.
        let dir = std::env::temp_dir().join(format!("molattn-xyz-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ethanol.xyz");
        std::fs::write(
            &path,
            "9\nethanol, heavy atoms out of SMILES order\nO 1.4311 0.3229 0.5867\nC 0.4658 -0.5116 -0.0368\nC -0.8883 0.1670 -0.0273\nH 1.4999 1.1755 0.1322\nH -0.8487 1.1157 -0.5716\nH -1.6379 -0.4527 -0.5232\nH -1.2064 0.3821 0.9971\nH 0.7755 -0.7373 -1.0612\nH 0.4094 -1.4616 0.5041\n",
        )
        .unwrap();
        let (elements, xyz) = read_xyz(&path).unwrap();
        assert_eq!(elements, vec![8, 6, 6, 1, 1, 1, 1, 1, 1]);
        let mol = Molecule::from_smiles("CCO").unwrap();
        let matched = match_coordinates(&mol, &elements, &xyz).unwrap();
        assert_eq!(matched[0], [-0.8883, 0.1670, -0.0273]);
        assert_eq!(matched[1], [0.4658, -0.5116, -0.0368]);
        assert_eq!(matched[2], [1.4311, 0.3229, 0.5867]);
        // The same geometry does not fit dimethyl ether (C-O-C).
        let ether = Molecule::from_smiles("COC").unwrap();
        let e = match_coordinates(&ether, &elements, &xyz).unwrap_err();
        assert!(e.to_string().contains("COC"), "{e}");
        // Wrong heavy-atom count.
        let e = match_coordinates(&Molecule::from_smiles("CC").unwrap(), &elements, &xyz);
        assert!(e.unwrap_err().to_string().contains("3 heavy atoms"));
        // Hydrogens tell same-element atoms apart: acetic acid listed with the
        // hydroxyl O before the carbonyl O; bond lengths alone accept both orders.
        let acid = Molecule::from_smiles("CC(=O)O").unwrap();
        let (el, geo): (Vec<u8>, Vec<[f64; 3]>) = [
            (8, [1.95, -0.95, 0.0]), // O-H oxygen
            (6, [0.0, 0.0, 0.0]),    // CH3
            (6, [1.50, 0.10, 0.0]),  // carboxyl C
            (8, [2.15, 1.15, 0.0]),  // C=O oxygen
            (1, [2.90, -0.85, 0.0]), // H on the hydroxyl O
            (1, [-0.40, 1.0, 0.0]),
            (1, [-0.35, -0.50, 0.88]),
            (1, [-0.35, -0.50, -0.88]),
        ]
        .into_iter()
        .unzip();
        let got = match_coordinates(&acid, &el, &geo).unwrap();
        assert_eq!(got[2], [2.15, 1.15, 0.0]); // atom 2 is =O
        assert_eq!(got[3], [1.95, -0.95, 0.0]); // atom 3 is the OH oxygen
    }
}
