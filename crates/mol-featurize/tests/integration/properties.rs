//! logP, TPSA and QED against RDKit 2026.09 on the 970 molecules of
//! fixtures/properties/rdkit_properties.csv (made by fixtures/gen/mol_properties.py; its
//! `sas` column is not compared: see `mol_featurize::properties`).

use mol_featurize::Molecule;
use mol_featurize::properties::MolProperty;

/// Tolerances: logP and TPSA are sums of per-atom contributions (RDKit's order kept, so
/// equal up to rounding); QED goes through more floating-point steps.
const TOLERANCE: [(MolProperty, f64); 3] = [
    (MolProperty::Logp, 1e-9),
    (MolProperty::Tpsa, 1e-9),
    (MolProperty::Qed, 1e-9),
];

#[test]
fn properties_equal_rdkit() {
    let path = crate::manifest_dir().join("../../fixtures/properties/rdkit_properties.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("smiles,logp,tpsa,qed,sas"));
    let mut worst = [0.0f64; 3];
    let mut failures = Vec::new();
    let mut n = 0;
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let mol = Molecule::from_smiles(cells[0]).unwrap_or_else(|e| panic!("{e}"));
        for (k, (property, tolerance)) in TOLERANCE.iter().enumerate() {
            let want: f64 = cells[1 + k].parse().unwrap();
            let got = property.compute(&mol).unwrap_or_else(|e| panic!("{e}"));
            let err = (got - want).abs();
            worst[k] = worst[k].max(err);
            if err > *tolerance {
                failures.push(format!("{} {property}: {got} vs RDKit {want}", cells[0]));
            }
        }
        n += 1;
    }
    assert_eq!(n, 970);
    assert!(
        failures.is_empty(),
        "{} of {} values differ (worst per property {worst:?}); first: {:?}",
        failures.len(),
        n * 3,
        &failures[..failures.len().min(10)]
    );
}
