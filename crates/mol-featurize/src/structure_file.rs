//! Molecules with coordinates from files: SDF / MOL (V2000 and V3000, plain or gzipped,
//! read by `chematic`) and XYZ. Matching an XYZ geometry, which has no bonds, to a
//! molecule read from SMILES lives in [`crate::coordinate_match`].
//!
//! Coordinates are in Angstrom, one row per heavy atom in [`Molecule::atoms`] order;
//! hydrogen atoms present in a file are folded into their heavy atom (as RDKit
//! `RemoveHs`) and their coordinates dropped.

use std::collections::BTreeMap;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use chematic::mol::sdf::{SdfParseLimits, SdfRecordReader};
use chematic::mol::xyz::parse_xyz;
use chematic::smiles::write_with_atom_order;

use crate::coordinate_match::covalent_radius;
pub use crate::coordinate_match::{BOND_TOLERANCE_ANGSTROM, match_coordinates};
use crate::molecule::{Molecule, guard};
use crate::sdf_record::{atom_block_problem, sdf_records};
pub use crate::structure_error::{MAX_RECORD_ATOMS, MIN_BOND_ANGSTROM, StructureFileError};

/// One SDF record: the molecule, its heavy-atom coordinates and its data fields.
#[derive(Debug, Clone)]
pub struct SdfMolecule {
    /// Record index in the file (0-based).
    pub record: usize,
    /// Title line of the MOL block, or `record K` (its 0-based index) when it is empty.
    pub name: String,
    /// The molecule (hydrogens folded).
    pub molecule: Molecule,
    /// Heavy-atom coordinates in Angstrom, `None` when the block is 2D (all z = 0).
    pub coordinates: Option<Vec<[f32; 3]>>,
    /// The block's flat layout (z = 0) when it is 2D and its atoms are not all at the
    /// origin: a depiction, not a conformer. `None` when `coordinates` is set.
    pub layout_2d: Option<Vec<[f32; 3]>>,
    /// Why the block's coordinates were dropped (they do not fit its connection table:
    /// a bond too long or too short, naming the file's atoms). The molecule itself
    /// is good: a caller that makes its own conformers can still use it.
    pub coordinate_error: Option<String>,
    /// SD data fields (`> <NAME>` blocks), candidate targets.
    pub properties: BTreeMap<String, String>,
}

impl SdfMolecule {
    /// Data field `name` parsed as a number, or `None` when absent or not numeric.
    pub fn property_f64(&self, name: &str) -> Option<f64> {
        self.properties.get(name)?.trim().parse().ok()
    }
}

/// Reads every record of an SDF (or a single MOL file), V2000 or V3000; a path ending
/// in `.gz` is gunzipped first. Bytes that are not UTF-8 (a Latin-1 data field) read as
/// U+FFFD; MOL blocks are ASCII.
///
/// Records that fail are returned as errors in place, so a caller can report the
/// record index and reason and keep the others (never silent loss, at any file size).
///
/// # Errors
/// [`StructureFileError::Io`] when the file cannot be read or is not valid gzip.
pub fn read_sdf(
    path: &Path,
) -> Result<Vec<Result<SdfMolecule, StructureFileError>>, StructureFileError> {
    let io = |source: std::io::Error| StructureFileError::Io {
        path: path.display().to_string(),
        source,
    };
    let text = if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
    {
        let file = std::fs::File::open(path).map_err(io)?;
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file))
            .read_to_string(&mut text)
            .map_err(io)?;
        text
    } else {
        std::fs::read_to_string(path).map_err(io)?
    };
    Ok(parse_sdf(&text, &path.display().to_string()))
}

/// How a record's error starts when chematic's MOL block reader panicked on it (caught;
/// the fuzzer counts it as a failure to fix).
pub const READER_PANIC: &str = "the MOL block reader failed";

/// The first bond of `mol` whose length in `coordinates` no bond can have: shorter than
/// [`MIN_BOND_ANGSTROM`] or longer than the sum of covalent radii plus
/// [`BOND_TOLERANCE_ANGSTROM`] (the rule [`match_coordinates`] uses), as (atom, atom,
/// length in Angstrom, longest allowed); `None` when every bond fits.
///
/// # Errors
/// When `coordinates` does not have one row per atom of `mol`.
pub fn misfit_bond(
    mol: &Molecule,
    coordinates: &[[f32; 3]],
) -> Result<Option<(usize, usize, f64, f64)>, String> {
    if coordinates.len() != mol.num_atoms() {
        return Err(format!(
            "{} coordinate rows for {} atoms",
            coordinates.len(),
            mol.num_atoms()
        ));
    }
    for bond in mol.bonds() {
        let (p, q) = (coordinates[bond.begin], coordinates[bond.end]);
        let d = (0..3)
            .map(|c| f64::from(p[c] - q[c]).powi(2))
            .sum::<f64>()
            .sqrt();
        let (za, zb) = (
            mol.atoms()[bond.begin].atomic_number,
            mol.atoms()[bond.end].atomic_number,
        );
        let longest = covalent_radius(za) + covalent_radius(zb) + BOND_TOLERANCE_ANGSTROM;
        if !(MIN_BOND_ANGSTROM..=longest).contains(&d) {
            return Ok(Some((bond.begin, bond.end, d, longest)));
        }
    }
    Ok(None)
}

/// [`read_sdf`] on text; `label` names the source in errors.
///
/// Records are split at their `$$$$` lines here and each is parsed alone, so a record
/// the parser rejects (or panics on) costs only that record. Before parsing, a record's
/// atom block is checked for coordinates that are not finite numbers (`nan`, `inf`:
/// chematic's V2000 reader accepts them and then panics in its stereo perception) and
/// for non-bonded heavy atoms closer than [`MIN_BOND_ANGSTROM`].
pub fn parse_sdf(text: &str, label: &str) -> Vec<Result<SdfMolecule, StructureFileError>> {
    // No cap on the input size or the record count: a large file is read to its end.
    let limits = SdfParseLimits {
        max_input_bytes: usize::MAX,
        max_records: usize::MAX,
        ..SdfParseLimits::default()
    };
    sdf_records(text)
        .enumerate()
        .map(|(record, block)| {
            let format = |reason: String| StructureFileError::Format {
                path: label.to_string(),
                record,
                reason,
            };
            if let Some(reason) = atom_block_problem(block) {
                return Err(format(reason));
            }
            let parsed = catch_unwind(AssertUnwindSafe(|| {
                SdfRecordReader::with_limits(block, limits).next()
            }))
            .map_err(|payload| {
                format(format!(
                    "{READER_PANIC}: {}",
                    crate::molecule::panic_text(payload.as_ref())
                ))
            })?
            .ok_or_else(|| format("an empty record".to_string()))?;
            let rec = parsed.map_err(|e| format(e.to_string()))?;
            let name = if rec.meta.name.trim().is_empty() {
                format!("record {record}")
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
            // A flat block keeps its depiction unless every atom sits at the origin
            // (a writer that left the coordinates out).
            let flat = (conformer.is_none()
                && rec.coords.iter().any(|&(x, y)| x != 0.0 || y != 0.0))
            .then(|| {
                rec.coords
                    .iter()
                    .map(|&(x, y)| [x as f32, y as f32, 0.0])
                    .collect::<Vec<_>>()
            });
            // The MOL block's explicit hydrogens are graph atoms; going through SMILES
            // (atom order recorded) folds them exactly as a SMILES input would be.
            let molecule_error = |source| StructureFileError::Molecule {
                path: label.to_string(),
                record,
                name: name.clone(),
                source,
            };
            let (smiles, order) =
                guard(&name, || Ok(write_with_atom_order(&rec.mol))).map_err(molecule_error)?;
            let molecule = Molecule::from_written_smiles(&smiles).map_err(molecule_error)?;
            // Rows of the file's atom block, in the molecule's heavy-atom order; the
            // file's atom number (1-based) of each heavy atom, for messages.
            let file_atom = |k: usize| order[molecule.source_atoms()[k]].0 as usize + 1;
            let heavy_rows = |points: Vec<[f32; 3]>| -> Result<Vec<[f32; 3]>, String> {
                if points.len() != n_parsed {
                    return Err(format!(
                        "{} coordinate rows for {n_parsed} atoms",
                        points.len()
                    ));
                }
                Ok(molecule
                    .source_atoms()
                    .iter()
                    .map(|&k| points[order[k].0 as usize])
                    .collect())
            };
            let mut coordinate_error = None;
            let coordinates = conformer.and_then(|points| {
                let rows = heavy_rows(points).and_then(|xyz| match misfit_bond(&molecule, &xyz)? {
                    None => Ok(xyz),
                    Some((a, b, d, longest)) => Err(format!(
                        "the bond between atoms {} and {} of the block is {d:.2} \
                             Angstrom long (a bond between these elements is \
                             {MIN_BOND_ANGSTROM}-{longest:.2})",
                        file_atom(a),
                        file_atom(b)
                    )),
                });
                rows.map_err(|reason| coordinate_error = Some(reason)).ok()
            });
            let layout_2d = flat.and_then(|points| {
                heavy_rows(points)
                    .map_err(|reason| coordinate_error = Some(reason))
                    .ok()
            });
            Ok(SdfMolecule {
                record,
                name,
                molecule,
                coordinates,
                layout_2d,
                coordinate_error,
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
        reason: e.to_string(),
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

    /// Issue #37 item 1: a V2000 record with a `nan` coordinate panicked in chematic's
    /// stereo perception; now it is that record's error, naming the atom, and the
    /// records around it read as before. The same for `inf` and for V3000.
    #[test]
    fn non_finite_coordinates_are_the_records_error() {
        for bad in ["nan", "inf", "-inf", "NaN"] {
            let edited = ETHANOL_V2000.replacen("    1.4311", &format!("{bad:>10}"), 1);
            assert_ne!(edited, ETHANOL_V2000);
            let text = format!("{ETHANOL_V2000}{edited}{ETHANOL_V2000}");
            let records = parse_sdf(&text, "nan.sdf");
            assert_eq!(records.len(), 3, "{bad}");
            assert!(records[0].is_ok() && records[2].is_ok(), "{bad}");
            let e = records[1].as_ref().unwrap_err().to_string();
            assert!(
                e.contains("nan.sdf record 1")
                    && e.contains("atom 3 (O)")
                    && e.contains("x coordinate")
                    && e.contains("not a finite number"),
                "{e}"
            );
        }
        let v3000 = ACETONITRILE_V3000.replacen("1.4 ", "nan ", 1);
        assert_ne!(v3000, ACETONITRILE_V3000);
        let e = parse_sdf(&v3000, "v3.sdf")[0]
            .as_ref()
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a finite number"), "{e}");
    }

    /// Issue #37 item 9: two heavy atoms at the same place (bonded or not) are refused
    /// as the 2D layout refuses them; a block whose atoms all sit at the origin (no
    /// coordinates written) still reads.
    #[test]
    fn coincident_heavy_atoms_are_refused() {
        // Atom 3 (O) moved onto atom 1 (C): not bonded to it.
        let edited = ETHANOL_V2000.replacen(
            "    1.4311    0.3229    0.5867 O",
            "   -0.8883    0.1670   -0.0273 O",
            1,
        );
        assert_ne!(edited, ETHANOL_V2000);
        let e = parse_sdf(&edited, "same.sdf")[0]
            .as_ref()
            .unwrap_err()
            .to_string();
        assert!(e.contains("atoms 1 and 3 are 0.00 Angstrom apart"), "{e}");
        let mut origin = String::new();
        for (k, line) in ETHANOL_V2000.lines().enumerate() {
            if (4..13).contains(&k) {
                origin.push_str(&format!("    0.0000    0.0000    0.0000{}\n", &line[30..]));
            } else {
                origin.push_str(line);
                origin.push('\n');
            }
        }
        let rec = parse_sdf(&origin, "origin.sdf");
        let rec = rec[0].as_ref().unwrap();
        assert_eq!(rec.molecule.num_atoms(), 3);
        assert!(rec.coordinates.is_none() && rec.layout_2d.is_none());
    }

    /// XYZ reasons are words, not Debug text.
    #[test]
    fn xyz_errors_read_as_words() {
        let path = std::env::temp_dir().join(format!("molattn-bad-{}.xyz", std::process::id()));
        std::fs::write(&path, "2\n\nC 0 0 nan\nO 0 0 1.2\n").unwrap();
        let e = read_xyz(&path).unwrap_err().to_string();
        std::fs::remove_file(&path).ok();
        assert!(!e.contains('{') && e.contains(".xyz"), "{e}");
    }

    /// Issue #37 item 2: a record declaring more atoms than [`MAX_RECORD_ATOMS`] is
    /// refused from its counts line, without parsing, and the next record reads.
    #[test]
    fn huge_declared_counts_are_refused_before_parsing() {
        // V2000's counts field has three digits (at most 999 atoms): V3000 only.
        let v3000 = ACETONITRILE_V3000.replacen("COUNTS 3 2", "COUNTS 4001 2", 1);
        assert_ne!(v3000, ACETONITRILE_V3000);
        let records = parse_sdf(&format!("{v3000}{ETHANOL_V2000}"), "huge.sdf");
        assert!(records[1].is_ok());
        let e = records[0].as_ref().unwrap_err().to_string();
        assert!(e.contains("huge.sdf record 0"), "{e}");
        assert!(e.contains("4001 atoms declared"), "{e}");
    }
}
