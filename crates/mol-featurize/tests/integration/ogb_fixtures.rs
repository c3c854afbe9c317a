//! OGB atom and bond categories against `ogb.utils.smiles2graph` (ogb 1.3.6, RDKit
//! 2026.09) for hand-checked molecules: charges, stereo, radicals, salts, hypervalent
//! atoms, explicit hydrogens, out-of-vocabulary values.
//!
//! Fixture: `fixtures/ogb_features.json`, written by `fixtures/gen/ogb_features.py`.

use mol_featurize::Molecule;
use mol_featurize::graphormer::ogb_features;
use serde_json::Value;

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

#[test]
fn ogb_features_match_smiles2graph() {
    let path = crate::manifest_dir().join("../../fixtures/ogb_features.json");
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
    let molecules = fixture["molecules"].as_array().unwrap();
    assert!(molecules.len() >= 30, "{}", molecules.len());
    let mut failures = Vec::new();
    for m in molecules {
        let smiles = m["smiles"].as_str().unwrap();
        let mol = Molecule::from_smiles(smiles).unwrap_or_else(|e| panic!("{smiles}: {e}"));
        let (atoms, bonds) = ogb_features(&mol).unwrap_or_else(|e| panic!("{smiles}: {e}"));
        let want_atoms: Vec<Vec<i64>> = m["node_feat"]
            .as_array()
            .unwrap()
            .iter()
            .map(ints)
            .collect();
        let got_atoms: Vec<Vec<i64>> = atoms
            .iter()
            .map(|a| a.iter().map(|&v| i64::from(v)).collect())
            .collect();
        if got_atoms != want_atoms {
            failures.push(format!("{smiles}: atoms {got_atoms:?} != {want_atoms:?}"));
        }
        // OGB lists each bond twice (both directions); compare per bond of `mol`.
        let src = ints(&m["edge_index"][0]);
        let dst = ints(&m["edge_index"][1]);
        let feats: Vec<Vec<i64>> = m["edge_feat"]
            .as_array()
            .unwrap()
            .iter()
            .map(ints)
            .collect();
        assert_eq!(src.len(), 2 * mol.bonds().len(), "{smiles}: bond count");
        for (k, bond) in mol.bonds().iter().enumerate() {
            let e = (0..src.len())
                .find(|&e| (src[e], dst[e]) == (bond.begin as i64, bond.end as i64))
                .unwrap_or_else(|| panic!("{smiles}: bond {k} missing in OGB's edges"));
            let got: Vec<i64> = bonds[k].iter().map(|&v| i64::from(v)).collect();
            if got != feats[e] {
                failures.push(format!("{smiles}: bond {k} {got:?} != {:?}", feats[e]));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
