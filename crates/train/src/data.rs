//! Molecule tables read from CSV.

use std::path::Path;

use crate::error::TrainError;

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
}

impl MoleculeTable {
    /// Reads `path`, taking SMILES from column `smiles_column` and targets from
    /// `target_columns`.
    ///
    /// # Errors
    /// [`TrainError::Csv`] if a column is missing, or a target cell of a row is not a
    /// number (the row and column are named); [`TrainError::Io`] if unreadable.
    pub fn read_csv(
        path: &Path,
        smiles_column: &str,
        target_columns: &[String],
    ) -> Result<Self, TrainError> {
        let csv_err = |reason: String| TrainError::Csv {
            path: path.to_path_buf(),
            reason,
        };
        let mut reader = csv::Reader::from_path(path).map_err(|e| csv_err(e.to_string()))?;
        let headers = reader
            .headers()
            .map_err(|e| csv_err(e.to_string()))?
            .clone();
        let column = |name: &str| {
            headers
                .iter()
                .position(|h| h.trim() == name)
                .ok_or_else(|| {
                    csv_err(format!(
                        "no column {name:?} (columns: {})",
                        headers.iter().collect::<Vec<_>>().join(", ")
                    ))
                })
        };
        let smiles_at = column(smiles_column)?;
        let target_at: Vec<usize> = target_columns
            .iter()
            .map(|c| column(c))
            .collect::<Result<_, _>>()?;
        let mut table = MoleculeTable {
            smiles: Vec::new(),
            targets: Vec::new(),
            target_columns: target_columns.to_vec(),
        };
        for (row, record) in reader.records().enumerate() {
            let record = record.map_err(|e| csv_err(format!("row {row}: {e}")))?;
            let smiles = record.get(smiles_at).unwrap_or_default().to_string();
            let mut values = Vec::with_capacity(target_at.len());
            for (&at, name) in target_at.iter().zip(target_columns) {
                let cell = record.get(at).unwrap_or_default().trim();
                let v: f32 = cell.parse().map_err(|_| {
                    csv_err(format!(
                        "row {row} (SMILES {smiles:?}): column {name:?} is not a number: {cell:?}"
                    ))
                })?;
                values.push(v);
            }
            table.smiles.push(smiles);
            table.targets.push(values);
        }
        Ok(table)
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

/// Reads a CSV that only needs a SMILES column (for prediction).
///
/// # Errors
/// As [`MoleculeTable::read_csv`].
pub fn read_smiles_csv(path: &Path, smiles_column: &str) -> Result<Vec<String>, TrainError> {
    Ok(MoleculeTable::read_csv(path, smiles_column, &[])?.smiles)
}
