//! Atom coordinates (Angstrom) for the distance matrices of MAT and Transformer-M.
//!
//! The reference recipe (MAT `data_utils.py`) is RDKit ETKDG + UFF on the molecule with
//! hydrogens, falling back to a 2D layout. Here:
//! - 3D: ETKDG distance geometry from the pure-Rust `sci-form` crate, run on **each
//!   fragment separately** (a salt's ions are embedded one by one; the reference stacks
//!   them at 0 Angstrom) and the fragments placed [`FRAGMENT_GAP_ANGSTROM`] apart along x.
//!   Hydrogens are added for the embedding and dropped afterwards: they never become
//!   graph nodes (the reference's 2D fallback leaks them; we do not).
//! - Every embedding has a wall-clock budget ([`ConformerOptions::timeout`]); past it the
//!   next method of the chain is used: 3D -> 2D layout (RDKit `Compute2DCoords` port,
//!   z = 0) -> topological distances (bonds on the shortest path x
//!   [`TOPOLOGICAL_BOND_ANGSTROM`]). Which one served is returned and counted by
//!   [`crate::dataset::featurize_all`].
//! - Deterministic for a given seed.

use std::sync::mpsc;
use std::time::Duration;

use chematic::core::{AtomIdx, MoleculeBuilder};
use chematic::smiles::{rdkit_2d_coords, write_with_atom_order};
use serde::{Deserialize, Serialize};

use crate::molecule::{Molecule, guard};

/// Gap between the bounding spheres of two fragments placed side by side (Angstrom).
pub const FRAGMENT_GAP_ANGSTROM: f64 = 10.0;
/// Length assigned to one bond when only the graph is known (Angstrom): a typical
/// C-C / C-N / C-O bond.
pub const TOPOLOGICAL_BOND_ANGSTROM: f64 = 1.5;
/// BFGS iterations of the UFF minimisation (RDKit's `UFFOptimizeMolecule` uses 200).
pub const UFF_MAX_ITERATIONS: usize = 200;

/// Where a molecule's coordinates come from, in fallback order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoordinateMethod {
    /// ETKDG 3D conformer (sci-form), fragments embedded apart.
    Embed3d,
    /// 2D depiction layout (port of RDKit `Compute2DCoords`), z = 0.
    Layout2d,
    /// No coordinates: shortest-path bond counts x [`TOPOLOGICAL_BOND_ANGSTROM`].
    Topological,
}

/// The method that actually produced a molecule's distances.
pub type CoordinateSource = CoordinateMethod;

/// How to obtain coordinates.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConformerOptions {
    /// First method to try; later ones in the chain are fallbacks.
    pub method: CoordinateMethod,
    /// Seed of the embedding (0 is replaced by 1: sci-form's generator degenerates at 0).
    pub seed: u64,
    /// Wall-clock budget of one molecule's 3D embedding.
    pub timeout: Duration,
    /// Minimise each embedded conformer with UFF (reference recipe); on by default.
    #[serde(default = "default_true")]
    pub uff_optimize: bool,
}

fn default_true() -> bool {
    true
}

impl Default for ConformerOptions {
    fn default() -> Self {
        Self {
            method: CoordinateMethod::Embed3d,
            seed: 42,
            timeout: Duration::from_secs(5),
            uff_optimize: true,
        }
    }
}

/// Heavy-atom coordinates of `mol` (Angstrom, one `[x, y, z]` per atom in
/// [`Molecule::atoms`] order) and the method that produced them, or `None` when every
/// coordinate method failed (use [`distances`] to get the topological fallback).
pub fn coordinates(
    mol: &Molecule,
    options: &ConformerOptions,
) -> Option<(Vec<[f64; 3]>, CoordinateMethod)> {
    if options.method == CoordinateMethod::Embed3d
        && let Some(xyz) = embed_3d_with_timeout(mol, options)
    {
        return Some((xyz, CoordinateMethod::Embed3d));
    }
    if options.method <= CoordinateMethod::Layout2d
        && let Some(xyz) = layout_2d(mol)
    {
        return Some((xyz, CoordinateMethod::Layout2d));
    }
    None
}

/// Pairwise distance matrix (Angstrom, row-major `[n * n]` over [`Molecule::atoms`])
/// from [`coordinates`], or topological distances when no coordinates could be made.
pub fn distances(mol: &Molecule, options: &ConformerOptions) -> (Vec<f64>, CoordinateMethod) {
    let n = mol.num_atoms();
    match coordinates(mol, options) {
        Some((xyz, method)) => {
            let mut d = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    let (a, b) = (xyz[i], xyz[j]);
                    d[i * n + j] =
                        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2))
                            .sqrt();
                }
            }
            (d, method)
        }
        None => {
            let d = mol
                .topological_distances()
                .into_iter()
                .map(|hops| match hops {
                    Some(h) => h as f64 * TOPOLOGICAL_BOND_ANGSTROM,
                    None => FRAGMENT_GAP_ANGSTROM,
                })
                .collect();
            (d, CoordinateMethod::Topological)
        }
    }
}

/// Runs [`embed_3d`] on a worker thread and gives up after `options.timeout`. sci-form
/// has no cancellation: a timed-out worker finishes its (bounded) attempts in the
/// background and its result is dropped.
fn embed_3d_with_timeout(mol: &Molecule, options: &ConformerOptions) -> Option<Vec<[f64; 3]>> {
    let (tx, rx) = mpsc::channel();
    let mol = mol.clone();
    let seed = options.seed.max(1);
    let optimize = options.uff_optimize;
    std::thread::Builder::new()
        .name("conformer".into())
        .spawn(move || {
            let out = guard(mol.smiles(), || Ok(embed_3d(&mol, seed, optimize)))
                .ok()
                .flatten();
            let _ = tx.send(out);
        })
        .ok()?;
    rx.recv_timeout(options.timeout).ok().flatten()
}

/// Minimises a conformer (flat `[x0, y0, z0, x1, ...]`, hydrogens included) with
/// sci-form's UFF energy and BFGS, as the reference's `UFFOptimizeMolecule`; keeps the
/// input if the minimisation does not give finite coordinates.
///
/// sci-form 0.15.2's analytic UFF gradients are wrong (angle-bend gradients have the
/// wrong sign and torsion gradients do not match their energy; measured against central
/// differences), so its BFGS climbs instead of descending. We keep its energy terms and
/// give BFGS the central-difference gradient of each term ([`UffNumericGradient`]).
/// Now that BFGS really minimises, 3D featurization costs about 3x more than before
/// (15 instead of 45 molecules/s on 2 cores, `cargo xtask bench`).
fn uff_optimize(graph: &sci_form::graph::Molecule, coords: &mut Vec<f64>) {
    let mut flat = coords.clone();
    let ff = sci_form::forcefield::builder::build_uff_force_field(graph);
    let gradient = UffNumericGradient::new(&ff, &flat);
    let engine = sci_form::optimization::bfgs::RustBfgsEngine {
        iter_limit_max: UFF_MAX_ITERATIONS,
        ..Default::default()
    };
    let (energy, _) = engine.execute_minimization(&mut flat, |c, g| gradient.evaluate(c, g));
    if energy.is_finite() && flat.iter().all(|v| v.is_finite()) {
        *coords = flat;
    }
}

/// Step of the central differences, Angstrom.
const GRADIENT_STEP: f64 = 1e-5;

/// A force field's energy with per-term central-difference gradients: each term is
/// differentiated only over the atoms it depends on (found once, by moving each atom).
/// (Keeping the analytic gradients of the terms where they are right - bonds,
/// Lennard-Jones - measured no faster: BFGS's iterations, not the gradients, dominate.)
struct UffNumericGradient<'a> {
    ff: &'a sci_form::forcefield::traits::MolecularForceField,
    /// Atoms each term depends on.
    atoms: Vec<Vec<usize>>,
}

impl<'a> UffNumericGradient<'a> {
    fn new(ff: &'a sci_form::forcefield::traits::MolecularForceField, coords: &[f64]) -> Self {
        let n = coords.len() / 3;
        let mut scratch = vec![0.0; coords.len()];
        let mut moved = coords.to_vec();
        let atoms = ff
            .iter_terms
            .iter()
            .map(|term| {
                let e0 = term.evaluate_energy_and_inject_gradient(coords, &mut scratch);
                (0..n)
                    .filter(|&a| {
                        for c in 0..3 {
                            moved[3 * a + c] += 0.01 * (c + 1) as f64;
                        }
                        let e = term.evaluate_energy_and_inject_gradient(&moved, &mut scratch);
                        moved[3 * a..3 * a + 3].copy_from_slice(&coords[3 * a..3 * a + 3]);
                        e != e0
                    })
                    .collect()
            })
            .collect();
        Self { ff, atoms }
    }

    /// Energy at `coords`; writes its gradient into `grad`.
    fn evaluate(&self, coords: &[f64], grad: &mut [f64]) -> f64 {
        grad.fill(0.0);
        let mut scratch = vec![0.0; coords.len()];
        let mut x = coords.to_vec();
        let mut energy = 0.0;
        for (term, atoms) in self.ff.iter_terms.iter().zip(&self.atoms) {
            energy += term.evaluate_energy_and_inject_gradient(coords, &mut scratch);
            for &a in atoms {
                for (i, g) in grad.iter_mut().enumerate().skip(3 * a).take(3) {
                    *g += central_difference(term.as_ref(), &mut x, i, &mut scratch);
                }
            }
        }
        energy
    }
}

/// d E_term / d x_i by central differences; restores `x[i]`.
fn central_difference(
    term: &dyn sci_form::forcefield::traits::ForceFieldContribution,
    x: &mut [f64],
    i: usize,
    scratch: &mut [f64],
) -> f64 {
    let x0 = x[i];
    x[i] = x0 + GRADIENT_STEP;
    let up = term.evaluate_energy_and_inject_gradient(x, scratch);
    x[i] = x0 - GRADIENT_STEP;
    let down = term.evaluate_energy_and_inject_gradient(x, scratch);
    x[i] = x0;
    (up - down) / (2.0 * GRADIENT_STEP)
}

/// Embeds each fragment with sci-form ETKDG (then UFF if `optimize`) and places the
/// fragments apart.
fn embed_3d(mol: &Molecule, seed: u64, optimize: bool) -> Option<Vec<[f64; 3]>> {
    let n = mol.num_atoms();
    let frag = mol.fragments();
    let n_frag = frag.iter().copied().max().map_or(0, |m| m + 1);
    let mut xyz = vec![[0.0; 3]; n];
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); n_frag];
    for (i, &f) in frag.iter().enumerate() {
        groups[f].push(i);
    }
    for members in &groups {
        if members.len() == 1 {
            continue; // a lone ion sits at its fragment's origin
        }
        // Sub-molecule of this fragment, written as SMILES with a known atom order.
        let mut local = vec![usize::MAX; n];
        let mut builder = MoleculeBuilder::with_capacity(members.len(), members.len() + 4);
        for (k, &i) in members.iter().enumerate() {
            local[i] = k;
            builder.add_atom(mol.heavy.atom(AtomIdx(i as u32)).clone());
        }
        for (_, e) in mol.heavy.bonds() {
            let (u, v) = (local[e.atom1.0 as usize], local[e.atom2.0 as usize]);
            if u != usize::MAX && v != usize::MAX {
                builder
                    .add_bond(AtomIdx(u as u32), AtomIdx(v as u32), e.order)
                    .ok()?;
            }
        }
        let (smiles, order) = write_with_atom_order(&builder.build());
        // One seed (sci-form's `embed` retries two more on failure, tripling the time
        // spent on molecules it cannot embed; the fallback chain handles those).
        let graph = sci_form::graph::Molecule::from_smiles(&smiles).ok()?;
        let matrix = sci_form::conformer::generate_3d_conformer(&graph, seed).ok()?;
        if matrix.nrows() < members.len() {
            return None;
        }
        let mut coords: Vec<f64> = (0..matrix.nrows())
            .flat_map(|k| (0..3).map(move |c| (k, c)))
            .map(|(k, c)| matrix[(k, c)] as f64)
            .collect();
        if optimize {
            uff_optimize(&graph, &mut coords);
        }
        // sci-form lists the written atoms first, in SMILES order, then added hydrogens.
        for (k, atom) in order.iter().enumerate() {
            let i = members[atom.0 as usize];
            let element = graph.graph[sci_form::graph::NodeIndex::new(k)].element;
            if element != mol.atoms()[i].atomic_number {
                return None;
            }
            xyz[i] = [coords[3 * k], coords[3 * k + 1], coords[3 * k + 2]];
        }
        if xyz.iter().flatten().any(|c: &f64| !c.is_finite()) {
            return None;
        }
    }
    place_fragments_apart(&mut xyz, &groups);
    Some(xyz)
}

/// Centres each fragment on its centroid and lines fragments up along x, separated by
/// [`FRAGMENT_GAP_ANGSTROM`] between their bounding spheres.
fn place_fragments_apart(xyz: &mut [[f64; 3]], groups: &[Vec<usize>]) {
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

/// 2D layout (port of RDKit `Compute2DCoords`; 1.5 Angstrom bonds), z = 0.
fn layout_2d(mol: &Molecule) -> Option<Vec<[f64; 3]>> {
    let xy = guard(mol.smiles(), || Ok(rdkit_2d_coords(&mol.parsed).ok()))
        .ok()
        .flatten()?;
    if xy.len() != mol.num_atoms() {
        return None;
    }
    Some(xy.into_iter().map(|[x, y]| [x, y, 0.0]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bond_lengths(smiles: &str) -> (Vec<f64>, CoordinateMethod) {
        let mol = Molecule::from_smiles(smiles).unwrap();
        let (xyz, method) = coordinates(&mol, &ConformerOptions::default()).unwrap();
        let len = mol
            .bonds()
            .iter()
            .map(|b| {
                let (p, q) = (xyz[b.begin], xyz[b.end]);
                ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
            })
            .collect();
        (len, method)
    }

    #[test]
    fn ethanol_bond_lengths_are_typical() {
        let (len, method) = bond_lengths("CCO");
        assert_eq!(method, CoordinateMethod::Embed3d);
        assert!((len[0] - 1.51).abs() < 0.1, "C-C {}", len[0]);
        assert!((len[1] - 1.42).abs() < 0.1, "C-O {}", len[1]);
    }

    #[test]
    fn benzene_and_nitrile_bond_lengths_are_typical() {
        let (len, _) = bond_lengths("c1ccccc1C#N");
        for l in &len[..6] {
            assert!((l - 1.39).abs() < 0.1, "aromatic C-C {l}");
        }
        assert!((len[7] - 1.16).abs() < 0.1, "C#N {}", len[7]);
    }

    /// UFF-minimised heavy-atom bond lengths against RDKit 2026.09 ETKDG (seed 42) +
    /// `UFFOptimizeMolecule` (the MAT recipe), recorded by hand. Before the per-term
    /// numeric gradients sci-form's BFGS left C-C in ethane at 1.503 and benzene's at
    /// 1.381 (0.016 and 0.018 short); every bond now agrees within 0.007.
    #[test]
    fn uff_minimised_bond_lengths_match_rdkit() {
        for (smiles, rdkit) in [
            ("CC", &[1.519][..]),
            ("CCO", &[1.524, 1.401]),
            ("CC(=O)C", &[1.498, 1.221, 1.499]),
            (
                "c1ccccc1C#N",
                // our bond order: ring bonds, ring closure, C-C, C#N
                &[1.399, 1.398, 1.398, 1.399, 1.402, 1.402, 1.439, 1.157],
            ),
        ] {
            let (len, method) = bond_lengths(smiles);
            assert_eq!(method, CoordinateMethod::Embed3d);
            for (got, want) in len.iter().zip(rdkit) {
                assert!(
                    (got - want).abs() < 0.008,
                    "{smiles}: {len:?} vs RDKit {rdkit:?}"
                );
            }
        }
    }

    #[test]
    fn salt_fragments_are_placed_apart_and_deterministic() {
        let mol = Molecule::from_smiles("CC(=O)[O-].[Na+]").unwrap();
        let opts = ConformerOptions::default();
        let (d, method) = distances(&mol, &opts);
        assert_eq!(method, CoordinateMethod::Embed3d);
        let n = mol.num_atoms();
        for i in 0..4 {
            assert!(
                d[i * n + 4] >= FRAGMENT_GAP_ANGSTROM,
                "ion too close: {}",
                d[i * n + 4]
            );
        }
        let (d2, _) = distances(&mol, &opts);
        assert_eq!(d, d2);
    }

    #[test]
    fn fallback_chain_is_reported() {
        let mol = Molecule::from_smiles("c1ccccc1O").unwrap();
        let opts = ConformerOptions {
            method: CoordinateMethod::Layout2d,
            ..Default::default()
        };
        let (d, method) = distances(&mol, &opts);
        assert_eq!(method, CoordinateMethod::Layout2d);
        assert!((d[1] - 1.5).abs() < 0.05, "2D bond {}", d[1]);
        let opts = ConformerOptions {
            method: CoordinateMethod::Topological,
            ..Default::default()
        };
        let (d, method) = distances(&mol, &opts);
        assert_eq!(method, CoordinateMethod::Topological);
        assert_eq!(d[6], 3.0); // atom 0 -> O (atom 6): two bonds, via atom 5
    }
}
