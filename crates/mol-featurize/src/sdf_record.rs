//! SDF text before any parser sees it: the record splitter and the atom-block checks that
//! refuse what chematic's reader would panic on or silently accept (non-finite
//! coordinates, coincident heavy atoms, a huge declared atom count; issue #37). Used by
//! [`crate::structure_file::parse_sdf`], which owns the tests.

use crate::structure_error::{MAX_RECORD_ATOMS, MIN_BOND_ANGSTROM};

/// The records of an SDF: the text between `$$$$` lines (the last record may lack its
/// `$$$$`), blank records left out, as chematic's `SdfRecordReader` counts them.
pub(crate) fn sdf_records(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        loop {
            if rest.is_empty() {
                return None;
            }
            let mut at = 0;
            let (block, after) = loop {
                match rest[at..].find('\n') {
                    Some(nl) => {
                        if rest[at..at + nl].trim_end_matches('\r') == "$$$$" {
                            break (&rest[..at], &rest[at + nl + 1..]);
                        }
                        at += nl + 1;
                    }
                    None => {
                        if rest[at..].trim_end_matches('\r') == "$$$$" {
                            break (&rest[..at], "");
                        }
                        break (rest, "");
                    }
                }
            };
            rest = after;
            if !block.trim().is_empty() {
                return Some(block);
            }
        }
    })
}

/// Why a MOL block's atom coordinates cannot be a molecule's, read from the text before
/// any parser sees it: a coordinate that is not a finite number, or two heavy atoms
/// closer than [`MIN_BOND_ANGSTROM`] (coincident atoms; a block whose atoms all sit at
/// the origin has no coordinates and passes). V2000 atom lines and V3000 `M  V30` atom
/// lines; `None` when nothing is wrong or the block is too malformed to tell (the
/// parser then reports it).
pub(crate) fn atom_block_problem(block: &str) -> Option<String> {
    let lines: Vec<&str> = block.lines().collect();
    // (file atom number, element, x, y, z as written)
    let mut atoms: Vec<(usize, String, [&str; 3])> = Vec::new();
    let declared = lines
        .get(3)
        .filter(|l| l.contains("V2000"))
        .and_then(|counts| counts.get(..3)?.trim().parse::<usize>().ok())
        .or_else(|| {
            let counts = lines.iter().find(|l| l.starts_with("M  V30 COUNTS"))?;
            counts.split_whitespace().nth(3)?.parse().ok()
        });
    if let Some(n) = declared.filter(|&n| n > MAX_RECORD_ATOMS) {
        return Some(format!(
            "{n} atoms declared, more than the {MAX_RECORD_ATOMS} a record may have \
             (hydrogens included; reading one takes time that grows faster than its size)"
        ));
    }
    if let Some(counts) = lines.get(3).filter(|l| l.contains("V2000")) {
        let n: usize = counts.get(..3)?.trim().parse().ok()?;
        for (k, line) in lines.iter().skip(4).take(n).enumerate() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() >= 4 {
                atoms.push((
                    k + 1,
                    fields[3].to_string(),
                    [fields[0], fields[1], fields[2]],
                ));
            }
        }
    } else {
        let begin = lines.iter().position(|l| l.trim() == "M  V30 BEGIN ATOM")?;
        for line in &lines[begin + 1..] {
            if line.trim() == "M  V30 END ATOM" {
                break;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            // M V30 index type x y z ...
            if fields.len() >= 7 {
                let Ok(index) = fields[2].parse::<usize>() else {
                    continue;
                };
                atoms.push((
                    index,
                    fields[3].to_string(),
                    [fields[4], fields[5], fields[6]],
                ));
            }
        }
    }
    let mut heavy: Vec<(usize, [f64; 3])> = Vec::new();
    for (number, element, text) in &atoms {
        let mut xyz = [0.0; 3];
        for (c, t) in text.iter().enumerate() {
            let Ok(v) = t.parse::<f64>() else {
                return None;
            };
            if !v.is_finite() {
                return Some(format!(
                    "atom {number} ({element}): its {} coordinate {t:?} is not a finite number",
                    ["x", "y", "z"][c]
                ));
            }
            xyz[c] = v;
        }
        if !matches!(element.as_str(), "H" | "D" | "T") {
            heavy.push((*number, xyz));
        }
    }
    if heavy.iter().all(|(_, p)| *p == [0.0; 3]) {
        return None;
    }
    for (i, (a, p)) in heavy.iter().enumerate() {
        for (b, q) in &heavy[i + 1..] {
            let d = (0..3).map(|c| (p[c] - q[c]).powi(2)).sum::<f64>().sqrt();
            if d < MIN_BOND_ANGSTROM {
                return Some(format!(
                    "atoms {a} and {b} are {d:.2} Angstrom apart (heavy atoms closer than \
                     {MIN_BOND_ANGSTROM} Angstrom: coincident or not this molecule's coordinates)"
                ));
            }
        }
    }
    None
}
