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
use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;

use crate::conformer::{ConformerOptions, CoordinateMethod};
use crate::coordinate_match::match_coordinates;
use crate::error::FeaturizeError;
use crate::graphormer;
use crate::mat::MatFeaturizer;
use crate::molecule::Molecule;
use crate::structure_file::{StructureFileError, parse_sdf};
use chematic::mol::xyz::parse_xyz;

/// Characters (and a few multi-character tokens) the SMILES mutator inserts.
pub const SMILES_ALPHABET: [&str; 50] = [
    "C", "N", "O", "S", "P", "F", "I", "B", "c", "l", "n", "o", "s", "p", "[", "]", "(", ")", "=",
    "#", "-", "+", "/", "\\", "@", ".", "%", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "H",
    ":", "*", "~", "$", " ", "Cl", "Br", "[nH]", "[O-]", "[C@@H]", "[N+]", "%10",
];

/// Spellings of non-finite numbers a coordinate field is replaced by.
const NON_FINITE: [&str; 7] = ["nan", "NaN", "inf", "-inf", "infinity", "1e400", "-1e999"];

/// Atom counts no molecule has (the last overflows 64 bits).
const HUGE_COUNTS: [&str; 5] = [
    "100000",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "99999999999999999999999",
];

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

/// A mutated SMILES: 1-3 edits (insert, delete, replace, duplicate a span, splice with
/// another seed).
pub fn mutate_smiles(corpus: &Corpus, rng: &mut StdRng) -> String {
    let mut s: Vec<char> = corpus
        .smiles
        .choose(rng)
        .map(|s| s.chars().collect())
        .unwrap_or_default();
    for _ in 0..rng.random_range(1..=3) {
        let at = rng.random_range(0..=s.len());
        match rng.random_range(0..5) {
            0 => {
                let token = SMILES_ALPHABET.choose(rng).copied().unwrap_or("C");
                s.splice(at..at, token.chars());
            }
            1 if at < s.len() => {
                s.remove(at);
            }
            2 if at < s.len() => {
                let token = SMILES_ALPHABET.choose(rng).copied().unwrap_or("C");
                s.splice(at..=at, token.chars());
            }
            3 if at < s.len() => {
                let end = rng.random_range(at..=s.len().min(at + 6));
                let span: Vec<char> = s[at..end].to_vec();
                s.splice(end..end, span);
            }
            _ => {
                if let Some(other) = corpus.smiles.choose(rng) {
                    let other: Vec<char> = other.chars().collect();
                    let from = rng.random_range(0..=other.len());
                    s.truncate(at);
                    s.extend_from_slice(&other[from..]);
                }
            }
        }
    }
    s.into_iter().collect()
}

/// An SDF of 2-4 seed records, one of them edited: a line deleted, duplicated or
/// garbled, the record truncated, its counts line or a V3000 atom line rewritten.
pub fn mutate_sdf(corpus: &Corpus, rng: &mut StdRng) -> Input {
    let n = rng.random_range(2..=4).min(corpus.records.len().max(1));
    let picked: Vec<&String> = (0..n).filter_map(|_| corpus.records.choose(rng)).collect();
    let mutated = rng.random_range(0..picked.len().max(1));
    let mut text = String::new();
    let mut atoms = Vec::new();
    for (i, record) in picked.iter().enumerate() {
        if i == mutated {
            text.push_str(&mutate_record(record, rng));
            atoms.push(None);
        } else {
            text.push_str(record);
            let count = parse_sdf(record, "seed")
                .first()
                .and_then(|r| r.as_ref().ok())
                .map(|m| m.molecule.num_atoms());
            atoms.push(count);
        }
    }
    Input::Sdf {
        text,
        mutated,
        atoms,
    }
}

/// An XYZ frame of the corpus with one edit: a coordinate made non-finite, a huge or
/// negative atom count, a line deleted or duplicated, a character garbled.
pub fn mutate_xyz(corpus: &Corpus, rng: &mut StdRng) -> Input {
    let Some((smiles, frame)) = corpus.xyz.choose(rng) else {
        return Input::Smiles(String::new());
    };
    let mut lines: Vec<String> = frame.lines().map(String::from).collect();
    let atom = rng.random_range(2..lines.len().max(3)).min(lines.len() - 1);
    match rng.random_range(0..5) {
        0 | 1 => {
            let mut fields: Vec<String> =
                lines[atom].split_whitespace().map(String::from).collect();
            if fields.len() == 4 {
                fields[rng.random_range(1..4)] =
                    NON_FINITE[rng.random_range(0..NON_FINITE.len())].into();
            }
            lines[atom] = fields.join(" ");
        }
        2 => {
            lines[0] = [
                HUGE_COUNTS[rng.random_range(0..HUGE_COUNTS.len())],
                "-1",
                "0",
                "",
            ][rng.random_range(0..4)]
            .to_string();
        }
        3 => {
            if rng.random_bool(0.5) {
                lines.remove(atom);
            } else {
                let line = lines[atom].clone();
                lines.insert(atom, line);
            }
        }
        _ => {
            let mut chars: Vec<char> = lines[atom].chars().collect();
            let at = rng.random_range(0..=chars.len());
            let c = ['0', '-', '.', ' ', 'X', 'e', '\t'][rng.random_range(0..7)];
            chars.insert(at, c);
            lines[atom] = chars.into_iter().collect();
        }
    }
    Input::Xyz {
        text: format!("{}\n", lines.join("\n")),
        smiles: smiles.clone(),
    }
}

fn mutate_record(record: &str, rng: &mut StdRng) -> String {
    // Edit the body; the `$$$$` line stays, so the next record keeps its start.
    let body = record
        .trim_end()
        .trim_end_matches("$$$$")
        .trim_end_matches('\n');
    let mut lines: Vec<String> = body.lines().map(String::from).collect();
    if lines.is_empty() {
        return record.to_string();
    }
    let k = rng.random_range(0..lines.len());
    match rng.random_range(0..8) {
        6 => {
            // A coordinate of an atom line (V2000: the first three fields; V3000: fields
            // 5-7) becomes a non-finite number.
            let v2000 = lines.get(3).is_some_and(|l| l.contains("V2000"));
            let atom_lines: Vec<usize> = if v2000 {
                let n: usize = lines[3]
                    .get(..3)
                    .and_then(|c| c.trim().parse().ok())
                    .unwrap_or(0);
                (4..(4 + n).min(lines.len())).collect()
            } else {
                let begin = lines.iter().position(|l| l.trim() == "M  V30 BEGIN ATOM");
                let end = lines.iter().position(|l| l.trim() == "M  V30 END ATOM");
                match (begin, end) {
                    (Some(b), Some(e)) if b + 1 < e => (b + 1..e).collect(),
                    _ => Vec::new(),
                }
            };
            if let Some(&at) = atom_lines.choose(rng) {
                let token = NON_FINITE[rng.random_range(0..NON_FINITE.len())];
                let axis = rng.random_range(0..3);
                if v2000 {
                    // Fixed columns: x, y, z in 10 characters each.
                    let (a, b) = (axis * 10, axis * 10 + 10);
                    let line = &mut lines[at];
                    if line.len() >= b && line.is_char_boundary(a) && line.is_char_boundary(b) {
                        line.replace_range(a..b, &format!("{token:>10}"));
                    }
                } else {
                    // M V30 index type x y z ...
                    let mut fields: Vec<&str> = lines[at].split_whitespace().collect();
                    if fields.len() > 4 + axis {
                        fields[4 + axis] = token;
                    }
                    lines[at] = fields.join(" ");
                }
            }
        }
        7 => {
            // A huge declared atom or bond count.
            let huge = HUGE_COUNTS[rng.random_range(0..HUGE_COUNTS.len())];
            match lines.iter().position(|l| l.starts_with("M  V30 COUNTS")) {
                Some(at) => lines[at] = format!("M  V30 COUNTS {huge} {huge} 0 0 0"),
                None => {
                    let at = 3.min(lines.len() - 1);
                    lines[at] = "999999  0  0  0  0  0  0  0  0999 V2000".to_string();
                }
            }
        }
        0 => {
            lines.remove(k);
        }
        1 => {
            let line = lines[k].clone();
            lines.insert(k, line);
        }
        2 => lines.truncate(k.max(1)),
        3 => {
            // The counts line: V2000 line 4, or the V3000 COUNTS line.
            let at = lines
                .iter()
                .position(|l| l.starts_with("M  V30 COUNTS"))
                .unwrap_or(3.min(lines.len() - 1));
            let count = rng.random_range(0..200);
            lines[at] = if lines[at].starts_with("M  V30 COUNTS") {
                format!("M  V30 COUNTS {count} {} 0 0 0", rng.random_range(0..200))
            } else {
                format!(
                    "{count:>3}{:>3}  0  0  0  0  0  0  0  0999 V2000",
                    rng.random_range(0..200)
                )
            };
        }
        4 => {
            // A V3000 atom or bond line loses or gains a field.
            let v30: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].starts_with("M  V30 ") && !lines[i].contains("COUNTS"))
                .collect();
            let at = v30.choose(rng).copied().unwrap_or(k);
            let mut fields: Vec<String> = lines[at].split(' ').map(String::from).collect();
            let f = rng.random_range(0..fields.len());
            if rng.random_bool(0.5) {
                fields.remove(f);
            } else {
                fields.insert(
                    f,
                    ["X", "-1", "9999", "nan", "Cl", ""][rng.random_range(0..6)].into(),
                );
            }
            lines[at] = fields.join(" ");
        }
        _ => {
            let line: Vec<char> = lines[k].chars().collect();
            let at = rng.random_range(0..=line.len());
            let c = ['0', '9', '-', '.', ' ', 'X', 'C', 'M', '\t'][rng.random_range(0..9)];
            let mut line = line;
            if at < line.len() && rng.random_bool(0.5) {
                line[at] = c;
            } else {
                line.insert(at, c);
            }
            lines[k] = line.into_iter().collect();
        }
    }
    format!("{}\n$$$$\n", lines.join("\n"))
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
