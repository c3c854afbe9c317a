//! A delimited file (CSV, TSV, ...) read in chunks of rows: what
//! [`crate::data::MoleculeTable::read_delimited_ids`] reads at once, and streaming
//! prediction reads a chunk at a time so that memory does not grow with the file
//! (issue #38 item 4).

use std::fs::File;
use std::path::{Path, PathBuf};

use mol_featurize::SkippedMolecule;

use crate::data::{MoleculeTable, parse_labels};
use crate::error::TrainError;

/// The columns to read by name.
#[derive(Debug, Clone, Copy)]
pub struct Columns<'a> {
    /// The SMILES column.
    pub smiles: &'a str,
    /// The column naming each row ([`MoleculeTable::ids`]), if any.
    pub id: Option<&'a str>,
    /// Target columns (none for prediction).
    pub targets: &'a [String],
}

/// An open delimited file positioned after its header.
pub struct DelimitedRows {
    path: PathBuf,
    reader: csv::Reader<File>,
    smiles_at: usize,
    id_at: Option<usize>,
    target_at: Vec<usize>,
    target_columns: Vec<String>,
    next_row: usize,
}

impl DelimitedRows {
    /// Opens `path` and finds `columns` in its header (surrounding spaces and a UTF-8
    /// byte-order mark ignored).
    ///
    /// # Errors
    /// [`TrainError::Csv`]: unreadable file, a column missing (with the header's columns
    /// and, when the header looks split by another delimiter, the flag to pass), a
    /// column named twice in the header, a target named twice.
    pub fn open(path: &Path, columns: Columns<'_>, delimiter: u8) -> Result<Self, TrainError> {
        let csv_err = |reason: String| TrainError::Csv {
            path: path.to_path_buf(),
            reason,
        };
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .from_path(path)
            .map_err(|e| csv_err(e.to_string()))?;
        let headers = reader
            .headers()
            .map_err(|e| csv_err(e.to_string()))?
            .clone();
        let column = |name: &str| {
            let named = |h: &str| h.trim_start_matches('\u{feff}').trim() == name;
            let at: Vec<usize> = (0..headers.len()).filter(|&i| named(&headers[i])).collect();
            if at.len() > 1 {
                return Err(csv_err(format!(
                    "column {name:?} appears {} times in the header (columns {}): rename \
                     the duplicates so that each column has one name",
                    at.len(),
                    at.iter()
                        .map(|i| (i + 1).to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            at.first().copied().ok_or_else(|| {
                let mut reason = format!(
                    "no column {name:?} (columns split at {:?}: {})",
                    delimiter as char,
                    headers.iter().collect::<Vec<_>>().join(", ")
                );
                if let Some(seen) = crate::data::other_delimiter(&headers, delimiter) {
                    let flag = if seen == '\t' {
                        "tab".to_string()
                    } else {
                        format!("'{seen}'")
                    };
                    reason.push_str(&format!(
                        "; the header looks {seen:?}-separated: pass --delimiter {flag}"
                    ));
                }
                csv_err(reason)
            })
        };
        let smiles_at = column(columns.smiles)?;
        let id_at = columns.id.map(column).transpose()?;
        let target_at: Vec<usize> = columns
            .targets
            .iter()
            .map(|c| column(c))
            .collect::<Result<_, _>>()?;
        if let Some(twice) = columns
            .targets
            .iter()
            .enumerate()
            .find_map(|(i, c)| columns.targets[..i].contains(c).then_some(c))
        {
            return Err(csv_err(format!(
                "target column {twice:?} is named twice: each target is one column"
            )));
        }
        Ok(Self {
            path: path.to_path_buf(),
            reader,
            smiles_at,
            id_at,
            target_at,
            target_columns: columns.targets.to_vec(),
            next_row: 0,
        })
    }

    /// The index of the next row to be read (rows counted from 0 after the header).
    pub fn next_row(&self) -> usize {
        self.next_row
    }

    /// Reads up to `n` more rows; an empty table at the end of the file. Label problems
    /// name their row in the file (not in the chunk); `row` fields of
    /// [`MoleculeTable::label_problems`] are file rows too.
    ///
    /// # Errors
    /// [`TrainError::Csv`] for a malformed record (its row named).
    pub fn next_chunk(&mut self, n: usize) -> Result<MoleculeTable, TrainError> {
        let mut table = MoleculeTable {
            smiles: Vec::new(),
            targets: Vec::new(),
            target_columns: self.target_columns.clone(),
            ids: Vec::new(),
            label_problems: Vec::new(),
        };
        let mut record = csv::StringRecord::new();
        while table.smiles.len() < n {
            let row = self.next_row;
            let more = self
                .reader
                .read_record(&mut record)
                .map_err(|e| TrainError::Csv {
                    path: self.path.clone(),
                    reason: format!("row {row}: {e}"),
                })?;
            if !more {
                break;
            }
            self.next_row += 1;
            let smiles = record.get(self.smiles_at).unwrap_or_default().to_string();
            if let Some(at) = self.id_at {
                table
                    .ids
                    .push(record.get(at).unwrap_or_default().trim().to_string());
            }
            let cells: Vec<(&str, Option<&str>)> = self
                .target_at
                .iter()
                .zip(&self.target_columns)
                .map(|(&at, name)| (name.as_str(), Some(record.get(at).unwrap_or_default())))
                .collect();
            let (values, problem) = parse_labels(&cells, "column");
            if let Some((kind, reason)) = problem {
                table.label_problems.push(SkippedMolecule {
                    row,
                    smiles: smiles.clone(),
                    kind: kind.to_string(),
                    reason: format!("row {row} (SMILES {smiles:?}): no usable label: {reason}"),
                });
            }
            table.smiles.push(smiles);
            table.targets.push(values);
        }
        Ok(table)
    }
}
/// Whole tables read through [`DelimitedRows`].
impl MoleculeTable {
    /// Reads the comma-separated `path`: [`MoleculeTable::read_delimited`] with `b','`.
    ///
    /// # Errors
    /// As [`MoleculeTable::read_delimited`].
    pub fn read_csv(
        path: &Path,
        smiles_column: &str,
        target_columns: &[String],
    ) -> Result<Self, TrainError> {
        Self::read_delimited(path, smiles_column, target_columns, b',')
    }

    /// Reads `path` (fields separated by `delimiter`, a UTF-8 byte-order mark and CRLF line
    /// ends accepted), taking SMILES from column `smiles_column` and targets from
    /// `target_columns`. A target cell that is empty or an NA string
    /// ([`crate::data::MISSING_LABEL_CELLS`]) is a missing label (NaN, masked per task); a row whose
    /// every target is missing, or with a cell that is not a finite number, is a
    /// [`MoleculeTable::label_problems`] entry (skipped and reported).
    ///
    /// # Errors
    /// [`TrainError::Csv`] if a column is missing (naming the columns found, and the
    /// delimiter the header seems to use when it is not `delimiter`) or a row is
    /// malformed; [`TrainError::Io`] if unreadable.
    pub fn read_delimited(
        path: &Path,
        smiles_column: &str,
        target_columns: &[String],
        delimiter: u8,
    ) -> Result<Self, TrainError> {
        Self::read_delimited_ids(path, smiles_column, None, target_columns, delimiter)
    }

    /// [`MoleculeTable::read_delimited`], taking each row's identity
    /// ([`MoleculeTable::ids`]) from column `id_column` when given.
    ///
    /// # Errors
    /// As [`MoleculeTable::read_delimited`]; a missing `id_column` too.
    pub fn read_delimited_ids(
        path: &Path,
        smiles_column: &str,
        id_column: Option<&str>,
        target_columns: &[String],
        delimiter: u8,
    ) -> Result<Self, TrainError> {
        let columns = Columns {
            smiles: smiles_column,
            id: id_column,
            targets: target_columns,
        };
        let mut rows = DelimitedRows::open(path, columns, delimiter)?;
        rows.next_chunk(usize::MAX)
    }
}
