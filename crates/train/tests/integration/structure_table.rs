//! Structure files as tables (issue #17): an SDF's data fields as targets and its records
//! as rows, XYZ files with a labels CSV, each featurized with the file's own coordinates
//! or with conformers; bad records reported by index and title. Fixture:
//! `fixtures/structures/` (`fixtures/gen/structure_files.py`, RDKit's readings).

use std::path::PathBuf;

use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::{ConformerOptions, GraphormerFeaturizer, MatFeaturizer};
use train::table_data::{MoleculeFormat, MoleculeSource, featurize_table};

fn fixtures() -> PathBuf {
    crate::manifest_dir().join("../../fixtures/structures")
}

fn sdf_source(id_field: Option<&str>) -> MoleculeSource {
    MoleculeSource {
        path: fixtures().join("records.sdf"),
        format: MoleculeFormat::Sdf {
            id_field: id_field.map(String::from),
        },
        smiles_column: "smiles".into(),
        delimiter: ',',
    }
}

fn mat(method: CoordinateMethod) -> MatFeaturizer {
    MatFeaturizer {
        conformer: ConformerOptions {
            method,
            seed: 0,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Sorted heavy-atom pair distances of a MAT distance matrix (the dummy node left out).
fn sorted_distances(f: &mol_featurize::MatFeatures) -> Vec<f64> {
    let n = f.n_atoms;
    let mut out = Vec::new();
    for i in 1..n {
        for j in i + 1..n {
            out.push(f64::from(f.distances[i * n + j]));
        }
    }
    out.sort_by(f64::total_cmp);
    out
}

/// RDKit's sorted pair distances of a fixture entry.
fn rdkit_distances(entry: &serde_json::Value) -> Vec<f64> {
    let mut d: Vec<f64> = entry["pair_distances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[2].as_f64().unwrap())
        .collect();
    d.sort_by(f64::total_cmp);
    d
}

fn expected() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join("records.json")).unwrap())
        .unwrap()
}

/// One row per record, in order: targets from the `y` field (absent on acetonitrile:
/// an unlabelled row), ids from the `id` field, or the title by default; the two bad
/// records keep their rows with their errors.
#[test]
fn sdf_records_are_rows_with_fields_as_targets() {
    let data = sdf_source(Some("id")).read(&["y".into()]).unwrap();
    let t = &data.table;
    assert_eq!(t.len(), 7);
    // The record that fails before its fields are read is named by its title.
    assert_eq!(t.ids, ["E1", "G1", "A1", "P1", "N1", "neopentane", "M1"]);
    assert_eq!(t.targets[0], [-0.77]);
    assert!(t.targets[4][0].is_nan());
    assert_eq!(t.label_problems.len(), 1);
    assert_eq!(t.label_problems[0].row, 4);
    assert!(
        t.label_problems[0].reason.contains("record 4 (N1)")
            && t.label_problems[0].reason.contains("field \"y\" is absent"),
        "{}",
        t.label_problems[0].reason
    );
    let structures = data.structures.as_ref().unwrap();
    assert!(structures[..5].iter().all(Result::is_ok));
    assert!(structures[5].is_err() && structures[6].is_err());
    // Methanol's molecule read (its coordinates did not fit): its SMILES is kept for
    // the conformer pipeline; neopentane's did not.
    assert_eq!((t.smiles[5].as_str(), t.smiles[6].as_str()), ("", "CO"));

    let titled = sdf_source(None).read(&["y".into()]).unwrap();
    assert_eq!(titled.table.ids[..2], ["ethanol", "glycine"]);

    // A field no record has is an error naming the fields there are.
    let e = sdf_source(None)
        .read(&["logS".into()])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("\"logS\"") && e.contains("id, y"), "{e}");
    let e = sdf_source(Some("name"))
        .read(&[])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("\"name\""), "{e}");
}

/// `--coords file`: MAT's distances are the file's (RDKit's pair distances to 1e-4
/// Angstrom), the 2D record is a 2D layout, and only 3D records feed Transformer-M's
/// 3D channel; the two bad records are skipped with their own kinds and reasons, naming
/// index and title. `--coords embed3d`: conformers for the same molecules, and for the
/// one whose file coordinates did not fit (its molecule is fine).
#[test]
fn sdf_featurized_with_its_own_coordinates_or_conformers() {
    let data = sdf_source(None).read(&["y".into()]).unwrap();
    let want = expected();
    let (features, report) =
        featurize_table(&mat(CoordinateMethod::File), &data, false, None).unwrap();
    assert_eq!((report.n_ok, report.n_skipped), (5, 2));
    assert_eq!(
        report.coordinate_sources.get(&CoordinateMethod::File),
        Some(&4)
    );
    assert_eq!(
        report.coordinate_sources.get(&CoordinateMethod::Layout2d),
        Some(&1)
    );
    for k in [0, 1, 2, 3, 4] {
        let got = sorted_distances(features[k].as_ref().unwrap());
        let rdkit = rdkit_distances(&want["sdf_records"][k]);
        assert_eq!(got.len(), rdkit.len(), "record {k}");
        for (g, r) in got.iter().zip(&rdkit) {
            assert!((g - r).abs() < 1e-4, "record {k}: {g} vs RDKit {r}");
        }
    }
    let skipped: Vec<(usize, &str)> = report
        .skipped
        .iter()
        .map(|s| (s.row, s.kind.as_str()))
        .collect();
    assert_eq!(skipped, [(5, "sanitize"), (6, "coordinates")]);
    assert!(report.skipped[0].reason.contains("record 5 (neopentane)"));
    assert!(report.skipped[1].reason.contains("record 6 (methanol_far)"));

    let tm = GraphormerFeaturizer {
        max_hops: 5,
        conformer: mat(CoordinateMethod::File).conformer,
    };
    let (graph, _) = featurize_table(&tm, &data, false, None).unwrap();
    assert!(graph[0].as_ref().unwrap().coordinates.is_some());
    assert!(
        graph[3].as_ref().unwrap().coordinates.is_none(),
        "2D record"
    );

    // Conformers: methanol, whose file coordinates were dropped, embeds as well.
    let (embedded, report) =
        featurize_table(&mat(CoordinateMethod::Embed3d), &data, false, None).unwrap();
    assert_eq!(
        report.coordinate_sources.get(&CoordinateMethod::Embed3d),
        Some(&6)
    );
    let skipped: Vec<usize> = report.skipped.iter().map(|s| s.row).collect();
    assert_eq!(skipped, [5]);
    assert!(report.skipped[0].reason.contains("record 5 (neopentane)"));
    // A conformer of the same molecule: the same atoms, other distances.
    let (a, b) = (features[2].as_ref().unwrap(), embedded[2].as_ref().unwrap());
    assert_eq!(a.node_features, b.node_features);
    assert_ne!(a.distances, b.distances);
}

/// XYZ files with a labels CSV: each row's SMILES gives the bonds, its file the
/// geometry (heavy atoms listed out of SMILES order, hydrogens included), matched atom
/// by atom (RDKit's pair distances to 1e-5 Angstrom); a missing file and another
/// molecule's geometry are errors naming the row and file. A list file selects files.
#[test]
fn xyz_files_with_a_labels_csv() {
    let dir = fixtures().join("xyz");
    let source = MoleculeSource {
        path: dir.clone(),
        format: MoleculeFormat::Xyz {
            labels: dir.join("labels.csv"),
            file_column: "file".into(),
        },
        smiles_column: "smiles".into(),
        delimiter: ',',
    };
    let data = source.read(&["y".into()]).unwrap();
    assert_eq!(data.table.len(), 5);
    assert_eq!(data.table.targets[0], [-1.55]);
    let (features, report) =
        featurize_table(&mat(CoordinateMethod::File), &data, false, None).unwrap();
    let want = expected();
    for k in 0..3 {
        let got = sorted_distances(features[k].as_ref().unwrap());
        let rdkit = rdkit_distances(&want["xyz_rows"][k]);
        for (g, r) in got.iter().zip(&rdkit) {
            assert!((g - r).abs() < 1e-5, "row {k}: {g} vs RDKit {r}");
        }
    }
    let reasons: Vec<(usize, &str)> = report
        .skipped
        .iter()
        .map(|s| (s.row, s.reason.as_str()))
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].0 == 3 && reasons[0].1.contains("no XYZ file \"missing.xyz\""),
        "{reasons:?}"
    );
    assert!(
        reasons[1].0 == 4 && reasons[1].1.contains("row 4 (acetone)"),
        "{reasons:?}"
    );

    // A list of files (relative to the list) in place of the folder.
    let tmp = std::env::temp_dir().join(format!("molattn-xyz-list-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let list = tmp.join("files.txt");
    std::fs::write(
        &list,
        format!("{}\n", dir.join("propylamine.xyz").display()),
    )
    .unwrap();
    let listed = MoleculeSource {
        path: list,
        ..source
    }
    .read(&["y".into()])
    .unwrap();
    let ok: Vec<bool> = listed
        .structures
        .unwrap()
        .iter()
        .map(Result::is_ok)
        .collect();
    assert_eq!(ok, [false, true, false, false, false]);
    std::fs::remove_dir_all(&tmp).ok();
}

/// A delimited file has no coordinates for `--coords file`.
#[test]
fn coords_file_needs_a_structure_file() {
    let csv = std::env::temp_dir().join(format!("molattn-nocoords-{}.csv", std::process::id()));
    std::fs::write(&csv, "smiles,y\nCCO,1\n").unwrap();
    let data = MoleculeSource {
        path: csv.clone(),
        format: MoleculeFormat::Delimited,
        smiles_column: "smiles".into(),
        delimiter: ',',
    }
    .read(&["y".into()])
    .unwrap();
    let e = featurize_table(&mat(CoordinateMethod::File), &data, false, None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("--coords file"), "{e}");
    std::fs::remove_file(&csv).ok();
}

/// Run files written before structure files (copies of real `run.json`s of issue #20,
/// without `format`) load as delimited-file runs, through the loaders prediction uses.
#[test]
fn table_runs_from_before_structure_files_load() {
    let dir = std::env::temp_dir().join(format!("molattn-old-table-runs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("run.json"), include_str!("mat_table_run_v1.json")).unwrap();
    let mat = train::RunSpec::load(&dir).unwrap();
    assert_eq!(mat.format, MoleculeFormat::Delimited);
    assert_eq!(mat.molecule_source().smiles_column, "smiles");
    std::fs::write(dir.join("run.json"), include_str!("tm_table_run_v1.json")).unwrap();
    let tm = train::transformer_m::TmRunSpec::load(&dir).unwrap();
    let train::transformer_m::TmData::Table(table) = &tm.data else {
        panic!("a table run");
    };
    assert_eq!(table.molecules.format, MoleculeFormat::Delimited);
    // That version still called the target columns `targets`.
    assert_eq!(tm.target_columns, ["y"]);
    assert!(table.molecules.path.ends_with("esol/esol.csv"));
    std::fs::remove_dir_all(&dir).ok();
}
