//! XYZ files as a table's structures: a folder of `.xyz` files, a text file listing them
//! or one `.xyz` file, paired with a labels CSV row by row through its file-name column.
//! XYZ has no bonds, so each row's SMILES gives the molecule and the file its geometry,
//! matched atom by atom ([`match_coordinates`]; the file's atom order need not follow the
//! SMILES, hydrogens may be listed or not).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::structure_file::{match_coordinates, read_xyz};
use mol_featurize::{FeaturizeError, GivenStructure, Molecule};

use crate::data::MoleculeTable;
use crate::error::TrainError;

/// The XYZ files of `data` (a folder's `*.xyz`, the lines of a list file, or `data`
/// itself when it is an `.xyz` file), by file name and by file name without `.xyz`.
///
/// # Errors
/// An unreadable folder or list; two listed files with the same name (a labels row
/// could not tell them apart).
fn xyz_files(data: &Path) -> Result<BTreeMap<String, PathBuf>, TrainError> {
    let is_xyz = |p: &Path| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("xyz"));
    let paths: Vec<PathBuf> = if is_xyz(data) {
        vec![data.to_path_buf()]
    } else if data.is_dir() {
        let entries = std::fs::read_dir(data).map_err(|e| TrainError::io(data, e))?;
        let mut paths = Vec::new();
        for entry in entries {
            let path = entry.map_err(|e| TrainError::io(data, e))?.path();
            if is_xyz(&path) {
                paths.push(path);
            }
        }
        paths
    } else {
        let text = std::fs::read_to_string(data).map_err(|e| TrainError::io(data, e))?;
        let base = data.parent().unwrap_or(Path::new("."));
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| base.join(l))
            .collect()
    };
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if let Some(other) = files.get(&name) {
            return Err(TrainError::Invalid(format!(
                "{}: two XYZ files named {name:?} ({} and {}): a labels row names a file \
                 by its name, so names must differ",
                data.display(),
                other.display(),
                path.display()
            )));
        }
        if let Some(stem) = name.strip_suffix(".xyz") {
            files.insert(stem.to_string(), path.clone());
        }
        files.insert(name, path);
    }
    Ok(files)
}

/// Each labels row's molecule (its SMILES) with the geometry of its XYZ file, matched
/// atom by atom ([`match_coordinates`]; the file's order need not follow the SMILES), or
/// why it has none.
pub(crate) fn read_xyz_structures(
    data: &Path,
    labels: &Path,
    table: &MoleculeTable,
) -> Result<Vec<Result<GivenStructure, FeaturizeError>>, TrainError> {
    let files = xyz_files(data)?;
    let structures: Vec<Result<GivenStructure, FeaturizeError>> = table
        .ids
        .iter()
        .zip(&table.smiles)
        .enumerate()
        .map(|(row, (file, smiles))| {
            let record = format!("{} row {row} ({file})", labels.display());
            let path = files.get(file.as_str()).ok_or_else(|| {
                record_error(
                    record.clone(),
                    "missing-file",
                    format!("{record}: no XYZ file {file:?} in {}", data.display()),
                )
            })?;
            let molecule = Molecule::from_smiles(smiles)?;
            let (elements, xyz) = read_xyz(path)
                .map_err(|e| record_error(record.clone(), e.kind(), e.to_string()))?;
            let matched = match_coordinates(&molecule, &elements, &xyz).map_err(|e| {
                record_error(record.clone(), "coordinates", format!("{record}: {e}"))
            })?;
            Ok(GivenStructure {
                molecule,
                coordinates: Some(matched.into_iter().map(|p| p.map(f64::from)).collect()),
                source: CoordinateMethod::File,
            })
        })
        .collect();
    let used: std::collections::BTreeSet<&PathBuf> = table
        .ids
        .iter()
        .filter_map(|f| files.get(f.as_str()))
        .collect();
    let all: std::collections::BTreeSet<&PathBuf> = files.values().collect();
    let unused = all.len() - used.len();
    if unused > 0 {
        eprintln!(
            "data: {unused} XYZ files in {} have no row in {} and are not used",
            data.display(),
            labels.display()
        );
    }
    Ok(structures)
}

/// A structure file's problem as a featurization error naming the record (`kind`: see
/// [`FeaturizeError::Record`]).
pub(crate) fn record_error(record: String, kind: &'static str, reason: String) -> FeaturizeError {
    FeaturizeError::Record {
        record,
        kind,
        reason,
    }
}
