//! What a user asks to train on a molecule table, resolved against the file: which
//! columns are targets (named, or a range of the header as `--targets-from` gives it),
//! the task (given, or classification when every label is 0 or 1, as chemprop infers
//! it), and the split (a split file's, a seeded random one, or Bemis-Murcko scaffolds).
//! MAT and Transformer-M share it (`cargo xtask train --data`).

use std::path::PathBuf;

use crate::error::TrainError;
use crate::splits::SplitSpec;
use crate::table_data::{MoleculeFormat, MoleculeSource, TableData};
use crate::task::Task;

/// The target columns asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSelection {
    /// These columns (SDF: data fields), in this order.
    Columns(Vec<String>),
    /// Every column of the header from a 0-based position on (`"2:"`), or a range
    /// (`"2:5"`, end excluded), the SMILES column left out (and an XYZ set's file-name
    /// column): `--targets-from`.
    From(String),
}

/// The split asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitRequest {
    /// The split `name` of the split file `path`.
    File {
        /// The JSON split file.
        path: PathBuf,
        /// The split's name, e.g. `random-0`.
        name: String,
    },
    /// Without a split file: `scaffold` for a Bemis-Murcko scaffold split, anything else
    /// for a random 80/10/10 split seeded with `seed`.
    Named {
        /// `scaffold` or `random`.
        name: String,
        /// The random split's seed.
        seed: u64,
    },
}

impl SplitRequest {
    /// The split specification a run records.
    pub fn spec(&self) -> SplitSpec {
        match self {
            SplitRequest::File { path, name } => SplitSpec::File {
                path: path.clone(),
                name: name.clone(),
            },
            SplitRequest::Named { name, .. } if name == "scaffold" => SplitSpec::Scaffold,
            SplitRequest::Named { seed, .. } => SplitSpec::Random { seed: *seed },
        }
    }
}

/// A training request on a molecule table.
#[derive(Debug, Clone)]
pub struct TableRequest {
    /// The molecule file and how it is read.
    pub source: MoleculeSource,
    /// Target columns.
    pub targets: TargetSelection,
    /// The task; `None` infers it from the labels ([`Task::from_labels`]).
    pub task: Option<Task>,
    /// The split.
    pub split: SplitRequest,
}

/// A [`TableRequest`] resolved against its file.
pub struct ResolvedTable {
    /// The target columns, in order.
    pub targets: Vec<String>,
    /// The task.
    pub task: Task,
    /// The split a run records.
    pub split: SplitSpec,
    /// The table as read (rows, labels, structures).
    pub data: TableData,
}

impl TableRequest {
    /// Reads the table and resolves the targets, task and split.
    ///
    /// # Errors
    /// [`TrainError::Invalid`] for `--targets-from` on an SDF (name its data fields) or a
    /// range outside the header; the table's read errors.
    pub fn resolve(&self) -> Result<ResolvedTable, TrainError> {
        let targets = match &self.targets {
            TargetSelection::Columns(columns) => columns.clone(),
            TargetSelection::From(range) => {
                // Columns of the delimited file that holds the labels (an XYZ set's
                // labels file, its file-name column left out).
                let (labels, file_column) = match &self.source.format {
                    MoleculeFormat::Delimited => (self.source.path.as_path(), None),
                    MoleculeFormat::Xyz {
                        labels,
                        file_column,
                    } => (labels.as_path(), Some(file_column)),
                    MoleculeFormat::Sdf { .. } | MoleculeFormat::Qm9 { .. } => {
                        return Err(TrainError::Invalid(
                            "--targets-from selects CSV columns; name SDF data fields (or \
                             QM9 columns) with --target"
                                .into(),
                        ));
                    }
                };
                let delimiter = crate::data::delimiter_byte(self.source.delimiter)?;
                let mut columns = crate::data::target_columns_from(
                    labels,
                    delimiter,
                    range,
                    &self.source.smiles_column,
                )?;
                columns.retain(|c| Some(c) != file_column);
                columns
            }
        };
        let data = self.source.read(&targets)?;
        let task = self
            .task
            .unwrap_or_else(|| Task::from_labels(&data.table.targets));
        Ok(ResolvedTable {
            targets,
            task,
            split: self.split.spec(),
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(path: PathBuf) -> MoleculeSource {
        MoleculeSource {
            path,
            format: MoleculeFormat::Delimited,
            smiles_column: "smiles".into(),
            delimiter: ',',
        }
    }

    #[test]
    fn a_range_of_columns_and_an_inferred_task() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("t.csv");
        std::fs::write(&csv, "id,smiles,a,b\n1,CCO,0,1\n2,CCN,1,0\n3,CCC,1,1\n").unwrap();
        let request = TableRequest {
            source: source(csv.clone()),
            targets: TargetSelection::From("2:".into()),
            task: None,
            split: SplitRequest::Named {
                name: "scaffold".into(),
                seed: 3,
            },
        };
        let resolved = request.resolve().unwrap();
        assert_eq!(resolved.targets, ["a", "b"]);
        assert_eq!(resolved.task, Task::Classification);
        assert!(matches!(resolved.split, SplitSpec::Scaffold));
        let regression = TableRequest {
            targets: TargetSelection::Columns(vec!["a".into()]),
            task: Some(Task::Regression),
            split: SplitRequest::Named {
                name: "random".into(),
                seed: 3,
            },
            ..request
        }
        .resolve()
        .unwrap();
        assert_eq!(regression.targets, ["a"]);
        assert_eq!(regression.task, Task::Regression);
        assert!(matches!(regression.split, SplitSpec::Random { seed: 3 }));
    }
}
