//! MAT's 11 bond features (`mol_featurize::mat_edges`) against RDKit, bond by bond.
//!
//! Fixture: `fixtures/mat_edge_features.json`, written by
//! `fixtures/gen/mat_edge_features.py` (RDKit's bond type, `GetIsConjugated`,
//! `IsInRing` and `GetStereo`) for 20 hand-picked molecules (E/Z, conjugation, biphenyl,
//! decalin, spiro, cubane, salts) and the first 150 of MAT's ESOL and BBBP files.

use mol_featurize::mat_edges::{MAT_D_EDGE, MAT_EDGE_FEATURES, bond_features};
use mol_featurize::{ConformerOptions, MatFeaturizer, Molecule, conformer::CoordinateMethod};
use serde_json::Value;

fn fixture() -> Value {
    let path = crate::manifest_dir().join("../../fixtures/mat_edge_features.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json")
}

#[test]
fn bond_features_match_rdkit_on_every_bond() {
    let fx = fixture();
    let columns: Vec<&str> = fx["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(columns, MAT_EDGE_FEATURES);
    let molecules = fx["molecules"].as_array().unwrap();
    assert_eq!(molecules.len(), 320);
    let (mut bonds_checked, mut set) = (0, [0usize; MAT_D_EDGE]);
    let mut wrong = Vec::new();
    for m in molecules {
        let smiles = m["smiles"].as_str().unwrap();
        let mol = Molecule::from_smiles(smiles).unwrap_or_else(|e| panic!("{smiles}: {e}"));
        assert_eq!(
            mol.num_atoms() as u64,
            m["num_atoms"].as_u64().unwrap(),
            "{smiles}"
        );
        let ours = bond_features(&mol).unwrap();
        let theirs = m["bonds"].as_array().unwrap();
        assert_eq!(ours.len(), theirs.len(), "{smiles}: bond count");
        for b in theirs {
            let v: Vec<f32> = b
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            let (u, w) = (v[0] as usize, v[1] as usize);
            let k = mol
                .bonds()
                .iter()
                .position(|x| (x.begin, x.end) == (u, w) || (x.begin, x.end) == (w, u))
                .unwrap_or_else(|| panic!("{smiles}: no bond {u}-{w}"));
            if ours[k][..] != v[2..] {
                wrong.push(format!(
                    "{smiles} bond {u}-{w}: ours {:?}, RDKit {:?}",
                    ours[k],
                    &v[2..]
                ));
            }
            for (c, &x) in v[2..].iter().enumerate() {
                set[c] += usize::from(x == 1.0);
            }
            bonds_checked += 1;
        }
    }
    assert!(
        wrong.is_empty(),
        "{} bonds differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(bonds_checked > 5000, "{bonds_checked}");
    // Every column is exercised except STEREOANY and CIS / TRANS, which RDKit's SMILES
    // parser does not assign (it writes E / Z).
    for (c, name) in MAT_EDGE_FEATURES.iter().enumerate() {
        let expect_some = !matches!(*name, "stereo_any" | "stereo_cis" | "stereo_trans");
        assert_eq!(set[c] > 0, expect_some, "{name}: {} bonds set", set[c]);
    }
}

#[test]
fn the_featurizer_adds_edges_only_when_asked() {
    let mol = Molecule::from_smiles("C/C=C/C").unwrap();
    let mut featurizer = MatFeaturizer {
        conformer: ConformerOptions {
            method: CoordinateMethod::Topological,
            ..Default::default()
        },
        ..Default::default()
    };
    assert!(featurizer.featurize(&mol).unwrap().edge_features.is_none());
    featurizer.edge_features = true;
    let f = featurizer.featurize(&mol).unwrap();
    let e = f.edge_features.unwrap();
    assert_eq!(e.len(), 5 * 5 * MAT_D_EDGE);
    // Nodes 2 and 3 (atoms 1 and 2): the E double bond.
    let at = (2 * 5 + 3) * MAT_D_EDGE;
    assert_eq!(
        e[at..at + MAT_D_EDGE],
        [0., 1., 0., 0., 0., 0., 0., 0., 1., 0., 0.]
    );
}
