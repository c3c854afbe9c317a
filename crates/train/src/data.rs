//! Molecule tables read from CSV (or another single-byte delimiter).

use std::path::Path;

use mol_featurize::SkippedMolecule;

use crate::error::TrainError;

/// Cells read as a missing label: pandas' default NA strings (what chemprop reads as
/// NaN), compared after trimming.
pub const MISSING_LABEL_CELLS: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// Kind of a row whose target cell is missing (see [`MISSING_LABEL_CELLS`]).
pub const MISSING_LABEL: &str = "missing-label";
/// Kind of a row whose target cell is neither a finite number nor missing.
pub const BAD_LABEL: &str = "bad-label";

/// A CSV of molecules: one SMILES per row and one or more numeric targets.
#[derive(Debug, Clone, PartialEq)]
pub struct MoleculeTable {
    /// SMILES per data row (as written; featurizers trim whitespace).
    pub smiles: Vec<String>,
    /// Targets per row, one value per target column. Units are the dataset's
    /// (kcal/mol for FreeSolv; z-scores in MAT's ESOL/FreeSolv copies).
    pub targets: Vec<Vec<f32>>,
    /// Names of the target columns.
    pub target_columns: Vec<String>,
    /// Identity of each row in reports and predictions (an SDF record's title or
    /// `--id-field`, an XYZ file's name); empty when the rows have none but their
    /// position (a CSV).
    pub ids: Vec<String>,
    /// Rows without a usable label (every target missing) or with a target cell that is
    /// not a number, in row order: skipped for training and reported, never an abort. A
    /// row with some targets missing is kept; those cells are NaN and masked.
    pub label_problems: Vec<SkippedMolecule>,
}

impl MoleculeTable {
    /// Whether `row` is trained on: it has at least one label (the others are masked)
    /// and no malformed cell ([`MoleculeTable::label_problems`]).
    pub fn is_labelled(&self, row: usize) -> bool {
        self.targets[row].iter().any(|v| v.is_finite())
            && !self.label_problems.iter().any(|p| p.row == row)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.smiles.len()
    }

    /// True when the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.smiles.is_empty()
    }
}

/// Targets of one row from its cells (`(target name, cell)`; a `None` cell is a field
/// the record does not have), and why the row is not trained on, if it is not:
/// [`BAD_LABEL`] when a cell is neither a finite number nor missing, [`MISSING_LABEL`]
/// when every target is missing. A missing cell is empty, an NA string
/// ([`MISSING_LABEL_CELLS`]) or NaN in any spelling, and reads as NaN (masked per task,
/// chemprop's convention). `what` names a cell's container in the reason (`column`,
/// `field`).
pub(crate) fn parse_labels(
    cells: &[(&str, Option<&str>)],
    what: &str,
) -> (Vec<f32>, Option<(&'static str, String)>) {
    let mut values = Vec::with_capacity(cells.len());
    let mut bad: Option<String> = None;
    let mut first_missing: Option<String> = None;
    for &(name, cell) in cells {
        let Some(cell) = cell.map(str::trim) else {
            values.push(f32::NAN);
            first_missing.get_or_insert_with(|| format!("{what} {name:?} is absent"));
            continue;
        };
        let parsed = cell.parse::<f32>().ok();
        // NaN in any spelling (`NAN`, `nan`) is missing, as pandas' NA strings.
        let missing = MISSING_LABEL_CELLS.contains(&cell) || parsed.is_some_and(f32::is_nan);
        match parsed.filter(|v| v.is_finite() && !missing) {
            Some(v) => values.push(v),
            None => {
                values.push(f32::NAN);
                if missing {
                    first_missing
                        .get_or_insert_with(|| format!("{what} {name:?} ({cell:?} is missing)"));
                } else {
                    bad.get_or_insert_with(|| {
                        format!("{what} {name:?} ({cell:?} is not a finite number)")
                    });
                }
            }
        }
    }
    // A malformed number skips its row (a data error, reported); a missing label is
    // masked in the loss and metrics of its task, and only a row with no label at all
    // is skipped.
    let problem = match (bad, first_missing) {
        (Some(reason), _) => Some((BAD_LABEL, reason)),
        (None, Some(reason)) if !cells.is_empty() && values.iter().all(|v| v.is_nan()) => {
            let reason = if cells.len() == 1 {
                reason
            } else {
                format!("every target {what} is missing (first: {reason})")
            };
            Some((MISSING_LABEL, reason))
        }
        _ => None,
    };
    (values, problem)
}

/// The target columns of `--targets-from START:` (every header column from 0-based
/// position START on) or `START:END` (END excluded), leaving out `smiles_column`.
///
/// # Errors
/// [`TrainError::Invalid`] for a malformed range or one that selects no column;
/// [`TrainError::Csv`] / [`TrainError::Io`] if the header cannot be read.
pub fn target_columns_from(
    path: &Path,
    delimiter: u8,
    range: &str,
    smiles_column: &str,
) -> Result<Vec<String>, TrainError> {
    let bad = |why: &str| TrainError::Invalid(format!("--targets-from {range:?}: {why}"));
    let (start, end) = range
        .split_once(':')
        .ok_or_else(|| bad("expected START: or START:END"))?;
    let start: usize = start
        .trim()
        .parse()
        .map_err(|_| bad("START is not a number"))?;
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .from_path(path)
        .map_err(|e| TrainError::Csv {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| TrainError::Csv {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').trim().to_string())
        .collect();
    let end = match end.trim() {
        "" => headers.len(),
        e => e
            .parse::<usize>()
            .map_err(|_| bad("END is not a number"))?
            .min(headers.len()),
    };
    let columns: Vec<String> = headers
        .get(start..end.max(start))
        .unwrap_or_default()
        .iter()
        .filter(|h| h.as_str() != smiles_column)
        .cloned()
        .collect();
    if columns.is_empty() {
        return Err(bad(&format!(
            "selects no target column (columns: {})",
            headers.join(", ")
        )));
    }
    Ok(columns)
}

/// Reads a CSV that only needs a SMILES column (for prediction).
///
/// # Errors
/// As [`MoleculeTable::read_csv`].
pub fn read_smiles_csv(path: &Path, smiles_column: &str) -> Result<Vec<String>, TrainError> {
    read_smiles_delimited(path, smiles_column, b',')
}

/// [`read_smiles_csv`] with another field delimiter.
///
/// # Errors
/// As [`MoleculeTable::read_delimited`].
pub fn read_smiles_delimited(
    path: &Path,
    smiles_column: &str,
    delimiter: u8,
) -> Result<Vec<String>, TrainError> {
    Ok(MoleculeTable::read_delimited(path, smiles_column, &[], delimiter)?.smiles)
}

/// A `--delimiter` value: one ASCII character, or `tab` / `\t` for a tab.
///
/// # Errors
/// [`TrainError::Invalid`] naming the value otherwise.
pub fn parse_delimiter(text: &str) -> Result<char, TrainError> {
    match text {
        "tab" | "\\t" | "\t" => Ok('\t'),
        _ => {
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if c.is_ascii() => Ok(c),
                _ => Err(TrainError::Invalid(format!(
                    "delimiter {text:?}: give one ASCII character, or tab"
                ))),
            }
        }
    }
}

/// `c` as the single byte a CSV reader splits on.
///
/// # Errors
/// [`TrainError::Invalid`] when `c` is not one ASCII character.
pub fn delimiter_byte(c: char) -> Result<u8, TrainError> {
    u8::try_from(c)
        .ok()
        .filter(u8::is_ascii)
        .ok_or_else(|| TrainError::Invalid(format!("delimiter {c:?} is not one ASCII character")))
}

/// A delimiter other than `used` that splits the one-column `headers` into several.
pub(crate) fn other_delimiter(headers: &csv::StringRecord, used: u8) -> Option<char> {
    let [only] = headers.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    [';', '\t', '|', ',']
        .into_iter()
        .filter(|&d| d as u32 != u32::from(used))
        .find(|&d| only.contains(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("molattn-data-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn missing_and_bad_labels_are_reported_rows_not_errors() {
        let path = write(
            "labels.csv",
            "smiles,y\nCCO,1.5\nCCC,\nCCN,NAN\nCCCl, NA \nc1ccccc1,abc\nCO,inf\nCC,-2\n",
        );
        let t = MoleculeTable::read_csv(&path, "smiles", &["y".into()]).unwrap();
        assert_eq!(t.len(), 7);
        let rows: Vec<(usize, &str)> = t
            .label_problems
            .iter()
            .map(|p| (p.row, p.kind.as_str()))
            .collect();
        assert_eq!(
            rows,
            vec![
                (1, MISSING_LABEL),
                (2, MISSING_LABEL),
                (3, MISSING_LABEL),
                (4, BAD_LABEL),
                (5, BAD_LABEL)
            ]
        );
        assert!(
            t.label_problems[0]
                .reason
                .contains("row 1 (SMILES \"CCC\")")
        );
        assert_eq!(t.targets[0], vec![1.5]);
        assert_eq!(t.targets[6], vec![-2.0]);
        let labelled: Vec<bool> = (0..7).map(|r| t.is_labelled(r)).collect();
        assert_eq!(
            labelled,
            vec![true, false, false, false, false, false, true]
        );
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn delimiters_bom_and_crlf() {
        let semicolon = write("semi.csv", "smiles;y\nCCO;1.0\n");
        let e = MoleculeTable::read_csv(&semicolon, "smiles", &["y".into()]).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("no column \"smiles\""), "{e}");
        assert!(e.contains("pass --delimiter ';'"), "{e}");
        let t = MoleculeTable::read_delimited(&semicolon, "smiles", &["y".into()], b';').unwrap();
        assert_eq!(
            (t.smiles.clone(), t.targets.clone()),
            (vec!["CCO".into()], vec![vec![1.0]])
        );
        let tabs = write("tabs.tsv", "smiles\ty\nCCO\t2.0\n");
        let t = MoleculeTable::read_delimited(&tabs, "smiles", &["y".into()], b'\t').unwrap();
        assert_eq!(t.targets, vec![vec![2.0]]);
        // A UTF-8 BOM before the header and CRLF line ends.
        let bom = write("bom.csv", "\u{feff}smiles,y\r\nCCO,3.0\r\nCCN,4.0\r\n");
        let t = MoleculeTable::read_csv(&bom, "smiles", &["y".into()]).unwrap();
        assert_eq!(t.smiles, vec!["CCO".to_string(), "CCN".to_string()]);
        assert_eq!(t.targets, vec![vec![3.0], vec![4.0]]);

        assert_eq!(parse_delimiter("tab").unwrap(), '\t');
        assert_eq!(parse_delimiter("\\t").unwrap(), '\t');
        assert_eq!(parse_delimiter(";").unwrap(), ';');
        assert!(parse_delimiter(";;").is_err());
        for p in [semicolon, tabs, bom] {
            let _ = std::fs::remove_file(p);
        }
    }

    /// Issue #37 item 6: a header naming a column twice is refused when that column is
    /// asked for (by --target or through --targets-from), naming both positions; other
    /// columns of the same file still read.
    #[test]
    fn a_duplicated_header_is_refused_not_read_twice() {
        let path = write("dup.csv", "smiles,y,y,z\nCCO,1,2,3\nCCN,4,5,6\n");
        let e = MoleculeTable::read_csv(&path, "smiles", &["y".to_string()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"y\" appears 2 times") && e.contains("columns 2, 3"),
            "{e}"
        );
        let from = target_columns_from(&path, b',', "1:", "smiles").unwrap();
        let e = MoleculeTable::read_csv(&path, "smiles", &from)
            .unwrap_err()
            .to_string();
        assert!(e.contains("appears 2 times"), "{e}");
        let z = MoleculeTable::read_csv(&path, "smiles", &["z".to_string()]).unwrap();
        assert_eq!(z.targets, vec![vec![3.0], vec![6.0]]);
        let e = MoleculeTable::read_csv(&path, "smiles", &["z".to_string(), "z".to_string()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("named twice"), "{e}");
    }
}
