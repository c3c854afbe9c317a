//! Fine-tuning a MAT from a pretraining run (`train --model mat --init-from <run>`,
//! issue #40): the run's embedding and encoder, a fresh generator.

use std::path::{Path, PathBuf};

use burn::prelude::*;
use models::{MatConfig, MatModel};
use mol_featurize::MatFeaturizer;

use super::pretrain::MatPretrainSpec;
use crate::error::TrainError;

/// The model file of a MAT pretraining run ([`super::pretrain_mat`]).
pub const PRETRAINED_MODEL: &str = "pretrained_model.bpk";

/// Reads `pretrain.json` of a MAT pretraining run folder, or of a shipped model named
/// `pretrained:<name>` ([`super::shipped`]).
///
/// # Errors
/// [`TrainError::Checkpoint`] naming the folder: not a folder, no `pretrain.json` or
/// `pretrained_model.bpk`, a pretraining run of another model family, or an unknown
/// shipped name.
pub fn read_mat_pretrain_spec(run: &Path) -> Result<MatPretrainSpec, TrainError> {
    open_pretraining_run(run).map(|(_, spec)| spec)
}

/// The folder `run` names ([`super::shipped::locate_pretraining_run`]) and its spec.
fn open_pretraining_run(run: &Path) -> Result<(PathBuf, MatPretrainSpec), TrainError> {
    let run = &super::shipped::locate_pretraining_run(run, None)?;
    let bad = |reason: String| TrainError::Checkpoint {
        path: run.to_path_buf(),
        reason,
    };
    let spec_path = run.join("pretrain.json");
    if !run.join(PRETRAINED_MODEL).is_file() || !spec_path.is_file() {
        return Err(bad(format!(
            "not a MAT pretraining run (expected {PRETRAINED_MODEL} and pretrain.json from \
             `cargo xtask pretrain --model mat`)"
        )));
    }
    let text = std::fs::read_to_string(&spec_path).map_err(|e| bad(e.to_string()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("pretrain.json: {e}")))?;
    if value.get("kind").and_then(|k| k.as_str()) != Some("mat") {
        return Err(bad(
            "a pretraining run of another model family (Transformer-M's pretrain.json has no \
             kind \"mat\")"
                .into(),
        ));
    }
    let spec = serde_json::from_value(value).map_err(|e| bad(format!("pretrain.json: {e}")))?;
    Ok((run.clone(), spec))
}

/// The configuration a run that starts from pretraining run `run` (a folder or
/// `pretrained:<name>`) builds: the pretraining run's architecture with `num_targets`
/// outputs, the model file, and the featurizer the run pretrained with (a fine-tuning run
/// should featurize as it did).
///
/// # Errors
/// As [`read_mat_pretrain_spec`].
pub fn resolve_mat_init_from(
    run: &Path,
    num_targets: usize,
) -> Result<(PathBuf, MatConfig, MatFeaturizer), TrainError> {
    let (run, spec) = open_pretraining_run(run)?;
    Ok((
        run.join(PRETRAINED_MODEL),
        spec.model.with_num_targets(num_targets),
        spec.featurizer,
    ))
}

/// `model` with the embedding and encoder of pretraining run `run` (a folder or
/// `pretrained:<name>`; its generator, not pretrained, is left out; `model`'s stays).
///
/// # Errors
/// The run is not a MAT pretraining run, its architecture differs from `config` (apart
/// from the outputs), or its model file does not load.
pub fn load_pretrained_encoder(
    model: MatModel,
    config: &MatConfig,
    run: &Path,
    device: &Device,
) -> Result<MatModel, TrainError> {
    let (folder, spec) = open_pretraining_run(run)?;
    let same = spec.model.clone().with_num_targets(config.num_targets);
    let (a, b) = (serde_json::to_value(&same), serde_json::to_value(config));
    if let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) = (a, b)
        && a != b
    {
        let differ: Vec<String> = a
            .iter()
            .filter(|(k, v)| b.get(*k) != Some(*v))
            .map(|(k, v)| {
                format!(
                    "{k} {v} there, {} here",
                    b.get(k).unwrap_or(&serde_json::Value::Null)
                )
            })
            .collect();
        return Err(TrainError::Checkpoint {
            path: run.to_path_buf(),
            reason: format!(
                "pretrained with another MAT architecture than this run's: {}",
                differ.join(", ")
            ),
        });
    }
    let file = folder.join(PRETRAINED_MODEL);
    let pretrained = crate::checkpoint::load_model_file(spec.model.init(device), &file)?;
    Ok(MatModel {
        src_embed: pretrained.src_embed,
        encoder: pretrained.encoder,
        generator: model.generator,
    })
}
