//! Running exported models in two ONNX runtimes and the ONNX checker.
//!
//! - ONNX Runtime through `ort` with `load-dynamic`: the shared library comes from
//!   `$ORT_DYLIB_PATH`, or else from the pip `onnxruntime` package found by the Python
//!   interpreter [`python`] names (`$MOLATTN_PYTHON`, else `python3` on the `PATH`).
//! - `tract-onnx` (pure Rust).
//! - `onnx.checker.check_model(full_check=True)` from the pip `onnx` package.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use tract_onnx::prelude::{
    DatumType, Framework, InferenceFact, InferenceModelExt, IntoRunnable, IntoTValue, TVec,
    Tensor as TractTensor,
};

use crate::ExportError;

/// Data of one graph input.
#[derive(Debug, Clone)]
pub enum FeedData {
    /// `tensor(float)`.
    F32(Vec<f32>),
    /// `tensor(bool)`.
    Bool(Vec<bool>),
    /// `tensor(int64)` (embedding indices).
    I64(Vec<i64>),
}

/// One named graph input with its concrete shape.
#[derive(Debug, Clone)]
pub struct Feed {
    /// Input name.
    pub name: String,
    /// Shape.
    pub shape: Vec<usize>,
    /// Row-major values.
    pub data: FeedData,
}

impl Feed {
    /// A float input.
    pub fn f32(name: &str, shape: &[usize], values: Vec<f32>) -> Self {
        Self {
            name: name.into(),
            shape: shape.to_vec(),
            data: FeedData::F32(values),
        }
    }

    /// An int64 input (embedding indices).
    pub fn i64(name: &str, shape: &[usize], values: Vec<i64>) -> Self {
        Self {
            name: name.into(),
            shape: shape.to_vec(),
            data: FeedData::I64(values),
        }
    }

    /// A bool input (masks).
    pub fn bool(name: &str, shape: &[usize], values: Vec<bool>) -> Self {
        Self {
            name: name.into(),
            shape: shape.to_vec(),
            data: FeedData::Bool(values),
        }
    }
}

fn ort_err(e: impl std::fmt::Display) -> ExportError {
    ExportError::Runtime {
        runtime: "onnxruntime",
        reason: e.to_string(),
    }
}

fn tract_err(e: impl std::fmt::Display) -> ExportError {
    ExportError::Runtime {
        runtime: "tract",
        reason: format!("{e:#}"),
    }
}

/// Path of `libonnxruntime.so`: `$ORT_DYLIB_PATH`, or the library inside the pip
/// `onnxruntime` package.
///
/// # Errors
/// [`ExportError::Runtime`] when neither is available (install with
/// `pip install onnxruntime`).
pub fn onnxruntime_library() -> Result<PathBuf, ExportError> {
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH") {
        return Ok(PathBuf::from(p));
    }
    let script = "import glob, os, onnxruntime; \
        d = os.path.join(os.path.dirname(onnxruntime.__file__), 'capi'); \
        print(sorted(glob.glob(os.path.join(d, 'libonnxruntime.so*')) + glob.glob(os.path.join(d, 'libonnxruntime*.dylib')) + glob.glob(os.path.join(d, 'onnxruntime.dll')))[0])";
    let out = Command::new(python())
        .args(["-c", script])
        .output()
        .map_err(|e| ort_err(format!("python3 not runnable ({e}); set ORT_DYLIB_PATH")))?;
    if !out.status.success() {
        return Err(ort_err(format!(
            "pip package onnxruntime not found (pip install onnxruntime, or set ORT_DYLIB_PATH): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The process-wide ONNX Runtime environment (ONNX Runtime allows one per process).
fn ort_environment() -> Result<&'static ort::environment::Environment, ExportError> {
    static ENV: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();
    ENV.get_or_init(|| {
        let lib = onnxruntime_library().map_err(|e| e.to_string())?;
        ort::init_from(&lib)
            .map_err(|e| format!("{}: {e}", lib.display()))?
            .with_name("molattn")
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| ort_err(e.clone()))
}

/// One output of a run: its shape and row-major f32 values.
pub type ShapedOutput = (Vec<usize>, Vec<f32>);

/// An ONNX Runtime session on one model, kept open for repeated runs (benchmarks).
pub struct OnnxRuntimeSession {
    session: ort::session::Session,
}

impl OnnxRuntimeSession {
    /// Opens `model`; `intra_threads` sets ONNX Runtime's intra-op thread count (`None`:
    /// its default, one per physical core).
    ///
    /// # Errors
    /// [`ExportError::Runtime`] when the library cannot be loaded or the model is rejected.
    pub fn open(model: &Path, intra_threads: Option<usize>) -> Result<Self, ExportError> {
        let env = ort_environment()?;
        let mut builder = ort::session::Session::builder(env).map_err(ort_err)?;
        if let Some(n) = intra_threads {
            builder = builder.with_intra_threads(n).map_err(ort_err)?;
        }
        let session = builder.commit_from_file(model).map_err(ort_err)?;
        Ok(Self { session })
    }

    /// Runs the model on `feeds` and returns the f32 values of `output`.
    ///
    /// # Errors
    /// [`ExportError::Runtime`] when the run fails or `output` is not an f32 output.
    pub fn run(&mut self, feeds: &[Feed], output: &str) -> Result<Vec<f32>, ExportError> {
        let mut outputs = self.run_outputs(feeds, &[output])?;
        Ok(outputs.remove(0).1)
    }

    /// Runs the model on `feeds` and returns the shape and f32 values of each of
    /// `outputs`, in their order.
    ///
    /// # Errors
    /// [`ExportError::Runtime`] when the run fails or an output is missing or not f32.
    pub fn run_outputs(
        &mut self,
        feeds: &[Feed],
        outputs: &[&str],
    ) -> Result<Vec<ShapedOutput>, ExportError> {
        let mut inputs: Vec<(
            std::borrow::Cow<'_, str>,
            ort::session::SessionInputValue<'_>,
        )> = Vec::new();
        for feed in feeds {
            let shape: Vec<i64> = feed.shape.iter().map(|&d| d as i64).collect();
            let value: ort::session::SessionInputValue<'_> = match &feed.data {
                FeedData::F32(v) => ort::value::Tensor::from_array((shape, v.clone()))
                    .map_err(ort_err)?
                    .into(),
                FeedData::Bool(v) => ort::value::Tensor::from_array((shape, v.clone()))
                    .map_err(ort_err)?
                    .into(),
                FeedData::I64(v) => ort::value::Tensor::from_array((shape, v.clone()))
                    .map_err(ort_err)?
                    .into(),
            };
            inputs.push((feed.name.clone().into(), value));
        }
        let results = self.session.run(inputs).map_err(ort_err)?;
        outputs
            .iter()
            .map(|&name| {
                let value = results
                    .get(name)
                    .ok_or_else(|| ort_err(format!("the model has no output {name}")))?;
                let (shape, values) = value.try_extract_tensor::<f32>().map_err(ort_err)?;
                Ok((shape.iter().map(|&d| d as usize).collect(), values.to_vec()))
            })
            .collect()
    }
}

/// Runs `model` in ONNX Runtime and returns the f32 values of `output`.
///
/// # Errors
/// [`ExportError::Runtime`] when the library cannot be loaded or the run fails.
pub fn run_onnxruntime(
    model: &Path,
    feeds: &[Feed],
    output: &str,
) -> Result<Vec<f32>, ExportError> {
    OnnxRuntimeSession::open(model, None)?.run(feeds, output)
}

/// Runs `model` in tract (shapes fixed to those of `feeds`, then optimised) and returns
/// the f32 values of its first output.
///
/// # Errors
/// [`ExportError::Runtime`] when tract cannot load, type or run the graph.
pub fn run_tract(model: &Path, feeds: &[Feed]) -> Result<Vec<f32>, ExportError> {
    let mut graph = tract_onnx::onnx()
        .model_for_path(model)
        .map_err(tract_err)?;
    let mut values = TVec::new();
    for (i, feed) in feeds.iter().enumerate() {
        let (dt, tensor) = match &feed.data {
            FeedData::F32(v) => (
                DatumType::F32,
                TractTensor::from_shape(&feed.shape, v).map_err(tract_err)?,
            ),
            FeedData::Bool(v) => (
                DatumType::Bool,
                TractTensor::from_shape(&feed.shape, v).map_err(tract_err)?,
            ),
            FeedData::I64(v) => (
                DatumType::I64,
                TractTensor::from_shape(&feed.shape, v).map_err(tract_err)?,
            ),
        };
        graph = graph
            .with_input_fact(i, InferenceFact::dt_shape(dt, &feed.shape))
            .map_err(tract_err)?;
        values.push(tensor.into_tvalue());
    }
    let runnable = graph
        .into_optimized()
        .map_err(tract_err)?
        .into_runnable()
        .map_err(tract_err)?;
    let out = runnable.run(values).map_err(tract_err)?;
    let view = out[0].to_plain_array_view::<f32>().map_err(tract_err)?;
    Ok(view.iter().copied().collect())
}

/// The Python interpreter that has the pip packages `onnx` and `onnxruntime`:
/// `$MOLATTN_PYTHON` (the `molattn` Python package sets it to its own interpreter, so a
/// venv or a notebook kernel checks with the packages it has), else `python3`.
pub fn python() -> std::ffi::OsString {
    std::env::var_os("MOLATTN_PYTHON").unwrap_or_else(|| "python3".into())
}

/// `onnx.checker.check_model(model, full_check=True)` through [`python`] and the pip
/// `onnx` package.
///
/// # Errors
/// [`ExportError::Runtime`] with the checker's message when the model is invalid or the
/// package is missing.
pub fn onnx_checker(model: &Path) -> Result<(), ExportError> {
    let out = Command::new(python())
        .args([
            "-c",
            "import sys, onnx; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)",
        ])
        .arg(model)
        .output()
        .map_err(|e| ExportError::Runtime {
            runtime: "onnx.checker",
            reason: format!("python3 not runnable: {e}"),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(ExportError::Runtime {
            runtime: "onnx.checker",
            reason: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// Largest absolute and relative (over reference entries with |value| > 1e-3)
/// differences between `got` and `want`; infinite when lengths differ or a value is
/// not finite.
pub fn max_differences(got: &[f32], want: &[f32]) -> (f64, f64) {
    if got.len() != want.len() || got.iter().any(|v| !v.is_finite()) {
        return (f64::INFINITY, f64::INFINITY);
    }
    let mut max_abs: f64 = 0.0;
    let mut max_rel: f64 = 0.0;
    for (a, b) in got.iter().zip(want) {
        let d = (*a as f64 - *b as f64).abs();
        max_abs = max_abs.max(d);
        if b.abs() > 1e-3 {
            max_rel = max_rel.max(d / b.abs() as f64);
        }
    }
    (max_abs, max_rel)
}

/// One set of graph inputs and the output the model must reproduce on them.
#[derive(Debug, Clone)]
pub struct Case {
    /// Shown in reports, e.g. `"8 x 16 atoms"`.
    pub label: String,
    /// Graph inputs.
    pub feeds: Vec<Feed>,
    /// Expected output (the Burn model's on the same inputs).
    pub want: Vec<f32>,
}

/// How closely one runtime reproduced the reference outputs over every case.
#[derive(Debug)]
pub struct Agreement {
    /// `"ONNX Runtime"` or `"tract"`.
    pub runtime: &'static str,
    /// `(max abs, max rel)` differences over all cases, or the runtime's failure.
    pub result: Result<(f64, f64), ExportError>,
}

/// Runs `model` in ONNX Runtime and in tract on every case and reports the largest
/// differences from the expected outputs (Burn's).
pub fn compare_in_runtimes(model: &Path, output: &str, cases: &[Case]) -> Vec<Agreement> {
    type Runner<'a> = Box<dyn Fn(&[Feed]) -> Result<Vec<f32>, ExportError> + 'a>;
    let runtimes: [(&'static str, Runner); 2] = [
        (
            "ONNX Runtime",
            Box::new(|f: &[Feed]| run_onnxruntime(model, f, output)),
        ),
        ("tract", Box::new(|f: &[Feed]| run_tract(model, f))),
    ];
    runtimes
        .into_iter()
        .map(|(runtime, run)| {
            let result = cases.iter().try_fold((0.0f64, 0.0f64), |(a, r), case| {
                let (ca, cr) = max_differences(&run(&case.feeds)?, &case.want);
                Ok((a.max(ca), r.max(cr)))
            });
            Agreement { runtime, result }
        })
        .collect()
}
