//! Molecules with coordinates from files: SDF / MOL (V2000 and V3000, read by `chematic`)
//! and XYZ, plus matching a coordinate list to a molecule read from SMILES (QM9 ships
//! SMILES with DFT coordinates whose atom order need not follow the SMILES).
//!
//! Coordinates are in Angstrom, one row per heavy atom in [`Molecule::atoms`] order;
//! hydrogen atoms present in a file are folded into their heavy atom (as RDKit
//! `RemoveHs`) and their coordinates dropped.

use std::collections::BTreeMap;
use std::path::Path;

use chematic::mol::sdf::SdfRecordReader;
use chematic::mol::xyz::parse_xyz;
use chematic::smiles::write_with_atom_order;
use thiserror::Error;

use crate::error::FeaturizeError;
use crate::molecule::{Molecule, guard};

/// Why a structure file or one of its records could not be read.
#[derive(Debug, Error)]
pub enum StructureFileError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// A record is not a valid MOL block / XYZ frame.
    #[error("{path} record {record}: {reason}")]
    Format {
        /// File.
        path: String,
        /// Record index (0-based).
        record: usize,
        /// Parser message.
        reason: String,
    },
    /// The record parsed but the molecule was rejected (sanitisation, ...).
    #[error("{path} record {record}: {source}")]
    Molecule {
        /// File.
        path: String,
        /// Record index (0-based).
        record: usize,
        /// Why.
        source: FeaturizeError,
    },
    /// The coordinates do not fit the molecule's graph.
    #[error("{name}: coordinates do not match the graph: {reason}")]
    Mismatch {
        /// The molecule (SMILES or record label).
        name: String,
        /// Why.
        reason: String,
    },
}

/// One SDF record: the molecule, its heavy-atom coordinates and its data fields.
#[derive(Debug, Clone)]
pub struct SdfMolecule {
    /// Record index in the file (0-based).
    pub record: usize,
    /// Title line of the MOL block.
    pub name: String,
    /// The molecule (hydrogens folded).
    pub molecule: Molecule,
    /// Heavy-atom coordinates in Angstrom, `None` when the block is 2D (all z = 0).
    pub coordinates: Option<Vec<[f32; 3]>>,
    /// SD data fields (`> <NAME>` blocks), candidate targets.
    pub properties: BTreeMap<String, String>,
}

impl SdfMolecule {
    /// Data field `name` parsed as a number, or `None` when absent or not numeric.
    pub fn property_f64(&self, name: &str) -> Option<f64> {
        self.properties.get(name)?.trim().parse().ok()
    }
}

/// Reads every record of an SDF (or a single MOL file), V2000 or V3000.
///
/// Records that fail are returned as errors in place, so a caller can report the
/// record index and reason and keep the others (never silent loss).
///
/// # Errors
/// [`StructureFileError::Io`] when the file cannot be read.
pub fn read_sdf(
    path: &Path,
) -> Result<Vec<Result<SdfMolecule, StructureFileError>>, StructureFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| StructureFileError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(parse_sdf(&text, &path.display().to_string()))
}

/// [`read_sdf`] on text; `label` names the source in errors.
pub fn parse_sdf(text: &str, label: &str) -> Vec<Result<SdfMolecule, StructureFileError>> {
    SdfRecordReader::new(text)
        .enumerate()
        .map(|(record, parsed)| {
            let format = |reason: String| StructureFileError::Format {
                path: label.to_string(),
                record,
                reason,
            };
            let rec = parsed.map_err(|e| format(e.to_string()))?;
            let name = if rec.meta.name.trim().is_empty() {
                format!("{label} record {record}")
            } else {
                rec.meta.name.trim().to_string()
            };
            let n_parsed = rec.mol.atom_count();
            let conformer = rec.conformer.as_ref().map(|c| {
                c.points
                    .iter()
                    .map(|p| [p.x as f32, p.y as f32, p.z as f32])
                    .collect::<Vec<_>>()
            });
            // The MOL block's explicit hydrogens are graph atoms; going through SMILES
            // (atom order recorded) folds them exactly as a SMILES input would be.
            let (smiles, order) =
                guard(&name, || Ok(write_with_atom_order(&rec.mol))).map_err(|source| {
                    StructureFileError::Molecule {
                        path: label.to_string(),
                        record,
                        source,
                    }
                })?;
            let molecule = Molecule::from_written_smiles(&smiles).map_err(|source| {
                StructureFileError::Molecule {
                    path: label.to_string(),
                    record,
                    source,
                }
            })?;
            let coordinates = match conformer {
                Some(points) if points.len() == n_parsed => Some(
                    molecule
                        .source_atoms()
                        .iter()
                        .map(|&k| points[order[k].0 as usize])
                        .collect(),
                ),
                Some(points) => {
                    return Err(format(format!(
                        "{} coordinate rows for {n_parsed} atoms",
                        points.len()
                    )));
                }
                None => None,
            };
            Ok(SdfMolecule {
                record,
                name,
                molecule,
                coordinates,
                properties: rec.properties.into_iter().collect(),
            })
        })
        .collect()
}

/// Elements (atomic numbers) and coordinates (Angstrom) of an XYZ file's first frame,
/// hydrogens included, in file order.
///
/// XYZ has no bonds: pair it with the molecule's SMILES through [`match_coordinates`].
///
/// # Errors
/// [`StructureFileError::Io`] or [`StructureFileError::Format`].
pub fn read_xyz(path: &Path) -> Result<(Vec<u8>, Vec<[f64; 3]>), StructureFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| StructureFileError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let frame = parse_xyz(&text).map_err(|e| StructureFileError::Format {
        path: path.display().to_string(),
        record: 0,
        reason: format!("{e:?}"),
    })?;
    Ok((
        frame
            .atoms
            .iter()
            .map(|a| a.element.atomic_number())
            .collect(),
        frame.atoms.iter().map(|a| [a.x, a.y, a.z]).collect(),
    ))
}

/// Covalent radius in Angstrom (Cordero et al. 2008; sp3 carbon), 1.5 for elements not
/// listed. Used only to recognise bonded atom pairs.
fn covalent_radius(atomic_number: u8) -> f64 {
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

    const ETHANOL_V2000: &str = "ethanol
  test 3D

  9  8  0  0  0  0  0  0  0  0999 V2000
   -0.8883    0.1670   -0.0273 C   0  0  0  0  0  0  0  0  0  0  0  0
    0.4658   -0.5116   -0.0368 C   0  0  0  0  0  0  0  0  0  0  0  0
    1.4311    0.3229    0.5867 O   0  0  0  0  0  0  0  0  0  0  0  0
   -0.8487    1.1157   -0.5716 H   0  0  0  0  0  0  0  0  0  0  0  0
   -1.6379   -0.4527   -0.5232 H   0  0  0  0  0  0  0  0  0  0  0  0
   -1.2064    0.3821    0.9971 H   0  0  0  0  0  0  0  0  0  0  0  0
    0.7755   -0.7373   -1.0612 H   0  0  0  0  0  0  0  0  0  0  0  0
    0.4094   -1.4616    0.5041 H   0  0  0  0  0  0  0  0  0  0  0  0
    1.4999    1.1755    0.1322 H   0  0  0  0  0  0  0  0  0  0  0  0
  1  2  1  0
  2  3  1  0
  1  4  1  0
  1  5  1  0
  1  6  1  0
  2  7  1  0
  2  8  1  0
  3  9  1  0
M  END
> <solubility>
-0.77

> <name>
ethanol

$$$$
";

    const ACETONITRILE_V3000: &str = "acetonitrile
  test 3D

  0  0  0     0  0            999 V3000
M  V30 BEGIN CTAB
M  V30 COUNTS 3 2 0 0 0
M  V30 BEGIN ATOM
M  V30 1 C -1.2 0.1 0.3 0
M  V30 2 C 0.25 0.0 0.1 0
M  V30 3 N 1.4 -0.05 -0.05 0
M  V30 END ATOM
M  V30 BEGIN BOND
M  V30 1 1 1 2
M  V30 2 3 2 3
M  V30 END BOND
M  V30 END CTAB
M  END
> <gap>
0.35

$$$$
";

    #[test]
    fn sdf_v2000_with_hydrogens_keeps_heavy_coordinates_and_fields() {
        let records = parse_sdf(ETHANOL_V2000, "ethanol.sdf");
        assert_eq!(records.len(), 1);
        let rec = records[0].as_ref().unwrap();
        assert_eq!(rec.name, "ethanol");
        assert_eq!(rec.molecule.num_atoms(), 3);
        let h: Vec<u8> = rec
            .molecule
            .atoms()
            .iter()
            .map(|a| a.total_hydrogens)
            .collect();
        assert_eq!(h, vec![3, 2, 1]);
        let xyz = rec.coordinates.as_ref().unwrap();
        assert_eq!(xyz.len(), 3);
        assert_eq!(xyz[2], [1.4311, 0.3229, 0.5867]);
        assert_eq!(rec.property_f64("solubility"), Some(-0.77));
        assert_eq!(rec.properties["name"].trim(), "ethanol");
    }

    #[test]
    fn sdf_v3000_reads_atoms_bonds_and_fields() {
        let records = parse_sdf(ACETONITRILE_V3000, "mecn.sdf");
        let rec = records[0].as_ref().unwrap();
        assert_eq!(rec.molecule.num_atoms(), 3);
        assert_eq!(rec.molecule.bonds()[1].order, crate::BondOrder::Triple);
        assert_eq!(rec.coordinates.as_ref().unwrap()[2], [1.4, -0.05, -0.05]);
        assert_eq!(rec.property_f64("gap"), Some(0.35));
    }

    #[test]
    fn bad_record_is_an_error_naming_the_record() {
        let text = format!("{ETHANOL_V2000}broken\n\n\n  x  y\nM  END\n$$$$\n");
        let records = parse_sdf(&text, "two.sdf");
        assert_eq!(records.len(), 2);
        assert!(records[0].is_ok());
        let e = records[1].as_ref().unwrap_err().to_string();
        assert!(e.contains("two.sdf record 1"), "{e}");
    }

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
