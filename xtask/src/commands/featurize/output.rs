//! Where and how `featurize` writes its result: the features as JSON with the report,
//! or one padded batch with the exported model's input names as `.npz`
//! (`export::npz`, built with the `onnx` feature).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::ValueEnum;
use mol_featurize::FeaturizeReport;
use train::model_inputs::InputFeatures;

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
    /// Writes `features` as JSON with `report`, or as one padded batch of the featurized
    /// molecules with the exported model's input names (`.npz`).
    pub fn write(&self, features: &InputFeatures, report: &FeaturizeReport) -> Result<()> {
        let Some(out) = &self.path else {
            return Ok(());
        };
        match self.format {
            FeatureFormat::Json => {
                let json = serde_json::json!({ "report": report, "rows": self.rows, "features": features.to_json()? });
                std::fs::write(out, serde_json::to_vec(&json)?)
                    .with_context(|| out.display().to_string())?;
                println!("wrote {}", out.display());
                Ok(())
            }
            #[cfg(feature = "onnx")]
            FeatureFormat::Npz => {
                let (feeds, kept) = export::npz::input_feeds(features)
                    .with_context(|| format!("nothing to write to {}", out.display()))?;
                let rows = kept.iter().map(|&k| self.rows[k] as i64).collect();
                let wrote = export::npz::write_feeds_npz(out, &feeds, rows)?;
                println!("wrote {wrote}");
                Ok(())
            }
            #[cfg(not(feature = "onnx"))]
            FeatureFormat::Npz => Err(missing_feature("onnx", "--format npz")),
        }
    }
}
