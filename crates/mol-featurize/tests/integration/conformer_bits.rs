//! The forks of chematic-3d and chematic-ff under `vendor/` (patched in by the root
//! Cargo.toml; their FORK.md say what changed) against the published crates and RDKit, on
//! 41 molecules of ESOL and BBBP (small ones, 15 with stereocentres, which take the 4D
//! distance-geometry path, the 8 largest without, the 2D fallback and a molecule with no
//! coordinates):
//! - the same method and atom count as the published crates
//!   (`fixtures/conformers/published_chematic_bits.tsv`, its header says how it was made);
//! - bond lengths as close to RDKit's conformers as the published crates' are
//!   (`fixtures/conformers/rdkit_bond_lengths.tsv`, from `fixtures/gen/conformer_rdkit_bonds.py`):
//!   the per-molecule mean absolute difference at most 0.02 A and its mean over the
//!   molecules at most 0.0015 A. The published crates give 0.0160 A at most (actinomycin D,
//!   90 heavy atoms; 3 of the 8 largest molecules exceed docs/PARITY.md's 0.005) and
//!   0.00128 A on average on these molecules; the forks 0.0162 A and 0.00127 A (2026-12-07). Issue #42's 0.001 A is the mean over the three datasets'
//!   3798 molecules, `cargo xtask parity --conformers` (docs/PARITY.md).
//!
//! The forks' BFGS sums in another order than RDKit's (chematic-ff's FORK.md), so the
//! coordinates are no longer the published crates' bit for bit; how many still are is
//! printed.

use mol_featurize::Molecule;
use mol_featurize::conformer::{
    ConformerOptions, CoordinateMethod, coordinates, coordinates_fnv64,
};

/// Per-molecule bond-length MAE against RDKit, Angstrom (the published crates: 0.0160 at most).
const MOLECULE_TOLERANCE: f64 = 0.02;
/// Mean of those over the molecules, Angstrom (the published crates: 0.00128).
const MEAN_TOLERANCE: f64 = 0.0015;

fn fixture_rows(name: &str) -> Vec<Vec<String>> {
    let path = crate::manifest_dir()
        .join("../../fixtures/conformers")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// Mean absolute difference between the bond lengths of `xyz` and RDKit's (`bonds`:
/// `i-j;...`, `lengths`: Angstrom).
fn bond_mae(xyz: &[[f64; 3]], bonds: &str, lengths: &str) -> f64 {
    let pairs: Vec<(usize, usize)> = bonds
        .split(';')
        .map(|b| {
            let (i, j) = b.split_once('-').expect("bond i-j");
            (i.parse().unwrap(), j.parse().unwrap())
        })
        .collect();
    let lengths: Vec<f64> = lengths.split(';').map(|d| d.parse().unwrap()).collect();
    assert_eq!(pairs.len(), lengths.len());
    let dist = |i: usize, j: usize| {
        let (p, q) = (xyz[i], xyz[j]);
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
    };
    pairs
        .iter()
        .zip(&lengths)
        .map(|(&(i, j), d)| (dist(i, j) - d).abs())
        .sum::<f64>()
        / pairs.len() as f64
}

#[test]
fn forks_keep_the_published_methods_and_rdkit_bond_lengths() {
    let published = fixture_rows("published_chematic_bits.tsv");
    let rdkit = fixture_rows("rdkit_bond_lengths.tsv");
    assert_eq!((published.len(), rdkit.len()), (41, 41));
    let options = ConformerOptions::default();
    let (mut failures, mut maes, mut identical) = (Vec::new(), Vec::new(), 0);
    for (p, r) in published.iter().zip(&rdkit) {
        let [smiles, method, atoms, hash] = &p[..] else {
            panic!("published row of 4 cells expected: {p:?}");
        };
        let [r_smiles, status, bonds, lengths] = &r[..] else {
            panic!("RDKit row of 4 cells expected: {r:?}");
        };
        assert_eq!(smiles, r_smiles, "the two fixtures list the same molecules");
        let mol = Molecule::from_smiles(smiles).unwrap_or_else(|e| panic!("{smiles}: {e}"));
        let got = coordinates(&mol, &options);
        let (got_method, got_atoms) = match &got {
            Some((xyz, m)) => (format!("{m:?}"), xyz.len().to_string()),
            None => ("none".to_string(), "0".to_string()),
        };
        if (&got_method, &got_atoms) != (method, atoms) {
            failures.push(format!(
                "{smiles}: {got_method} with {got_atoms} atoms, published crates {method} with {atoms}"
            ));
            continue;
        }
        let Some((xyz, m)) = got else { continue };
        if format!("{:016x}", coordinates_fnv64(&xyz)) == *hash {
            identical += 1;
        }
        if m == CoordinateMethod::Embed3d && status == "ok" {
            let mae = bond_mae(&xyz, bonds, lengths);
            if mae > MOLECULE_TOLERANCE {
                failures.push(format!(
                    "{smiles}: bond lengths {mae:.5} A from RDKit's on average"
                ));
            }
            maes.push(mae);
        }
    }
    let mean = maes.iter().sum::<f64>() / maes.len() as f64;
    println!(
        "{} molecules in 3D against RDKit: bond-length MAE mean {mean:.5} A; \
         {identical} of 41 bit for bit the published crates' coordinates",
        maes.len()
    );
    assert!(
        failures.is_empty(),
        "{} of 41 differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(maes.len(), 38, "3D molecules compared with RDKit");
    assert!(
        mean <= MEAN_TOLERANCE,
        "mean bond-length MAE {mean:.5} A > {MEAN_TOLERANCE}"
    );
}
