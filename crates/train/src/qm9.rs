//! QM9 (Ramakrishnan et al. 2014, 133,885 small organic molecules with B3LYP/6-31G(2df,p)
//! geometries and properties) as shipped by the PyPI package `qm9pack` 1.0.3 (MIT):
//! three CSV parts with a SMILES, the DFT geometry (`XYZ_Ang`, hydrogens included) and
//! the properties of every molecule.
//!
//! [`convert_qm9_csv`] turns the CSVs once into a compact directory (`qm9.safetensors`
//! with heavy-atom coordinates and targets, `qm9.json` with SMILES, column names, units
//! and the conversion report); [`Qm9::load`] reads it back. The DFT geometry's atom order
//! need not follow the SMILES: heavy atoms are matched to the graph by element and bond
//! lengths ([`mol_featurize::structure_file::match_coordinates`]); molecules whose
//! geometry does not fit their SMILES (QM9's known inconsistent entries) are skipped and
//! counted, never silently dropped.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use mol_featurize::Molecule;
use mol_featurize::structure_file::match_coordinates;
use rayon::prelude::*;
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use serde::{Deserialize, Serialize};

use crate::error::TrainError;

/// Name of the converted arrays file.
pub const ARRAYS_FILE: &str = "qm9.safetensors";
/// Name of the converted index file.
pub const INDEX_FILE: &str = "qm9.json";
/// Hartree in eV (CODATA 2018).
pub const HARTREE_EV: f64 = 27.211_386_245_988;

/// Unit of a `qm9pack` column, read from its suffix (`HOMO_LUMO_gap_au` -> Hartree).
pub fn column_unit(column: &str) -> &'static str {
    let suffixes = [
        ("_au", "Hartree (atomic units)"),
        ("_debye", "Debye"),
        ("_bohr3", "bohr^3"),
        ("_bohr2", "bohr^2"),
        ("_GHz", "GHz"),
        ("_cal_mol_K", "cal/(mol K)"),
    ];
    suffixes
        .iter()
        .find(|(s, _)| column.ends_with(s))
        .map(|(_, u)| *u)
        .unwrap_or("as in qm9pack")
}

/// One skipped CSV row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkippedRow {
    /// Data row in the concatenated CSV parts (0-based).
    pub row: usize,
    /// The row's SMILES.
    pub smiles: String,
    /// Why.
    pub reason: String,
}

/// The index file: everything but the arrays.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Qm9Index {
    /// Source (wheel name and SHA-256) as given to [`convert_qm9_csv`].
    pub source: String,
    /// Target column names, as qm9pack ships them.
    pub columns: Vec<String>,
    /// Unit of each column.
    pub units: Vec<String>,
    /// SMILES of each kept molecule.
    pub smiles: Vec<String>,
    /// QM9 `Index` (1-based `dsgdb9nsd_` number) of each kept molecule.
    pub qm9_index: Vec<u32>,
    /// Rows read.
    pub n_rows: usize,
    /// Skipped rows per reason kind.
    pub skipped_by_reason: BTreeMap<String, usize>,
    /// Every skipped row.
    pub skipped: Vec<SkippedRow>,
}

/// The converted dataset in memory.
#[derive(Debug, Clone)]
pub struct Qm9 {
    /// Index data.
    pub index: Qm9Index,
    /// `atom_offsets[i]..atom_offsets[i + 1]` are molecule `i`'s rows of `coordinates`.
    pub atom_offsets: Vec<usize>,
    /// Heavy-atom coordinates (Angstrom) in each molecule's SMILES atom order.
    pub coordinates: Vec<[f32; 3]>,
    /// `[molecules, columns]` row-major targets.
    pub targets: Vec<f32>,
}

impl Qm9 {
    /// Number of molecules.
    pub fn len(&self) -> usize {
        self.index.smiles.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heavy-atom coordinates of molecule `i` (Angstrom).
    ///
    /// # Panics
    /// If `i >= self.len()`.
    pub fn coordinates_of(&self, i: usize) -> &[[f32; 3]] {
        &self.coordinates[self.atom_offsets[i]..self.atom_offsets[i + 1]]
    }

    /// Value of column `c` for molecule `i`.
    ///
    /// # Panics
    /// If `i` or `c` is out of range.
    pub fn target(&self, i: usize, c: usize) -> f32 {
        self.targets[i * self.index.columns.len() + c]
    }

    /// The column called `name`: exact match, else case-insensitive, else the unique
    /// column starting with `name_` case-insensitively (`homo_lumo_gap` ->
    /// `HOMO_LUMO_gap_au`).
    ///
    /// # Errors
    /// [`TrainError::Invalid`] listing the columns when none or several match.
    pub fn column(&self, name: &str) -> Result<usize, TrainError> {
        let cols = &self.index.columns;
        if let Some(c) = cols.iter().position(|c| c == name) {
            return Ok(c);
        }
        let lower = name.to_lowercase();
        if let Some(c) = cols.iter().position(|c| c.to_lowercase() == lower) {
            return Ok(c);
        }
        let prefixed: Vec<usize> = (0..cols.len())
            .filter(|&c| cols[c].to_lowercase().starts_with(&format!("{lower}_")))
            .collect();
        match prefixed[..] {
            [c] => Ok(c),
            _ => Err(TrainError::Invalid(format!(
                "QM9 has no column matching {name:?} (exact, case-insensitive, or the unique column starting with {name:?} + '_'); columns: {}",
                cols.join(", ")
            ))),
        }
    }

    /// Reads a directory written by [`convert_qm9_csv`].
    ///
    /// # Errors
    /// [`TrainError::Io`] / [`TrainError::Invalid`] naming the file.
    pub fn load(dir: &Path) -> Result<Self, TrainError> {
        let index_path = dir.join(INDEX_FILE);
        let text =
            std::fs::read_to_string(&index_path).map_err(|e| TrainError::io(&index_path, e))?;
        let index: Qm9Index = serde_json::from_str(&text)
            .map_err(|e| TrainError::Invalid(format!("{}: {e}", index_path.display())))?;
        let arrays_path = dir.join(ARRAYS_FILE);
        let bytes = std::fs::read(&arrays_path).map_err(|e| TrainError::io(&arrays_path, e))?;
        let bad = |e: String| TrainError::Invalid(format!("{}: {e}", arrays_path.display()));
        let st = SafeTensors::deserialize(&bytes).map_err(|e| bad(format!("{e:?}")))?;
        let f32s = |name: &str| -> Result<Vec<f32>, TrainError> {
            let t = st.tensor(name).map_err(|e| bad(format!("{name}: {e:?}")))?;
            Ok(t.data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect())
        };
        let offsets = st
            .tensor("atom_offsets")
            .map_err(|e| bad(format!("atom_offsets: {e:?}")))?;
        let atom_offsets: Vec<usize> = offsets
            .data()
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) as usize)
            .collect();
        let coordinates: Vec<[f32; 3]> = f32s("coordinates")?
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        let targets = f32s("targets")?;
        let m = index.smiles.len();
        if atom_offsets.len() != m + 1
            || atom_offsets[m] != coordinates.len()
            || targets.len() != m * index.columns.len()
        {
            return Err(bad("arrays do not match the index".into()));
        }
        Ok(Self {
            index,
            atom_offsets,
            coordinates,
            targets,
        })
    }
}

/// Columns of `qm9pack` that are not numeric targets.
const NON_TARGET_COLUMNS: [&str; 10] = [
    "XYZ_file",
    "Index",
    "SMILES",
    "InChi",
    "N_atoms",
    "Stoichiometry",
    "Elements",
    "XYZ_Ang",
    "Mulliken_pop",
    "Harmonic_Freq_cmi",
];

fn atomic_number(symbol: &str) -> Option<u8> {
    Some(match symbol {
        "H" => 1,
        "C" => 6,
        "N" => 7,
        "O" => 8,
        "F" => 9,
        _ => return None,
    })
}

/// `[[x,y,z],...]` as qm9pack writes it (numbers like `0.` are not JSON).
fn parse_xyz_list(text: &str) -> Result<Vec<[f64; 3]>, String> {
    let numbers = text
        .replace(['[', ']'], " ")
        .split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .map_err(|e| format!("geometry: {v:?}: {e}"))
        })
        .collect::<Result<Vec<f64>, String>>()?;
    if numbers.len() % 3 != 0 {
        return Err(format!("geometry: {} numbers", numbers.len()));
    }
    Ok(numbers
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect())
}

/// One converted molecule.
struct Converted {
    smiles: String,
    qm9_index: u32,
    coordinates: Vec<[f32; 3]>,
    targets: Vec<f32>,
}

/// Converts qm9pack's CSV parts (in order) into `out_dir` ([`ARRAYS_FILE`],
/// [`INDEX_FILE`]); `source` (wheel name, checksum) is recorded in the index.
///
/// # Errors
/// I/O and CSV errors naming the file; a missing column.
pub fn convert_qm9_csv(
    parts: &[PathBuf],
    out_dir: &Path,
    source: &str,
) -> Result<Qm9Index, TrainError> {
    let mut records: Vec<csv::StringRecord> = Vec::new();
    let mut header: Option<csv::StringRecord> = None;
    for part in parts {
        let mut reader = csv::Reader::from_path(part).map_err(|e| TrainError::Csv {
            path: part.clone(),
            reason: e.to_string(),
        })?;
        let h = reader
            .headers()
            .map_err(|e| TrainError::Csv {
                path: part.clone(),
                reason: e.to_string(),
            })?
            .clone();
        if header.as_ref().is_some_and(|first| *first != h) {
            return Err(TrainError::Csv {
                path: part.clone(),
                reason: "header differs from the first part".into(),
            });
        }
        header = Some(h);
        for r in reader.records() {
            records.push(r.map_err(|e| TrainError::Csv {
                path: part.clone(),
                reason: e.to_string(),
            })?);
        }
    }
    let header = header.ok_or_else(|| TrainError::Invalid("no QM9 CSV part given".into()))?;
    let col = |name: &str| -> Result<usize, TrainError> {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| TrainError::Invalid(format!("QM9 CSV lacks column {name}")))
    };
    let (c_smiles, c_index, c_elements, c_xyz) = (
        col("SMILES")?,
        col("Index")?,
        col("Elements")?,
        col("XYZ_Ang")?,
    );
    let target_cols: Vec<(usize, String)> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| !NON_TARGET_COLUMNS.contains(h))
        .map(|(i, h)| (i, h.to_string()))
        .collect();

    let results: Vec<Result<Converted, String>> = records
        .par_iter()
        .map(|r| {
            let smiles = r.get(c_smiles).unwrap_or("").to_string();
            let qm9_index: u32 = r
                .get(c_index)
                .and_then(|v| v.trim().parse().ok())
                .ok_or("index: not an integer")?;
            let symbols: Vec<String> =
                serde_json::from_str(&r.get(c_elements).unwrap_or("").replace('\'', "\""))
                    .map_err(|e| format!("elements: {e}"))?;
            let elements = symbols
                .iter()
                .map(|s| atomic_number(s).ok_or(format!("element {s}: not in QM9's H C N O F")))
                .collect::<Result<Vec<u8>, String>>()?;
            let xyz = parse_xyz_list(r.get(c_xyz).unwrap_or(""))?;
            let mol = Molecule::from_smiles(&smiles).map_err(|e| format!("smiles: {e}"))?;
            let coordinates =
                match_coordinates(&mol, &elements, &xyz).map_err(|e| format!("geometry: {e}"))?;
            let targets = target_cols
                .iter()
                .map(|(c, name)| {
                    r.get(*c)
                        .and_then(|v| v.trim().parse::<f32>().ok())
                        .filter(|v| v.is_finite())
                        .ok_or(format!("target {name}: not a finite number"))
                })
                .collect::<Result<Vec<f32>, String>>()?;
            Ok(Converted {
                smiles,
                qm9_index,
                coordinates,
                targets,
            })
        })
        .collect();

    let mut index = Qm9Index {
        source: source.to_string(),
        columns: target_cols.iter().map(|(_, n)| n.clone()).collect(),
        units: target_cols
            .iter()
            .map(|(_, n)| column_unit(n).to_string())
            .collect(),
        smiles: Vec::new(),
        qm9_index: Vec::new(),
        n_rows: records.len(),
        skipped_by_reason: BTreeMap::new(),
        skipped: Vec::new(),
    };
    let mut atom_offsets: Vec<u64> = vec![0];
    let mut coordinates: Vec<f32> = Vec::new();
    let mut targets: Vec<f32> = Vec::new();
    for (row, result) in results.into_iter().enumerate() {
        match result {
            Ok(c) => {
                index.smiles.push(c.smiles);
                index.qm9_index.push(c.qm9_index);
                coordinates.extend(c.coordinates.iter().flatten());
                atom_offsets.push((coordinates.len() / 3) as u64);
                targets.extend(c.targets);
            }
            Err(reason) => {
                let kind = reason.split(':').next().unwrap_or("other").to_string();
                *index.skipped_by_reason.entry(kind).or_default() += 1;
                index.skipped.push(SkippedRow {
                    row,
                    smiles: records[row].get(c_smiles).unwrap_or("").to_string(),
                    reason,
                });
            }
        }
    }

    std::fs::create_dir_all(out_dir).map_err(|e| TrainError::io(out_dir, e))?;
    let m = index.smiles.len();
    let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (b_coords, b_targets) = (bytes(&coordinates), bytes(&targets));
    let b_offsets: Vec<u8> = atom_offsets.iter().flat_map(|x| x.to_le_bytes()).collect();
    let tensors: HashMap<String, TensorView<'_>> = [
        (
            "coordinates".to_string(),
            TensorView::new(Dtype::F32, vec![coordinates.len() / 3, 3], &b_coords),
        ),
        (
            "targets".to_string(),
            TensorView::new(Dtype::F32, vec![m, index.columns.len()], &b_targets),
        ),
        (
            "atom_offsets".to_string(),
            TensorView::new(Dtype::U64, vec![m + 1], &b_offsets),
        ),
    ]
    .into_iter()
    .map(|(k, v)| v.map(|v| (k, v)))
    .collect::<Result<_, _>>()
    .map_err(|e| TrainError::Invalid(format!("{e:?}")))?;
    let arrays_path = out_dir.join(ARRAYS_FILE);
    safetensors::serialize_to_file(&tensors, None, &arrays_path)
        .map_err(|e| TrainError::Invalid(format!("{}: {e:?}", arrays_path.display())))?;
    let index_path = out_dir.join(INDEX_FILE);
    let json = serde_json::to_vec(&index).map_err(|e| TrainError::Invalid(e.to_string()))?;
    std::fs::write(&index_path, json).map_err(|e| TrainError::io(&index_path, e))?;
    Ok(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two molecules in qm9pack's format (methane with its hydrogens, ethanol with its
    /// heavy-atom geometry listed O first), and one whose geometry does not fit its SMILES.
    const CSV: &str = "XYZ_file,Index,SMILES,InChi,N_atoms,Stoichiometry,Elements,XYZ_Ang,Mulliken_pop,Harmonic_Freq_cmi,Dipole_debye,HOMO_LUMO_gap_au
\"a.xyz\",1,\"C\",\"x\",5,\"[]\",\"['C','H','H','H','H']\",\"[[-0.0127,1.0858,0.0080],[0.,-0.0060,0.0020],[1.0117,1.4638,0.0003],[-0.5408,1.4475,-0.8766],[-0.5238,1.4379,0.9064]]\",\"[]\",\"[]\",0.,0.5048
\"b.xyz\",2,\"CCO\",\"x\",4,\"[]\",\"['O','C','C']\",\"[[1.4311,0.3229,0.5867],[0.4658,-0.5116,-0.0368],[-0.8883,0.1670,-0.0273]]\",\"[]\",\"[]\",1.6,0.3
\"c.xyz\",3,\"COC\",\"x\",3,\"[]\",\"['O','C','C']\",\"[[1.4311,0.3229,0.5867],[0.4658,-0.5116,-0.0368],[-0.8883,0.1670,-0.0273]]\",\"[]\",\"[]\",1.3,0.25
";

    #[test]
    fn converts_matches_geometry_and_reports_skips() {
        let dir = std::env::temp_dir().join(format!("molattn-qm9-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv_path = dir.join("part.csv");
        std::fs::write(&csv_path, CSV).unwrap();
        let index = convert_qm9_csv(&[csv_path], &dir.join("out"), "test").unwrap();
        assert_eq!(index.columns, vec!["Dipole_debye", "HOMO_LUMO_gap_au"]);
        assert_eq!(index.units[1], "Hartree (atomic units)");
        assert_eq!(index.n_rows, 3);
        assert_eq!(index.skipped.len(), 1);
        assert_eq!(index.skipped[0].row, 2);
        assert!(
            index.skipped[0].reason.starts_with("geometry"),
            "{:?}",
            index.skipped
        );
        let qm9 = Qm9::load(&dir.join("out")).unwrap();
        assert_eq!(qm9.len(), 2);
        assert_eq!(qm9.index.qm9_index, vec![1, 2]);
        assert_eq!(qm9.coordinates_of(0), &[[-0.0127, 1.0858, 0.0080]]);
        // Ethanol's atoms in SMILES order C, C, O.
        assert_eq!(qm9.coordinates_of(1)[2], [1.4311, 0.3229, 0.5867]);
        assert_eq!(qm9.coordinates_of(1)[0], [-0.8883, 0.1670, -0.0273]);
        let gap = qm9.column("homo_lumo_gap").unwrap();
        assert_eq!(qm9.target(1, gap), 0.3);
        assert!(qm9.column("gap").is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
