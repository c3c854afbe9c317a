//! The sets a generated sample is scored against: MOSES's test and test-scaffolds sets
//! (or the user's) with their cached statistics, and the training SMILES for novelty.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use burn::prelude::Device;
use models::chemnet::ChemNet;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use super::{ChemNetStats, MosesMetrics, Reference, SetStats, moses_metrics};
use crate::error::TrainError;
use crate::smiles_gpt::SmilesCorpus;

/// Where the sets are: CSV files with a header and a SMILES column.
#[derive(Debug, Clone, PartialEq)]
pub struct SetFiles {
    /// Reference sets by MOSES name (`Test`, `TestSF`).
    pub references: Vec<(String, PathBuf)>,
    /// Training set for novelty (none: no `Novelty`).
    pub train: Option<PathBuf>,
    /// Column holding the SMILES (`SMILES` in MOSES's files).
    pub smiles_column: String,
}

impl SetFiles {
    /// MOSES's own files as `cargo xtask data moses` writes them into `moses_dir`
    /// (`test.csv`, `test_scaffolds.csv`, `train.csv`).
    pub fn moses(moses_dir: &Path) -> Self {
        SetFiles {
            references: vec![
                ("Test".into(), moses_dir.join("test.csv")),
                ("TestSF".into(), moses_dir.join("test_scaffolds.csv")),
            ],
            train: Some(moses_dir.join("train.csv")),
            smiles_column: "SMILES".into(),
        }
    }
}

/// The reference statistics and the training set, ready to score samples.
#[derive(Debug)]
pub struct BenchmarkSets {
    /// Reference sets by name, with their ChemNet statistics when a ChemNet was given.
    pub references: Vec<(String, SetStats, Option<ChemNetStats>)>,
    /// ChemNet and its device, for the FCD.
    pub chemnet: Option<(ChemNet, Device)>,
    /// Training SMILES as written.
    pub train: Option<HashSet<String>>,
}

/// Reads the SMILES column of a CSV (rows in order; empty cells kept as empty strings).
///
/// # Errors
/// An unreadable file, a missing column, a malformed record (named by its line).
pub fn read_smiles(path: &Path, smiles_column: &str) -> Result<Vec<String>, TrainError> {
    let corpus = SmilesCorpus {
        path: path.to_path_buf(),
        smiles_column: smiles_column.to_string(),
        delimiter: ',',
        limit: None,
    };
    Ok(corpus.read()?.into_iter().map(|(_, s)| s).collect())
}

impl BenchmarkSets {
    /// Reads the files and computes (or loads from `cache_dir`) each reference set's
    /// statistics, ChemNet's too when `chemnet` is given: over the whole set, or over a
    /// seeded sample of `fcd_subset` molecules of it (ChemNet's two LSTMs cost about 0.2
    /// GFLOP a molecule: MOSES's two test sets are 352k molecules). `progress(what,
    /// molecules done, total)` reports the work.
    ///
    /// # Errors
    /// A missing or unreadable file (named; for MOSES's, `cargo xtask data moses` makes
    /// them), a cache folder that cannot be written.
    pub fn load(
        files: &SetFiles,
        cache_dir: &Path,
        chemnet: Option<(ChemNet, Device)>,
        fcd_subset: Option<usize>,
        progress: impl Fn(&str, usize, usize) + Sync,
    ) -> Result<Self, TrainError> {
        let mut references = Vec::new();
        for (name, path) in &files.references {
            let smiles = read_smiles(path, &files.smiles_column)?;
            let total = smiles.len();
            let what = format!("{name} statistics");
            let stats = SetStats::cached(&smiles, cache_dir, |done| progress(&what, done, total))?;
            let fcd = match &chemnet {
                Some((model, device)) => {
                    let sample = match fcd_subset {
                        Some(n) if n < smiles.len() => {
                            let mut sample = smiles.clone();
                            sample.shuffle(&mut StdRng::seed_from_u64(0));
                            sample.truncate(n);
                            sample
                        }
                        _ => smiles.clone(),
                    };
                    let what = format!("{name} ChemNet activations");
                    let total = sample.len();
                    Some(ChemNetStats::cached(
                        model,
                        &sample,
                        device,
                        cache_dir,
                        |done| progress(&what, done, total),
                    )?)
                }
                None => None,
            };
            references.push((name.clone(), stats, fcd));
        }
        let train = match &files.train {
            Some(path) => Some(
                read_smiles(path, &files.smiles_column)?
                    .into_iter()
                    .collect(),
            ),
            None => None,
        };
        Ok(BenchmarkSets {
            references,
            chemnet,
            train,
        })
    }

    /// The MOSES metrics of `generated` against these sets ([`moses_metrics`]).
    pub fn score(
        &self,
        generated: &[String],
        unique_k: &[usize],
        progress: impl Fn(usize) + Sync,
    ) -> MosesMetrics {
        let references: Vec<Reference<'_>> = self
            .references
            .iter()
            .map(|(name, stats, chemnet)| Reference {
                name,
                stats,
                chemnet: chemnet.as_ref(),
            })
            .collect();
        let chemnet = self.chemnet.as_ref().map(|(m, d)| (m, d));
        let mut metrics = moses_metrics(
            generated,
            &references,
            self.train.as_ref(),
            unique_k,
            chemnet,
            progress,
        );
        for (name, stats, _) in &self.references {
            if !stats.failures.is_empty() {
                metrics.notes.push(format!(
                    "{}: {} of {} reference molecules (or pieces) left out; first: {} ({})",
                    name,
                    stats.failures.len(),
                    stats.n,
                    stats.failures[0].smiles,
                    stats.failures[0].reason
                ));
            }
        }
        metrics
    }
}
