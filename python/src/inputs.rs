//! The molecules of a call: a list of SMILES or a molecule file (a delimited file, an
//! SDF; XYZ files with labels are the CLI's only), read as the CLI reads `--smiles` and
//! `--data`; and the device and cache.

use std::path::PathBuf;

use anyhow::Result;
use burn::tensor::Device;
use clap::ValueEnum;
use train::molecule_input::MoleculeInput;
use xtask::commands::common::{DeviceArg, conformer_cache_dir};
use xtask::commands::structure_args::StructureArgs;

/// The molecules of a call (the Python functions' `molecules`, `path`, `smiles_column`,
/// `delimiter`, `id_field` arguments).
pub struct Molecules {
    /// SMILES, in order (after the file's rows when both are given).
    pub smiles: Vec<String>,
    /// A molecule file, as `--data`.
    pub path: Option<PathBuf>,
    /// Its SMILES column (delimited files).
    pub smiles_column: String,
    /// Its field delimiter (delimited files).
    pub delimiter: char,
    /// An SDF's identity field (default: the record's title).
    pub id_field: Option<String>,
}

impl Molecules {
    /// The Python functions' molecule arguments (no `smiles`: the file's rows only).
    pub fn new(
        smiles: Option<Vec<String>>,
        path: Option<PathBuf>,
        smiles_column: String,
        delimiter: char,
        id_field: Option<String>,
    ) -> Self {
        Self {
            smiles: smiles.unwrap_or_default(),
            path,
            smiles_column,
            delimiter,
            id_field,
        }
    }

    /// The input as the CLI builds it from `--data` and `--smiles`.
    ///
    /// # Errors
    /// Flags that do not fit the file ([`StructureArgs::source`]).
    pub fn input(&self) -> Result<MoleculeInput> {
        let structure = StructureArgs {
            id_field: self.id_field.clone(),
            ..Default::default()
        };
        let file = match &self.path {
            Some(path) => Some(structure.source(path, &self.smiles_column, self.delimiter)?),
            None => None,
        };
        Ok(MoleculeInput {
            file,
            smiles: self.smiles.clone(),
        })
    }
}

/// The Burn device named `name` (`flex`, `wgpu`, `cuda`), as `--device`.
///
/// # Errors
/// An unknown name, or a backend this build left out.
pub fn device(name: &str) -> Result<Device> {
    parse_value::<DeviceArg>("device", name)?.device()
}

/// The conformer cache folder: `cache`, else the default one; `None` with `no_cache`.
pub fn cache_dir(cache: Option<PathBuf>, no_cache: bool) -> Option<PathBuf> {
    conformer_cache_dir(cache, no_cache)
}

/// A flag's value by its CLI spelling (`embed3d`, `transformer-m`, ...).
///
/// # Errors
/// A value the flag does not take, naming the ones it does.
pub fn parse_value<T: ValueEnum>(flag: &str, value: &str) -> Result<T> {
    T::from_str(value, true).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        // A clap error, as the CLI's for the same value (a `ValueError` in Python).
        let message = format!("{flag}={value:?}: expected one of {}", names.join(", "));
        clap::Error::raw(clap::error::ErrorKind::InvalidValue, message).into()
    })
}
