//! Parity rows on chemistry edge cases (issue #14, `fixtures/edge_cases.json`) and on
//! whether mutated SMILES are molecules at all (issue #19, `fixtures/smiles_fuzz.tsv.gz`).
//! Each row comes with a case-by-case listing for docs/PARITY.md.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, anyhow};
use mol_featurize::reference::{parse_fuzz_cases, read_edge_cases};
use rayon::prelude::*;

use super::Row;

/// The "edge cases vs RDKit" row (`fixtures/edge_cases.json`: per category, how many cases
/// agree on every atom field, bond and OGB row) and the per-case listing for
/// docs/PARITY.md.
pub fn edge_case_row(fixtures: &Path) -> Result<(Row, String)> {
    let cases = read_edge_cases(&fixtures.join("edge_cases.json")).map_err(|e| anyhow!(e))?;
    let verdicts: Vec<Option<String>> = cases.par_iter().map(|c| c.difference()).collect();
    let mut per_category: Vec<(&str, usize, usize)> = Vec::new();
    let mut listing = String::from("| category | SMILES | result |\n|---|---|---|\n");
    let mut failures = Vec::new();
    for (case, verdict) in cases.iter().zip(&verdicts) {
        let k = match per_category
            .iter()
            .position(|(c, _, _)| *c == case.category)
        {
            Some(k) => k,
            None => {
                per_category.push((&case.category, 0, 0));
                per_category.len() - 1
            }
        };
        per_category[k].2 += 1;
        per_category[k].1 += usize::from(verdict.is_none());
        let result = verdict.clone().unwrap_or_else(|| "agrees".into());
        listing.push_str(&format!(
            "| {} | `{}` | {result} |\n",
            case.category,
            case.smiles.replace('|', "\\|")
        ));
        if let Some(v) = verdict {
            failures.push(format!("{}: {v}", case.smiles));
        }
    }
    let agree = verdicts.iter().filter(|v| v.is_none()).count();
    let mut note = format!(
        "{agree} of {} cases agree (every atom field, bond type, OGB row): {}",
        cases.len(),
        per_category
            .iter()
            .map(|(c, ok, n)| format!("{c} {ok}/{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !failures.is_empty() {
        note.push_str(&format!("; differing: {}", failures.join("; ")));
    }
    let row = Row {
        component: "edge cases vs RDKit (macrocycle aromaticity, dative rings, stereo H)".into(),
        fixture: "edge_cases.json".into(),
        max_abs: (cases.len() - agree) as f64,
        max_rel: 0.0,
        tolerance: 0.0,
        pass: agree == cases.len(),
        note,
    };
    Ok((row, listing))
}

/// The "SMILES accept/reject vs RDKit" row over `fixtures/smiles_fuzz.tsv.gz` and the
/// listing of every string that differs, with the reason.
pub fn fuzz_row(fixtures: &Path) -> Result<(Row, String)> {
    let path = fixtures.join("smiles_fuzz.tsv.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(&path).with_context(|| path.display().to_string())?,
    )
    .read_to_string(&mut text)
    .with_context(|| path.display().to_string())?;
    let cases = parse_fuzz_cases(&text).map_err(|e| anyhow!(e))?;
    let verdicts: Vec<Option<String>> = cases.par_iter().map(|c| c.difference()).collect();
    let mut listing = String::from("| SMILES | difference (RDKit 2026.09 vs ours) |\n|---|---|\n");
    let mut differing = 0;
    for (case, verdict) in cases.iter().zip(&verdicts) {
        if let Some(v) = verdict {
            differing += 1;
            listing.push_str(&format!(
                "| `{}` | {} |\n",
                case.smiles.replace('|', "\\|"),
                v.replace('|', "\\|")
            ));
        }
    }
    let n = cases.len();
    let accepted = cases.iter().filter(|c| c.accepted).count();
    let row = Row {
        component: "SMILES accept/reject + atoms vs RDKit, mutated dataset SMILES".into(),
        fixture: "smiles_fuzz.tsv.gz".into(),
        max_abs: differing as f64 / n as f64,
        max_rel: 0.0,
        tolerance: 0.004,
        pass: differing * 1000 <= 4 * n,
        note: format!(
            "{} of {n} agree ({accepted} accepted by RDKit); the {differing} others are the \
             deliberate rejections ('~', '.' inside a branch; docs/CHEMISTRY.md)",
            n - differing
        ),
    };
    Ok((row, listing))
}
