//! `DGeomHelpers::EmbedMultipleConfs` for one conformer of an
//! explicit-hydrogen molecule (`AllChem.EmbedMolecule(AddHs(m), ...)`).

use chematic_core::Molecule;
use chematic_smiles::RdkitMolView;

mod quality_retry;
use quality_retry::refine_unfinished_quality_minimum;

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
use rayon::prelude::*;

use super::bounds::{
    BoundsInvariant, ForcedTorsion, collect_bonds_and_angles, init_bounds_mat, set_topol_bounds,
    set_topol_bounds_with_forced_torsions,
};
use super::constraints::{InternalCoordinateConstraintError, InternalCoordinateConstraints};
use super::dg::{BoundsMatrix, ChiralSet, triangle_smooth_bounds};
use super::embed::{EmbedArgs, EmbedError, EmbedParams, embed_initial_points, embed_points};
use super::etk::{
    CrystalFfDetails, get_experimental_torsions_with_forced, minimize_with_exp_torsions,
    minimize_with_exp_torsions_corrected,
};

/// The `EmbedParameters` fields this port honours. [`Default`] is what
/// `AllChem.EmbedMolecule(mol, randomSeed=42)` uses (ETKDGv3 settings).
#[derive(Clone, Debug)]
pub struct RdkitEmbedOptions {
    pub random_seed: i32,
    pub max_iterations: u32,
    pub use_exp_torsion_angle_prefs: bool,
    pub use_basic_knowledge: bool,
    pub et_version: u32,
    pub use_small_ring_torsions: bool,
    pub use_macrocycle_torsions: bool,
    pub use_macrocycle14config: bool,
    pub enforce_chirality: bool,
    pub force_trans_amides: bool,
    pub ignore_smoothing_failures: bool,
}

impl Default for RdkitEmbedOptions {
    fn default() -> Self {
        RdkitEmbedOptions {
            random_seed: 42,
            max_iterations: 0,
            use_exp_torsion_angle_prefs: true,
            use_basic_knowledge: true,
            et_version: 2,
            use_small_ring_torsions: false,
            use_macrocycle_torsions: true,
            use_macrocycle14config: true,
            enforce_chirality: true,
            force_trans_amides: true,
            ignore_smoothing_failures: false,
        }
    }
}

/// Why no coordinates were produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RdkitEmbedError {
    /// The molecule is outside what the port models.
    Unsupported(String),
    /// RDKit raises an exception for this molecule.
    RdkitException(String),
    /// RDKit returns -1 (no conformer): smoothing or embedding failed.
    Failed,
}

impl core::fmt::Display for RdkitEmbedError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Unsupported(w) => write!(f, "RDKit embedding: unsupported input: {w}"),
            Self::RdkitException(w) => write!(f, "RDKit embedding: RDKit raises: {w}"),
            Self::Failed => write!(f, "RDKit embedding failed (EmbedMolecule returns -1)"),
        }
    }
}

impl std::error::Error for RdkitEmbedError {}

/// Failure from the combined RDKit-compatible ETKDG + MMFF94 ensemble.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RdkitEmbedMmffError {
    Embed(RdkitEmbedError),
    ForceField(String),
}

impl core::fmt::Display for RdkitEmbedMmffError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Embed(error) => error.fmt(f),
            Self::ForceField(reason) => write!(f, "RDKit-compatible MMFF94: {reason}"),
        }
    }
}

impl std::error::Error for RdkitEmbedMmffError {}

impl From<RdkitEmbedError> for RdkitEmbedMmffError {
    fn from(error: RdkitEmbedError) -> Self {
        Self::Embed(error)
    }
}

/// One ETKDG conformer after RDKit-compatible MMFF94 optimization.
#[derive(Clone, Debug)]
pub struct RdkitMmffConformer {
    pub coords: Vec<[f64; 3]>,
    /// RDKit status: 0 converged, 1 iteration limit, negative on failure.
    pub status: i32,
    pub energy: f64,
}

/// One optimized conformer plus diagnostics already computed by BFGS.
#[derive(Clone, Debug)]
pub struct RdkitMmffConformerDiagnostics {
    pub conformer: RdkitMmffConformer,
    pub iterations: u32,
    pub final_gradient_test: Option<f64>,
}

impl From<BoundsInvariant> for RdkitEmbedError {
    fn from(e: BoundsInvariant) -> Self {
        RdkitEmbedError::RdkitException(e.0.to_string())
    }
}

impl From<EmbedError> for RdkitEmbedError {
    fn from(e: EmbedError) -> Self {
        RdkitEmbedError::RdkitException(format!("{e:?}"))
    }
}

impl From<InternalCoordinateConstraintError> for RdkitEmbedError {
    fn from(error: InternalCoordinateConstraintError) -> Self {
        RdkitEmbedError::Unsupported(format!("invalid internal-coordinate constraint: {error}"))
    }
}

/// `EmbeddingOps::findChiralSets` (no coordMap, no atropisomers).
fn find_chiral_sets(v: &RdkitMolView) -> (Vec<ChiralSet>, Vec<ChiralSet>) {
    let mut chiral = Vec::new();
    let mut tet = Vec::new();
    for a in 0..v.num_atoms() {
        let at = &v.atoms[a];
        if at.atomic_num == 1 {
            continue;
        }
        let tagged = at.chiral_tag == 1 || at.chiral_tag == 2;
        if !(tagged || ((at.atomic_num == 6 || at.atomic_num == 7) && v.degree(a) == 4)) {
            continue;
        }
        let mut nbrs: Vec<usize> = v.neighbors(a).collect();
        let mut vol_lower = 5.0;
        let vol_upper = 100.0;
        if nbrs.len() < 4 {
            vol_lower = 2.0;
            nbrs.push(a);
        }
        let n_small = v.atom_ring_sizes(a).iter().filter(|&&s| s < 5).count();
        let fused = n_small > 1;
        let idx = [a, nbrs[0], nbrs[1], nbrs[2], nbrs[3]];
        if at.chiral_tag == 2 {
            chiral.push(ChiralSet {
                idx,
                vol_lower,
                vol_upper,
                in_fused_small_rings: fused,
            });
        } else if at.chiral_tag == 1 {
            chiral.push(ChiralSet {
                idx,
                vol_lower: -vol_upper,
                vol_upper: -vol_lower,
                in_fused_small_rings: fused,
            });
        } else if v.num_atom_rings(a) < 2 || v.is_atom_in_ring_of_size(a, 3) {
            // only ring atoms in two or more rings, not 3-rings
        } else {
            tet.push(ChiralSet {
                idx,
                vol_lower: 0.0,
                vol_upper: 0.0,
                in_fused_small_rings: fused,
            });
        }
    }
    (chiral, tet)
}

type DoubleBonds = (Vec<(usize, usize, usize)>, Vec<([usize; 4], i32)>);

/// `EmbeddingOps::findDoubleBonds` (no coordMap).
fn find_double_bonds(v: &RdkitMolView) -> DoubleBonds {
    let mut ends = Vec::new();
    let mut stereo = Vec::new();
    for (bi, b) in v.bonds.iter().enumerate() {
        if b.bond_type != 2 {
            continue;
        }
        for atm in [b.begin, b.end] {
            if v.degree(atm) < 2 {
                continue;
            }
            let oatm = v.other_atom(bi, atm);
            for nbr in v.neighbors(atm) {
                if nbr == oatm {
                    continue;
                }
                let obnd = v.bond_between(atm, nbr).expect("bond");
                if v.bonds[obnd].bond_type != 1 && v.degree(atm) == 2 {
                    continue;
                }
                ends.push((nbr, atm, oatm));
            }
        }
        if b.stereo > 1 {
            // Z (2) is cis-like; E (3) trans-like.
            let sign = if b.stereo == 2 { -1 } else { 1 };
            stereo.push(([b.stereo_atoms[0], b.begin, b.end, b.stereo_atoms[1]], sign));
        }
    }
    (ends, stereo)
}

/// `EmbeddingOps::setupInitialBoundsMatrix` (no coordMap).
fn setup_initial_bounds(
    v: &RdkitMolView,
    labels: &[String],
    o: &RdkitEmbedOptions,
    constraints: Option<&InternalCoordinateConstraints>,
) -> Result<Option<(BoundsMatrix, Vec<ForcedTorsion>)>, RdkitEmbedError> {
    let n = v.num_atoms();
    let mut m = BoundsMatrix::new(n);
    init_bounds_mat(&mut m);
    let forced_torsions = set_topol_bounds_with_forced_torsions(
        v,
        labels,
        &mut m,
        true,
        o.use_macrocycle14config,
        o.force_trans_amides,
    )?;
    if let Some(constraints) = constraints {
        constraints.apply(&mut m)?;
    }
    if !triangle_smooth_bounds(&mut m, 0.0) {
        init_bounds_mat(&mut m);
        set_topol_bounds(
            v,
            labels,
            &mut m,
            false,
            o.use_macrocycle14config,
            o.force_trans_amides,
        )?;
        if let Some(constraints) = constraints {
            constraints.apply(&mut m)?;
        }
        if !triangle_smooth_bounds(&mut m, 0.0) {
            if o.ignore_smoothing_failures {
                init_bounds_mat(&mut m);
                set_topol_bounds(
                    v,
                    labels,
                    &mut m,
                    false,
                    o.use_macrocycle14config,
                    o.force_trans_amides,
                )?;
                if let Some(constraints) = constraints {
                    constraints.apply(&mut m)?;
                }
            } else {
                return Ok(None);
            }
        }
    }
    Ok(Some((m, forced_torsions)))
}

/// `AllChem.EmbedMolecule(mh, randomSeed=..., ...)` on an explicit-hydrogen
/// molecule from `add_hydrogens` (RDKit's `AddHs` atom order): all-atom
/// coordinates, or the reason there are none.
pub fn rdkit_embed_molecule(
    mh: &Molecule,
    o: &RdkitEmbedOptions,
) -> Result<Vec<[f64; 3]>, RdkitEmbedError> {
    validate_options(mh, o)?;
    embed_prepared_fragments(&prepare_fragments(mh, o)?, o, o.random_seed)
}

/// ETKDG embedding with user bond-length, angle and torsion constraints
/// applied to the distance bounds before triangle smoothing.
///
/// This is intentionally separate from [`crate::constraints`], which adjusts
/// coordinates after placement. The constrained bounds participate in
/// metrization and an inconsistent set is rejected before embedding.
pub fn rdkit_embed_molecule_with_constraints(
    mh: &Molecule,
    o: &RdkitEmbedOptions,
    constraints: &InternalCoordinateConstraints,
) -> Result<Vec<[f64; 3]>, RdkitEmbedError> {
    validate_options(mh, o)?;
    constraints.validate(mh)?;
    let prepared = prepare_fragments_with_constraints(mh, o, Some(constraints))?;
    embed_prepared_fragments(&prepared, o, o.random_seed)
}

/// ETKDGv3 embedding with the mathematically exact sixth-order experimental
/// torsion gradient.
///
/// Bounds, torsion preferences, seeded initial coordinates, and all other
/// stages match [`rdkit_embed_molecule`]. The only difference is the fix for
/// RDKit issue #8715: the sixth Fourier term uses coefficient/sign slot 6 and
/// the exact derivative of `cos(6 phi)`. Coordinates are therefore not
/// expected to be bit-identical to RDKit 2026.09.1 when a non-zero sixth-order
/// term participates.
pub fn etkdg_embed_molecule_corrected(
    mh: &Molecule,
    o: &RdkitEmbedOptions,
) -> Result<Vec<[f64; 3]>, RdkitEmbedError> {
    validate_options(mh, o)?;
    embed_prepared_fragments_with(&prepare_fragments(mh, o)?, o, o.random_seed, false, true)
}

/// RDKit 2026.09.1's `onlyInitialEmbedding=True` coordinates: the seeded
/// metric-matrix embedding before distance-geometry or ETKDG minimization.
pub fn rdkit_embed_initial_molecule(
    mh: &Molecule,
    o: &RdkitEmbedOptions,
) -> Result<Vec<[f64; 3]>, RdkitEmbedError> {
    validate_options(mh, o)?;
    let prepared = prepare_fragments(mh, o)?;
    embed_prepared_fragments_with(&prepared, o, o.random_seed, true, false)
}

/// `AllChem.EmbedMultipleConfs(mh, numConfs=..., params=...)` on an
/// explicit-hydrogen molecule from `add_hydrogens` (RDKit's `AddHs` atom
/// order).
///
/// Bounds, ring information, and experimental torsion preferences are built
/// once and reused across conformers. Failed conformer attempts are omitted,
/// matching RDKit's returned conformer-id list; input and setup failures remain
/// typed errors.
pub fn rdkit_embed_multiple_confs(
    mh: &Molecule,
    num_confs: usize,
    o: &RdkitEmbedOptions,
) -> Result<Vec<Vec<[f64; 3]>>, RdkitEmbedError> {
    embed_multiple_confs_with_mode(mh, num_confs, o, false)
}

/// Generate an ETKDG ensemble with the exact sixth-order experimental torsion
/// gradient used by [`etkdg_embed_molecule_corrected`]. Seeds, candidate order,
/// and failure handling match [`rdkit_embed_multiple_confs`]. This is an
/// opt-in exact-gradient mode; its coordinates need not match RDKit 2026.09.1
/// when a sixth-order torsion is present, and downstream MMFF energy can move
/// in either direction.
pub fn etkdg_embed_multiple_confs_corrected(
    mh: &Molecule,
    num_confs: usize,
    o: &RdkitEmbedOptions,
) -> Result<Vec<Vec<[f64; 3]>>, RdkitEmbedError> {
    embed_multiple_confs_with_mode(mh, num_confs, o, true)
}

fn embed_multiple_confs_with_mode(
    mh: &Molecule,
    num_confs: usize,
    o: &RdkitEmbedOptions,
    corrected_torsion_gradient: bool,
) -> Result<Vec<Vec<[f64; 3]>>, RdkitEmbedError> {
    validate_options(mh, o)?;
    if num_confs == 0 {
        return Ok(Vec::new());
    }
    let prepared = match prepare_fragments(mh, o) {
        Ok(prepared) => prepared,
        Err(RdkitEmbedError::Failed) => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    embed_prepared_multiple_confs(&prepared, num_confs, 0, o, corrected_torsion_gradient)
}

fn embed_prepared_multiple_confs(
    prepared: &[PreparedFragment],
    num_confs: usize,
    start_index: usize,
    o: &RdkitEmbedOptions,
    corrected_torsion_gradient: bool,
) -> Result<Vec<Vec<[f64; 3]>>, RdkitEmbedError> {
    let end_index = start_index.checked_add(num_confs).ok_or_else(|| {
        RdkitEmbedError::Unsupported("numConfs exceeds the reproducible seed range".into())
    })?;
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    let attempts: Vec<_> = (start_index..end_index)
        .into_par_iter()
        .map(|index| embed_conformer_attempt(prepared, o, index, corrected_torsion_gradient))
        .collect();
    #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
    let attempts: Vec<_> = (start_index..end_index)
        .map(|index| embed_conformer_attempt(prepared, o, index, corrected_torsion_gradient))
        .collect();

    let mut conformers = Vec::with_capacity(num_confs);
    for attempt in attempts {
        if let Some(coords) = attempt? {
            conformers.push(coords);
        }
    }
    Ok(conformers)
}

/// Generate an ETKDG ensemble and optimize every conformer with the
/// RDKit-compatible MMFF94 implementation.
///
/// The immutable MMFF parameterization is built once and conformers are
/// optimized in parallel on native targets. Candidate order and coordinates
/// remain deterministic.
pub fn rdkit_embed_multiple_confs_mmff(
    mh: &Molecule,
    num_confs: usize,
    o: &RdkitEmbedOptions,
    max_iters: u32,
) -> Result<Vec<RdkitMmffConformer>, RdkitEmbedMmffError> {
    let conformers = rdkit_embed_multiple_confs(mh, num_confs, o)?;
    let Some(first) = conformers.first() else {
        return Ok(Vec::new());
    };
    let field = chematic_ff::rdkit_mmff::RdkitMmffField::new(mh, first, 100.0, true)
        .map_err(|error| RdkitEmbedMmffError::ForceField(error.to_string()))?;

    Ok(optimize_mmff_conformers(&field, conformers, max_iters))
}

/// Optimize a corrected ETKDG ensemble with the same MMFF94 implementation and
/// iteration budget as [`rdkit_embed_multiple_confs_mmff`]. Only the ETKDG
/// sixth-order torsion gradient differs; MMFF parameters are unchanged.
pub fn etkdg_embed_multiple_confs_mmff_corrected(
    mh: &Molecule,
    num_confs: usize,
    o: &RdkitEmbedOptions,
    max_iters: u32,
) -> Result<Vec<RdkitMmffConformer>, RdkitEmbedMmffError> {
    let conformers = etkdg_embed_multiple_confs_corrected(mh, num_confs, o)?;
    let Some(first) = conformers.first() else {
        return Ok(Vec::new());
    };
    let field = chematic_ff::rdkit_mmff::RdkitMmffField::new(mh, first, 100.0, true)
        .map_err(|error| RdkitEmbedMmffError::ForceField(error.to_string()))?;
    Ok(optimize_mmff_conformers(&field, conformers, max_iters))
}

/// Quality-oriented ETKDG/MMFF94 profile: optimize both the RDKit-compatible
/// and exact sixth-order-gradient ensembles when the molecule has a fifth- or
/// sixth-order torsion coefficient. Otherwise both gradient modes are identical,
/// so two additional ensembles use the next `2 * num_confs` seeds instead of
/// repeating the same candidates. Keep the lowest finite-energy candidate across
/// the ensembles, then fill the remaining slots with converged candidates before
/// unfinished ones, ordered by energy. At most `num_confs` conformers are
/// returned. The lowest finite-energy unfinished candidate gets an additional
/// MMFF pass of at most twice `max_iters` steps after the first two ensembles,
/// and again after the third ensemble when gradients match. Only a converged,
/// non-higher-energy and stereo-safe retry is retained.
/// The profile spends roughly twice the embedding and MMFF work of the
/// compatibility API when gradient modes differ, or three times when they do
/// not, plus up to one or two optional retries respectively.
pub fn etkdg_embed_multiple_confs_mmff_best_gradient(
    mh: &Molecule,
    num_confs: usize,
    o: &RdkitEmbedOptions,
    max_iters: u32,
) -> Result<Vec<RdkitMmffConformer>, RdkitEmbedMmffError> {
    validate_options(mh, o)?;
    if num_confs == 0 {
        return Ok(Vec::new());
    }
    let prepared = match prepare_fragments(mh, o) {
        Ok(prepared) => prepared,
        Err(RdkitEmbedError::Failed) => return Ok(Vec::new()),
        Err(error) => return Err(error.into()),
    };
    let compatibility = embed_prepared_multiple_confs(&prepared, num_confs, 0, o, false)?;
    let compatibility = optimize_mmff_molecule(mh, compatibility, max_iters)?;
    let gradient_differs = corrected_torsion_gradient_can_differ(&prepared);
    if !gradient_differs
        && (o.random_seed == 0
            || num_confs
                .checked_mul(2)
                .and_then(|count| i32::try_from(count).ok())
                .and_then(|count| o.random_seed.checked_mul(count))
                .is_none())
    {
        return Ok(refine_unfinished_quality_minimum(
            mh,
            compatibility,
            max_iters,
        ));
    }
    let alternative = embed_prepared_multiple_confs(
        &prepared,
        num_confs,
        if gradient_differs { 0 } else { num_confs },
        o,
        gradient_differs,
    );
    let alternative = match alternative {
        Ok(conformers) => conformers,
        Err(_) if !gradient_differs => {
            return Ok(refine_unfinished_quality_minimum(
                mh,
                compatibility,
                max_iters,
            ));
        }
        Err(error) => return Err(error.into()),
    };
    let alternative = match optimize_mmff_molecule(mh, alternative, max_iters) {
        Ok(conformers) => conformers,
        Err(_) if !gradient_differs => {
            return Ok(refine_unfinished_quality_minimum(
                mh,
                compatibility,
                max_iters,
            ));
        }
        Err(error) => return Err(error),
    };
    let selected = refine_unfinished_quality_minimum(
        mh,
        select_quality_candidates(compatibility, alternative, num_confs),
        max_iters,
    );
    if gradient_differs
        || num_confs
            .checked_mul(3)
            .and_then(|count| i32::try_from(count).ok())
            .and_then(|count| o.random_seed.checked_mul(count))
            .is_none()
    {
        return Ok(selected);
    }
    let third = match embed_prepared_multiple_confs(&prepared, num_confs, num_confs * 2, o, false) {
        Ok(coords) => optimize_mmff_molecule(mh, coords, max_iters),
        Err(_) => return Ok(selected),
    };
    match third {
        Ok(third) => Ok(refine_unfinished_quality_minimum(
            mh,
            select_quality_candidates(selected, third, num_confs),
            max_iters,
        )),
        Err(_) => Ok(selected),
    }
}

fn select_quality_candidates(
    compatibility: Vec<RdkitMmffConformer>,
    alternative: Vec<RdkitMmffConformer>,
    limit: usize,
) -> Vec<RdkitMmffConformer> {
    if limit == 0 {
        return Vec::new();
    }
    let mut candidates = compatibility;
    candidates.extend(alternative);
    let Some(best_index) = candidates
        .iter()
        .enumerate()
        .filter(|(_, candidate)| candidate.energy.is_finite())
        .min_by(|(_, left), (_, right)| left.energy.total_cmp(&right.energy))
        .map(|(index, _)| index)
    else {
        candidates.truncate(limit);
        return candidates;
    };
    let best = candidates.remove(best_index);
    // Stable sorting keeps seed order for exact ties. A candidate stopped at
    // the iteration limit may be useful, but a converged geometry is a more
    // reliable member of the returned ensemble.
    candidates.sort_by(|left, right| {
        (!left.energy.is_finite())
            .cmp(&!right.energy.is_finite())
            .then_with(|| (left.status != 0).cmp(&(right.status != 0)))
            .then_with(|| left.energy.total_cmp(&right.energy))
    });
    let mut selected = Vec::with_capacity(limit.min(candidates.len() + 1));
    selected.push(best);
    selected.extend(candidates.into_iter().take(limit.saturating_sub(1)));
    selected
}

fn corrected_torsion_gradient_can_differ(prepared: &[PreparedFragment]) -> bool {
    prepared.iter().any(|fragment| {
        fragment.details.as_ref().is_some_and(|details| {
            details
                .exp_torsion_angles
                .iter()
                .any(|(_, constants)| constants[4] != 0.0 || constants[5] != 0.0)
        })
    })
}

fn optimize_mmff_molecule(
    mh: &Molecule,
    conformers: Vec<Vec<[f64; 3]>>,
    max_iters: u32,
) -> Result<Vec<RdkitMmffConformer>, RdkitEmbedMmffError> {
    let Some(first) = conformers.first() else {
        return Ok(Vec::new());
    };
    let field = chematic_ff::rdkit_mmff::RdkitMmffField::new(mh, first, 100.0, true)
        .map_err(|error| RdkitEmbedMmffError::ForceField(error.to_string()))?;
    Ok(optimize_mmff_conformers(&field, conformers, max_iters))
}

/// [`rdkit_embed_multiple_confs_mmff`] with per-conformer convergence
/// diagnostics. The coordinates, status, and energy are identical to the
/// compact API; no additional energy or gradient evaluation is performed.
pub fn rdkit_embed_multiple_confs_mmff_diagnostics(
    mh: &Molecule,
    num_confs: usize,
    o: &RdkitEmbedOptions,
    max_iters: u32,
) -> Result<Vec<RdkitMmffConformerDiagnostics>, RdkitEmbedMmffError> {
    let conformers = rdkit_embed_multiple_confs(mh, num_confs, o)?;
    let Some(first) = conformers.first() else {
        return Ok(Vec::new());
    };
    let field = chematic_ff::rdkit_mmff::RdkitMmffField::new(mh, first, 100.0, true)
        .map_err(|error| RdkitEmbedMmffError::ForceField(error.to_string()))?;

    Ok(optimize_mmff_conformers_detailed(
        &field, conformers, max_iters,
    ))
}

/// Generate and optimize an ETKDG ensemble, then spend an additional MMFF94
/// budget only on the lowest-energy candidates that did not converge.
///
/// The initial pass is identical to [`rdkit_embed_multiple_confs_mmff`]. At
/// most `retry_candidates` finite, non-converged conformers are ordered by
/// `(energy, candidate index)` and continued from their current coordinates
/// for `retry_max_iters` more iterations. A retry is retained only when its
/// energy is finite and no higher than the initial result, so refinement
/// cannot make the returned ensemble worse. Candidate order remains stable.
pub fn rdkit_embed_multiple_confs_mmff_adaptive(
    mh: &Molecule,
    num_confs: usize,
    o: &RdkitEmbedOptions,
    initial_max_iters: u32,
    retry_max_iters: u32,
    retry_candidates: usize,
) -> Result<Vec<RdkitMmffConformer>, RdkitEmbedMmffError> {
    rdkit_embed_multiple_confs_mmff_retry_policy(
        mh,
        num_confs,
        o,
        initial_max_iters,
        retry_max_iters,
        retry_candidates,
        false,
    )
}

/// Generate and optimize an ETKDG ensemble, retrying low-energy candidates
/// only when the initial pass produced no converged conformer.
///
/// This quality-oriented rescue avoids paying the additional MMFF94 budget
/// for molecules that already have at least one converged candidate. The
/// retry ordering and replacement rules are otherwise identical to
/// [`rdkit_embed_multiple_confs_mmff_adaptive`].
pub fn rdkit_embed_multiple_confs_mmff_rescue(
    mh: &Molecule,
    num_confs: usize,
    o: &RdkitEmbedOptions,
    initial_max_iters: u32,
    retry_max_iters: u32,
    retry_candidates: usize,
) -> Result<Vec<RdkitMmffConformer>, RdkitEmbedMmffError> {
    rdkit_embed_multiple_confs_mmff_retry_policy(
        mh,
        num_confs,
        o,
        initial_max_iters,
        retry_max_iters,
        retry_candidates,
        true,
    )
}

/// Generate and optimize an ETKDG ensemble, then retry only high-gradient
/// candidates when no initial candidate converged.
///
/// Unlike the energy-only rescue, this profile uses RDKit's normalized final
/// BFGS gradient test to avoid spending extra work on candidates that are
/// already close to a stationary point. Candidate ranking remains
/// `(energy, candidate index)`, and a retry is retained only if its energy is
/// finite and no higher than the initial result.
#[allow(clippy::too_many_arguments)]
pub fn rdkit_embed_multiple_confs_mmff_gradient_rescue(
    mh: &Molecule,
    num_confs: usize,
    o: &RdkitEmbedOptions,
    initial_max_iters: u32,
    retry_max_iters: u32,
    retry_candidates: usize,
    minimum_gradient_test: f64,
) -> Result<Vec<RdkitMmffConformer>, RdkitEmbedMmffError> {
    if !minimum_gradient_test.is_finite() || minimum_gradient_test < 0.0 {
        return Err(RdkitEmbedMmffError::ForceField(
            "minimum gradient test must be finite and non-negative".into(),
        ));
    }
    let conformers = rdkit_embed_multiple_confs(mh, num_confs, o)?;
    let Some(first) = conformers.first() else {
        return Ok(Vec::new());
    };
    let field = chematic_ff::rdkit_mmff::RdkitMmffField::new(mh, first, 100.0, true)
        .map_err(|error| RdkitEmbedMmffError::ForceField(error.to_string()))?;
    let mut detailed = optimize_mmff_conformers_detailed(&field, conformers, initial_max_iters);

    if retry_candidates == 0
        || retry_max_iters == 0
        || detailed.iter().any(|result| result.conformer.status == 0)
    {
        return Ok(detailed
            .into_iter()
            .map(|result| result.conformer)
            .collect());
    }

    let mut retry_indices: Vec<usize> = detailed
        .iter()
        .enumerate()
        .filter_map(|(index, result)| {
            let conformer = &result.conformer;
            (conformer.status != 0
                && conformer.energy.is_finite()
                && result
                    .final_gradient_test
                    .is_some_and(|test| test >= minimum_gradient_test))
            .then_some(index)
        })
        .collect();
    retry_indices.sort_by(|&left, &right| {
        detailed[left]
            .conformer
            .energy
            .total_cmp(&detailed[right].conformer.energy)
            .then_with(|| left.cmp(&right))
    });
    retry_indices.truncate(retry_candidates);

    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    let retries: Vec<_> = retry_indices
        .par_iter()
        .map(|&index| {
            (
                index,
                optimize_mmff_conformer(
                    &field,
                    detailed[index].conformer.coords.clone(),
                    retry_max_iters,
                ),
            )
        })
        .collect();
    #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
    let retries: Vec<_> = retry_indices
        .iter()
        .map(|&index| {
            (
                index,
                optimize_mmff_conformer(
                    &field,
                    detailed[index].conformer.coords.clone(),
                    retry_max_iters,
                ),
            )
        })
        .collect();

    for (index, retry) in retries {
        if retry.energy.is_finite() && retry.energy <= detailed[index].conformer.energy {
            detailed[index].conformer = retry;
        }
    }
    Ok(detailed
        .into_iter()
        .map(|result| result.conformer)
        .collect())
}

#[allow(clippy::too_many_arguments)]
fn rdkit_embed_multiple_confs_mmff_retry_policy(
    mh: &Molecule,
    num_confs: usize,
    o: &RdkitEmbedOptions,
    initial_max_iters: u32,
    retry_max_iters: u32,
    retry_candidates: usize,
    retry_only_when_none_converged: bool,
) -> Result<Vec<RdkitMmffConformer>, RdkitEmbedMmffError> {
    let conformers = rdkit_embed_multiple_confs(mh, num_confs, o)?;
    let Some(first) = conformers.first() else {
        return Ok(Vec::new());
    };
    let field = chematic_ff::rdkit_mmff::RdkitMmffField::new(mh, first, 100.0, true)
        .map_err(|error| RdkitEmbedMmffError::ForceField(error.to_string()))?;
    let mut optimized = optimize_mmff_conformers(&field, conformers, initial_max_iters);

    if retry_candidates == 0
        || retry_max_iters == 0
        || (retry_only_when_none_converged
            && optimized.iter().any(|conformer| conformer.status == 0))
    {
        return Ok(optimized);
    }
    let mut retry_indices: Vec<usize> = optimized
        .iter()
        .enumerate()
        .filter_map(|(index, conformer)| {
            (conformer.status != 0 && conformer.energy.is_finite()).then_some(index)
        })
        .collect();
    retry_indices.sort_by(|&left, &right| {
        optimized[left]
            .energy
            .total_cmp(&optimized[right].energy)
            .then_with(|| left.cmp(&right))
    });
    retry_indices.truncate(retry_candidates);

    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    let retries: Vec<_> = retry_indices
        .par_iter()
        .map(|&index| {
            (
                index,
                optimize_mmff_conformer(&field, optimized[index].coords.clone(), retry_max_iters),
            )
        })
        .collect();
    #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
    let retries: Vec<_> = retry_indices
        .iter()
        .map(|&index| {
            (
                index,
                optimize_mmff_conformer(&field, optimized[index].coords.clone(), retry_max_iters),
            )
        })
        .collect();

    for (index, retry) in retries {
        if retry.energy.is_finite() && retry.energy <= optimized[index].energy {
            optimized[index] = retry;
        }
    }
    Ok(optimized)
}

fn optimize_mmff_conformers(
    field: &chematic_ff::rdkit_mmff::RdkitMmffField,
    conformers: Vec<Vec<[f64; 3]>>,
    max_iters: u32,
) -> Vec<RdkitMmffConformer> {
    optimize_mmff_conformers_detailed(field, conformers, max_iters)
        .into_iter()
        .map(|result| result.conformer)
        .collect()
}

fn optimize_mmff_conformers_detailed(
    field: &chematic_ff::rdkit_mmff::RdkitMmffField,
    conformers: Vec<Vec<[f64; 3]>>,
    max_iters: u32,
) -> Vec<RdkitMmffConformerDiagnostics> {
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    let optimized = conformers
        .into_par_iter()
        .map(|coords| optimize_mmff_conformer_detailed(field, coords, max_iters))
        .collect();
    #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
    let optimized = conformers
        .into_iter()
        .map(|coords| optimize_mmff_conformer_detailed(field, coords, max_iters))
        .collect();
    optimized
}

fn optimize_mmff_conformer(
    field: &chematic_ff::rdkit_mmff::RdkitMmffField,
    coords: Vec<[f64; 3]>,
    max_iters: u32,
) -> RdkitMmffConformer {
    optimize_mmff_conformer_detailed(field, coords, max_iters).conformer
}

fn optimize_mmff_conformer_detailed(
    field: &chematic_ff::rdkit_mmff::RdkitMmffField,
    mut coords: Vec<[f64; 3]>,
    max_iters: u32,
) -> RdkitMmffConformerDiagnostics {
    let result = field.optimize_detailed(coords.as_flattened_mut(), max_iters);
    RdkitMmffConformerDiagnostics {
        conformer: RdkitMmffConformer {
            coords,
            status: result.status,
            energy: result.energy,
        },
        iterations: result.iterations,
        final_gradient_test: result.final_gradient_test,
    }
}

fn embed_conformer_attempt(
    prepared: &[PreparedFragment],
    o: &RdkitEmbedOptions,
    index: usize,
    corrected_torsion_gradient: bool,
) -> Result<Option<Vec<[f64; 3]>>, RdkitEmbedError> {
    let multiplier = i32::try_from(index + 1).map_err(|_| {
        RdkitEmbedError::Unsupported("numConfs exceeds the reproducible seed range".into())
    })?;
    let seed = o.random_seed.checked_mul(multiplier).ok_or_else(|| {
        RdkitEmbedError::Unsupported("conformer seed overflows a signed 32-bit integer".into())
    })?;
    match embed_prepared_fragments_with(prepared, o, seed, false, corrected_torsion_gradient) {
        Ok(coords) => Ok(Some(coords)),
        Err(RdkitEmbedError::Failed) => Ok(None),
        Err(error) => Err(error),
    }
}

fn validate_options(mh: &Molecule, o: &RdkitEmbedOptions) -> Result<(), RdkitEmbedError> {
    if o.random_seed < 0 {
        return Err(RdkitEmbedError::Unsupported(
            "randomSeed must be >= 0 (RDKit's -1 is not reproducible)".into(),
        ));
    }
    if mh.atom_count() == 0 {
        return Err(RdkitEmbedError::RdkitException(
            "molecule has no atoms".into(),
        ));
    }
    if o.use_exp_torsion_angle_prefs && !o.use_basic_knowledge {
        return Err(RdkitEmbedError::Unsupported(
            "plain ETDG (no basic knowledge) is not ported".into(),
        ));
    }
    Ok(())
}

struct PreparedFragment {
    source_atoms: Vec<usize>,
    view: RdkitMolView,
    bounds: BoundsMatrix,
    details: Option<CrystalFfDetails>,
    chiral: Vec<ChiralSet>,
    tetrahedral: Vec<ChiralSet>,
    double_bond_ends: Vec<(usize, usize, usize)>,
    stereo_double_bonds: Vec<([usize; 4], i32)>,
}

fn prepare_fragments(
    mh: &Molecule,
    o: &RdkitEmbedOptions,
) -> Result<Vec<PreparedFragment>, RdkitEmbedError> {
    prepare_fragments_with_constraints(mh, o, None)
}

fn prepare_fragments_with_constraints(
    mh: &Molecule,
    o: &RdkitEmbedOptions,
    constraints: Option<&InternalCoordinateConstraints>,
) -> Result<Vec<PreparedFragment>, RdkitEmbedError> {
    let view = chematic_smiles::rdkit_mol_view(mh)
        .map_err(|e| RdkitEmbedError::Unsupported(e.to_string()))?;
    let labels = chematic_ff::rdkit_uff::rdkit_uff_atom_labels(mh);
    let frags = view.fragments();
    if frags.len() == 1 {
        return Ok(vec![prepare_fragment(
            (0..view.num_atoms()).collect(),
            view,
            labels,
            o,
            constraints,
        )?]);
    }
    frags
        .into_iter()
        .map(|atoms| {
            let piece = view.fragment(&atoms).ok_or_else(|| {
                RdkitEmbedError::Unsupported(
                    "ring perception falls back to RDKit's approximate ring finder".into(),
                )
            })?;
            let piece_labels: Vec<String> = atoms.iter().map(|&a| labels[a].clone()).collect();
            let local_constraints = constraints
                .map(|constraints| constraints.remap_fragment(&atoms))
                .transpose()?;
            prepare_fragment(atoms, piece, piece_labels, o, local_constraints.as_ref())
        })
        .collect()
}

fn prepare_fragment(
    source_atoms: Vec<usize>,
    view: RdkitMolView,
    labels: Vec<String>,
    o: &RdkitEmbedOptions,
    constraints: Option<&InternalCoordinateConstraints>,
) -> Result<PreparedFragment, RdkitEmbedError> {
    let etk = o.use_exp_torsion_angle_prefs || o.use_basic_knowledge;
    let Some((bounds, forced_torsions)) = setup_initial_bounds(&view, &labels, o, constraints)?
    else {
        return Err(RdkitEmbedError::Failed);
    };
    let details = if etk {
        let mut d = get_experimental_torsions_with_forced(
            &view,
            o.use_exp_torsion_angle_prefs,
            o.use_small_ring_torsions,
            o.use_macrocycle_torsions,
            o.use_basic_knowledge,
            o.et_version,
            &forced_torsions,
        );
        d.bonds_angles = collect_bonds_and_angles(&view);
        Some(d)
    } else {
        None
    };
    let (chiral, tetrahedral) = find_chiral_sets(&view);
    let (double_bond_ends, stereo_double_bonds) = find_double_bonds(&view);
    Ok(PreparedFragment {
        source_atoms,
        view,
        bounds,
        details,
        chiral,
        tetrahedral,
        double_bond_ends,
        stereo_double_bonds,
    })
}

fn embed_prepared_fragments(
    prepared: &[PreparedFragment],
    o: &RdkitEmbedOptions,
    seed: i32,
) -> Result<Vec<[f64; 3]>, RdkitEmbedError> {
    embed_prepared_fragments_with(prepared, o, seed, false, false)
}

fn embed_prepared_fragments_with(
    prepared: &[PreparedFragment],
    o: &RdkitEmbedOptions,
    seed: i32,
    only_initial_embedding: bool,
    corrected_torsion_gradient: bool,
) -> Result<Vec<[f64; 3]>, RdkitEmbedError> {
    let atom_count = prepared
        .iter()
        .flat_map(|fragment| fragment.source_atoms.iter())
        .copied()
        .max()
        .map_or(0, |atom| atom + 1);
    let mut out = vec![[0.0; 3]; atom_count];
    for fragment in prepared {
        let xyz = embed_prepared_fragment(
            fragment,
            o,
            seed,
            only_initial_embedding,
            corrected_torsion_gradient,
        )?;
        for (local, &source) in fragment.source_atoms.iter().enumerate() {
            out[source] = xyz[local];
        }
    }
    Ok(out)
}

/// The embedding of one prepared fragment (`EmbedMultipleConfs`' per-fragment
/// loop body and `embedHelper_`).
fn embed_prepared_fragment(
    prepared: &PreparedFragment,
    o: &RdkitEmbedOptions,
    seed: i32,
    only_initial_embedding: bool,
    corrected_torsion_gradient: bool,
) -> Result<Vec<[f64; 3]>, RdkitEmbedError> {
    let etk = prepared.details.is_some();
    let force_tol = EmbedParams::default().optimizer_force_tol;
    let etk_stage = |p3: &mut [[f64; 3]]| -> Result<bool, EmbedError> {
        let d = prepared.details.as_ref().expect("ETKDG details");
        let mut flat: Vec<f64> = p3.iter().flatten().copied().collect();
        let minimize = if corrected_torsion_gradient {
            minimize_with_exp_torsions_corrected
        } else {
            minimize_with_exp_torsions
        };
        let planar = minimize(
            &mut flat,
            &prepared.bounds,
            d,
            force_tol,
            o.use_basic_knowledge,
        )
        .ok_or(EmbedError::BadDirection)?;
        for (i, p) in p3.iter_mut().enumerate() {
            p.copy_from_slice(&flat[3 * i..3 * i + 3]);
        }
        Ok(planar)
    };
    let args = EmbedArgs {
        mmat: &prepared.bounds,
        chiral_centers: &prepared.chiral,
        tetrahedral_centers: &prepared.tetrahedral,
        double_bond_ends: &prepared.double_bond_ends,
        stereo_double_bonds: &prepared.stereo_double_bonds,
        exp_torsions: if etk { Some(&etk_stage) } else { None },
    };
    let params = EmbedParams {
        max_iterations: o.max_iterations,
        random_seed: seed,
        enforce_chirality: o.enforce_chirality,
        ..EmbedParams::default()
    };
    let embedded = if only_initial_embedding {
        embed_initial_points(prepared.view.num_atoms(), &args, &params, seed)?
    } else {
        embed_points(prepared.view.num_atoms(), &args, &params, seed)?
    };
    match embedded {
        Some(pos) => Ok(pos.chunks(3).map(|c| [c[0], c[1], c[2]]).collect()),
        None => Err(RdkitEmbedError::Failed),
    }
}

/// `rdDistGeom.GetMoleculeBoundsMatrix(mh, set15bounds, scaleVDW=False,
/// doTriangleSmoothing, useMacrocycle14config)` (RDKit 2026.09.1) for an
/// explicit-hydrogen molecule from `add_hydrogens`: the N x N matrix with
/// upper bounds above the diagonal and lower bounds below it. As in RDKit,
/// a failed triangle smoothing still returns the (partially smoothed)
/// matrix.
pub fn rdkit_bounds_matrix(
    mh: &Molecule,
    set15bounds: bool,
    do_triangle_smoothing: bool,
    use_macrocycle14config: bool,
) -> Result<Vec<Vec<f64>>, RdkitEmbedError> {
    let view = chematic_smiles::rdkit_mol_view(mh)
        .map_err(|e| RdkitEmbedError::Unsupported(e.to_string()))?;
    let labels = chematic_ff::rdkit_uff::rdkit_uff_atom_labels(mh);
    let n = view.num_atoms();
    let mut m = BoundsMatrix::new(n);
    init_bounds_mat(&mut m);
    set_topol_bounds(
        &view,
        &labels,
        &mut m,
        set15bounds,
        use_macrocycle14config,
        true,
    )?;
    if do_triangle_smoothing {
        triangle_smooth_bounds(&mut m, 0.0);
    }
    let raw = m.raw();
    Ok((0..n).map(|i| raw[i * n..(i + 1) * n].to_vec()).collect())
}

/// RDKit-compatible distance bounds with custom internal coordinates applied
/// before optional triangle smoothing.
pub fn rdkit_bounds_matrix_with_constraints(
    mh: &Molecule,
    constraints: &InternalCoordinateConstraints,
    set15bounds: bool,
    do_triangle_smoothing: bool,
    use_macrocycle14config: bool,
) -> Result<Vec<Vec<f64>>, RdkitEmbedError> {
    constraints.validate(mh)?;
    let view = chematic_smiles::rdkit_mol_view(mh)
        .map_err(|e| RdkitEmbedError::Unsupported(e.to_string()))?;
    let labels = chematic_ff::rdkit_uff::rdkit_uff_atom_labels(mh);
    let n = view.num_atoms();
    let mut matrix = BoundsMatrix::new(n);
    init_bounds_mat(&mut matrix);
    set_topol_bounds(
        &view,
        &labels,
        &mut matrix,
        set15bounds,
        use_macrocycle14config,
        true,
    )?;
    constraints.apply(&mut matrix)?;
    if do_triangle_smoothing && !triangle_smooth_bounds(&mut matrix, 0.0) {
        return Err(InternalCoordinateConstraintError::TriangleSmoothingFailed.into());
    }
    let raw = matrix.raw();
    Ok((0..n)
        .map(|row| raw[row * n..(row + 1) * n].to_vec())
        .collect())
}

#[cfg(test)]
#[path = "molecule/corrected_ensemble_tests.rs"]
mod corrected_ensemble_tests;

#[cfg(test)]
mod input_diagnostic_boundary_tests {
    use super::*;

    #[test]
    fn embedding_rejects_empty_graphs_and_unsupported_modes_with_context() {
        let empty = chematic_core::MoleculeBuilder::new().build();
        let error = rdkit_embed_molecule(&empty, &RdkitEmbedOptions::default()).unwrap_err();
        assert_eq!(
            error,
            RdkitEmbedError::RdkitException("molecule has no atoms".into())
        );
        assert!(error.to_string().contains("molecule has no atoms"));
        let molecule = chematic_chem::add_hydrogens(&chematic_smiles::parse("CCO").unwrap());
        let options = RdkitEmbedOptions {
            use_basic_knowledge: false,
            ..RdkitEmbedOptions::default()
        };
        let error = rdkit_embed_molecule(&molecule, &options).unwrap_err();
        assert!(matches!(error, RdkitEmbedError::Unsupported(_)));
        assert!(
            error
                .to_string()
                .contains("plain ETDG (no basic knowledge)")
        );
        assert_eq!(molecule.atom_count(), 9);
    }

    #[test]
    fn embedding_error_variants_keep_actionable_context() {
        assert_eq!(
            RdkitEmbedError::Failed.to_string(),
            "RDKit embedding failed (EmbedMolecule returns -1)"
        );
        assert_eq!(
            RdkitEmbedError::from(BoundsInvariant("bad bounds")).to_string(),
            "RDKit embedding: RDKit raises: bad bounds"
        );
        assert!(
            RdkitEmbedError::from(EmbedError::BadDirection)
                .to_string()
                .contains("BadDirection")
        );
        assert!(
            RdkitEmbedError::from(InternalCoordinateConstraintError::TriangleSmoothingFailed)
                .to_string()
                .contains("invalid internal-coordinate constraint")
        );
        assert_eq!(
            RdkitEmbedMmffError::ForceField("missing parameters".into()).to_string(),
            "RDKit-compatible MMFF94: missing parameters"
        );
        assert_eq!(
            RdkitEmbedMmffError::from(RdkitEmbedError::Failed).to_string(),
            RdkitEmbedError::Failed.to_string()
        );
    }

    #[test]
    fn ensemble_boundaries_do_not_construct_unrequested_conformers() {
        let molecule = chematic_chem::add_hydrogens(&chematic_smiles::parse("CCO").unwrap());
        let options = RdkitEmbedOptions::default();
        assert!(
            rdkit_embed_multiple_confs(&molecule, 0, &options)
                .unwrap()
                .is_empty()
        );
        assert!(
            rdkit_embed_multiple_confs_mmff(&molecule, 0, &options, 50)
                .unwrap()
                .is_empty()
        );
        assert!(
            rdkit_embed_multiple_confs_mmff_diagnostics(&molecule, 0, &options, 50)
                .unwrap()
                .is_empty()
        );
        assert!(
            rdkit_embed_multiple_confs_mmff_adaptive(&molecule, 0, &options, 5, 5, 1)
                .unwrap()
                .is_empty()
        );
        assert!(
            rdkit_embed_multiple_confs_mmff_rescue(&molecule, 0, &options, 5, 5, 1)
                .unwrap()
                .is_empty()
        );
        let error = rdkit_embed_multiple_confs_mmff_gradient_rescue(
            &molecule,
            0,
            &options,
            5,
            5,
            1,
            f64::NAN,
        )
        .unwrap_err();
        assert!(error.to_string().contains("finite and non-negative"));
        let error =
            rdkit_embed_multiple_confs_mmff_gradient_rescue(&molecule, 0, &options, 5, 5, 1, -0.1);
        assert!(error.unwrap_err().to_string().contains("non-negative"));

        let negative_seed = RdkitEmbedOptions {
            random_seed: -1,
            ..options.clone()
        };
        assert!(
            rdkit_embed_molecule(&molecule, &negative_seed)
                .unwrap_err()
                .to_string()
                .contains("randomSeed")
        );
    }

    #[test]
    fn plain_distance_geometry_and_stereo_discovery_are_explicit() {
        let molecule =
            chematic_chem::add_hydrogens(&chematic_smiles::parse("C[C@H](F)Cl.C=C=C").unwrap());
        let view = chematic_smiles::rdkit_mol_view(&molecule).unwrap();
        let (chiral, tetrahedral) = find_chiral_sets(&view);
        assert!(!chiral.is_empty());
        assert!(tetrahedral.is_empty());
        let (ends, stereo) = find_double_bonds(&view);
        assert!(!ends.is_empty());
        assert!(stereo.is_empty());

        let plain = RdkitEmbedOptions {
            use_exp_torsion_angle_prefs: false,
            use_basic_knowledge: false,
            ..RdkitEmbedOptions::default()
        };
        let methane = chematic_chem::add_hydrogens(&chematic_smiles::parse("C").unwrap());
        assert_eq!(rdkit_embed_molecule(&methane, &plain).unwrap().len(), 5);
    }
}
