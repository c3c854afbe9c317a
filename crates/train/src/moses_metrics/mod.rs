//! The MOSES benchmark's metrics of a set of generated SMILES (Polykovskiy et al. 2020;
//! `get_all_metrics` in `moses/metrics/metrics.py` of molsets 0.3.1), computed as that
//! package computes them:
//! - `valid`: the share of samples that parse and sanitise (an empty sample is invalid);
//! - `unique@k`: the share of distinct canonical SMILES among the first `k` valid samples
//!   (all of them when there are fewer);
//! - `FCD/<ref>`: the Fréchet ChemNet Distance of the valid samples to the reference
//!   ([`fcd`]; only when a ChemNet is given);
//! - `SNN/<ref>`: the mean over valid samples of the largest Tanimoto similarity (Morgan
//!   radius 2, 1024 bits) to a reference molecule;
//! - `Frag/<ref>`, `Scaf/<ref>`: cosine similarity of the BRICS-fragment and the
//!   scaffold (two rings or more) count tables of the valid samples and the reference;
//! - `IntDiv`, `IntDiv2`: 1 minus the mean over valid samples of their mean Tanimoto
//!   similarity to all valid samples (resp. of its root mean square: `mean_x sqrt(mean_y
//!   T(x, y)^2)`), self-pairs and duplicates included;
//! - `Filters`: the share of valid samples that pass MCF, PAINS and MOSES's atom, charge
//!   and ring rules;
//! - `Novelty`: the share of distinct valid canonical SMILES that are not a training SMILES
//!   as written in the training file.
//!
//! The valid samples enter every metric but `valid` through their canonical SMILES
//! (`remove_invalid(gen, canonize=True)` in MOSES), duplicates kept. The property distances (logP,
//! SA, QED, weight) are not computed here.

pub mod fcd;
mod sets;
mod similarity;
mod stats;

use std::collections::HashSet;

use burn::prelude::Device;
use models::chemnet::ChemNet;
use mol_featurize::{Molecule, canonical_smiles};
use rayon::prelude::*;
use serde::ser::{Serialize, SerializeMap, Serializer};

pub use fcd::{ChemNetStats, frechet_distance};
pub use sets::{BenchmarkSets, SetFiles, read_smiles};
pub use similarity::{Aggregate, average_agg_tanimoto, cos_similarity};
pub use stats::{MORGAN_BITS, MORGAN_RADIUS, MetricFailure, SCAFFOLD_MIN_RINGS, SetStats};

/// MOSES's default `k` of `unique@k`.
pub const DEFAULT_UNIQUE_K: [usize; 2] = [1000, 10000];

/// A reference set the samples are compared with: its MOSES name (`Test`, `TestSF`) and
/// statistics.
#[derive(Debug, Clone, Copy)]
pub struct Reference<'a> {
    /// Name in the metric keys (`SNN/<name>`).
    pub name: &'a str,
    /// Its statistics ([`SetStats::cached`]).
    pub stats: &'a SetStats,
    /// Its ChemNet statistics, for `FCD/<name>` ([`ChemNetStats::cached`]).
    pub chemnet: Option<&'a ChemNetStats>,
}

/// The metrics of one generated set, in MOSES's key order.
#[derive(Debug, Clone, PartialEq)]
pub struct MosesMetrics {
    /// Samples given.
    pub n: usize,
    /// Valid samples.
    pub n_valid: usize,
    /// `(key, value)` in `get_all_metrics`' order (`valid`, `unique@k`, `SNN/Test`,
    /// `Frag/Test`, `Scaf/Test`, the same for each further reference, `IntDiv`,
    /// `IntDiv2`, `Filters`, `Novelty`).
    pub values: Vec<(String, f64)>,
    /// Caveats (a `unique@k` over fewer than `k` valid samples).
    pub notes: Vec<String>,
    /// Valid samples, or pieces of them, that could not be computed and are left out of
    /// the metric they feed.
    pub failures: Vec<MetricFailure>,
}

impl MosesMetrics {
    /// The value of `key` (`"valid"`, `"unique@1000"`, `"SNN/Test"`, ...).
    pub fn get(&self, key: &str) -> Option<f64> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// A two-column text table of the values.
    pub fn table(&self) -> String {
        let mut s = format!(
            "MOSES metrics of {} samples ({} valid)\n",
            self.n, self.n_valid
        );
        for (k, v) in &self.values {
            s.push_str(&format!("  {k:<12} {v:.4}\n"));
        }
        for note in &self.notes {
            s.push_str(&format!("  note: {note}\n"));
        }
        if !self.failures.is_empty() {
            s.push_str(&format!(
                "  {} valid samples (or pieces) left out of a metric; first: {} ({}: {})\n",
                self.failures.len(),
                self.failures[0].smiles,
                self.failures[0].part,
                self.failures[0].reason
            ));
        }
        s
    }
}

impl Serialize for MosesMetrics {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.values.len() + 4))?;
        for (k, v) in &self.values {
            map.serialize_entry(k, v)?;
        }
        map.serialize_entry("n", &self.n)?;
        map.serialize_entry("n_valid", &self.n_valid)?;
        map.serialize_entry("notes", &self.notes)?;
        map.serialize_entry("failures", &self.failures)?;
        map.end()
    }
}

/// The canonical SMILES of `smiles`, `None` where it is not a molecule (MOSES's
/// `canonic_smiles`: RDKit's `MolFromSmiles` + `SanitizeMol` + `MolToSmiles`). A molecule
/// the RDKit port cannot handle is `None` here too: [`classify`] tells the two apart.
pub fn canonic_smiles(smiles: &str) -> Option<String> {
    classify(smiles).ok().flatten()
}

/// `Ok(Some(canonical SMILES))` for a molecule, `Ok(None)` for what RDKit rejects (empty,
/// bad syntax, failed sanitisation), and `Err` naming the reason where the RDKit port
/// cannot handle an input RDKit may accept (no heavy atom, an unsupported feature, an
/// internal error): such samples are counted invalid and reported, never dropped
/// silently.
pub fn classify(smiles: &str) -> Result<Option<String>, MetricFailure> {
    if smiles.is_empty() {
        return Ok(None);
    }
    match Molecule::from_smiles(smiles).and_then(|m| canonical_smiles(&m)) {
        Ok(canonical) => Ok(Some(canonical)),
        Err(e) if matches!(e.kind(), "parse" | "sanitize") => Ok(None),
        Err(e) => Err(MetricFailure {
            smiles: smiles.to_string(),
            part: "molecule".into(),
            reason: format!("{e} (counted invalid: the RDKit port cannot tell)"),
        }),
    }
}

/// The MOSES metrics of `generated` against `references` (SNN, Frag, Scaf for each) and, for
/// novelty, the training SMILES `train` as written (MOSES compares canonical samples with
/// the raw training strings). `unique_k` are the `k` of `unique@k`; `progress` is called
/// with the number of valid samples whose statistics are done. `chemnet` (the model and
/// the device it runs on) adds `FCD/<name>` for each reference with ChemNet statistics.
pub fn moses_metrics(
    generated: &[String],
    references: &[Reference<'_>],
    train: Option<&HashSet<String>>,
    unique_k: &[usize],
    chemnet: Option<(&ChemNet, &Device)>,
    progress: impl Fn(usize) + Sync,
) -> MosesMetrics {
    let classified: Vec<Result<Option<String>, MetricFailure>> =
        generated.par_iter().map(|s| classify(s)).collect();
    let mut unclassified = Vec::new();
    let mut valid = Vec::new();
    for c in classified {
        match c {
            Ok(Some(canonical)) => valid.push(canonical),
            Ok(None) => {}
            Err(failure) => unclassified.push(failure),
        }
    }
    let n = generated.len();
    let share = |a: usize, b: usize| {
        if b == 0 {
            f64::NAN
        } else {
            a as f64 / b as f64
        }
    };
    let mut values = vec![("valid".to_string(), share(valid.len(), n))];
    let mut notes = Vec::new();
    for &k in unique_k {
        let first = &valid[..k.min(valid.len())];
        if first.len() < k {
            notes.push(format!(
                "unique@{k} over {} valid samples (fewer than {k})",
                first.len()
            ));
        }
        let distinct: HashSet<&String> = first.iter().collect();
        values.push((format!("unique@{k}"), share(distinct.len(), first.len())));
    }
    let stats = SetStats::compute(&valid, true, progress);
    let gen_chemnet =
        chemnet.map(|(model, device)| ChemNetStats::compute(model, &valid, device, |_| {}));
    for r in references {
        if let (Some(g), Some(reference)) = (&gen_chemnet, r.chemnet) {
            values.push((format!("FCD/{}", r.name), frechet_distance(reference, g)));
        }
        values.push((
            format!("SNN/{}", r.name),
            average_agg_tanimoto(
                &r.stats.fingerprints,
                &stats.fingerprints,
                Aggregate::Max,
                1.0,
            ),
        ));
        values.push((
            format!("Frag/{}", r.name),
            cos_similarity(&r.stats.fragments, &stats.fragments),
        ));
        values.push((
            format!("Scaf/{}", r.name),
            cos_similarity(&r.stats.scaffolds, &stats.scaffolds),
        ));
    }
    for (key, p) in [("IntDiv", 1.0), ("IntDiv2", 2.0)] {
        let similarity =
            average_agg_tanimoto(&stats.fingerprints, &stats.fingerprints, Aggregate::Mean, p);
        values.push((key.to_string(), 1.0 - similarity));
    }
    values.push((
        "Filters".to_string(),
        share(stats.passes_filters.unwrap_or(0), valid.len()),
    ));
    if let Some(train) = train {
        let distinct: HashSet<&String> = valid.iter().collect();
        let novel = distinct.iter().filter(|s| !train.contains(**s)).count();
        values.push(("Novelty".to_string(), share(novel, distinct.len())));
    }
    let mut failures = unclassified;
    failures.extend(stats.failures);
    failures.extend(gen_chemnet.into_iter().flat_map(|g| g.failures));
    MosesMetrics {
        n,
        n_valid: valid.len(),
        values,
        notes,
        failures,
    }
}
