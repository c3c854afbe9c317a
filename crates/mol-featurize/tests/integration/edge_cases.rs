//! Chemistry edge cases from public bug reports (issue #14) against RDKit 2026.09 through
//! the MAT reference recipe: every atom field, bond, bond type and OGB row.
//!
//! Fixture: `fixtures/edge_cases.json`, written by `fixtures/gen/edge_cases.py`.

use std::collections::BTreeMap;

use mol_featurize::reference::read_edge_cases;

#[test]
fn every_edge_case_matches_rdkit() {
    let cases = read_edge_cases(&crate::manifest_dir().join("../../fixtures/edge_cases.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut per_category: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for case in &cases {
        let entry = per_category.entry(&case.category).or_default();
        entry.1 += 1;
        match case.difference() {
            None => entry.0 += 1,
            Some(d) => failures.push(format!("[{}] {}: {d}", case.category, case.smiles)),
        }
    }
    // Every family of the issue is present, with its size.
    let sizes: Vec<(&str, usize)> = per_category.iter().map(|(k, v)| (*k, v.1)).collect();
    assert_eq!(
        sizes,
        vec![
            ("dative", 8),
            ("explicit-h", 24),
            ("macrocycle", 216),
            ("macrocycle-control", 14)
        ]
    );
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
