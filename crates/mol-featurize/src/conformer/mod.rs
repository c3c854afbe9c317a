//! Atom coordinates (Angstrom) for the distance matrices of MAT and Transformer-M.
//!
//! The reference recipe (MAT `data_utils.py`) is RDKit `AddHs`, `EmbedMolecule` (ETKDG),
//! `UFFOptimizeMolecule` and `RemoveHs`, falling back to a 2D layout. Here:
//! - 3D: the same recipe through `chematic`'s ports of RDKit: `add_hydrogens` (AddHs atom
//!   order), `rdkit_embed_molecule` (ETKDGv3, RDKit's random-number stream, seed
//!   [`ConformerOptions::seed`]) and `RdkitUffField::optimize` (RDKit UFF with analytic
//!   gradients and RDKit's BFGS: gradient scaling, FUNCTOL/MOVETOL, [`UFF_MAX_ITERATIONS`]).
//!   Each fragment is embedded on its own (as RDKit does); we then place the fragments
//!   [`FRAGMENT_GAP_ANGSTROM`] apart along x (the reference leaves a salt's ions on top of
//!   each other). Hydrogens are dropped afterwards: they never become graph nodes.
//! - Bounded work, no threads: the embedding has no cancellation, so its work is bounded
//!   up front, deterministically: at most [`ConformerOptions::max_embed_attempts`]
//!   attempts, and molecules above [`ConformerOptions::max_heavy_atoms_3d`] heavy atoms go
//!   straight to the next method. The fallback chain is 3D -> 2D layout (RDKit
//!   `Compute2DCoords` port, z = 0) -> topological distances (bonds on the shortest path x
//!   [`TOPOLOGICAL_BOND_ANGSTROM`]); which one served is returned and counted by
//!   [`crate::dataset::featurize_all`].
//! - Deterministic for a given seed.

use std::time::{Duration, Instant};

use chematic::smiles::rdkit_2d_coords;
use chematic_3d::rdkit_embed::{RdkitEmbedOptions, rdkit_embed_molecule};
use chematic_chem::add_hydrogens;
use chematic_ff::rdkit_uff::RdkitUffField;
use serde::{Deserialize, Serialize};

use crate::molecule::{Molecule, guard};

mod geometry;

use geometry::place_fragments_apart;
pub use geometry::{
    coordinates_fnv64, distance_matrix, min_nonbonded_distance, topological_distance_matrix,
};

/// Gap between the bounding spheres of two fragments placed side by side (Angstrom).
pub const FRAGMENT_GAP_ANGSTROM: f64 = 10.0;
/// Length assigned to one bond when only the graph is known (Angstrom): a typical
/// C-C / C-N / C-O bond.
pub const TOPOLOGICAL_BOND_ANGSTROM: f64 = 1.5;
/// Closest two non-bonded atoms of a 2D layout may come (Angstrom): shorter than any bond
/// between heavy atoms, so a layout below it (crowded metal complexes: Re2Cl8 gives
/// 0.93, Mn2(CO)10 0.00) is not a geometry and the topological distances serve instead.
pub const MIN_NONBONDED_ANGSTROM: f64 = 1.0;
/// BFGS iterations of the UFF minimisation (RDKit's `UFFOptimizeMolecule` uses 200).
pub const UFF_MAX_ITERATIONS: u32 = 200;
/// RDKit `UFFOptimizeMolecule`'s van der Waals threshold (`vdwThresh`).
pub const UFF_VDW_THRESHOLD: f64 = 10.0;
/// Default [`ConformerOptions::max_embed_attempts`]. RDKit's default (0) means 10 x the
/// atom count with hydrogens, which for a molecule that cannot be embedded means minutes;
/// on the shared datasets every molecule that embeds at all does so within the first
/// few attempts (docs/BENCHMARKS.md).
pub const DEFAULT_MAX_EMBED_ATTEMPTS: u32 = 200;
/// Default [`ConformerOptions::max_heavy_atoms_3d`]: measured embedding + UFF time grows
/// about cubically with size (docs/BENCHMARKS.md); above this a molecule gets the 2D
/// layout, which is fast at any size.
pub const DEFAULT_MAX_HEAVY_ATOMS_3D: usize = 250;

/// Where a molecule's coordinates come from, in fallback order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoordinateMethod {
    /// ETKDG 3D conformer (+ UFF), fragments embedded apart.
    Embed3d,
    /// 2D depiction layout (port of RDKit `Compute2DCoords`), z = 0.
    Layout2d,
    /// No coordinates: shortest-path bond counts x [`TOPOLOGICAL_BOND_ANGSTROM`].
    Topological,
    /// Coordinates that came with the data (a dataset's DFT geometry, a structure
    /// file's conformer; [`crate::dataset::featurize_all_with_coordinates`]). Never
    /// computed: requested from [`coordinates`] it gives none, as `Topological`.
    File,
}

/// The method that actually produced a molecule's distances.
pub type CoordinateSource = CoordinateMethod;

/// Heavy-atom coordinates (Angstrom, one `[x, y, z]` per atom of [`Molecule::atoms`])
/// and the method that produced them.
pub type Coordinates = (Vec<[f64; 3]>, CoordinateMethod);

/// How to obtain coordinates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConformerOptions {
    /// First method to try; later ones in the chain are fallbacks.
    pub method: CoordinateMethod,
    /// Seed of the embedding (RDKit `randomSeed`; taken modulo 2^31).
    pub seed: u64,
    /// Embedding attempts before falling back (RDKit `maxIterations`).
    #[serde(default = "default_max_embed_attempts")]
    pub max_embed_attempts: u32,
    /// Molecules with more heavy atoms than this are not embedded in 3D.
    #[serde(default = "default_max_heavy_atoms_3d")]
    pub max_heavy_atoms_3d: usize,
    /// Minimise each embedded conformer with UFF (reference recipe); on by default.
    #[serde(default = "default_true")]
    pub uff_optimize: bool,
}

fn default_true() -> bool {
    true
}

fn default_max_embed_attempts() -> u32 {
    DEFAULT_MAX_EMBED_ATTEMPTS
}

fn default_max_heavy_atoms_3d() -> usize {
    DEFAULT_MAX_HEAVY_ATOMS_3D
}

impl Default for ConformerOptions {
    fn default() -> Self {
        Self {
            method: CoordinateMethod::Embed3d,
            seed: 42,
            max_embed_attempts: DEFAULT_MAX_EMBED_ATTEMPTS,
            max_heavy_atoms_3d: DEFAULT_MAX_HEAVY_ATOMS_3D,
            uff_optimize: true,
        }
    }
}

impl ConformerOptions {
    /// The settings for molecules given as SMILES to a model trained with these: the
    /// same, except that [`CoordinateMethod::File`] (SMILES carry no coordinates)
    /// becomes the method closest to what the training molecules had, read from their
    /// featurization report's counts (`trained_sources`): [`CoordinateMethod::Layout2d`]
    /// when more of them had a file's flat depiction than a 3D geometry, else
    /// [`CoordinateMethod::Embed3d`] (ETKDG + UFF, as for QM9's DFT geometries).
    pub fn for_smiles(
        &self,
        trained_sources: &std::collections::BTreeMap<CoordinateMethod, usize>,
    ) -> ConformerOptions {
        let mut options = self.clone();
        if options.method == CoordinateMethod::File {
            let count = |m| trained_sources.get(&m).copied().unwrap_or(0);
            options.method = if count(CoordinateMethod::Layout2d) > count(CoordinateMethod::File) {
                CoordinateMethod::Layout2d
            } else {
                CoordinateMethod::Embed3d
            };
        }
        options
    }
}

/// Wall-clock time of the stages of one molecule's [`coordinates`] (for the stage
/// profile of `cargo xtask bench --featurize`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ConformerTimings {
    /// Adding hydrogens and ETKDG embedding (all attempts).
    pub embed: Duration,
    /// UFF set-up and minimisation.
    pub minimise: Duration,
    /// 2D layout (when the 3D embedding was not used).
    pub layout_2d: Duration,
}

/// Heavy-atom coordinates of `mol` (Angstrom, one `[x, y, z]` per atom in
/// [`Molecule::atoms`] order) and the method that produced them, or `None` when every
/// coordinate method failed (use [`distances`] to get the topological fallback).
pub fn coordinates(mol: &Molecule, options: &ConformerOptions) -> Option<Coordinates> {
    coordinates_timed(mol, options).0
}

/// [`coordinates`] and the time spent in each stage.
pub fn coordinates_timed(
    mol: &Molecule,
    options: &ConformerOptions,
) -> (Option<Coordinates>, ConformerTimings) {
    let mut timings = ConformerTimings::default();
    if options.method == CoordinateMethod::Embed3d
        && let Some(xyz) = guard(mol.smiles(), || Ok(embed_3d(mol, options, &mut timings)))
            .ok()
            .flatten()
    {
        return (Some((xyz, CoordinateMethod::Embed3d)), timings);
    }
    if options.method <= CoordinateMethod::Layout2d {
        let t0 = Instant::now();
        let xyz =
            layout_2d(mol).filter(|xyz| min_nonbonded_distance(mol, xyz) >= MIN_NONBONDED_ANGSTROM);
        timings.layout_2d = t0.elapsed();
        if let Some(xyz) = xyz {
            return (Some((xyz, CoordinateMethod::Layout2d)), timings);
        }
    }
    (None, timings)
}

/// Why `mol` got coordinates from `got` rather than the method `options` asked for, in
/// words; `None` when it got what was asked (or better). The 2D reason re-runs the
/// layout (milliseconds), so it also holds for coordinates read from the cache.
pub fn fallback_reason(
    mol: &Molecule,
    options: &ConformerOptions,
    got: CoordinateMethod,
) -> Option<String> {
    if got <= options.method || options.method == CoordinateMethod::File {
        return None;
    }
    let mut why = Vec::new();
    if options.method == CoordinateMethod::Embed3d {
        why.push(if mol.num_atoms() > options.max_heavy_atoms_3d {
            format!(
                "no 3D conformer: {} heavy atoms, more than the embedding limit of {}",
                mol.num_atoms(),
                options.max_heavy_atoms_3d
            )
        } else {
            format!(
                "no 3D conformer: ETKDG found none within {} attempts",
                options.max_embed_attempts
            )
        });
    }
    if got == CoordinateMethod::Topological {
        why.push(match layout_2d(mol) {
            None => "no 2D layout: the layout failed".to_string(),
            Some(xyz) => format!(
                "no 2D layout: it puts two non-bonded atoms {:.2} Angstrom apart (under \
                 {MIN_NONBONDED_ANGSTROM})",
                min_nonbonded_distance(mol, &xyz)
            ),
        });
    }
    Some(format!("{} (distances from {got:?})", why.join("; ")))
}

/// Pairwise distance matrix (Angstrom, row-major `[n * n]` over [`Molecule::atoms`])
/// from [`coordinates`], or topological distances when no coordinates could be made.
pub fn distances(mol: &Molecule, options: &ConformerOptions) -> (Vec<f64>, CoordinateMethod) {
    match coordinates(mol, options) {
        Some((xyz, method)) => (distance_matrix(&xyz), method),
        None => (
            topological_distance_matrix(mol),
            CoordinateMethod::Topological,
        ),
    }
}

/// RDKit's recipe on `mol`: AddHs, ETKDGv3 embedding (each fragment on its own), UFF,
/// RemoveHs; then fragments placed apart. `None` when the embedding fails, the molecule
/// is above [`ConformerOptions::max_heavy_atoms_3d`], or a coordinate is not finite.
fn embed_3d(
    mol: &Molecule,
    options: &ConformerOptions,
    timings: &mut ConformerTimings,
) -> Option<Vec<[f64; 3]>> {
    let n = mol.num_atoms();
    if n > options.max_heavy_atoms_3d {
        return None;
    }
    let t0 = Instant::now();
    let with_h = add_hydrogens(toolkit_molecule(mol));
    let embed_options = RdkitEmbedOptions {
        random_seed: (options.seed % (1 << 31)) as i32,
        max_iterations: options.max_embed_attempts,
        ..Default::default()
    };
    let embedded = rdkit_embed_molecule(&with_h, &embed_options);
    timings.embed = t0.elapsed();
    let mut xyz = embedded.ok()?;
    if options.uff_optimize {
        let t0 = Instant::now();
        let field = RdkitUffField::new(&with_h, &xyz, UFF_VDW_THRESHOLD, true);
        let mut flat = xyz.as_flattened().to_vec();
        // Status 1 (iteration limit) keeps the coordinates, as UFFOptimizeMolecule does.
        field.optimize(&mut flat, UFF_MAX_ITERATIONS);
        if flat.iter().all(|v| v.is_finite()) {
            xyz.as_flattened_mut().copy_from_slice(&flat);
        }
        timings.minimise = t0.elapsed();
    }
    // add_hydrogens keeps the heavy atoms first, in order: dropping the rest is RemoveHs.
    xyz.truncate(n);
    if xyz.len() != n || xyz.iter().flatten().any(|c| !c.is_finite()) {
        return None;
    }
    let frag = mol.fragments();
    let n_frag = frag.iter().copied().max().map_or(0, |m| m + 1);
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); n_frag];
    for (i, &f) in frag.iter().enumerate() {
        groups[f].push(i);
    }
    place_fragments_apart(&mut xyz, &groups);
    Some(xyz)
}

/// The toolkit molecule whose atoms are `mol`'s atoms, in order. The parsed molecule keeps
/// the SMILES's ring-closure and stereo-neighbour order, which RDKit's bond numbering and
/// chirality follow; it serves unless the input had hydrogen atoms written as nodes (then
/// the hydrogen-suppressed copy).
fn toolkit_molecule(mol: &Molecule) -> &chematic::core::Molecule {
    if mol.parsed.atom_count() == mol.num_atoms() {
        &mol.parsed
    } else {
        &mol.heavy
    }
}

/// 2D layout (port of RDKit `Compute2DCoords`; 1.5 Angstrom bonds), z = 0.
fn layout_2d(mol: &Molecule) -> Option<Vec<[f64; 3]>> {
    let xy = guard(mol.smiles(), || {
        Ok(rdkit_2d_coords(toolkit_molecule(mol)).ok())
    })
    .ok()
    .flatten()?;
    if xy.len() != mol.num_atoms() {
        return None;
    }
    Some(xy.into_iter().map(|[x, y]| [x, y, 0.0]).collect())
}

#[cfg(test)]
mod tests;
