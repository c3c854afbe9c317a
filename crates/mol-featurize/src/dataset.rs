//! Featurizing many molecules at once: parallel (rayon), with a progress bar and a
//! report of every molecule skipped and why (never silent data loss).

use std::collections::BTreeMap;

use indicatif::{ParallelProgressIterator, ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::conformer::CoordinateMethod;
use crate::mat::{MatFeatures, MatFeaturizer};

/// One molecule that could not be featurized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedMolecule {
    /// 0-based data row in the input (CSV header excluded).
    pub row: usize,
    /// The SMILES as given.
    pub smiles: String,
    /// Error kind (`parse`, `sanitize`, `unsupported`, `empty`, `internal`).
    pub kind: String,
    /// Full error message.
    pub reason: String,
}

/// What happened to every input of [`featurize_all`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeaturizeReport {
    /// Number of inputs.
    pub n_total: usize,
    /// Number featurized.
    pub n_ok: usize,
    /// Number skipped (= `skipped.len()`).
    pub n_skipped: usize,
    /// Every skipped input with its reason.
    pub skipped: Vec<SkippedMolecule>,
    /// How many featurized molecules got their distances from each coordinate method
    /// (the fallback chain 3D -> 2D -> topological).
    pub coordinate_sources: BTreeMap<CoordinateMethod, usize>,
}

/// Featurizes `smiles[row]` for every row, in parallel.
///
/// Returns one entry per input (`None` where skipped) and the report. A progress bar
/// is drawn on stderr when `progress` is true.
pub fn featurize_all(
    smiles: &[String],
    featurizer: &MatFeaturizer,
    progress: bool,
) -> (Vec<Option<MatFeatures>>, FeaturizeReport) {
    let bar = if progress {
        let bar = ProgressBar::new(smiles.len() as u64);
        if let Ok(style) = ProgressStyle::with_template(
            "featurize {bar:40} {pos}/{len} [{elapsed} < {eta}] {per_sec}",
        ) {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let results: Vec<_> = smiles
        .par_iter()
        .progress_with(bar.clone())
        .map(|s| featurizer.featurize_smiles(s))
        .collect();
    bar.finish_and_clear();

    let mut report = FeaturizeReport {
        n_total: smiles.len(),
        ..Default::default()
    };
    let mut out = Vec::with_capacity(smiles.len());
    for (row, result) in results.into_iter().enumerate() {
        match result {
            Ok(f) => {
                *report
                    .coordinate_sources
                    .entry(f.coordinate_source)
                    .or_default() += 1;
                report.n_ok += 1;
                out.push(Some(f));
            }
            Err(e) => {
                report.skipped.push(SkippedMolecule {
                    row,
                    smiles: smiles[row].clone(),
                    kind: e.kind().to_string(),
                    reason: e.to_string(),
                });
                out.push(None);
            }
        }
    }
    report.n_skipped = report.skipped.len();
    (out, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_rows_are_reported_not_fatal() {
        let smiles: Vec<String> = ["CCO", "C1CC", "c1ccccc1", "C(C)(C)(C)(C)C"]
            .map(String::from)
            .to_vec();
        let (out, report) = featurize_all(&smiles, &MatFeaturizer::default(), false);
        assert_eq!(out.iter().filter(|o| o.is_some()).count(), 2);
        assert_eq!((report.n_total, report.n_ok, report.n_skipped), (4, 2, 2));
        assert_eq!(report.skipped[0].row, 1);
        assert_eq!(report.skipped[0].kind, "parse");
        assert_eq!(report.skipped[1].row, 3);
        assert_eq!(report.skipped[1].kind, "sanitize");
        assert_eq!(
            report.coordinate_sources.get(&CoordinateMethod::Embed3d),
            Some(&2)
        );
    }
}
