//! `molattn.Run`: a trained run folder opened once (a MAT or Transformer-M run, an
//! ensemble's folder, or a SMILES generator), and what the CLI does with one: `predict`,
//! `embed`, `explain`, `export`, `generate`. Each method is one call into `train` /
//! `export`; the model sits behind a mutex, so several Python threads may share a `Run`
//! (their calls take turns).

use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{Result, anyhow};
use burn::tensor::Device;
use models::smiles_gpt::sampling::SamplingSettings;
use mol_featurize::properties::MolProperty;
use numpy::IntoPyArray;
use numpy::ndarray::{Array2, Array3, Array4};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use train::RunKind;
use train::predict_rows::{PredictedRow, StreamOptions, predict_rows};
use train::smiles_gpt::{GenerateCondition, GenerateRequest, GptRun, generate};
use train::trained_run::TrainedRun;

use crate::errors;
use crate::inputs::{Molecules, cache_dir};
use crate::predicted::{Predicted, split_values};

/// What a run folder holds.
enum Loaded {
    /// A property run, or an ensemble's members.
    Property(Vec<TrainedRun>),
    /// A SMILES generator.
    Generator(Box<GptRun>),
}

/// A trained run opened from its folder (`Run.load`).
#[pyclass(module = "molattn._molattn", frozen)]
pub struct Run {
    dir: PathBuf,
    kind: RunKind,
    device_name: String,
    tasks: Vec<String>,
    members: usize,
    /// Boxed: the device and models hold 64-byte aligned fields, and Python allocates a
    /// pyclass's memory at 16-byte alignment (PyO3 checks it and aborts).
    inner: Box<Mutex<(Device, Loaded)>>,
}

impl Run {
    /// The device and the loaded models. Nothing writes them after `load`, so a call that
    /// panicked while holding them (a `PanicException` in Python) left them whole: the
    /// lock is taken back instead of failing every later call.
    fn lock(&self) -> std::sync::MutexGuard<'_, (Device, Loaded)> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The property runs (an ensemble's members), or an error naming what `verb` needs.
    fn property<'a>(&self, loaded: &'a Loaded, verb: &str) -> Result<&'a [TrainedRun]> {
        match loaded {
            Loaded::Property(runs) => Ok(runs),
            Loaded::Generator(_) => Err(train::TrainError::generator_run(&self.dir, verb).into()),
        }
    }

    /// The folder of the run whose model `explain` and `export_onnx` use: the run, or an
    /// ensemble's first member.
    fn model_dir(&self, loaded: &Loaded) -> PathBuf {
        match loaded {
            Loaded::Property(runs) => runs.first().map_or(self.dir.clone(), |r| r.dir.clone()),
            Loaded::Generator(_) => self.dir.clone(),
        }
    }
}

#[pymethods]
impl Run {
    /// Opens the run folder `path` written by `train` (`run.json` and `best_model.bpk`;
    /// an ensemble's folder opens every member) on `device` (`flex`: the CPU; `wgpu`
    /// in a wheel built with `--features full`; the package has no CUDA build).
    ///
    /// Raises `FileNotFoundError` / `ValueError` when the folder is not a run.
    #[staticmethod]
    #[pyo3(signature = (path, device="flex"))]
    fn load(py: Python<'_>, path: PathBuf, device: &str) -> PyResult<Self> {
        let device_name = device.to_string();
        py.detach(|| -> Result<Self> {
            if !path.is_dir() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("{}: no such run folder", path.display()),
                )
                .into());
            }
            let device = crate::inputs::device(&device_name)?;
            let generator =
                path.join("run.json").exists() && train::run_kind(&path)? == RunKind::SmilesGpt;
            let (kind, tasks, members, loaded) = if generator {
                let run = GptRun::open(&path, &device)?;
                (
                    RunKind::SmilesGpt,
                    Vec::new(),
                    1,
                    Loaded::Generator(Box::new(run)),
                )
            } else {
                let runs = TrainedRun::open_members(&path, &device, "loaded")?;
                let first = runs
                    .first()
                    .ok_or_else(|| anyhow!("{}: no run", path.display()))?;
                (
                    first.kind(),
                    first.labels().columns,
                    runs.len(),
                    Loaded::Property(runs),
                )
            };
            Ok(Run {
                dir: path,
                kind,
                device_name,
                tasks,
                members,
                inner: Box::new(Mutex::new((device, loaded))),
            })
        })
        .map_err(errors::to_py)
    }

    /// The run folder.
    #[getter]
    fn path(&self) -> PathBuf {
        self.dir.clone()
    }

    /// `mat`, `transformer-m` or `smiles-gpt`.
    #[getter]
    fn kind(&self) -> String {
        self.kind.to_string()
    }

    /// The target columns (one prediction per task); empty for a generator.
    #[getter]
    fn tasks(&self) -> Vec<String> {
        self.tasks.clone()
    }

    /// Models in the folder: an ensemble's size, else 1.
    #[getter]
    fn members(&self) -> usize {
        self.members
    }

    /// The device the run was opened on.
    #[getter]
    fn device(&self) -> String {
        self.device_name.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "Run({:?}, kind={}, tasks={:?}, members={}, device={})",
            self.dir.display().to_string(),
            self.kind,
            self.tasks,
            self.members,
            self.device_name
        )
    }

    /// Predictions for `smiles` (or the molecules of `path`), as `cargo xtask predict`
    /// computes them (the same chunks, featurization and model). Returns a dict:
    /// `values` (`[n, tasks]` float32: target units for regression, the positive class's
    /// probability for classification; NaN where skipped), `std` (`[n, tasks]`, with an
    /// ensemble or MC dropout, else None), `outputs` (`[n, tasks, K]`, each member's or
    /// pass's prediction when `members=True`, else None), `errors` (per row None or the
    /// reason), `smiles` and `ids` (per row). `mc_dropout=K`: K passes with dropout on,
    /// seeded by `seed`.
    #[pyo3(signature = (smiles=None, *, path=None, smiles_column="smiles".to_string(), delimiter=',', id_field=None, cache=None, no_cache=false, max_atoms=None, members=false, mc_dropout=None, seed=0, chunk_rows=train::predict_rows::DEFAULT_CHUNK_ROWS))]
    #[allow(clippy::too_many_arguments)] // one Python keyword argument each
    fn predict<'py>(
        &self,
        py: Python<'py>,
        smiles: Option<Vec<String>>,
        path: Option<PathBuf>,
        smiles_column: String,
        delimiter: char,
        id_field: Option<String>,
        cache: Option<PathBuf>,
        no_cache: bool,
        max_atoms: Option<usize>,
        members: bool,
        mc_dropout: Option<usize>,
        seed: u64,
        chunk_rows: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let molecules = Molecules::new(smiles, path, smiles_column, delimiter, id_field);
        let cache = cache_dir(cache, no_cache);
        let tasks = self.tasks.len();
        let p = py
            .detach(|| -> Result<Predicted> {
                let guard = self.lock();
                let (device, loaded) = &*guard;
                let runs = self.property(loaded, "used to predict")?;
                // MC dropout: dropout is active only on an autodiff device (as the CLI).
                let reopened;
                let (runs, device) = match mc_dropout {
                    Some(_) => {
                        let device = device.clone().autodiff();
                        reopened = TrainedRun::open_members(&self.dir, &device, "used to predict")?;
                        (&reopened[..], device)
                    }
                    None => (runs, device.clone()),
                };
                let input = molecules.input()?.stream(None, "predict")?;
                let cache = train::open_conformer_cache(cache.as_deref());
                let options = StreamOptions {
                    chunk_rows: chunk_rows.max(1),
                    max_atoms: max_atoms.unwrap_or(mol_featurize::DEFAULT_MAX_ATOMS),
                    members,
                    mc_dropout,
                    seed,
                    ..Default::default()
                };
                let outputs = runs.len() * mc_dropout.unwrap_or(1);
                let mut rows: Vec<PredictedRow> = Vec::new();
                predict_rows(
                    runs,
                    input,
                    0,
                    &options,
                    (cache.as_ref(), true),
                    &device,
                    |chunk| {
                        rows.extend(chunk);
                        Ok(())
                    },
                )?;
                Ok(split_values(rows, tasks, outputs, members))
            })
            .map_err(errors::to_py)?;
        let n = p.smiles.len();
        let shape = |e| errors::value_error(format!("prediction arrays: {e}"));
        let out = PyDict::new(py);
        out.set_item(
            "values",
            Array2::from_shape_vec((n, tasks), p.mean)
                .map_err(shape)?
                .into_pyarray(py),
        )?;
        match p.std {
            Some(std) => out.set_item(
                "std",
                Array2::from_shape_vec((n, tasks), std)
                    .map_err(shape)?
                    .into_pyarray(py),
            )?,
            None => out.set_item("std", py.None())?,
        }
        match p.each {
            Some(each) => out.set_item(
                "outputs",
                Array3::from_shape_vec((n, tasks, p.outputs), each)
                    .map_err(shape)?
                    .into_pyarray(py),
            )?,
            None => out.set_item("outputs", py.None())?,
        }
        out.set_item("errors", p.errors)?;
        out.set_item("smiles", p.smiles)?;
        out.set_item("ids", p.ids)?;
        out.set_item("tasks", self.tasks.clone())?;
        Ok(out)
    }

    /// The vectors the run's head reads, as `cargo xtask embed` writes them: one
    /// `d_model` vector per molecule (`[n, d]` float32, a row of NaN where skipped), or
    /// with `atoms=True` one per heavy atom (`[total atoms, d]`). Returns a dict:
    /// `embeddings`, `row` and `atom` (per output row: the input row, and the atom index
    /// or -1), `errors` (per input row None or the reason), `smiles`. `member`: an
    /// ensemble's member (their vector spaces differ, so they are not averaged).
    #[pyo3(signature = (smiles=None, *, path=None, smiles_column="smiles".to_string(), delimiter=',', id_field=None, cache=None, no_cache=false, max_atoms=None, atoms=false, member=0))]
    #[allow(clippy::too_many_arguments)] // one Python keyword argument each
    fn embed<'py>(
        &self,
        py: Python<'py>,
        smiles: Option<Vec<String>>,
        path: Option<PathBuf>,
        smiles_column: String,
        delimiter: char,
        id_field: Option<String>,
        cache: Option<PathBuf>,
        no_cache: bool,
        max_atoms: Option<usize>,
        atoms: bool,
        member: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let molecules = Molecules::new(smiles, path, smiles_column, delimiter, id_field);
        let cache = cache_dir(cache, no_cache);
        let embeddings = py
            .detach(|| -> Result<train::embed::Embeddings> {
                let guard = self.lock();
                let (device, loaded) = &*guard;
                let runs = self.property(loaded, "embedded")?;
                let run = runs.get(member).ok_or_else(|| {
                    train::TrainError::Invalid(format!(
                        "member={member}: the run has {} member(s)",
                        runs.len()
                    ))
                })?;
                let data = molecules.input()?.read(None, "embed")?;
                let cache = train::open_conformer_cache(cache.as_deref());
                let max_atoms = max_atoms.unwrap_or(mol_featurize::DEFAULT_MAX_ATOMS);
                Ok(train::embed::embed_table(
                    run,
                    &data,
                    atoms,
                    (cache.as_ref(), max_atoms),
                    device,
                )?)
            })
            .map_err(errors::to_py)?;
        let (values, index) = embeddings.matrix();
        let shape = (index.len(), embeddings.dim);
        let out = PyDict::new(py);
        out.set_item(
            "embeddings",
            Array2::from_shape_vec(shape, values)
                .map_err(|e| errors::value_error(format!("embeddings: {e}")))?
                .into_pyarray(py),
        )?;
        let rows: Vec<i64> = index.iter().map(|&(r, _)| r as i64).collect();
        let atom: Vec<i64> = index
            .iter()
            .map(|&(_, a)| a.map_or(-1, |a| a as i64))
            .collect();
        out.set_item("row", rows.into_pyarray(py))?;
        out.set_item("atom", atom.into_pyarray(py))?;
        let (smiles, errors): (Vec<String>, Vec<Option<String>>) = embeddings
            .rows
            .into_iter()
            .map(|r| (r.smiles, r.error))
            .unzip();
        out.set_item("errors", errors)?;
        out.set_item("smiles", smiles)?;
        Ok(out)
    }

    /// What the run attends to and which atoms drive its prediction for one SMILES, as
    /// `cargo xtask explain` computes it: a dict with `tokens` (`dummy`/`graph`, then
    /// `<element><atom index>`), `prediction` (the first task, target units),
    /// `attention` (`[layers, heads, T, T]` float32, row = query token), `contribution`
    /// (gradient x input per atom, `[N]`) and, with `out`, `files` (the SVG / PNG
    /// pictures written there; `layer` / `head` as the CLI's, default last layer, mean
    /// of heads). An ensemble's first member is explained.
    #[pyo3(signature = (smiles, *, out=None, layer=None, head=None))]
    fn explain<'py>(
        &self,
        py: Python<'py>,
        smiles: String,
        out: Option<PathBuf>,
        layer: Option<usize>,
        head: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (e, files) = py
            .detach(|| -> Result<(train::explain::Explanation, Vec<PathBuf>)> {
                // explain opens the model from its folder: the lock only names it, and
                // other threads' calls go on meanwhile.
                let (device, dir) = {
                    let guard = self.lock();
                    let (device, loaded) = &*guard;
                    self.property(loaded, "explained")?;
                    (device.clone(), self.model_dir(loaded))
                };
                let e = train::explain::explain(&dir, &smiles, &device)?;
                let files = match &out {
                    Some(out) => train::explain::render(&e, layer, head, out)?,
                    None => Vec::new(),
                };
                Ok((e, files))
            })
            .map_err(errors::to_py)?;
        let (l, h) = (e.attention.len(), e.attention.first().map_or(0, Vec::len));
        let t = e.tokens.len();
        let flat: Vec<f32> = e.attention.into_iter().flatten().flatten().collect();
        let d = PyDict::new(py);
        d.set_item("smiles", e.smiles)?;
        d.set_item("model", e.model)?;
        d.set_item("tokens", e.tokens)?;
        d.set_item("prediction", e.prediction)?;
        d.set_item(
            "attention",
            Array4::from_shape_vec((l, h, t, t), flat)
                .map_err(|e| errors::value_error(format!("attention: {e}")))?
                .into_pyarray(py),
        )?;
        d.set_item("contribution", e.contribution.into_pyarray(py))?;
        d.set_item("files", files)?;
        Ok(d)
    }

    /// Writes the run's model to the ONNX file `out` and verifies it as `cargo xtask
    /// export` does (the ONNX checker, ONNX Runtime and tract against Burn on held-out
    /// molecules; a generator's decoder step by greedy decoding). Needs the pip packages
    /// `onnx` and `onnxruntime`. An ensemble's first member is exported.
    fn export_onnx(&self, py: Python<'_>, out: PathBuf) -> PyResult<()> {
        py.detach(|| -> Result<()> {
            // Export opens the model from its folder: the lock only names it.
            let dir = self.model_dir(&self.lock().1);
            let source = export::run_export::Source::Run {
                dir,
                asked: self.kind,
            };
            Ok(export::run_export::export_and_verify(
                &source,
                &out,
                &Device::flex(),
            )?)
        })
        .map_err(errors::to_py)
    }

    /// Samples `n` molecules from a generator run, as `cargo xtask generate` does (the
    /// same seed gives the same rows): a list of dicts with `smiles`, `valid`,
    /// `canonical` and `reason`. `temperature` 0 is greedy; `top_k` samples among the K
    /// most likely tokens; `prefix` starts every sample; `props` (`{"logp": 2.0}`) and
    /// `scaffold` condition a conditional run.
    #[pyo3(signature = (n=1000, *, temperature=1.0, top_k=None, seed=0, prefix="".to_string(), props=None, scaffold=None, batch_size=256))]
    #[allow(clippy::too_many_arguments)] // one Python keyword argument each
    fn generate<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        temperature: f64,
        top_k: Option<usize>,
        seed: u64,
        prefix: String,
        props: Option<Vec<(String, f64)>>,
        scaffold: Option<String>,
        batch_size: usize,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let rows = py
            .detach(
                || -> Result<Vec<train::smiles_gpt::generate::GeneratedRow>> {
                    let guard = self.lock();
                    let (device, loaded) = &*guard;
                    let Loaded::Generator(run) = loaded else {
                        return Err(train::TrainError::Invalid(format!(
                            "{}: a {} run; generate needs a smiles-gpt run",
                            self.dir.display(),
                            self.kind
                        ))
                        .into());
                    };
                    let props = props
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(name, v)| {
                            Ok((name.parse::<MolProperty>().map_err(|e| anyhow!(e))?, v))
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let condition = GenerateCondition::named(run, &props, scaffold)?;
                    let request = GenerateRequest {
                        n,
                        batch_size,
                        prefix,
                        settings: SamplingSettings { temperature, top_k },
                        seed,
                        condition,
                    };
                    Ok(generate(run, &request, device, |_| {})?)
                },
            )
            .map_err(errors::to_py)?;
        rows.into_iter()
            .map(|r| {
                let d = PyDict::new(py);
                d.set_item("smiles", r.smiles)?;
                d.set_item("valid", r.valid)?;
                d.set_item("canonical", r.canonical)?;
                d.set_item("reason", r.reason)?;
                Ok(d)
            })
            .collect()
    }
}
