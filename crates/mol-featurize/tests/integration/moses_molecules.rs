//! Each molecule's pieces of the MOSES metrics against the `moses` package (molsets 0.3.1,
//! RDKit 2026.09): `fixtures/moses_metrics/molecules.csv.gz`
//! (`fixtures/gen/moses_metrics_reference.py`), every distinct SMILES of its generated,
//! test and test-scaffolds sets (3,000: MOSES molecules, corrupted SMILES and MAT's
//! charged, stereo and P / I / Si / B molecules). Validity, canonical SMILES, Morgan
//! bits, BRICS fragments, scaffold and filters must all agree.

use std::io::Read;

use mol_featurize::brics::brics_fragments;
use mol_featurize::moses_filters::moses_filters;
use mol_featurize::scaffold::moses_scaffold;
use mol_featurize::{Molecule, MorganFingerprint, canonical_smiles};

#[test]
fn every_piece_equals_the_moses_package() {
    let path = super::manifest_dir().join("../../fixtures/moses_metrics/molecules.csv.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let mut differ = Vec::new();
    let mut n = 0;
    // Columns: smiles, valid, canonical, morgan_on_bits, fragments (sorted, space
    // separated), scaffold, passes_filters; no field holds a comma.
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 7, "{line}");
        n += 1;
        let mut bad =
            |what: &str, detail: String| differ.push(format!("{what} {}: {detail}", f[0]));
        let mol = Molecule::from_smiles(f[0]);
        if mol.is_ok() != (f[1] == "1") {
            bad("valid", format!("{:?}", mol.as_ref().err()));
            continue;
        }
        let Ok(mol) = mol else { continue };
        let canonical = canonical_smiles(&mol).unwrap();
        if canonical != f[2] {
            bad("canonical", format!("{canonical} vs {}", f[2]));
        }
        let bits: Vec<usize> = f[3]
            .split_whitespace()
            .map(|b| b.parse().unwrap())
            .collect();
        match MorganFingerprint::rdkit(&mol, 2, 1024) {
            Ok(fp) if fp.on_bits() == bits => {}
            other => bad("morgan", format!("{:?}", other.map(|fp| fp.on_bits()))),
        }
        match brics_fragments(&mol) {
            Ok(mut fragments) => {
                fragments.sort();
                let fragments = fragments.join(" ");
                if fragments != f[4] {
                    bad("fragments", format!("{fragments} vs {}", f[4]));
                }
            }
            Err(e) => bad("fragments", e.to_string()),
        }
        match moses_scaffold(&mol, 2) {
            Ok(s) if s.as_deref().unwrap_or("") == f[5] => {}
            other => bad("scaffold", format!("{other:?} vs {}", f[5])),
        }
        match moses_filters(&mol) {
            Ok(v) if v.passes() == (f[6] == "1") => {}
            other => bad("filters", format!("{other:?}")),
        }
    }
    assert_eq!(n, 3000);
    assert!(
        differ.is_empty(),
        "{} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}
