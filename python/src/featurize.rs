//! `molattn.featurize`: a model family's inputs for molecules as NumPy arrays under the
//! exported ONNX model's input names: the arrays `cargo xtask featurize --format npz`
//! writes (`train::model_inputs`, `export::npz::input_feeds`).

use std::path::PathBuf;
use std::time::Instant;

use export::FeedData;
use numpy::IntoPyArray;
use numpy::ndarray::{ArrayD, IxDyn};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use train::RunKind;
use train::model_inputs::InputFeaturizer;
use train::run_file::RunSpecFile;
use xtask::commands::common::{CoordsArg, ModelArg};

use crate::errors;
use crate::inputs::{Molecules, cache_dir, parse_value};

/// The arrays of one padded batch and the input rows of its molecules, plus each skipped
/// row's (row, reason).
type Featurized = (Vec<export::Feed>, Vec<i64>, Vec<(usize, String)>);

/// `(arrays, errors)`: the input name -> NumPy array dict, and each skipped row's
/// (row, reason).
type Arrays<'py> = (Bound<'py, PyDict>, Vec<(usize, String)>);

/// Featurizes `smiles` (or the molecules of `path`: CSV, SDF) for `model` (`mat`,
/// `transformer-m`; with `run`, that run's family and featurizer, as it trained) and
/// returns `(arrays, errors)`: `arrays` maps the exported model's input names (MAT:
/// `node_features` `[B, N, 36]` float32, `key_padding_mask` `[B, N]` bool (true =
/// padding), `adjacency` and `distances` `[B, N, N]` float32, distances in Angstrom;
/// Transformer-M: docs/ONNX.md) and `row` (`[B]` int64, each molecule's input row) to
/// arrays of the featurized molecules, and `errors` lists `(row, reason)` for every
/// skipped one. `coords`: `embed3d` (default for SMILES), `layout2d`, `topological`,
/// `file` (default for a structure file).
///
/// Raises `ValueError` / `FileNotFoundError` for bad arguments or an unreadable file.
#[pyfunction]
#[pyo3(signature = (smiles=None, *, path=None, model="mat", coords=None, seed=0, cache=None, no_cache=false, max_atoms=None, run=None, smiles_column="smiles".to_string(), delimiter=',', id_field=None))]
#[allow(clippy::too_many_arguments)] // one Python keyword argument each
pub fn featurize<'py>(
    py: Python<'py>,
    smiles: Option<Vec<String>>,
    path: Option<PathBuf>,
    model: &str,
    coords: Option<&str>,
    seed: u64,
    cache: Option<PathBuf>,
    no_cache: bool,
    max_atoms: Option<usize>,
    run: Option<PathBuf>,
    smiles_column: String,
    delimiter: char,
    id_field: Option<String>,
) -> PyResult<Arrays<'py>> {
    let molecules = Molecules::new(smiles, path, smiles_column, delimiter, id_field);
    let family: ModelArg = parse_value("model", model).map_err(errors::to_py)?;
    let coords: Option<CoordsArg> = coords
        .map(|c| parse_value("coords", c))
        .transpose()
        .map_err(errors::to_py)?;
    let cache = cache_dir(cache, no_cache);
    let (feeds, rows, skipped) = py
        .detach(|| -> anyhow::Result<Featurized> {
            let data = molecules.input()?.read(None, "featurize")?;
            let coords = coords.unwrap_or(if data.structures.is_some() {
                CoordsArg::File
            } else {
                CoordsArg::Embed3d
            });
            let spec = run.as_deref().map(RunSpecFile::load).transpose()?;
            let family = RunKind::from(family);
            let featurizer = InputFeaturizer::new(
                family,
                run.as_deref().zip(spec.as_ref()),
                (coords.into(), seed),
                max_atoms,
                data.structures.is_some(),
            )?;
            let t0 = Instant::now();
            let cache = train::open_conformer_cache(cache.as_deref());
            let (features, report) = featurizer.featurize(&data, cache.as_ref(), true)?;
            train::conformer_cache::print_featurize_report(&report, t0.elapsed().as_secs_f64());
            let skipped = report
                .skipped
                .iter()
                .map(|s| (s.row, s.reason.clone()))
                .collect();
            if report.n_ok == 0 {
                return Ok((Vec::new(), Vec::new(), skipped));
            }
            let (feeds, kept) = export::npz::input_feeds(&features)?;
            Ok((feeds, kept.iter().map(|&k| k as i64).collect(), skipped))
        })
        .map_err(errors::to_py)?;
    let arrays = PyDict::new(py);
    for feed in feeds {
        let shape = IxDyn(&feed.shape);
        let bad =
            |e: numpy::ndarray::ShapeError| errors::value_error(format!("{}: {e}", feed.name));
        match feed.data {
            FeedData::F32(v) => arrays.set_item(
                &feed.name,
                ArrayD::from_shape_vec(shape, v)
                    .map_err(bad)?
                    .into_pyarray(py),
            )?,
            FeedData::Bool(v) => arrays.set_item(
                &feed.name,
                ArrayD::from_shape_vec(shape, v)
                    .map_err(bad)?
                    .into_pyarray(py),
            )?,
            FeedData::I64(v) => arrays.set_item(
                &feed.name,
                ArrayD::from_shape_vec(shape, v)
                    .map_err(bad)?
                    .into_pyarray(py),
            )?,
        }
    }
    arrays.set_item("row", rows.into_pyarray(py))?;
    Ok((arrays, skipped))
}
