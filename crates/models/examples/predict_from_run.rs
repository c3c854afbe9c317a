//! The library face: a downstream program that depends on `models` and `mol-featurize`
//! only (no `train`, no `xtask`) loads a MAT run written by `cargo xtask train` and
//! predicts. It reads the run's `run.json` (featurizer, model configuration, target
//! scaling, task) and `best_model.bpk`, featurizes the SMILES exactly as the run did, and
//! prints one line per molecule: the prediction in the run's units (regression) or the
//! probability (classification), or why the molecule was skipped.
//!
//! ```sh
//! cargo xtask demo                       # writes runs/demo
//! cargo run -p models --example predict_from_run -- runs/demo CCO c1ccccc1 C1CC
//! ```

use std::path::PathBuf;

use burn::prelude::*;
use models::{MatBatch, MatConfig};
use mol_featurize::{MatFeaturizer, pad_batch};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let run = PathBuf::from(
        args.next()
            .ok_or("usage: predict_from_run RUN_DIR SMILES...")?,
    );
    let smiles: Vec<String> = args.collect();
    let mut spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json"))?)?;
    if spec.get("eval_mode").is_some() || spec["kind"] == "transformer-m" {
        return Err("a Transformer-M run: this example reads MAT runs".into());
    }
    // Runs written before MatConfig's `n_output` became `num_targets`.
    if let Some(model) = spec["model"].as_object_mut()
        && let Some(n) = model.remove("n_output")
    {
        model.entry("num_targets").or_insert(n);
    }
    let mut featurizer: MatFeaturizer = serde_json::from_value(spec["featurizer"].clone())?;
    // A run trained on a structure file's coordinates (`method: file`): SMILES carry
    // none, so take the pipeline closest to what its training molecules had.
    let report: Option<mol_featurize::FeaturizeReport> =
        std::fs::read_to_string(run.join("featurize_report.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
    featurizer.conformer = featurizer
        .conformer
        .for_smiles(&report.map(|r| r.coordinate_sources).unwrap_or_default());
    let config: MatConfig = serde_json::from_value(spec["model"].clone())?;
    let floats =
        |key: &str| -> Vec<f32> { serde_json::from_value(spec[key].clone()).unwrap_or_default() };
    let (mean, std) = (floats("target_mean"), floats("target_std"));
    let classification = spec["task"] == "classification";

    let device = Device::flex();
    let model = config
        .with_dropout(0.0)
        .init(&device)
        .try_load_file(run.join("best_model.bpk"))
        .map_err(|e| format!("{}: {e:?}", run.join("best_model.bpk").display()))?;
    for s in &smiles {
        let features = match featurizer.featurize_smiles(s) {
            Ok(f) => f,
            Err(e) => {
                println!("{s}\tskipped: {e}");
                continue;
            }
        };
        let batch = MatBatch::from_data(&pad_batch(&[&features])?, &device);
        let raw = model.forward(&batch).try_into_vec_as::<f32>()?;
        let values: Vec<String> = raw
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let y = if classification {
                    1.0 / (1.0 + (-v).exp())
                } else {
                    v * std.get(k).copied().unwrap_or(1.0) + mean.get(k).copied().unwrap_or(0.0)
                };
                format!("{y:.4}")
            })
            .collect();
        println!("{s}\t{}", values.join("\t"));
    }
    Ok(())
}
