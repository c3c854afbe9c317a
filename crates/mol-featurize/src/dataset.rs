//! Featurizing many molecules at once: parallel (rayon), with a progress bar and a
//! report of every molecule skipped and why (never silent data loss).

use std::collections::BTreeMap;

use indicatif::{ParallelProgressIterator, ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::cache::{CachedCoordinates, ConformerCache, cache_key};
use crate::conformer::{self, CoordinateMethod};
use crate::error::FeaturizeError;
use crate::featurizer::{Featurizer, check_atom_limit, within_atom_limit};
use crate::molecule::{Molecule, guard};

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
    /// Molecules whose coordinates came from a fallback of the method asked for (3D ->
    /// 2D -> topological), each with why ([`conformer::fallback_reason`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<Fallback>,
    /// What the conformer cache did (absent when featurized without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheReport>,
}

/// A molecule featurized with fallback coordinates ([`FeaturizeReport::fallbacks`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fallback {
    /// 0-based data row.
    pub row: usize,
    /// The SMILES as given.
    pub smiles: String,
    /// The method the coordinates came from.
    pub method: CoordinateMethod,
    /// Why the methods before it gave none.
    pub reason: String,
}

/// What the conformer cache did during one [`featurize_all_cached`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheReport {
    /// The cache file.
    pub path: String,
    /// Molecules whose coordinates came from the cache.
    pub hits: usize,
    /// Molecules embedded because the cache did not have them.
    pub misses: usize,
    /// Entries found corrupt (checksum mismatch), recomputed and overwritten.
    pub corrupt: usize,
    /// New entries written.
    pub stored: usize,
    /// Where an unreadable cache file was moved before this run started afresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_aside: Option<String>,
    /// Why the cache could not be used (the run went on without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Featurizes `smiles[row]` for every row with any model's [`Featurizer`], in parallel,
/// without a conformer cache.
///
/// Returns one entry per input (`None` where skipped) and the report. A progress bar
/// is drawn on stderr when `progress` is true.
pub fn featurize_all<F: Featurizer>(
    smiles: &[String],
    featurizer: &F,
    progress: bool,
) -> (Vec<Option<F::Features>>, FeaturizeReport) {
    featurize_all_cached(smiles, featurizer, progress, None)
}

/// Molecules embedded (and then stored in the cache) per chunk.
const EMBED_CHUNK: usize = 256;

/// [`featurize_all`], taking conformer coordinates from `cache` where it has them and
/// storing the ones it computes (see [`crate::cache`]). A cache that cannot be read or
/// written is reported in [`FeaturizeReport::cache`] and the run goes on without it.
pub fn featurize_all_cached<F: Featurizer>(
    smiles: &[String],
    featurizer: &F,
    progress: bool,
    cache: Option<&ConformerCache>,
) -> (Vec<Option<F::Features>>, FeaturizeReport) {
    let options = featurizer.conformer_options();
    let limit = featurizer.max_atoms();
    let parsed: Vec<Result<Molecule, FeaturizeError>> = smiles
        .par_iter()
        .map(|s| {
            // Counted before parsing: parsing itself grows faster than linearly (a
            // 5,000-atom SMILES took 50 s to parse).
            check_atom_limit(s, crate::smiles_tokenizer::heavy_atom_tokens(s), limit)?;
            Molecule::from_smiles(s).and_then(|m| within_atom_limit(m, limit))
        })
        .collect();

    // Cached coordinates of the parsed molecules.
    let keys: Vec<Option<[u8; 32]>> = parsed
        .iter()
        .zip(smiles)
        .map(|(m, s)| m.as_ref().ok().map(|_| cache_key(s, options)))
        .collect();
    let mut cache_report = cache.map(|c| CacheReport {
        path: c.path().display().to_string(),
        ..Default::default()
    });
    let mut coords: Vec<Option<CachedCoordinates>> = vec![None; smiles.len()];
    if let (Some(cache), Some(rep)) = (cache, cache_report.as_mut()) {
        let wanted: Vec<[u8; 32]> = keys.iter().flatten().copied().collect();
        match cache.get_many(&wanted) {
            Ok(found) => {
                rep.corrupt = found.corrupt;
                rep.moved_aside = found.moved_aside.map(|p| p.display().to_string());
                let mut found = found.values.into_iter();
                for ((slot, key), mol) in coords.iter_mut().zip(&keys).zip(&parsed) {
                    if key.is_none() {
                        continue;
                    }
                    let value = found.next().flatten();
                    // An entry for another atom count (a parser change without a version
                    // bump) is as good as corrupt: recompute and overwrite it.
                    let fits = |v: &CachedCoordinates, m: &Molecule| {
                        v.as_ref().is_none_or(|(xyz, _)| xyz.len() == m.num_atoms())
                    };
                    match (value, mol) {
                        (Some(v), Ok(m)) if fits(&v, m) => *slot = Some(v),
                        (Some(_), _) => rep.corrupt += 1,
                        (None, _) => {}
                    }
                }
            }
            Err(e) => rep.error = Some(e.to_string()),
        }
    }

    // Embed what the cache did not have.
    let todo: Vec<(usize, &Molecule)> = parsed
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            p.as_ref()
                .ok()
                .filter(|_| coords[i].is_none())
                .map(|m| (i, m))
        })
        .collect();
    let bar = if progress && !todo.is_empty() {
        let bar = ProgressBar::new(todo.len() as u64);
        if let Ok(style) = ProgressStyle::with_template(
            "conformers {bar:40} {pos}/{len} [{elapsed} < {eta}] {per_sec}",
        ) {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    // In chunks, each stored as soon as it is done: an interrupted run keeps what it
    // embedded, and no write transaction grows with the dataset.
    let mut failed: Vec<Option<FeaturizeError>> = vec![None; smiles.len()];
    if let Some(rep) = cache_report.as_mut() {
        rep.hits = smiles.len() - todo.len() - parsed.iter().filter(|p| p.is_err()).count();
        rep.misses = todo.len();
    }
    for chunk in todo.chunks(EMBED_CHUNK) {
        let computed: Vec<Result<CachedCoordinates, FeaturizeError>> = chunk
            .par_iter()
            .progress_with(bar.clone())
            .map(|&(_, mol)| guard(mol.smiles(), || Ok(conformer::coordinates(mol, options))))
            .collect();
        let mut new_entries = Vec::new();
        for (&(i, _), result) in chunk.iter().zip(computed) {
            match result {
                Ok(value) => {
                    coords[i] = Some(value);
                    if let Some(key) = keys[i] {
                        new_entries.push((key, i));
                    }
                }
                Err(e) => failed[i] = Some(e),
            }
        }
        if let (Some(cache), Some(rep)) = (cache, cache_report.as_mut())
            && rep.error.is_none()
        {
            let entries: Vec<([u8; 32], &CachedCoordinates)> = new_entries
                .iter()
                .filter_map(|&(key, i)| coords[i].as_ref().map(|c| (key, c)))
                .collect();
            match cache.put_many(&entries) {
                Ok(()) => rep.stored += entries.len(),
                Err(e) => rep.error = Some(e.to_string()),
            }
        }
    }
    bar.finish_and_clear();

    // Why a molecule fell back from the method asked for.
    let fallbacks: Vec<Fallback> = parsed
        .par_iter()
        .zip(coords.par_iter())
        .enumerate()
        .filter_map(|(row, (mol, xyz))| {
            let mol = mol.as_ref().ok()?;
            let got = xyz
                .as_ref()?
                .as_ref()
                .map_or(CoordinateMethod::Topological, |(_, m)| *m);
            let reason = conformer::fallback_reason(mol, options, got)?;
            Some(Fallback {
                row,
                smiles: smiles[row].clone(),
                method: got,
                reason,
            })
        })
        .collect();

    // Features (cheap) from the molecule and its coordinates.
    let results: Vec<Result<(F::Features, CoordinateMethod), FeaturizeError>> = parsed
        .into_par_iter()
        .zip(coords.into_par_iter())
        .zip(failed.into_par_iter())
        .map(|((mol, xyz), failed)| {
            let mol = mol?;
            if let Some(e) = failed {
                return Err(e);
            }
            let (xyz, source) = match xyz.flatten() {
                Some((xyz, method)) => (Some(xyz), method),
                None => (None, CoordinateMethod::Topological),
            };
            guard(mol.smiles(), || {
                featurizer
                    .features(&mol, xyz.as_deref(), source)
                    .map(|f| (f, source))
            })
        })
        .collect();

    let (features, mut report) = report_of(smiles, results, cache_report);
    report.fallbacks = fallbacks;
    (features, report)
}

/// One entry per row (`None` where skipped) and the report of `results`.
fn report_of<T>(
    smiles: &[String],
    results: Vec<Result<(T, CoordinateMethod), FeaturizeError>>,
    cache: Option<CacheReport>,
) -> (Vec<Option<T>>, FeaturizeReport) {
    let mut report = FeaturizeReport {
        n_total: smiles.len(),
        cache,
        ..Default::default()
    };
    let mut out = Vec::with_capacity(smiles.len());
    for (row, result) in results.into_iter().enumerate() {
        match result {
            Ok((f, source)) => {
                *report.coordinate_sources.entry(source).or_default() += 1;
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

/// A molecule read with the coordinates that came with it (a structure file's record, a
/// dataset's geometry), for [`featurize_given`].
#[derive(Debug, Clone)]
pub struct GivenStructure {
    /// The molecule (hydrogens folded).
    pub molecule: Molecule,
    /// Heavy-atom coordinates in [`Molecule::atoms`] order, Angstrom; `None`: none came
    /// with it (topological distances).
    pub coordinates: Option<Vec<[f64; 3]>>,
    /// What the coordinates are: [`CoordinateMethod::File`] for a 3D geometry,
    /// [`CoordinateMethod::Layout2d`] for a file's flat depiction (it never feeds
    /// Transformer-M's 3D channel), [`CoordinateMethod::Topological`] without any.
    pub source: CoordinateMethod,
}

/// Featurizes molecules that came with their coordinates, in parallel, with the same
/// report as [`featurize_all`] (`labels[row]`, usually the SMILES, names the row in it).
/// An `Err` row is skipped with its reason (a record that could not be read). No
/// conformer is computed or cached.
///
/// # Panics
/// If `labels` and `inputs` differ in length.
pub fn featurize_given<F: Featurizer>(
    labels: &[String],
    inputs: &[Result<GivenStructure, FeaturizeError>],
    featurizer: &F,
) -> (Vec<Option<F::Features>>, FeaturizeReport) {
    assert_eq!(labels.len(), inputs.len(), "one label per row");
    let results: Vec<Result<(F::Features, CoordinateMethod), FeaturizeError>> = inputs
        .par_iter()
        .map(|input| {
            let given = input.as_ref().map_err(Clone::clone)?;
            let mol = &given.molecule;
            check_atom_limit(mol.smiles(), mol.num_atoms(), featurizer.max_atoms())?;
            if let Some(xyz) = &given.coordinates
                && xyz.len() != mol.num_atoms()
            {
                return Err(FeaturizeError::Internal {
                    smiles: mol.smiles().to_string(),
                    reason: format!(
                        "{} coordinate rows for {} heavy atoms",
                        xyz.len(),
                        mol.num_atoms()
                    ),
                });
            }
            let source = match given.coordinates {
                Some(_) => given.source,
                None => CoordinateMethod::Topological,
            };
            guard(mol.smiles(), || {
                featurizer
                    .features(mol, given.coordinates.as_deref(), source)
                    .map(|f| (f, source))
            })
        })
        .collect();
    report_of(labels, results, None)
}

/// Featurizes `smiles[row]` with the coordinates that came with the data
/// (`coordinates[row]`: heavy atoms in input order, Angstrom, source
/// [`CoordinateMethod::File`]; `None`: topological), in parallel, with the same report
/// as [`featurize_all`]: a dataset's DFT geometries. No conformer is computed or cached.
///
/// # Panics
/// If `coordinates` and `smiles` differ in length.
pub fn featurize_all_with_coordinates<F: Featurizer>(
    smiles: &[String],
    coordinates: &[Option<Vec<[f64; 3]>>],
    featurizer: &F,
) -> (Vec<Option<F::Features>>, FeaturizeReport) {
    assert_eq!(
        smiles.len(),
        coordinates.len(),
        "one coordinate entry per row"
    );
    let inputs: Vec<Result<GivenStructure, FeaturizeError>> = smiles
        .par_iter()
        .zip(coordinates.par_iter())
        .map(|(s, xyz)| {
            Ok(GivenStructure {
                molecule: Molecule::from_smiles(s)?,
                coordinates: xyz.clone(),
                source: CoordinateMethod::File,
            })
        })
        .collect();
    featurize_given(smiles, &inputs, featurizer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConformerOptions, GraphormerFeaturizer, MatFeaturizer};

    /// Issue #37 item 2: a molecule above the heavy-atom limit is skipped with its size
    /// and the limit, in both entry points, before any conformer or feature is made;
    /// the rows around it are featurized as before.
    #[test]
    fn molecules_above_the_atom_limit_are_skipped_with_the_reason() {
        let smiles: Vec<String> = ["CCO", "CCCCCC", "CCCCC"].map(String::from).to_vec();
        let limited = crate::AtomLimit {
            inner: MatFeaturizer {
                conformer: ConformerOptions {
                    method: CoordinateMethod::Topological,
                    ..Default::default()
                },
                ..Default::default()
            },
            max_atoms: 5,
        };
        let (out, report) = featurize_all(&smiles, &limited, false);
        assert_eq!(
            out.iter().map(Option::is_some).collect::<Vec<_>>(),
            [true, false, true]
        );
        assert_eq!(report.skipped.len(), 1);
        let skip = &report.skipped[0];
        assert_eq!((skip.row, skip.kind.as_str()), (1, "too-large"));
        assert!(
            skip.reason
                .contains("6 heavy atoms, more than the limit of 5"),
            "{}",
            skip.reason
        );
        let xyz = vec![None, None, None];
        let (_, report) = featurize_all_with_coordinates(&smiles, &xyz, &limited);
        assert_eq!(report.skipped.len(), 1);
        assert_eq!(report.skipped[0].kind, "too-large");
        // The default limit lets a 6-atom molecule through.
        let (out, _) = featurize_all(&smiles, &limited.inner, false);
        assert!(out.iter().all(Option::is_some));
    }

    /// Coordinates that come with the data: used as given (source `File`), a row whose
    /// coordinates do not fit its molecule is skipped with the reason, `None` is
    /// topological.
    #[test]
    fn given_coordinates_are_used_and_checked() {
        let smiles: Vec<String> = ["CCO", "CC", "C"].map(String::from).to_vec();
        let xyz = vec![
            Some(vec![[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [2.0, 1.2, 0.0]]),
            Some(vec![[0.0, 0.0, 0.0]]),
            None,
        ];
        let featurizer = GraphormerFeaturizer {
            max_hops: 5,
            conformer: ConformerOptions::default(),
        };
        let (out, report) = featurize_all_with_coordinates(&smiles, &xyz, &featurizer);
        assert_eq!((report.n_ok, report.n_skipped), (2, 1));
        assert_eq!(report.skipped[0].row, 1);
        assert!(report.skipped[0].reason.contains("1 coordinate rows for 2"));
        assert_eq!(
            out[0].as_ref().unwrap().coordinates.as_ref().unwrap()[1],
            [1.5, 0.0, 0.0]
        );
        assert!(out[2].as_ref().unwrap().coordinates.is_none());
        assert_eq!(
            report.coordinate_sources.get(&CoordinateMethod::File),
            Some(&1)
        );
        assert_eq!(
            report
                .coordinate_sources
                .get(&CoordinateMethod::Topological),
            Some(&1)
        );
    }

    /// The same pipeline serves Transformer-M inputs: conformer coordinates for the 3D
    /// channel, none where only topological distances exist, the same skip report.
    #[test]
    fn graphormer_inputs_come_through_the_same_pipeline() {
        let smiles: Vec<String> = ["CCO", "C1CC", "c1ccncc1"].map(String::from).to_vec();
        let embedded = GraphormerFeaturizer {
            max_hops: 5,
            conformer: ConformerOptions::default(),
        };
        let (out, report) = featurize_all(&smiles, &embedded, false);
        assert_eq!((report.n_ok, report.n_skipped), (2, 1));
        assert_eq!(report.skipped[0].row, 1);
        let ethanol = out[0].as_ref().unwrap();
        assert_eq!(ethanol.num_atoms, 3);
        let xyz = ethanol.coordinates.as_ref().unwrap();
        let d = ((0..3).map(|k| (xyz[0][k] - xyz[1][k]).powi(2)).sum::<f32>()).sqrt();
        assert!((1.4..1.6).contains(&d), "C-C {d} A");
        let topological = GraphormerFeaturizer {
            max_hops: 5,
            conformer: ConformerOptions {
                method: CoordinateMethod::Topological,
                ..Default::default()
            },
        };
        let (out, report) = featurize_all(&smiles, &topological, false);
        assert!(out[2].as_ref().unwrap().coordinates.is_none());
        assert_eq!(
            report
                .coordinate_sources
                .get(&CoordinateMethod::Topological),
            Some(&2)
        );
    }

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

    #[test]
    fn a_second_featurization_reads_every_conformer_from_the_cache() {
        let dir =
            std::env::temp_dir().join(format!("molattn-dataset-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = ConformerCache::open(&dir).unwrap();
        let smiles: Vec<String> = ["CCO", "C1CC", "c1ccccc1O", "CC(=O)[O-].[Na+]"]
            .map(String::from)
            .to_vec();
        let f = MatFeaturizer::default();
        let (first, r1) = featurize_all_cached(&smiles, &f, false, Some(&cache));
        let c1 = r1.cache.clone().unwrap();
        assert_eq!((c1.hits, c1.misses, c1.stored, c1.error), (0, 3, 3, None));
        let (second, r2) = featurize_all_cached(&smiles, &f, false, Some(&cache));
        let c2 = r2.cache.clone().unwrap();
        assert_eq!((c2.hits, c2.misses, c2.stored), (3, 0, 0));
        assert_eq!(first, second);
        assert_eq!((r2.n_ok, r2.n_skipped), (3, 1));
        // Without a cache: the same features, and no cache report.
        let (plain, r3) = featurize_all(&smiles, &f, false);
        assert_eq!(plain, first);
        assert!(r3.cache.is_none());
        // Other conformer settings miss.
        let seeded = MatFeaturizer {
            conformer: crate::ConformerOptions {
                seed: 7,
                ..Default::default()
            },
            ..Default::default()
        };
        let (_, r4) = featurize_all_cached(&smiles, &seeded, false, Some(&cache));
        assert_eq!(r4.cache.unwrap().misses, 3);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
