//! A molecule table read from any molecule file, and featurized with the coordinates a
//! run asks for:
//! - a delimited file (CSV, TSV, ...) with a SMILES column;
//! - an SDF / MOL file (V2000 or V3000, plain or gzipped): targets from its data fields,
//!   row identity from the record's title or a data field, coordinates from its
//!   conformers;
//! - XYZ files (a folder, or a text file listing them) with a labels CSV keyed by file
//!   name, whose SMILES column gives the bonds that XYZ lacks;
//! - a QM9 subset with its DFT geometries ([`crate::qm9_table`]).
//!
//! Every record is one row, in file order, so split files index records as they index
//! CSV rows. A record that cannot be read keeps its row and is reported with its index,
//! title and reason; the others go on.

use std::path::{Path, PathBuf};

use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::structure_file::read_sdf;
use mol_featurize::{
    ConformerCache, FeaturizeError, FeaturizeReport, Featurizer, GivenStructure, SkippedMolecule,
    canonical_smiles, featurize_all_cached, featurize_given,
};
use serde::{Deserialize, Serialize};

use crate::data::{MoleculeTable, parse_labels};
use crate::error::TrainError;
use crate::qm9_table::{Qm9Subset, read_qm9_table};
use crate::xyz_table::record_error;

/// Features of every row (`None` where skipped) and the featurization report.
pub type Featurized<T> = (Vec<Option<T>>, FeaturizeReport);

/// How a table's file is read (recorded in `run.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoleculeFormat {
    /// A delimited file with a SMILES column.
    #[default]
    Delimited,
    /// SDF / MOL records (`.sdf`, `.sdf.gz`, `.sd`, `.mol`).
    Sdf {
        /// Data field giving each record's identity (`None`: the title line).
        #[serde(default)]
        id_field: Option<String>,
    },
    /// XYZ files: the data path is a folder of `.xyz` files or a text file listing
    /// them (one path per line, relative to the list's folder).
    Xyz {
        /// Delimited file of labels: the file-name column, the SMILES column and the
        /// target columns.
        labels: PathBuf,
        /// Its column of XYZ file names (with or without `.xyz`).
        file_column: String,
    },
    /// A QM9 subset with its DFT geometries ([`crate::qm9_table`]): the data path is the
    /// converted dataset's folder. Read as is, targets must be QM9's exact column names
    /// and the geometries feed a featurizer whose conformer method is `file`;
    /// [`crate::transformer_m::train_transformer_m`] resolves names and sets both.
    Qm9 {
        /// Molecules used (all when `None`).
        limit: Option<usize>,
        /// Start position in the shuffled order.
        #[serde(default)]
        offset: usize,
        /// Seed of the shuffle.
        subset_seed: u64,
    },
}

impl MoleculeFormat {
    /// The format a data path asks for: SDF by its extension (`.sdf`, `.sdf.gz`, `.sd`,
    /// `.mol`), XYZ when `xyz_labels` is given, else delimited. `id_field` is the SDF
    /// identity field.
    ///
    /// # Errors
    /// [`TrainError::Invalid`] for an id field with a non-SDF file, or XYZ labels with
    /// an SDF.
    pub fn for_path(
        path: &Path,
        id_field: Option<String>,
        xyz_labels: Option<(PathBuf, String)>,
    ) -> Result<Self, TrainError> {
        let sdf = is_structure_file(path);
        match (sdf, xyz_labels) {
            (true, Some(_)) => Err(TrainError::Invalid(format!(
                "{}: --labels pairs XYZ files with their labels; an SDF carries its own \
                 (use --target with its data fields)",
                path.display()
            ))),
            (true, None) => Ok(MoleculeFormat::Sdf { id_field }),
            (false, _) if id_field.is_some() => Err(TrainError::Invalid(format!(
                "{}: --id-field names an SDF data field, and this is not an SDF (.sdf, \
                 .sdf.gz, .sd, .mol)",
                path.display()
            ))),
            (false, Some((labels, file_column))) => Ok(MoleculeFormat::Xyz {
                labels,
                file_column,
            }),
            (false, None) if path.is_dir() => Err(TrainError::Invalid(format!(
                "{} is a folder: a folder of XYZ files needs --labels labels.csv",
                path.display()
            ))),
            (false, None) => Ok(MoleculeFormat::Delimited),
        }
    }

    /// Whether this format brings coordinates (`--coords file` can be used).
    pub fn has_coordinates(&self) -> bool {
        !matches!(self, MoleculeFormat::Delimited)
    }
}

/// Whether `path` names an SDF / MOL file by its extension (`.sdf`, `.sdf.gz`, `.sd`,
/// `.mol`, `.mol.gz`, any case).
pub fn is_structure_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    [".sdf", ".sd", ".mol"].iter().any(|e| name.ends_with(e))
}

/// Where a table's molecules come from: the file, how it is read, and for delimited
/// files (and XYZ labels) the SMILES column and delimiter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoleculeSource {
    /// The data file (or XYZ folder / list).
    pub path: PathBuf,
    /// How it is read.
    pub format: MoleculeFormat,
    /// SMILES column of a delimited file or of XYZ labels.
    pub smiles_column: String,
    /// Field delimiter of a delimited file or of XYZ labels.
    pub delimiter: char,
}

/// A table and, when its file brought them, every row's structure: the molecule and its
/// coordinates, or why the record could not be read.
pub struct TableData {
    /// SMILES (an SDF record's canonical SMILES; empty for a record that could not be
    /// read), targets, ids, label problems.
    pub table: MoleculeTable,
    /// One entry per row for structure files; `None` for a delimited file.
    pub structures: Option<Vec<Result<GivenStructure, FeaturizeError>>>,
}

impl TableData {
    /// The rows `rows` of this table, in that order (a shard of it).
    pub fn subset(&self, rows: &[usize]) -> TableData {
        let pick = |v: &[String]| -> Vec<String> {
            if v.is_empty() {
                Vec::new()
            } else {
                rows.iter().map(|&r| v[r].clone()).collect()
            }
        };
        TableData {
            table: MoleculeTable {
                smiles: pick(&self.table.smiles),
                targets: rows
                    .iter()
                    .map(|&r| self.table.targets[r].clone())
                    .collect(),
                target_columns: self.table.target_columns.clone(),
                ids: pick(&self.table.ids),
                // Label problems name rows of the whole table; a shard has none to train.
                label_problems: Vec::new(),
            },
            structures: self
                .structures
                .as_ref()
                .map(|s| rows.iter().map(|&r| s[r].clone()).collect()),
        }
    }
}

impl MoleculeSource {
    /// The molecules of a QM9 subset.
    pub fn qm9(subset: &Qm9Subset) -> Self {
        MoleculeSource {
            path: subset.dataset.clone(),
            format: MoleculeFormat::Qm9 {
                limit: subset.limit,
                offset: subset.offset,
                subset_seed: subset.subset_seed,
            },
            smiles_column: "smiles".into(),
            delimiter: ',',
        }
    }

    /// The files a run on these molecules reads, whose hashes a resume must match: the
    /// data file and XYZ labels (QM9 is a fixed dataset; its subset is part of the spec).
    pub fn data_files(&self) -> Vec<&Path> {
        match &self.format {
            MoleculeFormat::Qm9 { .. } => Vec::new(),
            MoleculeFormat::Xyz { labels, .. } => vec![self.path.as_path(), labels.as_path()],
            _ => vec![self.path.as_path()],
        }
    }

    /// Reads the molecules and the `target_columns` (SDF: data fields; none for
    /// prediction).
    ///
    /// # Errors
    /// An unreadable file; a target column or field, id field or SMILES column that no
    /// row has (naming the ones there are); XYZ labels without a file column.
    pub fn read(&self, target_columns: &[String]) -> Result<TableData, TrainError> {
        let delimiter = crate::data::delimiter_byte(self.delimiter)?;
        match &self.format {
            MoleculeFormat::Delimited => Ok(TableData {
                table: MoleculeTable::read_delimited(
                    &self.path,
                    &self.smiles_column,
                    target_columns,
                    delimiter,
                )?,
                structures: None,
            }),
            MoleculeFormat::Sdf { id_field } => {
                read_sdf_table(&self.path, id_field.as_deref(), target_columns)
            }
            MoleculeFormat::Qm9 {
                limit,
                offset,
                subset_seed,
            } => {
                let subset = Qm9Subset {
                    dataset: self.path.clone(),
                    limit: *limit,
                    offset: *offset,
                    subset_seed: *subset_seed,
                };
                let (table, structures) = read_qm9_table(&subset, target_columns)?;
                Ok(TableData {
                    table,
                    structures: Some(structures),
                })
            }
            MoleculeFormat::Xyz {
                labels,
                file_column,
            } => {
                let table = MoleculeTable::read_delimited_ids(
                    labels,
                    &self.smiles_column,
                    Some(file_column),
                    target_columns,
                    delimiter,
                )?;
                let structures = crate::xyz_table::read_xyz_structures(&self.path, labels, &table)?;
                Ok(TableData {
                    table,
                    structures: Some(structures),
                })
            }
        }
    }
}

/// The rows of an SDF: one per record (see the module documentation).
fn read_sdf_table(
    path: &Path,
    id_field: Option<&str>,
    target_columns: &[String],
) -> Result<TableData, TrainError> {
    let records = read_sdf(path).map_err(|e| TrainError::Invalid(e.to_string()))?;
    if records.is_empty() {
        return Err(TrainError::Invalid(format!(
            "{}: no SDF record (records end with a `$$$$` line)",
            path.display()
        )));
    }
    // A field that no record has is a typo, not missing data: name the fields there are.
    let fields: std::collections::BTreeSet<&str> = records
        .iter()
        .flatten()
        .flat_map(|r| r.properties.keys().map(String::as_str))
        .collect();
    for wanted in target_columns.iter().map(String::as_str).chain(id_field) {
        if !fields.contains(wanted) {
            return Err(TrainError::Invalid(format!(
                "{}: no record has the data field {wanted:?} (fields: {})",
                path.display(),
                fields.iter().copied().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    let mut table = MoleculeTable {
        smiles: Vec::with_capacity(records.len()),
        targets: Vec::with_capacity(records.len()),
        target_columns: target_columns.to_vec(),
        ids: Vec::with_capacity(records.len()),
        label_problems: Vec::new(),
    };
    let mut structures = Vec::with_capacity(records.len());
    for (row, record) in records.into_iter().enumerate() {
        match record {
            Ok(rec) => {
                let id = id_field
                    .and_then(|f| rec.properties.get(f))
                    .map_or_else(|| rec.name.clone(), |v| v.trim().to_string());
                // The canonical SMILES (RDKit's), hydrogens folded: what reports show and
                // what the conformer pipeline embeds under another --coords.
                let smiles = canonical_smiles(&rec.molecule)
                    .unwrap_or_else(|_| rec.molecule.smiles().to_string());
                let cells: Vec<(&str, Option<&str>)> = target_columns
                    .iter()
                    .map(|t| (t.as_str(), rec.properties.get(t).map(String::as_str)))
                    .collect();
                let (values, problem) = parse_labels(&cells, "field");
                if let Some((kind, reason)) = problem {
                    table.label_problems.push(SkippedMolecule {
                        row,
                        smiles: smiles.clone(),
                        kind: kind.to_string(),
                        reason: format!("record {row} ({id}): no usable label: {reason}"),
                    });
                }
                let to_f64 = |c: Vec<[f32; 3]>| -> Vec<[f64; 3]> {
                    c.into_iter().map(|p| p.map(f64::from)).collect()
                };
                let (coordinates, source) = match (rec.coordinates, rec.layout_2d) {
                    (Some(xyz), _) => (Some(to_f64(xyz)), CoordinateMethod::File),
                    (None, Some(flat)) => (Some(to_f64(flat)), CoordinateMethod::Layout2d),
                    (None, None) => (None, CoordinateMethod::Topological),
                };
                // Coordinates that do not fit the connection table fail the record for
                // `--coords file` only; its molecule still gets conformers otherwise.
                structures.push(match rec.coordinate_error {
                    Some(reason) => Err(record_error(
                        format!("record {row}"),
                        "coordinates",
                        format!(
                            "{} record {row} ({}): coordinates do not fit the connection \
                             table: {reason}",
                            path.display(),
                            rec.name
                        ),
                    )),
                    None => Ok(GivenStructure {
                        molecule: rec.molecule,
                        coordinates,
                        source,
                    }),
                });
                table.smiles.push(smiles);
                table.targets.push(values);
                table.ids.push(id);
            }
            Err(e) => {
                table.ids.push(
                    e.record_name()
                        .map_or_else(|| format!("record {row}"), String::from),
                );
                structures.push(Err(record_error(
                    format!("record {row}"),
                    e.kind(),
                    e.to_string(),
                )));
                table.smiles.push(String::new());
                table.targets.push(vec![f32::NAN; target_columns.len()]);
            }
        }
    }
    Ok(TableData {
        table,
        structures: Some(structures),
    })
}

/// Features of every row and the report. With [`CoordinateMethod::File`] the file's own
/// coordinates are used (a 3D conformer as `file`, a flat depiction as `layout2d`,
/// none as topological); with another method the rows' SMILES go through the conformer
/// pipeline (cache, fallbacks). Either way a record that could not be read is skipped
/// with its own reason.
///
/// # Errors
/// [`TrainError::Invalid`] for [`CoordinateMethod::File`] on a table without
/// structures (a CSV has no coordinates).
pub fn featurize_table<F: Featurizer>(
    featurizer: &F,
    data: &TableData,
    progress: bool,
    cache: Option<&ConformerCache>,
) -> Result<Featurized<F::Features>, TrainError> {
    let file = featurizer.conformer_options().method == CoordinateMethod::File;
    let (features, mut report) = match (&data.structures, file) {
        (Some(structures), true) => featurize_given(&data.table.smiles, structures, featurizer),
        (None, true) => {
            return Err(TrainError::Invalid(
                "--coords file takes the coordinates of a structure file (.sdf, .sdf.gz, \
                 .mol, or XYZ files with --labels); a delimited file has none: use \
                 --coords embed3d, layout2d or topological"
                    .into(),
            ));
        }
        (_, false) => featurize_all_cached(&data.table.smiles, featurizer, progress, cache),
    };
    // The conformer pipeline saw an empty SMILES for a record that could not be read:
    // report the record's own reason.
    if let Some(structures) = &data.structures {
        for skipped in &mut report.skipped {
            if let Err(e) = &structures[skipped.row]
                && data.table.smiles[skipped.row].is_empty()
            {
                skipped.kind = e.kind().to_string();
                skipped.reason = e.to_string();
            }
        }
    }
    if file {
        let flat = report
            .coordinate_sources
            .get(&CoordinateMethod::Layout2d)
            .copied()
            .unwrap_or(0);
        if flat > 0 {
            eprintln!(
                "featurize: {flat} of {} records are 2D (all z = 0): their flat depiction \
                 is used as a 2D layout, not as a conformer (--coords embed3d embeds 3D \
                 conformers instead)",
                report.n_ok
            );
        }
    }
    Ok((features, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SDF by extension (any case, gzipped too), XYZ with labels, else delimited; flags
    /// that do not fit the file are refused by name.
    #[test]
    fn format_follows_the_path_and_flags() {
        for sdf in ["a.sdf", "b.SDF", "c.sdf.gz", "d.sd", "e.mol", "f.MOL.GZ"] {
            assert!(is_structure_file(Path::new(sdf)), "{sdf}");
        }
        for other in ["a.csv", "sdf", "a.sdf.csv", "a.gz", "a.xyz"] {
            assert!(!is_structure_file(Path::new(other)), "{other}");
        }
        let format = |p: &str, id: Option<&str>, labels: Option<&str>| {
            MoleculeFormat::for_path(
                Path::new(p),
                id.map(String::from),
                labels.map(|l| (PathBuf::from(l), "file".to_string())),
            )
        };
        assert_eq!(
            format("x.sdf.gz", Some("ID"), None).unwrap(),
            MoleculeFormat::Sdf {
                id_field: Some("ID".into())
            }
        );
        assert_eq!(
            format("x.csv", None, None).unwrap(),
            MoleculeFormat::Delimited
        );
        assert!(matches!(
            format("files.txt", None, Some("l.csv")).unwrap(),
            MoleculeFormat::Xyz { .. }
        ));
        let e = format("x.csv", Some("ID"), None).unwrap_err().to_string();
        assert!(e.contains("--id-field"), "{e}");
        let e = format("x.sdf", None, Some("l.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--labels"), "{e}");
        let dir = std::env::temp_dir();
        let e = format(dir.to_str().unwrap(), None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--labels"), "{e}");
        assert!(!MoleculeFormat::Delimited.has_coordinates());
    }

    /// A run written before structure files (no `format`) reads a delimited file.
    #[test]
    fn old_specs_read_a_delimited_file() {
        #[derive(Deserialize)]
        struct Spec {
            #[serde(default)]
            format: MoleculeFormat,
        }
        let old: Spec = serde_json::from_str("{}").unwrap();
        assert_eq!(old.format, MoleculeFormat::Delimited);
        let json = serde_json::to_string(&MoleculeFormat::Sdf { id_field: None }).unwrap();
        assert_eq!(json, r#"{"sdf":{"id_field":null}}"#);
    }
}
