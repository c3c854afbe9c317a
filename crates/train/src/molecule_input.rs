//! The molecules a command predicts, embeds or explains: a molecule file (CSV, SDF, XYZ
//! files), SMILES given one by one, or both (a delimited file's rows, then the SMILES).

use std::path::Path;

use crate::checkpoint::refuse_overwriting_input;
use crate::data::MoleculeTable;
use crate::error::TrainError;
use crate::predict_stream::StreamInput;
use crate::table_data::{MoleculeFormat, MoleculeSource, TableData};

/// A file of molecules and extra SMILES.
#[derive(Debug, Clone, Default)]
pub struct MoleculeInput {
    /// The molecule file and how it is read.
    pub file: Option<MoleculeSource>,
    /// SMILES after the file's rows (`--smiles`).
    pub smiles: Vec<String>,
}

impl MoleculeInput {
    /// The files read (the molecule file and an XYZ set's labels), which an output must
    /// not overwrite.
    fn input_files(&self) -> Vec<&Path> {
        let Some(file) = &self.file else {
            return Vec::new();
        };
        let mut inputs = vec![file.path.as_path()];
        if let MoleculeFormat::Xyz { labels, .. } = &file.format {
            inputs.push(labels.as_path());
        }
        inputs
    }

    /// Every molecule, read whole; refuses an `out` that is one of the input files
    /// (`verb`: what the command does, for the error of an empty input).
    ///
    /// # Errors
    /// [`TrainError::Invalid`] for an empty input, a structure file with SMILES, or an
    /// `out` that is an input; the file's read errors.
    pub fn read(&self, out: Option<&Path>, verb: &str) -> Result<TableData, TrainError> {
        let data = match &self.file {
            Some(source) => {
                let mut data = source.read(&[])?;
                if !self.smiles.is_empty() {
                    if data.structures.is_some() {
                        return Err(TrainError::Invalid(
                            "give either a structure file (--data) or --smiles, not both".into(),
                        ));
                    }
                    data.table.smiles.extend(self.smiles.iter().cloned());
                }
                data
            }
            None => TableData {
                table: MoleculeTable {
                    smiles: self.smiles.clone(),
                    targets: vec![Vec::new(); self.smiles.len()],
                    target_columns: Vec::new(),
                    ids: Vec::new(),
                    label_problems: Vec::new(),
                },
                structures: None,
            },
        };
        if data.table.is_empty() {
            return Err(TrainError::Invalid(match &self.file {
                Some(source) => format!(
                    "{}: no molecules to {verb} (the file has no data rows)",
                    source.path.display()
                ),
                None => format!("nothing to {verb}: give --data or --smiles"),
            }));
        }
        if let Some(out) = out {
            refuse_overwriting_input(out, &self.input_files())?;
        }
        Ok(data)
    }

    /// The input as [`crate::predict_stream::predict_stream`] reads it: a delimited file
    /// alone is read a chunk at a time; structure files and SMILES are read whole first
    /// ([`MoleculeInput::read`]).
    ///
    /// # Errors
    /// As [`MoleculeInput::read`]; a delimiter that is not one ASCII character.
    pub fn stream(&self, out: Option<&Path>, verb: &str) -> Result<StreamInput, TrainError> {
        match &self.file {
            Some(source)
                if source.format == MoleculeFormat::Delimited && self.smiles.is_empty() =>
            {
                if let Some(out) = out {
                    refuse_overwriting_input(out, &[source.path.as_path()])?;
                }
                Ok(StreamInput::Delimited {
                    delimiter: crate::data::delimiter_byte(source.delimiter)?,
                    path: source.path.clone(),
                    smiles_column: source.smiles_column.clone(),
                })
            }
            _ => Ok(StreamInput::Table(self.read(out, verb)?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smiles_alone_an_empty_input_and_an_output_over_the_input() {
        let input = MoleculeInput {
            file: None,
            smiles: vec!["CCO".into(), "c1ccccc1".into()],
        };
        assert_eq!(input.read(None, "predict").unwrap().table.smiles.len(), 2);
        let Err(empty) = MoleculeInput::default().read(None, "embed") else {
            panic!("an empty input was read");
        };
        assert!(empty.to_string().contains("nothing to embed"), "{empty}");
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("in.csv");
        std::fs::write(&csv, "smiles\nCCO\n").unwrap();
        let file = MoleculeInput {
            file: Some(MoleculeSource {
                path: csv.clone(),
                format: MoleculeFormat::Delimited,
                smiles_column: "smiles".into(),
                delimiter: ',',
            }),
            smiles: vec!["CCN".into()],
        };
        assert_eq!(
            file.read(None, "predict").unwrap().table.smiles,
            ["CCO", "CCN"]
        );
        let Err(over) = file.read(Some(&csv), "predict") else {
            panic!("an output over the input was accepted");
        };
        assert!(over.to_string().contains("is the input file"), "{over}");
        assert!(matches!(
            MoleculeInput {
                smiles: Vec::new(),
                ..file
            }
            .stream(None, "predict")
            .unwrap(),
            StreamInput::Delimited { .. }
        ));
    }
}
