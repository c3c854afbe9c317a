//! SMILES corpora for the generator: a column of a delimited file, tokenized with the
//! run's vocabulary, rows that cannot be used reported with their reasons.

use std::path::{Path, PathBuf};

use mol_featurize::SmilesVocab;
use serde::{Deserialize, Serialize};

use crate::error::TrainError;

/// Where a generator's training SMILES come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmilesCorpus {
    /// Delimited file (CSV by default) with a header.
    pub path: PathBuf,
    /// Column holding the SMILES.
    pub smiles_column: String,
    /// Field delimiter.
    pub delimiter: char,
    /// Use only the first this many rows (after the header).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// A row left out of training, with why (`skipped.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedSmiles {
    /// 0-based data row (the header is not counted).
    pub row: usize,
    /// The cell as read.
    pub smiles: String,
    /// The reason, in words.
    pub reason: String,
}

impl SmilesCorpus {
    /// The SMILES cells with their rows, surrounding spaces trimmed.
    ///
    /// # Errors
    /// An unreadable file, a missing column, or a malformed CSV record (named by line).
    pub fn read(&self) -> Result<Vec<(usize, String)>, TrainError> {
        let delimiter = crate::data::delimiter_byte(self.delimiter)?;
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .flexible(true)
            .from_path(&self.path)
            .map_err(|e| csv_error(&self.path, e))?;
        let headers = reader.headers().map_err(|e| csv_error(&self.path, e))?;
        let column = headers
            .iter()
            .position(|h| h.trim() == self.smiles_column)
            .ok_or_else(|| {
                TrainError::Invalid(format!(
                    "{}: no column {:?} (columns: {:?})",
                    self.path.display(),
                    self.smiles_column,
                    headers.iter().collect::<Vec<_>>()
                ))
            })?;
        let mut rows = Vec::new();
        for (row, record) in reader.records().enumerate() {
            if self.limit.is_some_and(|n| row >= n) {
                break;
            }
            let record = record.map_err(|e| csv_error(&self.path, e))?;
            rows.push((row, record.get(column).unwrap_or("").trim().to_string()));
        }
        Ok(rows)
    }
}

fn csv_error(path: &Path, e: csv::Error) -> TrainError {
    TrainError::Invalid(format!("{}: {e}", path.display()))
}

/// Token ids (`<bos> ... <eos>`) of each row that fits `max_len` tokens, and the rows
/// left out: empty cells, SMILES the vocabulary cannot encode (the token or character
/// named), and SMILES longer than `max_len` tokens.
pub fn encode_rows(
    rows: &[(usize, String)],
    vocab: &SmilesVocab,
    max_len: usize,
) -> (Vec<Vec<u32>>, Vec<SkippedSmiles>) {
    let mut kept = Vec::with_capacity(rows.len());
    let mut skipped = Vec::new();
    for (row, smiles) in rows {
        let skip = |reason: String| SkippedSmiles {
            row: *row,
            smiles: smiles.clone(),
            reason,
        };
        if smiles.is_empty() {
            skipped.push(skip("empty SMILES cell".into()));
            continue;
        }
        match vocab.encode(smiles) {
            Ok(ids) if ids.len() <= max_len => kept.push(ids),
            Ok(ids) => skipped.push(skip(format!(
                "{} tokens with <bos> and <eos>, more than the model's {max_len} positions",
                ids.len()
            ))),
            Err(e) => skipped.push(skip(e.to_string())),
        }
    }
    (kept, skipped)
}
