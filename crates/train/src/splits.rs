//! Train/validation/test splits over the rows of a [`crate::data::MoleculeTable`].

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use mol_featurize::Molecule;
use mol_featurize::scaffold::bemis_murcko_scaffold;

use crate::data::MoleculeTable;
use crate::error::TrainError;

/// How the split is chosen.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitSpec {
    /// A named split of a split file.
    File {
        /// The JSON split file.
        path: PathBuf,
        /// The split's name, e.g. `random-0`.
        name: String,
    },
    /// Seeded random 80/10/10.
    Random {
        /// Seed.
        seed: u64,
    },
    /// Bemis-Murcko scaffold 80/10/10.
    Scaffold,
}

/// Row indices (0-based data rows of the CSV) of each part of a split.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    /// Training rows.
    pub train: Vec<usize>,
    /// Validation rows (early stopping, checkpoint selection).
    pub valid: Vec<usize>,
    /// Test rows (reported once, at the end).
    pub test: Vec<usize>,
}

/// Reads split `name` from a split file in the format of
/// MAT's datasets (`mol_featurize::mat_datasets`, `<name>/<name>.splits.json`):
/// `{"random-0": {"train": [...], "valid": [...], "test": [...]}, ...}`.
///
/// # Errors
/// [`TrainError::Split`] if the file is not valid JSON of that shape, lacks `name`
/// (the available names are listed), or an index is `>= n_rows`.
pub fn read_split_file(path: &Path, name: &str, n_rows: usize) -> Result<Split, TrainError> {
    let err = |reason: String| TrainError::Split {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| TrainError::io(path, e))?;
    let all: BTreeMap<String, Split> =
        serde_json::from_str(&text).map_err(|e| err(e.to_string()))?;
    let split = all.get(name).cloned().ok_or_else(|| {
        err(format!(
            "no split {name:?} (available: {})",
            all.keys().cloned().collect::<Vec<_>>().join(", ")
        ))
    })?;
    for (part, rows) in [
        ("train", &split.train),
        ("valid", &split.valid),
        ("test", &split.test),
    ] {
        if let Some(bad) = rows.iter().find(|&&r| r >= n_rows) {
            return Err(err(format!(
                "{name}.{part} has row {bad} but the table has {n_rows} rows"
            )));
        }
    }
    Ok(split)
}

/// Seeded random split of `rows` with fractions `(train, valid)`; the rest is test.
pub fn random_split(rows: &[usize], fractions: (f64, f64), seed: u64) -> Split {
    let mut shuffled = rows.to_vec();
    shuffled.shuffle(&mut StdRng::seed_from_u64(seed));
    let n_train = (fractions.0 * rows.len() as f64).round() as usize;
    let n_valid = (fractions.1 * rows.len() as f64).round() as usize;
    let valid_end = (n_train + n_valid).min(rows.len());
    Split {
        train: shuffled[..n_train.min(rows.len())].to_vec(),
        valid: shuffled[n_train.min(rows.len())..valid_end].to_vec(),
        test: shuffled[valid_end..].to_vec(),
    }
}

/// Bemis-Murcko scaffold split (chemprop's deterministic `scaffold_split`, unbalanced):
/// rows are grouped by scaffold; groups, largest first (ties by scaffold SMILES), go to
/// train while it has room for the whole group, else to valid while it has room, else to
/// test. Molecules of one scaffold never straddle two parts.
///
/// `scaffolds[k]` is the scaffold SMILES of `rows[k]`.
pub fn scaffold_split(rows: &[usize], scaffolds: &[String], fractions: (f64, f64)) -> Split {
    let n = rows.len() as f64;
    let (train_size, valid_size) = (fractions.0 * n, fractions.1 * n);
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (row, scaffold) in rows.iter().zip(scaffolds) {
        groups.entry(scaffold.as_str()).or_default().push(*row);
    }
    let mut groups: Vec<(&str, Vec<usize>)> = groups.into_iter().collect();
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    let mut split = Split {
        train: Vec::new(),
        valid: Vec::new(),
        test: Vec::new(),
    };
    for (_, members) in groups {
        let size = members.len() as f64;
        if split.train.len() as f64 + size <= train_size {
            split.train.extend(members);
        } else if split.valid.len() as f64 + size <= valid_size {
            split.valid.extend(members);
        } else {
            split.test.extend(members);
        }
    }
    split
}

/// The rows of each part for `split` (runs on a molecule table; a scaffold split groups the rows that
/// featurized by their Bemis-Murcko scaffold, a molecule without one by its SMILES).
///
/// # Errors
/// An unreadable or inconsistent split file.
pub(crate) fn split_rows<F>(
    split: &SplitSpec,
    table: &MoleculeTable,
    features: &[Option<F>],
) -> Result<Split, TrainError> {
    let all: Vec<usize> = (0..table.len()).collect();
    Ok(match split {
        SplitSpec::File { path, name } => read_split_file(path, name, table.len())?,
        SplitSpec::Random { seed } => random_split(&all, (0.8, 0.1), *seed),
        SplitSpec::Scaffold => {
            let rows: Vec<usize> = all.into_iter().filter(|&r| features[r].is_some()).collect();
            let scaffolds: Vec<String> = rows
                .iter()
                .map(|&r| {
                    Molecule::from_smiles(&table.smiles[r])
                        .and_then(|m| bemis_murcko_scaffold(&m))
                        .unwrap_or_else(|_| table.smiles[r].trim().to_string())
                })
                .collect();
            scaffold_split(&rows, &scaffolds, (0.8, 0.1))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_split_is_seeded_and_complete() {
        let rows: Vec<usize> = (0..100).collect();
        let a = random_split(&rows, (0.8, 0.1), 1);
        assert_eq!(a, random_split(&rows, (0.8, 0.1), 1));
        assert_ne!(a, random_split(&rows, (0.8, 0.1), 2));
        assert_eq!((a.train.len(), a.valid.len(), a.test.len()), (80, 10, 10));
        let mut all: Vec<usize> = a
            .train
            .iter()
            .chain(&a.valid)
            .chain(&a.test)
            .copied()
            .collect();
        all.sort();
        assert_eq!(all, rows);
    }

    #[test]
    fn scaffold_groups_never_straddle_parts() {
        let rows: Vec<usize> = (0..10).collect();
        let scaffolds: Vec<String> = ["a", "a", "a", "a", "b", "b", "c", "d", "a", "e"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let s = scaffold_split(&rows, &scaffolds, (0.6, 0.2));
        // a (5 rows) fills train to 5 of 6; b (2) does not fit train, fits valid (2);
        // c fits train; d and e fit nowhere else: test.
        assert_eq!(s.train, vec![0, 1, 2, 3, 8, 6]);
        assert_eq!(s.valid, vec![4, 5]);
        assert_eq!(s.test, vec![7, 9]);
    }

    #[test]
    fn shipped_split_file_is_read() {
        let path = mol_featurize::mat_datasets::dir()
            .unwrap()
            .join("esol/esol.splits.json");
        let s = read_split_file(&path, "random-0", 1128).unwrap();
        assert_eq!(
            (s.train.len(), s.valid.len(), s.test.len()),
            (902, 113, 113)
        );
        let e = read_split_file(&path, "nope", 1128)
            .unwrap_err()
            .to_string();
        assert!(e.contains("random-0"), "{e}");
        assert!(read_split_file(&path, "random-0", 100).is_err());
    }
}
