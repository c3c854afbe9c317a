//! Mutation fuzzing of the readers (issue #19): SMILES strings and SDF records made by
//! random edits of real molecules, each run through the whole featurization, with the
//! invariants a user relies on checked on every input.
//!
//! Invariants ([`run`]): no panic anywhere (a toolkit panic caught by the featurizer's
//! guard, [`FeaturizeError::Internal`], counts as one), and every SDF record accounted
//! for: a file of `k` records gives `k` results, and every record the mutation did not
//! touch reads back as before. Hangs are the caller's to time (`cargo xtask fuzz` runs
//! inputs on a worker thread under a per-input budget). [`minimize`] shrinks a failing
//! input by deleting characters (SMILES) or lines (SDF) while the same failure remains.
//!
//! The stable toolchain has no coverage-guided fuzzer; this is plain mutation fuzzing
//! seeded from the shared datasets, which is what found the 131 disagreements.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use chematic::mol::{MolMetadata, write_mol_v3000, write_mol_with_coords};
use chematic::smiles::rdkit_2d_coords;
use rand::rngs::StdRng;

use crate::conformer::{ConformerOptions, CoordinateMethod};
use crate::coordinate_match::match_coordinates;
use crate::error::FeaturizeError;
use crate::graphormer;
use crate::mat::MatFeaturizer;
use crate::molecule::Molecule;
use crate::structure_file::{StructureFileError, parse_sdf};
use chematic::mol::xyz::parse_xyz;

mod mutate;
pub use mutate::{SMILES_ALPHABET, mutate_sdf, mutate_smiles, mutate_xyz};

/// Maximum path length of the Graphormer features computed for every accepted input.
const MAX_HOPS: usize = 5;

/// Seeds of the mutators: SMILES, and SDF records (V2000 and V3000, with a data field).
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    /// Valid SMILES to mutate.
    pub smiles: Vec<String>,
    /// Complete SDF records, each ending with its `$$$$` line.
    pub records: Vec<String>,
    /// XYZ frames (heavy atoms, a 2D layout's coordinates) with their molecule's SMILES.
    pub xyz: Vec<(String, String)>,
}

impl Corpus {
    /// A corpus of `smiles` and, from the first `n_records` of them that parse, SDF
    /// records in turn V2000 2D, V3000 2D and V2000 3D, and XYZ frames.
    pub fn new(smiles: Vec<String>, n_records: usize) -> Self {
        let mut records = Vec::new();
        let mut xyz = Vec::new();
        for s in &smiles {
            if records.len() >= n_records {
                break;
            }
            let Ok(mol) = Molecule::from_smiles(s) else {
                continue;
            };
            let Ok(xy) = rdkit_2d_coords(&mol.parsed) else {
                continue;
            };
            let coords: Vec<(f64, f64)> = xy.iter().map(|p| (p[0], p[1])).collect();
            let meta = MolMetadata {
                name: s.clone(),
                ..Default::default()
            };
            // V2000 2D, V3000 2D, V2000 3D (the 2D layout lifted off its plane: 3D
            // stereo perception runs on it, where a `nan` coordinate once panicked).
            let block = match records.len() % 3 {
                0 => write_mol_with_coords(&mol.parsed, &meta, &coords),
                1 => write_mol_v3000(&mol.parsed, &meta, &coords),
                _ => lift_to_3d(&write_mol_with_coords(&mol.parsed, &meta, &coords)),
            };
            let block = block.trim_end_matches('\n');
            records.push(format!("{block}\n> <y>\n{}\n\n$$$$\n", records.len()));
            if let Some((layout, _)) = crate::conformer::coordinates(
                &mol,
                &ConformerOptions {
                    method: CoordinateMethod::Layout2d,
                    ..Default::default()
                },
            ) {
                let mut frame = format!("{}\n{s}\n", layout.len());
                for (atom, p) in mol.atoms().iter().zip(&layout) {
                    frame.push_str(&format!(
                        "{} {:.4} {:.4} {:.4}\n",
                        crate::depict::element_symbol(atom.atomic_number),
                        p[0],
                        p[1],
                        p[2]
                    ));
                }
                xyz.push((s.clone(), frame));
            }
        }
        Corpus {
            smiles,
            records,
            xyz,
        }
    }
}

/// A V2000 block with z coordinates of up to 0.3 Angstrom (columns 21-30 of its atom
/// lines), so that it reads as 3D.
fn lift_to_3d(block: &str) -> String {
    let mut lines: Vec<String> = block.lines().map(String::from).collect();
    let n: usize = lines
        .get(3)
        .and_then(|l| l.get(..3))
        .and_then(|c| c.trim().parse().ok())
        .unwrap_or(0);
    for (k, line) in lines.iter_mut().skip(4).take(n).enumerate() {
        if line.len() >= 30 && line.is_char_boundary(20) && line.is_char_boundary(30) {
            let z = 0.3 * (k as f64 * 1.7).sin();
            line.replace_range(20..30, &format!("{z:>10.4}"));
        }
    }
    lines.join("\n") + "\n"
}

/// One fuzz input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A SMILES string.
    Smiles(String),
    /// An SDF text; record `mutated` was edited, the others read as `atoms[i]` atoms.
    Sdf {
        /// The file's text.
        text: String,
        /// Index of the edited record.
        mutated: usize,
        /// Atom count of every record (`None` for the edited one).
        atoms: Vec<Option<usize>>,
    },
    /// An XYZ frame (edited) to be matched to the molecule `smiles`.
    Xyz {
        /// The frame's text.
        text: String,
        /// The molecule it belongs to.
        smiles: String,
    },
}

impl Input {
    /// The input as it would be written to a file.
    pub fn text(&self) -> &str {
        match self {
            Input::Smiles(s) => s,
            Input::Sdf { text, .. } | Input::Xyz { text, .. } => text,
        }
    }
}

/// A broken invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A panic (uncaught, or caught by the featurizer's guard).
    Panic(String),
    /// A record not accounted for, or an untouched record that changed.
    Lost(String),
    /// Input that must be refused was accepted (a non-finite coordinate).
    Accepted(String),
}

impl Failure {
    /// `panic` or `lost`.
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::Panic(_) => "panic",
            Failure::Lost(_) => "lost",
            Failure::Accepted(_) => "accepted",
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Panic(m) => write!(f, "panic: {m}"),
            Failure::Lost(m) => write!(f, "not accounted for: {m}"),
            Failure::Accepted(m) => write!(f, "accepted bad input: {m}"),
        }
    }
}

/// What the readers made of one input: molecules accepted and rejected (with a reason).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Molecules featurized.
    pub accepted: usize,
    /// Molecules or records rejected with an error.
    pub rejected: usize,
}

/// The stream of fuzz inputs from a corpus: of every eight, two mutated SDF files, one
/// mutated XYZ frame and five mutated SMILES, deterministic for a seed.
pub struct Generator {
    corpus: Corpus,
    rng: StdRng,
    count: u64,
}

impl Generator {
    /// Inputs mutated from `corpus` with RNG seed `seed`.
    pub fn new(corpus: Corpus, seed: u64) -> Self {
        use rand::SeedableRng;
        Generator {
            corpus,
            rng: StdRng::seed_from_u64(seed),
            count: 0,
        }
    }

    /// The seeds.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// The next input.
    pub fn next_input(&mut self) -> Input {
        self.count += 1;
        if self.count.is_multiple_of(4) {
            mutate_sdf(&self.corpus, &mut self.rng)
        } else if self.count % 8 == 2 && !self.corpus.xyz.is_empty() {
            mutate_xyz(&self.corpus, &mut self.rng)
        } else {
            Input::Smiles(mutate_smiles(&self.corpus, &mut self.rng))
        }
    }
}

fn internal(e: &FeaturizeError) -> Option<Failure> {
    matches!(e, FeaturizeError::Internal { .. }).then(|| Failure::Panic(e.to_string()))
}

/// Featurizes an accepted molecule both ways (MAT with topological distances,
/// Graphormer with `coordinates`).
fn featurize(mol: &Molecule, coordinates: Option<Vec<[f32; 3]>>) -> Result<(), Failure> {
    let mat = MatFeaturizer {
        conformer: ConformerOptions {
            method: CoordinateMethod::Topological,
            ..Default::default()
        },
        ..Default::default()
    };
    if let Err(e) = crate::molecule::guard(mol.smiles(), || Ok(mat.featurize(mol))) {
        return Err(internal(&e).unwrap_or(Failure::Panic(e.to_string())));
    }
    match graphormer::featurize(mol, MAX_HOPS, coordinates) {
        Err(e) => internal(&e).map_or(Ok(()), Err),
        Ok(_) => Ok(()),
    }
}

/// Runs `input` through the readers and featurizers and checks the invariants (module
/// docs).
///
/// # Errors
/// The first broken invariant.
pub fn run(input: &Input) -> Result<Outcome, Failure> {
    catch_unwind(AssertUnwindSafe(|| run_unguarded(input))).unwrap_or_else(|payload| {
        Err(Failure::Panic(crate::molecule::panic_text(
            payload.as_ref(),
        )))
    })
}

fn run_unguarded(input: &Input) -> Result<Outcome, Failure> {
    let mut out = Outcome::default();
    match input {
        Input::Smiles(s) => match Molecule::from_smiles(s) {
            Ok(mol) => {
                featurize(&mol, None)?;
                out.accepted += 1;
            }
            Err(e) => {
                if let Some(f) = internal(&e) {
                    return Err(f);
                }
                out.rejected += 1;
            }
        },
        Input::Sdf {
            text,
            mutated,
            atoms,
        } => {
            let results = parse_sdf(text, "fuzz");
            if results.len() != atoms.len() {
                return Err(Failure::Lost(format!(
                    "{} results for {} records (record {mutated} edited)",
                    results.len(),
                    atoms.len()
                )));
            }
            for (i, (result, expected)) in results.into_iter().zip(atoms).enumerate() {
                match result {
                    Ok(rec) => {
                        if let Some(bad) = non_finite(rec.coordinates.iter().flatten()) {
                            return Err(Failure::Accepted(format!(
                                "record {i} read with the coordinate {bad:?}"
                            )));
                        }
                        if let Some(n) = expected
                            && rec.molecule.num_atoms() != *n
                        {
                            return Err(Failure::Lost(format!(
                                "untouched record {i} has {} atoms, {n} before",
                                rec.molecule.num_atoms()
                            )));
                        }
                        featurize(&rec.molecule, rec.coordinates)?;
                        out.accepted += 1;
                    }
                    Err(e) => {
                        if let StructureFileError::Molecule { source, .. } = &e
                            && let Some(f) = internal(source)
                        {
                            return Err(f);
                        }
                        if let StructureFileError::Format { reason, .. } = &e
                            && reason.starts_with(crate::structure_file::READER_PANIC)
                        {
                            return Err(Failure::Panic(e.to_string()));
                        }
                        if expected.is_some() {
                            return Err(Failure::Lost(format!("untouched record {i}: {e}")));
                        }
                        out.rejected += 1;
                    }
                }
            }
        }
        Input::Xyz { text, smiles } => {
            let mol = Molecule::from_smiles(smiles)
                .map_err(|e| Failure::Lost(format!("the corpus SMILES {smiles}: {e}")))?;
            let matched = parse_xyz(text)
                .map_err(|e| e.to_string())
                .and_then(|frame| {
                    let elements: Vec<u8> = frame
                        .atoms
                        .iter()
                        .map(|a| a.element.atomic_number())
                        .collect();
                    let xyz: Vec<[f64; 3]> = frame.atoms.iter().map(|a| [a.x, a.y, a.z]).collect();
                    match_coordinates(&mol, &elements, &xyz).map_err(|e| e.to_string())
                });
            match matched {
                Ok(xyz) => {
                    if let Some(bad) = non_finite(xyz.iter()) {
                        return Err(Failure::Accepted(format!(
                            "an XYZ frame matched with the coordinate {bad:?}"
                        )));
                    }
                    featurize(&mol, Some(xyz))?;
                    out.accepted += 1;
                }
                Err(_) => out.rejected += 1,
            }
        }
    }
    Ok(out)
}

/// The first coordinate row of `rows` with a value that is not finite.
fn non_finite<'a>(mut rows: impl Iterator<Item = &'a [f32; 3]>) -> Option<[f32; 3]> {
    rows.find(|p| p.iter().any(|v| !v.is_finite())).copied()
}

/// Shrinks `input` while [`run`] still fails with the same kind of [`Failure`]: deletes
/// chunks of characters (SMILES) or lines (SDF), halving the chunk size, until nothing
/// more can go or `budget` is spent. A shrunk SDF is checked without the per-record
/// expectations, so a [`Failure::Lost`] comes back unshrunk.
pub fn minimize(input: &Input, failure: &Failure, budget: Duration) -> Input {
    if matches!((input, failure), (Input::Sdf { .. }, Failure::Lost(_))) {
        return input.clone();
    }
    let t0 = Instant::now();
    let still_fails = |candidate: &Input| {
        run(candidate)
            .err()
            .is_some_and(|f| f.kind() == failure.kind())
    };
    type Rebuild = Box<dyn Fn(&[String]) -> Input>;
    let (mut units, rebuild): (Vec<String>, Rebuild) = match input {
        Input::Smiles(s) => (
            s.chars().map(String::from).collect(),
            Box::new(|u: &[String]| Input::Smiles(u.concat())),
        ),
        Input::Sdf { text, .. } => {
            // Keep the records as they are; shrink the whole file line by line, with the
            // accounting relaxed to "every result is either Ok or an error".
            (
                text.lines().map(|l| format!("{l}\n")).collect(),
                Box::new(|u: &[String]| {
                    let text = u.concat();
                    // The count of records the reader sees; a panic here is caught by the
                    // `run` that checks the candidate (0 expectations).
                    let n = catch_unwind(AssertUnwindSafe(|| parse_sdf(&text, "fuzz").len()))
                        .unwrap_or(0);
                    Input::Sdf {
                        text,
                        mutated: 0,
                        atoms: vec![None; n],
                    }
                }),
            )
        }
        Input::Xyz { text, smiles } => {
            let smiles = smiles.clone();
            (
                text.lines().map(|l| format!("{l}\n")).collect(),
                Box::new(move |u: &[String]| Input::Xyz {
                    text: u.concat(),
                    smiles: smiles.clone(),
                }),
            )
        }
    };
    let mut chunk = units.len().div_ceil(2).max(1);
    while chunk >= 1 && t0.elapsed() < budget {
        let mut removed_any = false;
        let mut start = 0;
        while start < units.len() && t0.elapsed() < budget {
            let end = (start + chunk).min(units.len());
            let mut candidate = units.clone();
            candidate.drain(start..end);
            if !candidate.is_empty() && still_fails(&rebuild(&candidate)) {
                units = candidate;
                removed_any = true;
            } else {
                start += chunk;
            }
        }
        if chunk == 1 && !removed_any {
            break;
        }
        if !removed_any {
            chunk /= 2;
        }
    }
    let shrunk = rebuild(&units);
    if still_fails(&shrunk) {
        shrunk
    } else {
        input.clone()
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn corpus() -> Corpus {
        Corpus::new(
            [
                "CCO",
                "c1ccccc1O",
                "CC(=O)[O-].[Na+]",
                "C1CCNCC1",
                "FC(F)(F)c1ccncc1",
            ]
            .map(String::from)
            .to_vec(),
            4,
        )
    }

    #[test]
    fn seeds_read_back_and_a_few_hundred_mutants_keep_the_invariants() {
        let corpus = corpus();
        assert_eq!(corpus.records.len(), 4);
        assert!(corpus.records[1].contains("V3000"));
        for r in &corpus.records {
            let read = parse_sdf(r, "seed");
            assert!(read.len() == 1 && read[0].is_ok(), "{r}");
        }
        let mut rng = StdRng::seed_from_u64(7);
        let (mut accepted, mut rejected) = (0, 0);
        for k in 0..400 {
            let input = if k % 2 == 0 {
                Input::Smiles(mutate_smiles(&corpus, &mut rng))
            } else {
                mutate_sdf(&corpus, &mut rng)
            };
            let outcome = run(&input).unwrap_or_else(|f| panic!("{f}\n{}", input.text()));
            accepted += outcome.accepted;
            rejected += outcome.rejected;
        }
        // Both verdicts occur: the mutators make valid and invalid inputs.
        assert!(accepted > 100 && rejected > 100, "{accepted} {rejected}");
    }

    #[test]
    fn a_lost_record_is_a_failure_and_a_rejected_smiles_is_not() {
        let corpus = corpus();
        // Two records claimed, one present: not accounted for.
        let input = Input::Sdf {
            text: corpus.records[0].clone(),
            mutated: 1,
            atoms: vec![Some(3), None],
        };
        let failure = run(&input).unwrap_err();
        assert_eq!(failure.kind(), "lost");
        let smiles = Input::Smiles("CC()C".into());
        assert_eq!(run(&smiles).unwrap().rejected, 1);
    }
}
