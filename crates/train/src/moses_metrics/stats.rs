//! Per-set statistics of the MOSES metrics (`compute_intermediate_statistics` in
//! `moses/metrics/metrics.py`): Morgan fingerprints, BRICS fragment and scaffold counts,
//! and the filters' pass count of a list of SMILES, computed once per reference set and
//! kept on disk.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use mol_featurize::brics::brics_fragments;
use mol_featurize::moses_filters::moses_filters;
use mol_featurize::scaffold::moses_scaffold;
use mol_featurize::{Molecule, MorganFingerprint};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::checkpoint::write_file_atomically;
use crate::error::TrainError;

/// Morgan radius and size of MOSES's fingerprints (`fingerprint(..., morgan__r=2,
/// morgan__n=1024)`).
pub const MORGAN_RADIUS: u32 = 2;
/// See [`MORGAN_RADIUS`].
pub const MORGAN_BITS: usize = 1024;
/// Scaffolds with fewer rings are not counted (`compute_scaffolds(min_rings=2)`).
pub const SCAFFOLD_MIN_RINGS: usize = 2;
/// Bumped when the statistics' definition or the code behind them changes (Morgan bits,
/// BRICS, scaffolds, filters, ChemNet and its input in mol-featurize and models): cached
/// files of another version are recomputed. The chematic release they run on is part of
/// the key too ([`cache_key`]).
pub(crate) const STATS_VERSION: u32 = 2;
/// The toolkit the per-molecule pieces come from (Cargo.lock pins it).
const TOOLKIT: &str = "chematic 1.2.1";

/// A molecule, or one of its pieces, that could not be computed: left out of the metric
/// it feeds and reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricFailure {
    /// The SMILES as given.
    pub smiles: String,
    /// What failed: `molecule`, `fingerprint`, `fragments`, `scaffold` or `filters`.
    pub part: String,
    /// Why, in words.
    pub reason: String,
}

/// The statistics of one set of molecules.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SetStats {
    /// Molecules given.
    pub n: usize,
    /// Morgan fingerprints (radius 2, 1024 bits) of the molecules that have one, in input
    /// order (SNN, IntDiv).
    pub fingerprints: Vec<MorganFingerprint>,
    /// BRICS fragment SMILES and how many times they occur (Frag).
    pub fragments: HashMap<String, u64>,
    /// Scaffolds of two rings or more and their counts (Scaf).
    pub scaffolds: HashMap<String, u64>,
    /// Molecules that pass MOSES's filters, when they were checked (Filters).
    pub passes_filters: Option<usize>,
    /// What could not be computed.
    pub failures: Vec<MetricFailure>,
}

struct OneMolecule {
    fingerprint: Option<MorganFingerprint>,
    fragments: Vec<String>,
    scaffold: Option<String>,
    passes: bool,
    failures: Vec<MetricFailure>,
}

fn one_molecule(smiles: &str, filters: bool) -> OneMolecule {
    let mut out = OneMolecule {
        fingerprint: None,
        fragments: Vec::new(),
        scaffold: None,
        passes: false,
        failures: Vec::new(),
    };
    let mut fail = |part: &str, reason: String| {
        out.failures.push(MetricFailure {
            smiles: smiles.to_string(),
            part: part.into(),
            reason,
        })
    };
    let mol = match Molecule::from_smiles(smiles) {
        Ok(m) => m,
        Err(e) => {
            fail("molecule", e.to_string());
            return out;
        }
    };
    let fingerprint = MorganFingerprint::rdkit(&mol, MORGAN_RADIUS, MORGAN_BITS)
        .map_err(|e| fail("fingerprint", e.to_string()))
        .ok();
    let fragments = brics_fragments(&mol)
        .map_err(|e| fail("fragments", e.to_string()))
        .unwrap_or_default();
    let scaffold = moses_scaffold(&mol, SCAFFOLD_MIN_RINGS)
        .map_err(|e| fail("scaffold", e.to_string()))
        .ok()
        .flatten();
    let passes = filters
        && moses_filters(&mol)
            .map_err(|e| fail("filters", e.to_string()))
            .is_ok_and(|v| v.passes());
    out.fingerprint = fingerprint;
    out.fragments = fragments;
    out.scaffold = scaffold;
    out.passes = passes;
    out
}

impl SetStats {
    /// The statistics of `smiles` (in parallel on rayon's threads); `filters` also checks
    /// MOSES's filters (needed for generated sets only). `progress` is called with the
    /// number of molecules done, every 1000 molecules and at the end.
    pub fn compute(smiles: &[String], filters: bool, progress: impl Fn(usize) + Sync) -> Self {
        let done = AtomicUsize::new(0);
        let per: Vec<OneMolecule> = smiles
            .par_iter()
            .map(|s| {
                let r = one_molecule(s, filters);
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                if d.is_multiple_of(1000) {
                    progress(d);
                }
                r
            })
            .collect();
        progress(smiles.len());
        let mut stats = SetStats {
            n: smiles.len(),
            passes_filters: filters.then_some(0),
            ..Default::default()
        };
        for m in per {
            stats.fingerprints.extend(m.fingerprint);
            for f in m.fragments {
                *stats.fragments.entry(f).or_insert(0) += 1;
            }
            if let Some(s) = m.scaffold {
                *stats.scaffolds.entry(s).or_insert(0) += 1;
            }
            if let Some(p) = stats.passes_filters.as_mut() {
                *p += usize::from(m.passes);
            }
            stats.failures.extend(m.failures);
        }
        stats
    }

    /// The statistics of a reference set, from `cache_dir` when a file made from the same
    /// SMILES (SHA-256 of the list) by the same statistics version is there, else computed
    /// ([`SetStats::compute`], without filters) and written there.
    ///
    /// # Errors
    /// A cache folder or file that cannot be written; an unreadable cache file is
    /// recomputed, not an error.
    pub fn cached(
        smiles: &[String],
        cache_dir: &Path,
        progress: impl Fn(usize) + Sync,
    ) -> Result<Self, TrainError> {
        let key = cache_key(smiles);
        let json = cache_dir.join(format!("stats-{key}.json"));
        let fps = cache_dir.join(format!("stats-{key}.fps"));
        if let Some(stats) = Self::load(&json, &fps) {
            progress(stats.n);
            return Ok(stats);
        }
        let stats = Self::compute(smiles, false, progress);
        std::fs::create_dir_all(cache_dir).map_err(|e| TrainError::io(cache_dir, e))?;
        stats.save(&json, &fps)?;
        Ok(stats)
    }

    fn save(&self, json: &Path, fps: &Path) -> Result<(), TrainError> {
        let mut words = Vec::with_capacity(self.fingerprints.len() * MORGAN_BITS / 8);
        for f in &self.fingerprints {
            for w in f.words() {
                words.extend_from_slice(&w.to_le_bytes());
            }
        }
        write_file_atomically(fps, &words)?;
        let file = StatsFile {
            version: STATS_VERSION,
            n: self.n,
            n_fingerprints: self.fingerprints.len(),
            fragments: self.fragments.clone(),
            scaffolds: self.scaffolds.clone(),
            failures: self.failures.clone(),
        };
        let text = serde_json::to_vec(&file).map_err(|e| TrainError::Invalid(e.to_string()))?;
        write_file_atomically(json, &text)
    }

    fn load(json: &Path, fps: &Path) -> Option<Self> {
        let file: StatsFile = serde_json::from_slice(&std::fs::read(json).ok()?).ok()?;
        if file.version != STATS_VERSION {
            return None;
        }
        let mut bytes = Vec::new();
        std::fs::File::open(fps)
            .ok()?
            .read_to_end(&mut bytes)
            .ok()?;
        let per = MORGAN_BITS / 8;
        if bytes.len() != file.n_fingerprints * per {
            return None;
        }
        let fingerprints = bytes
            .chunks_exact(per)
            .map(|c| {
                MorganFingerprint::from_words(
                    c.chunks_exact(8)
                        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
                        .collect(),
                )
            })
            .collect();
        Some(SetStats {
            n: file.n,
            fingerprints,
            fragments: file.fragments,
            scaffolds: file.scaffolds,
            passes_filters: None,
            failures: file.failures,
        })
    }
}

/// The cache key of a SMILES list: the first 12 bytes, in hex, of the SHA-256 of the list,
/// the statistics version, the featurizer version and the toolkit's.
pub(crate) fn cache_key(smiles: &[String]) -> String {
    let mut hash = Sha256::new();
    hash.update(
        format!(
            "moses-stats v{STATS_VERSION} mol-featurize {} {TOOLKIT}\n",
            mol_featurize::VERSION
        )
        .as_bytes(),
    );
    for s in smiles {
        hash.update(s.as_bytes());
        hash.update(b"\n");
    }
    hash.finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[derive(Serialize, Deserialize)]
struct StatsFile {
    version: u32,
    n: usize,
    n_fingerprints: usize,
    fragments: HashMap<String, u64>,
    scaffolds: HashMap<String, u64>,
    failures: Vec<MetricFailure>,
}
