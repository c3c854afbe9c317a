//! A QM9 subset as a molecule table: the rows a run uses ([`Qm9Subset`]), their SMILES,
//! targets and DFT geometries, read into the same table and structures as an SDF or XYZ
//! files give ([`crate::table_data`]), so that QM9 runs go through the one table
//! pipeline ([`crate::table_run`]).
//!
//! Splits: the QM9 molecules are shuffled with `subset_seed`, positions
//! `offset..offset + limit` form the subset, and a run splits the subset 80/10/10 with its
//! own seed. Pretraining on `offset = 10000` therefore never sees the molecules of a 10k
//! fine-tuning subset with the same `subset_seed`.

use std::path::PathBuf;

use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::{ConformerOptions, FeaturizeError, GivenStructure, Molecule};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::MoleculeTable;
use crate::error::TrainError;
use crate::qm9::Qm9;

/// Which QM9 molecules a run uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Qm9Subset {
    /// Converted QM9 directory ([`crate::qm9::convert_qm9_csv`]).
    pub dataset: PathBuf,
    /// Molecules used (all when `None`).
    pub limit: Option<usize>,
    /// Start position in the shuffled order.
    #[serde(default)]
    pub offset: usize,
    /// Seed of the shuffle.
    pub subset_seed: u64,
}

impl Qm9Subset {
    /// Dataset rows of the subset, in shuffled order.
    pub fn rows(&self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(&mut StdRng::seed_from_u64(self.subset_seed));
        let end = self
            .limit
            .map_or(n, |l| (self.offset + l).min(n))
            .max(self.offset.min(n));
        order[self.offset.min(n)..end].to_vec()
    }
}

/// Conformer settings that take QM9's DFT geometries as they are (no conformer is made).
pub fn qm9_geometries() -> ConformerOptions {
    ConformerOptions {
        method: CoordinateMethod::File,
        ..ConformerOptions::default()
    }
}

/// The QM9 columns that `names` ask for ([`Qm9::column`]: exact, case-insensitive, or the
/// unique column starting with the name and `_`) and their units: the unit when all share
/// one, else every column's unit in column order joined with `, `.
///
/// # Errors
/// A name that matches no column or several (listing them); two names of one column.
pub(crate) fn qm9_columns(
    qm9: &Qm9,
    names: &[String],
) -> Result<(Vec<String>, String), TrainError> {
    let columns = names
        .iter()
        .map(|name| qm9.column(name))
        .collect::<Result<Vec<usize>, TrainError>>()?;
    for (k, c) in columns.iter().enumerate() {
        if let Some(j) = columns[..k].iter().position(|d| d == c) {
            return Err(TrainError::Invalid(format!(
                "targets {:?} and {:?} are both the QM9 column {:?}; name each column once",
                names[j], names[k], qm9.index.columns[*c]
            )));
        }
    }
    let units: Vec<&str> = columns
        .iter()
        .map(|&c| qm9.index.units[c].as_str())
        .collect();
    let units = if units.iter().all(|u| *u == units[0]) {
        units[..1].to_vec()
    } else {
        units
    };
    Ok((
        columns
            .iter()
            .map(|&c| qm9.index.columns[c].clone())
            .collect(),
        units.join(", "),
    ))
}

/// The molecules of `subset` in its order as a table (SMILES; the `target_columns`, which
/// must be QM9's own names; ids `qm9:<QM9 index>`, the `dsgdb9nsd_` number) and their structures (the molecule
/// of the SMILES with its DFT heavy-atom coordinates, [`CoordinateMethod::File`]); a
/// SMILES that does not parse keeps its row with the reason.
///
/// # Errors
/// An unreadable dataset; a target column QM9 does not have.
pub(crate) fn read_qm9_table(
    subset: &Qm9Subset,
    target_columns: &[String],
) -> Result<(MoleculeTable, Vec<Result<GivenStructure, FeaturizeError>>), TrainError> {
    let qm9 = Qm9::load(&subset.dataset)?;
    let columns = target_columns
        .iter()
        .map(|name| {
            qm9.index
                .columns
                .iter()
                .position(|c| c == name)
                .ok_or_else(|| {
                    TrainError::Invalid(format!(
                        "QM9 has no column {name:?}; columns: {}",
                        qm9.index.columns.join(", ")
                    ))
                })
        })
        .collect::<Result<Vec<usize>, TrainError>>()?;
    let rows = subset.rows(qm9.len());
    let smiles: Vec<String> = rows.iter().map(|&r| qm9.index.smiles[r].clone()).collect();
    let structures = rows
        .par_iter()
        .zip(&smiles)
        .map(|(&r, s)| {
            Ok(GivenStructure {
                molecule: Molecule::from_smiles(s)?,
                coordinates: Some(
                    qm9.coordinates_of(r)
                        .iter()
                        .map(|p| p.map(f64::from))
                        .collect(),
                ),
                source: CoordinateMethod::File,
            })
        })
        .collect();
    let table = MoleculeTable {
        targets: rows
            .iter()
            .map(|&r| columns.iter().map(|&c| qm9.target(r, c)).collect())
            .collect(),
        target_columns: target_columns.to_vec(),
        ids: rows
            .iter()
            .map(|&r| format!("qm9:{}", qm9.index.qm9_index[r]))
            .collect(),
        smiles,
        label_problems: Vec::new(),
    };
    Ok((table, structures))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsets_with_offsets_do_not_overlap() {
        let a = Qm9Subset {
            dataset: PathBuf::new(),
            limit: Some(10),
            offset: 0,
            subset_seed: 3,
        };
        let b = Qm9Subset {
            offset: 10,
            limit: Some(20),
            ..a.clone()
        };
        let (ra, rb) = (a.rows(100), b.rows(100));
        assert_eq!((ra.len(), rb.len()), (10, 20));
        assert!(ra.iter().all(|r| !rb.contains(r)));
        assert_eq!(b.rows(15).len(), 5);
    }
}
