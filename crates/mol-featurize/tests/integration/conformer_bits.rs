//! The forks of chematic-3d and chematic-ff under `vendor/` (patched in by the root
//! Cargo.toml; their FORK.md say what changed) must give the published crates' conformers
//! bit for bit: 41 molecules of ESOL and BBBP (small ones, 15 with stereocentres, which
//! take the 4D distance-geometry path, the 8 largest without, the 2D fallback and a
//! molecule with no coordinates) against the FNV-1a hashes of their coordinates made with
//! the published crates (`fixtures/conformers/published_chematic_bits.tsv`, its header says
//! how). Any changed bit of any coordinate changes the hash.

use mol_featurize::Molecule;
use mol_featurize::conformer::{ConformerOptions, coordinates, coordinates_fnv64};

#[test]
fn forks_give_the_published_crates_conformers_bit_for_bit() {
    let path = crate::manifest_dir().join("../../fixtures/conformers/published_chematic_bits.tsv");
    let text = std::fs::read_to_string(path).unwrap();
    let options = ConformerOptions::default();
    let mut failures = Vec::new();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let cells: Vec<&str> = line.split('\t').collect();
        let [smiles, method, atoms, hash] = cells[..] else {
            panic!("fixture row of 4 cells expected: {line}");
        };
        let mol = Molecule::from_smiles(smiles).unwrap_or_else(|e| panic!("{smiles}: {e}"));
        let got = match coordinates(&mol, &options) {
            Some((xyz, m)) => format!("{m:?}\t{}\t{:016x}", xyz.len(), coordinates_fnv64(&xyz)),
            None => "none\t0\t0".to_string(),
        };
        let want = format!("{method}\t{atoms}\t{hash}");
        if got != want {
            failures.push(format!("{smiles}: got {got}, published crates {want}"));
        }
        n += 1;
    }
    assert_eq!(n, 41);
    assert!(
        failures.is_empty(),
        "{} of {n} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
