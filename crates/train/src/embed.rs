//! Molecule and per-atom embeddings of a trained run (issue #38 item 2), written as
//! `.npy` (NumPy's format, float32) or `.csv`.
//!
//! Every input row keeps its place: a molecule that could not be featurized gets one row
//! of NaN in the `.npy` (and empty values with its reason in a CSV's `error` column). With
//! per-atom embeddings the `.npy` holds one row per heavy atom of each molecule, in the
//! molecule's atom order (a failed molecule: one NaN row), and a CSV beside it
//! (`<out>.index.csv`) names the row, SMILES and atom index of every `.npy` row.

use std::path::{Path, PathBuf};

use burn::prelude::*;
use mol_featurize::cache::ConformerCache;

use crate::error::TrainError;
use crate::table_data::TableData;
use crate::trained_run::{Readout, TrainedRun};

/// The embeddings of a table's rows ([`embed_table`]).
#[derive(Debug, Clone)]
pub struct Embeddings {
    /// Width of one vector (the model's `d_model`).
    pub dim: usize,
    /// Per-atom vectors (`true`) or one vector per molecule.
    pub per_atom: bool,
    /// One entry per input row, in order.
    pub rows: Vec<EmbeddedRow>,
}

/// One input row's embedding.
#[derive(Debug, Clone)]
pub struct EmbeddedRow {
    /// Input row (a structure file's record index).
    pub row: usize,
    /// The row's identity (an SDF record's title or id field), when the input has one.
    pub id: Option<String>,
    /// SMILES as given (an SDF record's canonical SMILES).
    pub smiles: String,
    /// The molecule vector (`dim` values), or per-atom vectors (`n_atoms x dim`,
    /// row-major); `None` where the molecule was skipped.
    pub values: Option<Vec<f32>>,
    /// Why the molecule was skipped.
    pub error: Option<String>,
}

/// The embeddings of every row of `data` under the run `run`: molecule vectors, or
/// per-atom vectors with `atoms` ([`Readout`]); molecules featurized as for
/// prediction (the run's featurizer and conformer settings, at most `max_atoms` heavy
/// atoms, the conformer cache when given).
///
/// # Errors
/// As [`TrainedRun::infer`].
pub fn embed_table(
    run: &TrainedRun,
    data: &TableData,
    atoms: bool,
    (cache, max_atoms): (Option<&ConformerCache>, usize),
    device: &Device,
) -> Result<Embeddings, TrainError> {
    let readout = if atoms {
        Readout::Atoms
    } else {
        Readout::Molecule
    };
    let inference = run.infer(data, readout, (cache, max_atoms, true), device)?;
    crate::print_cache_report(&inference.report);
    let mut skipped = inference.report.skipped.iter().peekable();
    let rows = data
        .table
        .smiles
        .iter()
        .zip(inference.rows)
        .enumerate()
        .map(|(row, (smiles, values))| {
            let error = match values {
                Some(_) => None,
                None => Some(
                    skipped
                        .next_if(|s| s.row == row)
                        .map_or_else(|| "not featurized".to_string(), |s| s.reason.clone()),
                ),
            };
            EmbeddedRow {
                row,
                id: data.table.ids.get(row).cloned(),
                smiles: smiles.clone(),
                values,
                error,
            }
        })
        .collect();
    Ok(Embeddings {
        dim: run.embedding_dim(),
        per_atom: atoms,
        rows,
    })
}

impl Embeddings {
    /// Rows whose molecule was skipped.
    pub fn n_skipped(&self) -> usize {
        self.rows.iter().filter(|r| r.values.is_none()).count()
    }

    /// The vectors as `[n, dim]` row-major: one per row (or per atom of each row with
    /// per-atom embeddings), a skipped row as one row of NaN. Returns the values and, per
    /// output row, the input row and the atom index (`None` for a molecule vector or a
    /// skipped row).
    pub fn matrix(&self) -> (Vec<f32>, Vec<(usize, Option<usize>)>) {
        let mut values = Vec::new();
        let mut index = Vec::new();
        for r in &self.rows {
            match &r.values {
                Some(v) if self.per_atom && !v.is_empty() => {
                    values.extend_from_slice(v);
                    index.extend((0..v.len() / self.dim.max(1)).map(|a| (r.row, Some(a))));
                }
                Some(v) if !self.per_atom => {
                    values.extend_from_slice(v);
                    index.push((r.row, None));
                }
                // Skipped, or no heavy atom: one row of NaN keeps the molecule's place.
                _ => {
                    values.extend(std::iter::repeat_n(f32::NAN, self.dim));
                    index.push((r.row, None));
                }
            }
        }
        (values, index)
    }

    /// Writes the embeddings to `out`: `.npy` (float32 `[n, dim]`; with per-atom vectors
    /// also `<out>.index.csv`, columns `row`, [`id`,] `smiles`, `atom_index`, `error`) or
    /// `.csv` (columns `row`, [`id`,] `smiles`, [`atom_index`,] `e0` ... `e{dim-1}`,
    /// `error`). Returns the files written.
    ///
    /// # Errors
    /// [`TrainError::Invalid`] for another extension; [`TrainError::Io`] when a file
    /// cannot be written.
    pub fn write(&self, out: &Path) -> Result<Vec<PathBuf>, TrainError> {
        let atoms = self.per_atom;
        let io = |source| TrainError::io(out, source);
        match out.extension().and_then(|e| e.to_str()) {
            Some("npy") => {
                let (values, index) = self.matrix();
                let array = ndarray::Array2::from_shape_vec((index.len(), self.dim), values)
                    .map_err(|e| TrainError::Invalid(e.to_string()))?;
                ndarray_npy::write_npy(out, &array).map_err(|e| match e {
                    ndarray_npy::WriteNpyError::Io(e) => io(e),
                    other => TrainError::Invalid(format!("{}: {other}", out.display())),
                })?;
                if !atoms {
                    return Ok(vec![out.to_path_buf()]);
                }
                let index_path = out.with_extension("index.csv");
                self.write_csv(&index_path, Some(&index), false)?;
                Ok(vec![out.to_path_buf(), index_path])
            }
            Some("csv") => {
                let (_, index) = self.matrix();
                self.write_csv(out, atoms.then_some(&index), true)?;
                Ok(vec![out.to_path_buf()])
            }
            _ => Err(TrainError::Invalid(format!(
                "{}: embeddings are written as .npy or .csv",
                out.display()
            ))),
        }
    }

    /// One CSV line per output row (`index`: per atom) with the vector when `values`.
    fn write_csv(
        &self,
        path: &Path,
        index: Option<&Vec<(usize, Option<usize>)>>,
        values: bool,
    ) -> Result<(), TrainError> {
        let io = |e: csv::Error| TrainError::Invalid(format!("{}: {e}", path.display()));
        let mut w = csv::Writer::from_path(path).map_err(io)?;
        let with_ids = self.rows.iter().any(|r| r.id.is_some());
        let mut header = vec!["row".to_string()];
        if with_ids {
            header.push("id".into());
        }
        header.push("smiles".into());
        if index.is_some() {
            header.push("atom_index".into());
        }
        if values {
            header.extend((0..self.dim).map(|k| format!("e{k}")));
        }
        header.push("error".into());
        w.write_record(&header).map_err(io)?;
        let lines: Vec<(usize, Option<usize>)> = match index {
            Some(index) => index.clone(),
            None => self.rows.iter().map(|r| (r.row, None)).collect(),
        };
        for (row, atom) in lines {
            let r = &self.rows[row];
            let mut rec = vec![row.to_string()];
            if with_ids {
                rec.push(r.id.clone().unwrap_or_default());
            }
            rec.push(r.smiles.clone());
            if index.is_some() {
                rec.push(atom.map(|a| a.to_string()).unwrap_or_default());
            }
            if values {
                match (&r.values, atom) {
                    (Some(v), Some(a)) => rec.extend(
                        v[a * self.dim..(a + 1) * self.dim]
                            .iter()
                            .map(f32::to_string),
                    ),
                    (Some(v), None) if v.len() == self.dim => {
                        rec.extend(v.iter().map(f32::to_string))
                    }
                    _ => rec.extend((0..self.dim).map(|_| String::new())),
                }
            }
            rec.push(r.error.clone().unwrap_or_default());
            w.write_record(&rec).map_err(io)?;
        }
        w.flush().map_err(|e| TrainError::io(path, e))
    }
}
