//! SDF records read as RDKit reads them (issue #17). Fixture: `fixtures/structures/`,
//! written by `fixtures/gen/structure_files.py` (RDKit's canonical SMILES and heavy-atom
//! pair distances of each record's own coordinates after `RemoveHs`).

use std::io::Write;

use mol_featurize::canonical_smiles;
use mol_featurize::structure_file::{SdfMolecule, StructureFileError, read_sdf};
use serde_json::Value;

fn fixture() -> (std::path::PathBuf, Value) {
    let dir = crate::manifest_dir().join("../../fixtures/structures");
    let json = std::fs::read_to_string(dir.join("records.json")).expect("records.json");
    (dir, serde_json::from_str(&json).expect("JSON"))
}

/// Sorted `[z_low, z_high, distance]` of every heavy-atom pair of `coordinates`.
fn pair_distances(rec: &SdfMolecule, coordinates: &[[f32; 3]]) -> Vec<(u8, u8, f64)> {
    let z: Vec<u8> = rec
        .molecule
        .atoms()
        .iter()
        .map(|a| a.atomic_number)
        .collect();
    let mut out = Vec::new();
    for i in 0..z.len() {
        for j in i + 1..z.len() {
            let d = (0..3)
                .map(|c| f64::from(coordinates[i][c] - coordinates[j][c]).powi(2))
                .sum::<f64>()
                .sqrt();
            out.push((z[i].min(z[j]), z[i].max(z[j]), d));
        }
    }
    out.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(a.2.total_cmp(&b.2)));
    out
}

/// Every record against RDKit's reading: the same molecule (canonical SMILES), heavy
/// atoms and, from the file's own coordinates, the same pair distances (to 1e-4
/// Angstrom: the block has four decimals); 2D records are flat layouts, never
/// conformers; the records RDKit rejects, and the one whose C-O bond is 4 Angstrom long,
/// are errors naming the record index and title.
fn check(records: &[Result<SdfMolecule, StructureFileError>], expected: &Value, label: &str) {
    let expected = expected["sdf_records"].as_array().unwrap();
    assert_eq!(
        records.len(),
        expected.len(),
        "{label}: one entry per record"
    );
    for (k, (got, want)) in records.iter().zip(expected).enumerate() {
        if k == 6 {
            // The molecule reads; its coordinates are dropped, naming the block's atoms.
            let rec = got.as_ref().expect("methanol reads");
            assert!(rec.coordinates.is_none() && rec.layout_2d.is_none());
            let e = rec
                .coordinate_error
                .as_deref()
                .expect("the 4 Angstrom C-O bond");
            assert!(
                e.contains("atoms 1 and 2 of the block") && e.contains("4.00 Angstrom"),
                "{e}"
            );
            continue;
        }
        if !want["rdkit_accepts"].as_bool().unwrap() {
            let e = got
                .as_ref()
                .expect_err("RDKit rejects this record")
                .to_string();
            assert!(e.contains(&format!("record {k} (neopentane)")), "{e}");
            continue;
        }
        let rec = got
            .as_ref()
            .unwrap_or_else(|e| panic!("{label} record {k}: {e}"));
        assert_eq!(rec.record, k);
        assert_eq!(
            canonical_smiles(&rec.molecule).unwrap(),
            want["canonical_smiles"].as_str().unwrap(),
            "record {k}"
        );
        assert_eq!(
            rec.molecule.num_atoms() as u64,
            want["heavy_atoms"].as_u64().unwrap()
        );
        let is_3d = want["is_3d"].as_bool().unwrap();
        assert_eq!(rec.coordinates.is_some(), is_3d, "record {k}");
        assert_eq!(rec.layout_2d.is_some(), !is_3d, "record {k}");
        let xyz = rec.coordinates.as_ref().or(rec.layout_2d.as_ref()).unwrap();
        let got = pair_distances(rec, xyz);
        let want: Vec<(u8, u8, f64)> = want["pair_distances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t[0].as_u64().unwrap() as u8,
                    t[1].as_u64().unwrap() as u8,
                    t[2].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got.len(), want.len(), "record {k}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!((g.0, g.1), (w.0, w.1), "record {k}");
            assert!((g.2 - w.2).abs() < 1e-4, "record {k}: {g:?} vs {w:?}");
        }
        assert!(rec.coordinate_error.is_none(), "record {k}");
        assert_signatures(&rec.molecule, xyz, &expected[k], 1e-4);
    }
    // Data fields: the target of the records that have it, none on acetonitrile.
    let rec = |k: usize| records[k].as_ref().unwrap();
    assert_eq!(rec(0).property_f64("y"), Some(-0.77));
    assert_eq!(rec(1).property_f64("y"), Some(0.52));
    assert_eq!(rec(1).properties["id"].trim(), "G1");
    assert_eq!(rec(4).property_f64("y"), None);
    // Explicit hydrogens are folded into their heavy atoms (glycine's NH3+).
    let h: Vec<(u8, u8, i8)> = rec(1)
        .molecule
        .atoms()
        .iter()
        .map(|a| (a.atomic_number, a.total_hydrogens, a.formal_charge))
        .collect();
    assert!(h.contains(&(7, 3, 1)) && h.contains(&(8, 0, -1)), "{h:?}");
}

/// Per heavy atom: element, hydrogens, degree and its sorted distances to the others;
/// the list sorted. An atom whose coordinates went to another atom of the same element
/// changes it (unless the two are equivalent).
pub fn signatures(
    mol: &mol_featurize::Molecule,
    xyz: &[[f32; 3]],
) -> Vec<(u8, u8, usize, Vec<f64>)> {
    let mut out: Vec<(u8, u8, usize, Vec<f64>)> = (0..mol.num_atoms())
        .map(|i| {
            let mut d: Vec<f64> = (0..mol.num_atoms())
                .filter(|&j| j != i)
                .map(|j| {
                    (0..3)
                        .map(|c| f64::from(xyz[i][c] - xyz[j][c]).powi(2))
                        .sum::<f64>()
                        .sqrt()
                })
                .collect();
            d.sort_by(f64::total_cmp);
            let a = &mol.atoms()[i];
            (
                a.atomic_number,
                a.total_hydrogens,
                mol.neighbours(i).len(),
                d,
            )
        })
        .collect();
    out.sort_by(|a, b| {
        (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)).then_with(|| {
            a.3.iter()
                .zip(&b.3)
                .map(|(x, y)| x.total_cmp(y))
                .fold(std::cmp::Ordering::Equal, std::cmp::Ordering::then)
        })
    });
    out
}

/// [`signatures`] of `mol` with `xyz` against RDKit's (`entry["atom_signatures"]`).
pub fn assert_signatures(
    mol: &mol_featurize::Molecule,
    xyz: &[[f32; 3]],
    entry: &Value,
    tolerance: f64,
) {
    let got = signatures(mol, xyz);
    let want = entry["atom_signatures"]
        .as_array()
        .expect("atom_signatures");
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        let head = (
            w[0].as_u64().unwrap() as u8,
            w[1].as_u64().unwrap() as u8,
            w[2].as_u64().unwrap() as usize,
        );
        assert_eq!((g.0, g.1, g.2), head, "{g:?} vs RDKit {w}");
        for (x, y) in g.3.iter().zip(w[3].as_array().unwrap()) {
            assert!(
                (x - y.as_f64().unwrap()).abs() < tolerance,
                "{g:?} vs RDKit {w}"
            );
        }
    }
}

#[test]
fn sdf_records_read_as_rdkit_reads_them() {
    let (dir, expected) = fixture();
    let records = read_sdf(&dir.join("records.sdf")).unwrap();
    check(&records, &expected, "records.sdf");
    // The check sees coordinates swapped between two oxygens of aspirin's acid group
    // (the C=O and the O-H): same element, different atoms.
    let aspirin = records[2].as_ref().unwrap();
    let mut xyz = aspirin.coordinates.clone().unwrap();
    let oxygen = |h: u8| {
        (0..aspirin.molecule.num_atoms())
            .filter(|&i| {
                let a = &aspirin.molecule.atoms()[i];
                a.atomic_number == 8 && a.total_hydrogens == h
            })
            .last()
            .unwrap()
    };
    xyz.swap(oxygen(0), oxygen(1));
    let entry = &expected["sdf_records"][2];
    let swapped = std::panic::catch_unwind(|| {
        assert_signatures(&aspirin.molecule, &xyz, entry, 1e-4);
    });
    assert!(swapped.is_err(), "a swap of two oxygens went unnoticed");
}

/// A gzipped copy reads back record for record.
#[test]
fn gzipped_sdf_reads_the_same_records() {
    let (dir, expected) = fixture();
    let text = std::fs::read(dir.join("records.sdf")).unwrap();
    let tmp = std::env::temp_dir().join(format!("molattn-gz-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let path = tmp.join("records.sdf.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(&text).unwrap();
    gz.finish().unwrap();
    let records = read_sdf(&path).unwrap();
    check(&records, &expected, "records.sdf.gz");
    // Not gzip: the error names the file.
    let fake = tmp.join("plain.sdf.gz");
    std::fs::write(&fake, &text).unwrap();
    let e = read_sdf(&fake).unwrap_err().to_string();
    assert!(e.contains("plain.sdf.gz"), "{e}");
    std::fs::remove_dir_all(&tmp).ok();
}

/// XYZ geometries (hydrogens listed, heavy atoms in reverse order) matched to their
/// labels row's SMILES: every heavy atom gets its own position (RDKit's per-atom
/// signature to 1e-5 Angstrom: the file has six decimals).
#[test]
fn xyz_geometries_match_their_smiles_atom_by_atom() {
    use mol_featurize::Molecule;
    use mol_featurize::structure_file::{match_coordinates, read_xyz};
    let (dir, expected) = fixture();
    let labels = std::fs::read_to_string(dir.join("xyz/labels.csv")).unwrap();
    for (k, line) in labels.lines().skip(1).take(3).enumerate() {
        let mut cells = line.split(',');
        let (file, smiles) = (cells.next().unwrap(), cells.next().unwrap());
        let mol = Molecule::from_smiles(smiles).unwrap();
        let (elements, xyz) = read_xyz(&dir.join("xyz").join(file)).unwrap();
        let matched = match_coordinates(&mol, &elements, &xyz).unwrap();
        assert_eq!(
            canonical_smiles(&mol).unwrap(),
            expected["xyz_rows"][k]["canonical_smiles"]
                .as_str()
                .unwrap()
        );
        assert_signatures(&mol, &matched, &expected["xyz_rows"][k], 1e-5);
    }
}
