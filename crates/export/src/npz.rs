//! The exported models' inputs as a NumPy `.npz`: one padded batch's arrays under the
//! graph's input names (`cargo xtask featurize --format npz`), for feeding the ONNX file
//! from Python.

use std::path::Path;

use ndarray::{Array1, ArrayD, IxDyn};
use train::model_inputs::InputFeatures;

use crate::{ExportError, Feed, FeedData};

/// One padded batch of the featurized rows of `features`, under the exported model's
/// input names (MAT: `node_features`, `key_padding_mask`, `adjacency`, `distances`;
/// Transformer-M: docs/ONNX.md, every molecule in the featurizer's mode), and the
/// positions in `features` of its molecules (skipped rows are left out).
///
/// # Errors
/// [`ExportError::Invalid`] when no row was featurized or the features cannot be
/// padded together.
pub fn input_feeds(features: &InputFeatures) -> Result<(Vec<Feed>, Vec<usize>), ExportError> {
    fn kept<T>(rows: &[Option<T>]) -> (Vec<usize>, Vec<&T>) {
        rows.iter()
            .enumerate()
            .filter_map(|(k, f)| f.as_ref().map(|f| (k, f)))
            .unzip()
    }
    let none = || ExportError::Invalid("no molecule could be featurized".into());
    let bad = |e: &dyn std::fmt::Display| ExportError::Invalid(e.to_string());
    match features {
        InputFeatures::Mat(rows) => {
            let (kept, ok) = kept(rows);
            if ok.is_empty() {
                return Err(none());
            }
            let data = mol_featurize::pad_batch(&ok).map_err(|e| bad(&e))?;
            Ok((crate::mat_feeds(&data), kept))
        }
        InputFeatures::TransformerM {
            features,
            limits,
            mode,
        } => {
            let (kept, ok) = kept(features);
            if ok.is_empty() {
                return Err(none());
            }
            let data = mol_featurize::pad_graphormer_batch(&ok, limits).map_err(|e| bad(&e))?;
            let modes = vec![*mode; data.batch_size];
            Ok((
                crate::transformer_m::transformer_m_feeds(&data, &modes),
                kept,
            ))
        }
    }
}

/// Writes `feeds` (float32, bool and int64 arrays) and `row` (the input row of each
/// molecule; skipped rows are absent) to `out`; returns a line describing them.
///
/// # Errors
/// [`ExportError::Write`] when the file cannot be written or a feed's values do not fit
/// its shape.
pub fn write_feeds_npz(out: &Path, feeds: &[Feed], rows: Vec<i64>) -> Result<String, ExportError> {
    let err = |e: &dyn std::fmt::Display| ExportError::Write {
        path: out.display().to_string(),
        reason: e.to_string(),
    };
    let file = std::fs::File::create(out).map_err(|e| err(&e))?;
    let mut npz = ndarray_npy::NpzWriter::new(file);
    for feed in feeds {
        let shape = IxDyn(&feed.shape);
        let added = match &feed.data {
            FeedData::F32(v) => {
                ArrayD::from_shape_vec(shape, v.clone()).map(|a| npz.add_array(&*feed.name, &a))
            }
            FeedData::Bool(v) => {
                ArrayD::from_shape_vec(shape, v.clone()).map(|a| npz.add_array(&*feed.name, &a))
            }
            FeedData::I64(v) => {
                ArrayD::from_shape_vec(shape, v.clone()).map(|a| npz.add_array(&*feed.name, &a))
            }
        };
        added.map_err(|e| err(&e))?.map_err(|e| err(&e))?;
    }
    let n = rows.len();
    npz.add_array("row", &Array1::from_vec(rows))
        .map_err(|e| err(&e))?;
    npz.finish().map_err(|e| err(&e))?;
    Ok(format!(
        "{} ({n} molecules, inputs {})",
        out.display(),
        feeds
            .iter()
            .map(|f| format!("{} {:?}", f.name, f.shape))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}
