//! Flags and helpers shared by several commands: backend, coordinates, presets, dataset
//! and cache folders, the repository root.

use std::path::PathBuf;

use anyhow::{Result, bail};

use burn::tensor::Device;
use clap::ValueEnum;
use mol_featurize::cache::cache_root;
use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::{ConformerOptions, MatFeaturizer};

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

impl From<ModelArg> for train::RunKind {
    fn from(model: ModelArg) -> Self {
        match model {
            ModelArg::Mat => Self::Mat,
            ModelArg::TransformerM => Self::TransformerM,
            ModelArg::SmilesGpt => Self::SmilesGpt,
        }
    }
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
    (!no_cache).then(|| cache_root(cache))
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
