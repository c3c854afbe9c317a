//! The flags `predict` and `embed` share: the run, the molecules, the cache, the device.

use std::path::{Path, PathBuf};

use anyhow::Result;
use train::molecule_input::MoleculeInput;
use train::table_data::TableData;

use super::common::DeviceArg;
use super::structure_args::StructureArgs;

/// The flags `predict` and `embed` share: the run, the molecules, the cache, the device.
#[derive(clap::Args)]
pub struct RunInputArgs {
    /// Run directory written by `train` (MAT or Transformer-M; an ensemble's folder).
    #[arg(long)]
    pub run: PathBuf,
    /// Cache folder: the conformer cache and prepared datasets (default:
    /// $MOLATTN_CACHE, else $XDG_CACHE_HOME/molattn, else ~/.cache/molattn).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Embed every molecule; neither read nor write the conformer cache.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
    /// Molecules: a CSV, an SDF (.sdf, .sdf.gz, .mol; a run trained with `--coords
    /// file` takes each record's own coordinates), or XYZ files with --labels.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// SDF identity field and XYZ labels.
    #[command(flatten)]
    pub structure: StructureArgs,
    /// SMILES column of --data.
    #[arg(long, default_value = "smiles")]
    pub smiles_column: String,
    /// Field delimiter of --data (`,`; `;`, `tab`, ... for other exports).
    #[arg(long, default_value = ",", value_parser = train::data::parse_delimiter)]
    pub delimiter: char,
    /// One or more SMILES.
    #[arg(long)]
    pub smiles: Vec<String>,
    /// Skip molecules with more heavy atoms than this (default 1000), with the reason in
    /// the error column.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_atoms: Option<u64>,
    /// Backend.
    #[arg(long, value_enum, default_value = "flex")]
    pub device: DeviceArg,
}

impl RunInputArgs {
    /// `--data` and `--smiles` as one input.
    ///
    /// # Errors
    /// Flags that do not fit the file ([`StructureArgs::source`]).
    pub fn input(&self) -> Result<MoleculeInput> {
        let file = match &self.data {
            Some(path) => Some(
                self.structure
                    .source(path, &self.smiles_column, self.delimiter)?,
            ),
            None => None,
        };
        Ok(MoleculeInput {
            file,
            smiles: self.smiles.clone(),
        })
    }

    /// The molecules of `--data` and `--smiles`, read whole, refusing an `out` that is
    /// one of the input files ([`MoleculeInput::read`]).
    ///
    /// # Errors
    /// An unreadable or empty input, an SDF with `--smiles`, an `out` that is an input.
    pub fn molecules(&self, out: Option<&Path>, verb: &str) -> Result<TableData> {
        Ok(self.input()?.read(out, verb)?)
    }

    /// `--max-atoms`, else the featurizers' default.
    pub fn max_atoms(&self) -> usize {
        self.max_atoms
            .map_or(mol_featurize::DEFAULT_MAX_ATOMS, |n| n as usize)
    }
}
