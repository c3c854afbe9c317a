//! MAT features and adjacency against RDKit, for hand-checked molecules.
//!
//! Fixture: `fixtures/mat_features.json`, written by `fixtures/gen/mat_features.py`
//! (RDKit, reference featurizer semantics: out-of-list values -> last slot).

use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::{ConformerOptions, MatFeaturizer, Molecule};
use serde_json::Value;

fn fixture() -> Value {
    let path = crate::manifest_dir().join("../../fixtures/mat_features.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json")
}

fn matrix(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|row| {
            row.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
        })
        .collect()
}

fn featurizer(reference_compat: bool) -> MatFeaturizer {
    MatFeaturizer {
        reference_compat,
        conformer: ConformerOptions {
            method: CoordinateMethod::Topological,
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn features_and_adjacency_match_rdkit_exactly() {
    let fx = fixture();
    let molecules = fx["molecules"].as_array().unwrap();
    assert!(molecules.len() >= 10);
    let f = featurizer(true);
    for m in molecules {
        let smiles = m["smiles"].as_str().unwrap();
        let got = f.featurize_smiles(smiles).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            got.n_atoms,
            m["n_atoms"].as_u64().unwrap() as usize,
            "{smiles}"
        );
        assert_eq!(got.d_atom, 28);
        let want = matrix(&m["node_features"]);
        for (row, (g, w)) in got
            .node_features
            .chunks(28)
            .zip(want.chunks(28))
            .enumerate()
        {
            assert_eq!(g, w, "{smiles}: node {row} features");
        }
        assert_eq!(
            got.adjacency,
            matrix(&m["adjacency"]),
            "{smiles}: adjacency"
        );
        // Dummy node: distances 1e6 in its row and column.
        assert!(got.distances[..got.n_atoms].iter().all(|&d| d == 1e6));
    }
}

#[test]
fn hand_checked_pyridine_vector() {
    let f = featurizer(false);
    let got = f.featurize_smiles("c1ccncc1").unwrap();
    // Row 4 = the nitrogen: N, 2 heavy neighbours, 0 H, charge 0, ring, aromatic.
    let mut want = [0.0f32; 28];
    want[1 + 2] = 1.0; // N
    want[12 + 2] = 1.0; // 2 neighbours
    want[18] = 1.0; // 0 H
    want[23 + 1] = 1.0; // charge 0
    want[26] = 1.0; // ring
    want[27] = 1.0; // aromatic
    assert_eq!(&got.node_features[4 * 28..5 * 28], &want[..]);
    assert_eq!(
        &got.node_features[..28],
        &{
            let mut d = vec![0.0f32; 28];
            d[0] = 1.0;
            d
        }[..]
    );
}

#[test]
fn doubly_charged_anion_default_vs_reference() {
    // [S-2]: the reference puts charge -2 into the +1 slot; our default into -1.
    let mol = Molecule::from_smiles("[Na+].[S-2].[Na+]").unwrap();
    let sulfur = 1;
    let charge_slots =
        |compat: bool| featurizer(compat).atom_features(&mol, sulfur)[22..25].to_vec();
    assert_eq!(charge_slots(true), vec![0.0, 0.0, 1.0]);
    assert_eq!(charge_slots(false), vec![1.0, 0.0, 0.0]);
}
