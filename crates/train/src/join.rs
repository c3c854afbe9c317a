//! Multi-task tables from single-task ones: rows joined by canonical SMILES, one target
//! column per source, an empty cell where a molecule is not in a source (a missing
//! label, masked in training; chemprop's convention).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mol_featurize::{Molecule, SkippedMolecule, canonical_smiles};
use serde::{Deserialize, Serialize};

use crate::data::MoleculeTable;
use crate::error::TrainError;

/// One single-task table to join.
#[derive(Debug, Clone)]
pub struct JoinSource {
    /// Its CSV.
    pub path: PathBuf,
    /// SMILES column.
    pub smiles_column: String,
    /// Target column.
    pub target_column: String,
    /// Name of its target column in the joined table.
    pub name: String,
}

/// What [`join_by_smiles`] did.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JoinReport {
    /// Rows of the joined table (distinct molecules).
    pub n_rows: usize,
    /// Per source (in order): its name and the rows that carry its label.
    pub labelled: Vec<(String, usize)>,
    /// Rows with every label.
    pub n_all_labelled: usize,
    /// Source rows left out: unreadable SMILES or no label (source name in `kind`).
    pub skipped: Vec<SkippedMolecule>,
    /// Source rows whose molecule appeared earlier in the same source (the first label
    /// is kept).
    pub n_duplicates: usize,
}

/// Joins `sources` by canonical SMILES ([`canonical_smiles`]) into the CSV `out`:
/// column `smiles` (canonical), then one column per source. Rows are in order of first
/// appearance.
///
/// # Errors
/// [`TrainError::Csv`] / [`TrainError::Io`] for an unreadable source or output.
pub fn join_by_smiles(sources: &[JoinSource], out: &Path) -> Result<JoinReport, TrainError> {
    let mut rows: Vec<(String, Vec<Option<f32>>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut report = JoinReport::default();
    for (k, source) in sources.iter().enumerate() {
        let table = MoleculeTable::read_csv(
            &source.path,
            &source.smiles_column,
            std::slice::from_ref(&source.target_column),
        )?;
        let mut seen = std::collections::HashSet::new();
        for (row, (smiles, targets)) in table.smiles.iter().zip(&table.targets).enumerate() {
            let skip = |reason: String| SkippedMolecule {
                row,
                smiles: smiles.clone(),
                kind: source.name.clone(),
                reason,
            };
            let key = match Molecule::from_smiles(smiles).and_then(|m| canonical_smiles(&m)) {
                Ok(key) => key,
                Err(e) => {
                    report.skipped.push(skip(e.to_string()));
                    continue;
                }
            };
            let Some(value) = targets.first().copied().filter(|v| v.is_finite()) else {
                report.skipped.push(skip("no label".into()));
                continue;
            };
            if !seen.insert(key.clone()) {
                report.n_duplicates += 1;
                continue;
            }
            let at = *index.entry(key.clone()).or_insert_with(|| {
                rows.push((key, vec![None; sources.len()]));
                rows.len() - 1
            });
            rows[at].1[k] = Some(value);
        }
    }
    let csv_err = |e: csv::Error| TrainError::Csv {
        path: out.to_path_buf(),
        reason: e.to_string(),
    };
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
    }
    let mut w = csv::Writer::from_path(out).map_err(csv_err)?;
    let mut header = vec!["smiles".to_string()];
    header.extend(sources.iter().map(|s| s.name.clone()));
    w.write_record(&header).map_err(csv_err)?;
    for (smiles, values) in &rows {
        let mut record = vec![smiles.clone()];
        record.extend(
            values
                .iter()
                .map(|v| v.map(|x| x.to_string()).unwrap_or_default()),
        );
        w.write_record(&record).map_err(csv_err)?;
    }
    w.flush().map_err(|e| TrainError::io(out, e))?;
    report.n_rows = rows.len();
    report.labelled = sources
        .iter()
        .enumerate()
        .map(|(k, s)| {
            (
                s.name.clone(),
                rows.iter().filter(|r| r.1[k].is_some()).count(),
            )
        })
        .collect();
    report.n_all_labelled = rows
        .iter()
        .filter(|r| r.1.iter().all(Option::is_some))
        .count();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_molecule_share_a_row() {
        let dir = std::env::temp_dir().join(format!("molattn-join-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a.csv"),
            "smiles,y\nOCC,1\nC1CC,2\nc1ccccc1O,3\nCCO,9\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("b.csv"),
            "smiles,y\nCCO,-1\nCC(=O)O,-2\nOc1ccccc1,\n",
        )
        .unwrap();
        let source = |f: &str, name: &str| JoinSource {
            path: dir.join(f),
            smiles_column: "smiles".into(),
            target_column: "y".into(),
            name: name.into(),
        };
        let out = dir.join("joined.csv");
        let r = join_by_smiles(&[source("a.csv", "a"), source("b.csv", "b")], &out).unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "smiles,a,b\nCCO,1,-1\nOc1ccccc1,3,\nCC(=O)O,,-2\n"
        );
        assert_eq!((r.n_rows, r.n_all_labelled, r.n_duplicates), (3, 1, 1));
        assert_eq!(r.labelled, vec![("a".to_string(), 2), ("b".to_string(), 2)]);
        let skipped: Vec<(usize, &str)> =
            r.skipped.iter().map(|s| (s.row, s.kind.as_str())).collect();
        assert_eq!(skipped, vec![(1, "a"), (2, "b")]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
