//! `--data`'s companions for structure files (SDF identity field, XYZ labels) and the
//! default coordinates of a molecule file.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use train::table_data::{MoleculeFormat, MoleculeSource};

use super::common::CoordsArg;

/// Flags of commands that read molecule files: what an SDF or XYZ files need besides
/// `--data`.
#[derive(clap::Args, Clone, Debug, Default)]
#[command(next_help_heading = "Structure files (--data x.sdf, or XYZ files)")]
pub struct StructureArgs {
    /// SDF data field giving each record's identity in reports and predictions
    /// (default: the record's title line).
    #[arg(long)]
    pub id_field: Option<String>,
    /// XYZ files: --data is a folder of .xyz files (or a text file listing them) and
    /// this delimited file holds one row per molecule: its file name (--file-column),
    /// its SMILES (--smiles-column; XYZ has no bonds) and its targets.
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// Column of --labels with each row's XYZ file name (with or without .xyz).
    #[arg(long, default_value = "file", requires = "labels")]
    pub file_column: String,
}

impl StructureArgs {
    /// The molecule source of `data`: SDF by extension, XYZ files with --labels,
    /// else a delimited file with `smiles_column` and `delimiter`.
    ///
    /// # Errors
    /// Flags that do not fit the file (see [`MoleculeFormat::for_path`]).
    pub fn source(
        &self,
        data: &Path,
        smiles_column: &str,
        delimiter: char,
    ) -> Result<MoleculeSource> {
        let format = MoleculeFormat::for_path(
            data,
            self.id_field.clone(),
            self.labels.clone().map(|l| (l, self.file_column.clone())),
        )?;
        if matches!(format, MoleculeFormat::Sdf { .. })
            && (smiles_column != "smiles" || delimiter != ',')
        {
            bail!(
                "{}: --smiles-column and --delimiter describe a delimited file (or XYZ \
                 labels); an SDF has neither (its records' data fields give the targets)",
                data.display()
            );
        }
        Ok(MoleculeSource {
            path: data.to_path_buf(),
            format,
            smiles_column: smiles_column.to_string(),
            delimiter,
        })
    }
}

/// The coordinates of `--coords`, or by default the file's own for a structure file and
/// ETKDG conformers for a delimited one.
pub fn coords_for(coords: Option<CoordsArg>, source: &MoleculeSource) -> CoordsArg {
    coords.unwrap_or(if source.format.has_coordinates() {
        CoordsArg::File
    } else {
        CoordsArg::Embed3d
    })
}
