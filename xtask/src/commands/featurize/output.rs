//! Where and how `featurize` writes its result: the features as JSON with the report,
//! or one padded batch with the exported model's input names as `.npz`
//! (`export::npz`, built with the `onnx` feature).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::ValueEnum;
use models::transformer_m::Mode;
use serde::Serialize;

#[cfg(not(feature = "onnx"))]
use crate::commands::common::missing_feature;

/// `--format` of `featurize`.
#[derive(Clone, Copy, ValueEnum)]
pub enum FeatureFormat {
    /// JSON with the featurization report.
    Json,
    /// NumPy `.npz` of the padded batch (float32, bool, int64 arrays).
    Npz,
}

/// Where and how `featurize` writes its result.
pub struct Output<'a> {
    pub path: Option<PathBuf>,
    pub format: FeatureFormat,
    pub rows: &'a [usize],
}

impl Output<'_> {
    /// Writes `features` as JSON, or as the padded batch that `feeds` makes of the
    /// featurized molecules (`.npz`).
    pub fn write<T: Serialize>(
        &self,
        (features, report): &(Vec<Option<T>>, mol_featurize::FeaturizeReport),
        #[allow(unused_variables)] feeds: impl Fn(&[&T]) -> Result<export_feeds::Feeds>,
    ) -> Result<()> {
        let Some(out) = &self.path else {
            return Ok(());
        };
        match self.format {
            FeatureFormat::Json => {
                let json = serde_json::json!({ "report": report, "rows": self.rows, "features": features });
                std::fs::write(out, serde_json::to_vec(&json)?)
                    .with_context(|| out.display().to_string())?;
                println!("wrote {}", out.display());
                Ok(())
            }
            #[cfg(feature = "onnx")]
            FeatureFormat::Npz => {
                let (rows, ok): (Vec<i64>, Vec<&T>) = features
                    .iter()
                    .zip(self.rows)
                    .filter_map(|(f, &row)| f.as_ref().map(|f| (row as i64, f)))
                    .unzip();
                if ok.is_empty() {
                    anyhow::bail!(
                        "no molecule could be featurized: nothing to write to {}",
                        out.display()
                    );
                }
                let wrote = export::npz::write_feeds_npz(out, &feeds(&ok)?, rows)?;
                println!("wrote {wrote}");
                Ok(())
            }
            #[cfg(not(feature = "onnx"))]
            FeatureFormat::Npz => Err(missing_feature("onnx", "--format npz")),
        }
    }
}

/// The exported models' input arrays of a padded batch (`export`'s feeds; empty without
/// the `onnx` feature, where `--format npz` is refused before they are asked for).
pub mod export_feeds {
    use super::*;

    #[cfg(feature = "onnx")]
    pub type Feeds = Vec<export::Feed>;
    /// Nothing: `--format npz` needs the `onnx` feature.
    #[cfg(not(feature = "onnx"))]
    pub struct Feeds;

    /// MAT's inputs.
    pub fn mat(data: &mol_featurize::MatBatchData) -> Feeds {
        #[cfg(feature = "onnx")]
        return export::mat_feeds(data);
        #[cfg(not(feature = "onnx"))]
        {
            let _ = data;
            Feeds
        }
    }

    /// Transformer-M's inputs, every molecule in `mode`.
    pub fn transformer_m(data: &mol_featurize::GraphormerBatchData, mode: Mode) -> Feeds {
        #[cfg(feature = "onnx")]
        return export::transformer_m::transformer_m_feeds(data, &vec![mode; data.batch_size]);
        #[cfg(not(feature = "onnx"))]
        {
            let _ = (data, mode);
            Feeds
        }
    }
}
