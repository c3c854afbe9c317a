//! The MOSES benchmark's molecule sets (Polykovskiy et al. 2020, "Molecular Sets
//! (MOSES)"), from the files the `molsets` 0.3.1 wheel ships
//! (`moses/dataset/data/{train,test,test_scaffolds}.csv.gz`, one `SMILES` column):
//! decompressed once into plain CSVs that `train --model smiles-gpt --smiles-column SMILES`
//! and the metrics read.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::error::TrainError;

/// The three sets, their file stems and molecule counts in molsets 0.3.1
/// (`moses.get_dataset(...)`: 1,584,663 / 176,074 / 176,225 SMILES).
pub const MOSES_SPLITS: [(&str, usize); 3] = [
    ("train", 1_584_663),
    ("test", 176_074),
    ("test_scaffolds", 176_225),
];

/// Decompresses `raw_dir/<split>.csv.gz` into `out_dir/<split>.csv` for every split of
/// [`MOSES_SPLITS`], checking the header (`SMILES`) and the row counts. Returns the CSVs.
///
/// # Errors
/// [`TrainError::Io`] naming the file; [`TrainError::Invalid`] for another header or row
/// count (a different molsets release).
pub fn convert_moses(raw_dir: &Path, out_dir: &Path) -> Result<Vec<PathBuf>, TrainError> {
    std::fs::create_dir_all(out_dir).map_err(|e| TrainError::io(out_dir, e))?;
    let mut written = Vec::new();
    for (split, expected) in MOSES_SPLITS {
        let source = raw_dir.join(format!("{split}.csv.gz"));
        let file = std::fs::File::open(&source).map_err(|e| TrainError::io(&source, e))?;
        let reader = BufReader::new(flate2::read::GzDecoder::new(file));
        let target = out_dir.join(format!("{split}.csv"));
        // A temporary file beside the target, synced and renamed over it when whole.
        let tmp = mol_featurize::atomic_file::temp_file_in(out_dir)
            .map_err(|e| TrainError::io(out_dir, e))?;
        let partial = tmp.path().to_path_buf();
        let mut out = std::io::BufWriter::new(tmp);
        let mut rows = 0usize;
        for (i, line) in reader.lines().enumerate() {
            let line = line.map_err(|e| TrainError::io(&source, e))?;
            if i == 0 && line.trim() != "SMILES" {
                return Err(TrainError::Invalid(format!(
                    "{}: header {line:?}, expected \"SMILES\"",
                    source.display()
                )));
            }
            if i > 0 && !line.trim().is_empty() {
                rows += 1;
            }
            writeln!(out, "{line}").map_err(|e| TrainError::io(&partial, e))?;
        }
        let tmp = out
            .into_inner()
            .map_err(|e| TrainError::io(&partial, e.into_error()))?;
        tmp.as_file()
            .sync_all()
            .map_err(|e| TrainError::io(&partial, e))?;
        if rows != expected {
            return Err(TrainError::Invalid(format!(
                "{}: {rows} SMILES, molsets 0.3.1 ships {expected}",
                source.display()
            )));
        }
        tmp.persist(&target)
            .map_err(|e| TrainError::io(&target, e.error))?;
        written.push(target);
    }
    Ok(written)
}
