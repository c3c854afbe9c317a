//! Flags and helpers shared by several commands: backend, coordinates, presets, dataset
//! and cache folders, the repository root.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use burn::tensor::Device;
use clap::ValueEnum;
use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::{ConformerOptions, MatFeaturizer};
use train::table_data::{MoleculeFormat, MoleculeSource};

/// `--device`: the Burn backend.
#[derive(Clone, Copy, ValueEnum)]
pub enum DeviceArg {
    /// Pure-Rust CPU backend.
    Flex,
    /// wgpu (Vulkan / Metal / lavapipe); needs a build with the `wgpu` feature.
    Wgpu,
    /// CUDA device 0; needs a build with the `cuda` feature.
    Cuda,
}

impl DeviceArg {
    /// The Burn device, or an error naming the cargo feature this binary was built without.
    pub fn device(self) -> Result<Device> {
        match self {
            DeviceArg::Flex => Ok(Device::flex()),
            #[cfg(feature = "wgpu")]
            DeviceArg::Wgpu => Ok(Device::wgpu(burn::tensor::DeviceKind::DefaultDevice)),
            #[cfg(not(feature = "wgpu"))]
            DeviceArg::Wgpu => Err(missing_feature("wgpu", "--device wgpu")),
            #[cfg(feature = "cuda")]
            DeviceArg::Cuda => Ok(Device::cuda(0)),
            #[cfg(not(feature = "cuda"))]
            DeviceArg::Cuda => Err(missing_feature("cuda", "--device cuda")),
        }
    }
}

/// The error for a command or option that this build left out to build faster: it names
/// the cargo feature and the alias that builds it (docs/BUILD.md).
#[allow(dead_code)] // unused when every optional feature is on
pub fn missing_feature(feature: &str, what: &str) -> anyhow::Error {
    let how = match feature {
        "onnx" => "cargo xtask-onnx <command> (or cargo xtask-full)",
        "wgpu" => "cargo xtask-full <command>",
        _ => "cargo run -p xtask --features cuda -- <command> (README: Backends)",
    };
    anyhow::anyhow!(
        "{what} needs the `{feature}` feature, which the default build leaves out to build \
         faster; rebuild with it: {how}"
    )
}

/// `--model`: the model family.
#[derive(Clone, Copy, ValueEnum)]
pub enum ModelArg {
    /// Molecule Attention Transformer.
    Mat,
    /// Transformer-M (2D and 3D channels): on a CSV (--data) or QM9 (--dataset qm9).
    TransformerM,
    /// The SMILES generator (MolGPT's decoder) on a column of SMILES (--data).
    SmilesGpt,
}

/// `--dataset`: a prepared dataset.
#[derive(Clone, Copy, ValueEnum)]
pub enum DatasetArg {
    /// QM9 from qm9pack (downloaded and converted on first use, or by `cargo xtask data qm9`).
    Qm9,
}

/// `--preset`: a model size.
#[derive(Clone, Copy, ValueEnum)]
pub enum PresetArg {
    /// Reference make_model defaults (d 128, 2 layers, 8 heads).
    Small,
    /// Published pretrained configuration (d 1024, 8 layers, 16 heads).
    Pretrained,
    /// Transformer-M's paper configuration (12 layers, d 768, 32 heads, K 128).
    Base,
    /// MolGPT's size for smiles-gpt (8 layers, 8 heads, d 256).
    Molgpt,
}

/// `--coords`: where the coordinates come from (MAT's distance matrices,
/// Transformer-M's 3D channel).
#[derive(Clone, Copy, ValueEnum)]
pub enum CoordsArg {
    /// ETKDG 3D conformer, falling back to 2D then topological.
    Embed3d,
    /// 2D layout, falling back to topological.
    Layout2d,
    /// Shortest-path distances only.
    Topological,
    /// The structure file's own coordinates (SDF conformers, XYZ geometries); a 2D
    /// record's depiction counts as a 2D layout, never as a conformer.
    File,
}

/// How a flag's value is spelled on the command line (clap's name for it).
pub fn spelling<T: ValueEnum>(value: &T) -> String {
    value
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

impl From<CoordsArg> for CoordinateMethod {
    fn from(c: CoordsArg) -> Self {
        match c {
            CoordsArg::Embed3d => CoordinateMethod::Embed3d,
            CoordsArg::Layout2d => CoordinateMethod::Layout2d,
            CoordsArg::Topological => CoordinateMethod::Topological,
            CoordsArg::File => CoordinateMethod::File,
        }
    }
}

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

/// MAT's dataset folder: `given`, else `$MOLATTN_DATA`, else the datasets molattn
/// ships ([`mol_featurize::mat_datasets::dir`], unpacked into the cache folder).
///
/// # Errors
/// `given` is not a folder, or [`mol_featurize::mat_datasets::DatasetsError`].
pub fn datasets_dir(given: Option<PathBuf>) -> Result<PathBuf> {
    match given {
        Some(dir) if !dir.is_dir() => bail!("datasets folder {} not found", dir.display()),
        Some(dir) => Ok(dir),
        None => Ok(mol_featurize::mat_datasets::dir()?),
    }
}

/// The conformer cache folder of a command: `--cache`, else the default cache folder;
/// `None` with `--no-cache`.
pub fn conformer_cache_dir(cache: Option<PathBuf>, no_cache: bool) -> Option<PathBuf> {
    (!no_cache).then(|| cache_dir(cache))
}

/// A MAT featurizer with coordinates from `coords`, conformer seed `seed`, and the
/// reference quirks when `reference_compat`.
pub fn featurizer(coords: CoordsArg, seed: u64, reference_compat: bool) -> MatFeaturizer {
    MatFeaturizer {
        reference_compat,
        conformer: ConformerOptions {
            method: coords.into(),
            seed,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The cache root: `--cache`, else `$MOLATTN_CACHE`, else `$XDG_CACHE_HOME/molattn`,
/// else `~/.cache/molattn`.
pub fn cache_dir(given: Option<PathBuf>) -> PathBuf {
    given
        .or_else(mol_featurize::cache::default_cache_dir)
        .unwrap_or_else(|| PathBuf::from(".cache/molattn"))
}

/// The repository root: the parent of xtask's directory, read at run time (`cargo run` sets
/// `CARGO_MANIFEST_DIR`) so that a binary built from another checkout of the same commit,
/// reused from a shared build directory, still finds this checkout's files.
pub fn repo_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("..")
}

/// Threads available to this process (1 when unknown).
pub fn rayon_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
