//! Geometry on finished coordinates: distance matrices (from coordinates or from the
//! graph), the closest non-bonded contact, fragments placed apart, and a bit-exact
//! fingerprint of a conformer.

use std::hash::Hasher;

use fnv::FnvHasher;

use crate::molecule::Molecule;

use super::{FRAGMENT_GAP_ANGSTROM, TOPOLOGICAL_BOND_ANGSTROM};

/// Pairwise distance matrix (Angstrom, row-major `[n * n]`) of `xyz`.
pub fn distance_matrix(xyz: &[[f64; 3]]) -> Vec<f64> {
    let n = xyz.len();
    let mut d = vec![0.0; n * n];
    for i in 0..n {
        for j in (i + 1)..n {
            let (a, b) = (xyz[i], xyz[j]);
            let r = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
            d[i * n + j] = r;
            d[j * n + i] = r;
        }
    }
    d
}

/// Topological distances of `mol` (Angstrom, row-major `[n * n]`): bonds on the shortest
/// path x [`TOPOLOGICAL_BOND_ANGSTROM`], [`FRAGMENT_GAP_ANGSTROM`] between fragments.
pub fn topological_distance_matrix(mol: &Molecule) -> Vec<f64> {
    mol.topological_distances()
        .into_iter()
        .map(|hops| match hops {
            Some(h) => h as f64 * TOPOLOGICAL_BOND_ANGSTROM,
            None => FRAGMENT_GAP_ANGSTROM,
        })
        .collect()
}

/// Smallest distance (Angstrom) between two atoms of `xyz` not bonded to each other;
/// infinite with fewer than two such atoms.
pub fn min_nonbonded_distance(mol: &Molecule, xyz: &[[f64; 3]]) -> f64 {
    let mut best = f64::INFINITY;
    for i in 0..xyz.len() {
        for j in (i + 1)..xyz.len() {
            if mol.neighbours(i).contains(&j) {
                continue;
            }
            let d2: f64 = (0..3).map(|c| (xyz[i][c] - xyz[j][c]).powi(2)).sum();
            best = best.min(d2.sqrt());
        }
    }
    best
}

/// Centres each fragment on its centroid and lines fragments up along x, separated by
/// [`FRAGMENT_GAP_ANGSTROM`] between their bounding spheres.
pub(super) fn place_fragments_apart(xyz: &mut [[f64; 3]], groups: &[Vec<usize>]) {
    if groups.len() < 2 {
        return;
    }
    let mut offset = 0.0;
    let mut previous_radius: Option<f64> = None;
    for members in groups {
        let mut centroid = [0.0; 3];
        for &i in members {
            for c in 0..3 {
                centroid[c] += xyz[i][c] / members.len() as f64;
            }
        }
        let mut radius: f64 = 0.0;
        for &i in members {
            for c in 0..3 {
                xyz[i][c] -= centroid[c];
            }
            radius = radius.max(xyz[i].iter().map(|v| v * v).sum::<f64>().sqrt());
        }
        if let Some(prev) = previous_radius {
            offset += prev + FRAGMENT_GAP_ANGSTROM + radius;
        }
        for &i in members {
            xyz[i][0] += offset;
        }
        previous_radius = Some(radius);
    }
}

/// FNV-1a 64 of every coordinate's `f64` bits (little-endian bytes, atom by atom, x y z): a
/// fingerprint that tells whether two builds give the same conformer bit for bit (the
/// published chematic crates' conformers in `fixtures/conformers/published_chematic_bits.tsv`,
/// against which the forks under `vendor/` are compared). Equal coordinates give equal
/// hashes; `-0.0` and `0.0`, or two NaNs with other payloads, do not.
pub fn coordinates_fnv64(xyz: &[[f64; 3]]) -> u64 {
    let mut hasher = FnvHasher::default();
    for c in xyz.iter().flatten() {
        hasher.write(&c.to_bits().to_le_bytes());
    }
    hasher.finish()
}
