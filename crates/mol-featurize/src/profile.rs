//! Stage profile of MAT featurization (`cargo xtask bench --featurize`): where the time
//! of one molecule goes (parse + sanitise, ETKDG embedding, UFF minimisation, 2D layout,
//! distances, features), summarised per stage and per heavy-atom bucket.

use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::Serialize;

use crate::conformer::{self, CoordinateMethod};
use crate::mat::MatFeaturizer;
use crate::molecule::Molecule;

/// Stage names, in pipeline order.
pub const STAGES: [&str; 6] = [
    "parse + sanitise",
    "ETKDG embed",
    "UFF minimise",
    "2D layout",
    "distances",
    "features",
];

/// Heavy-atom buckets of the profile.
pub const BUCKETS: [&str; 4] = ["<=20", "21-40", "41-80", ">80"];

/// The bucket of a molecule with `heavy_atoms` heavy atoms (index into [`BUCKETS`]).
pub fn bucket(heavy_atoms: usize) -> usize {
    match heavy_atoms {
        0..=20 => 0,
        21..=40 => 1,
        41..=80 => 2,
        _ => 3,
    }
}

/// Time of each stage of one molecule (seconds, [`STAGES`] order).
#[derive(Debug, Clone, Serialize)]
pub struct MoleculeProfile {
    /// Heavy atoms.
    pub heavy_atoms: usize,
    /// Which method produced the distances.
    pub method: CoordinateMethod,
    /// Seconds per stage.
    pub seconds: [f64; 6],
}

impl MoleculeProfile {
    /// All stages together (seconds).
    pub fn total(&self) -> f64 {
        self.seconds.iter().sum()
    }
}

/// Featurizes `smiles` once, timing each stage; `None` if it does not parse.
pub fn profile_molecule(smiles: &str, featurizer: &MatFeaturizer) -> Option<MoleculeProfile> {
    let secs = |d: Duration| d.as_secs_f64();
    let t0 = Instant::now();
    let mol = Molecule::from_smiles(smiles).ok()?;
    let parse = t0.elapsed();
    let (coords, timings) = conformer::coordinates_timed(&mol, &featurizer.conformer);
    let t0 = Instant::now();
    let (dist, method) = match coords {
        Some((xyz, method)) => (conformer::distance_matrix(&xyz), method),
        None => (
            conformer::topological_distance_matrix(&mol),
            CoordinateMethod::Topological,
        ),
    };
    let distances = t0.elapsed();
    let t0 = Instant::now();
    let features = featurizer
        .featurize_with_distances(&mol, &dist, method)
        .ok()?;
    let featurize = t0.elapsed();
    std::hint::black_box(features);
    Some(MoleculeProfile {
        heavy_atoms: mol.num_atoms(),
        method,
        seconds: [
            secs(parse),
            secs(timings.embed),
            secs(timings.minimise),
            secs(timings.layout_2d),
            secs(distances),
            secs(featurize),
        ],
    })
}

/// A profile run: every molecule's stages and the wall time of the whole run.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileRun {
    /// Threads used.
    pub threads: usize,
    /// Wall-clock seconds for all molecules.
    pub wall_seconds: f64,
    /// Molecules that parsed (and were featurized).
    pub molecules: Vec<MoleculeProfile>,
}

impl ProfileRun {
    /// Molecules per second over the run (all inputs, including those that did not parse).
    pub fn throughput(&self, inputs: usize) -> f64 {
        inputs as f64 / self.wall_seconds
    }
}

/// Profiles every SMILES on a pool of `threads` threads.
///
/// # Errors
/// The thread pool could not be built (message).
pub fn profile_run(
    smiles: &[String],
    featurizer: &MatFeaturizer,
    threads: usize,
) -> Result<ProfileRun, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let molecules: Vec<MoleculeProfile> = pool.install(|| {
        smiles
            .par_iter()
            .filter_map(|s| profile_molecule(s, featurizer))
            .collect()
    });
    Ok(ProfileRun {
        threads,
        wall_seconds: t0.elapsed().as_secs_f64(),
        molecules,
    })
}

/// Median, 95th percentile and maximum of one stage, and its share of all stages' time.
#[derive(Debug, Clone, Serialize)]
pub struct StageSummary {
    /// Stage name ([`STAGES`]) or `total`.
    pub stage: String,
    /// Median per molecule (milliseconds).
    pub median_ms: f64,
    /// 95th percentile per molecule (milliseconds).
    pub p95_ms: f64,
    /// Maximum (milliseconds).
    pub max_ms: f64,
    /// Fraction of the summed time of all stages.
    pub share: f64,
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

/// Per-stage summary of `molecules` (every stage, then `total`).
pub fn summarize(molecules: &[&MoleculeProfile]) -> Vec<StageSummary> {
    let grand: f64 = molecules.iter().map(|m| m.total()).sum();
    let summary = |name: &str, values: Vec<f64>| {
        let mut v = values;
        v.sort_by(f64::total_cmp);
        let sum: f64 = v.iter().sum();
        StageSummary {
            stage: name.to_string(),
            median_ms: 1e3 * percentile(&v, 0.5),
            p95_ms: 1e3 * percentile(&v, 0.95),
            max_ms: 1e3 * v.last().copied().unwrap_or(0.0),
            share: if grand > 0.0 { sum / grand } else { 0.0 },
        }
    };
    let mut out: Vec<StageSummary> = STAGES
        .iter()
        .enumerate()
        .map(|(k, name)| summary(name, molecules.iter().map(|m| m.seconds[k]).collect()))
        .collect();
    out.push(summary(
        "total",
        molecules.iter().map(|m| m.total()).collect(),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_heavy_atom_counts() {
        let got: Vec<usize> = [1, 20, 21, 40, 41, 80, 81, 500].map(bucket).to_vec();
        assert_eq!(got, vec![0, 0, 1, 1, 2, 2, 3, 3]);
    }

    #[test]
    fn summary_shares_add_up_and_percentiles_are_order_statistics() {
        let m = |a: f64, b: f64| MoleculeProfile {
            heavy_atoms: 3,
            method: CoordinateMethod::Embed3d,
            seconds: [a, b, 0.0, 0.0, 0.0, 0.0],
        };
        let ms = [m(0.001, 0.003), m(0.002, 0.006), m(0.003, 0.009)];
        let refs: Vec<&MoleculeProfile> = ms.iter().collect();
        let s = summarize(&refs);
        assert_eq!(s[0].stage, "parse + sanitise");
        assert!((s[0].median_ms - 2.0).abs() < 1e-9);
        assert!((s[1].max_ms - 9.0).abs() < 1e-9);
        assert!((s[0].share - 0.25).abs() < 1e-9 && (s[1].share - 0.75).abs() < 1e-9);
        assert!((s[6].median_ms - 8.0).abs() < 1e-9); // total of the middle molecule
    }

    #[test]
    fn profiling_ethanol_times_its_embedding() {
        let p = profile_molecule("CCO", &MatFeaturizer::default()).unwrap();
        assert_eq!((p.heavy_atoms, p.method), (3, CoordinateMethod::Embed3d));
        assert!(p.seconds[1] > 0.0 && p.seconds[3] == 0.0);
        assert!(profile_molecule("C1CC", &MatFeaturizer::default()).is_none());
    }
}
