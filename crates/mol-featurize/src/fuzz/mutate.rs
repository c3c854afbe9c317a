//! The mutators of [`crate::fuzz`]: random edits of seed SMILES, SDF records (V2000 and
//! V3000: characters, lines, non-finite coordinates, huge declared counts) and XYZ frames.

use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;

use super::{Corpus, Input};
use crate::structure_file::parse_sdf;

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
