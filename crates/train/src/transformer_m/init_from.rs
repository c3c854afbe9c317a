//! `--init-from` for Transformer-M: the model file and configuration a fine-tuning run
//! starts from (a pretraining run directory or a model file).

use std::path::{Path, PathBuf};

use models::transformer_m::TransformerMConfig;

use super::pretrain::PretrainSpec;
use crate::error::TrainError;

/// `--init-from`: a pretraining run directory (its `pretrain.json` gives the model
/// configuration, which replaces `model` except for `num_targets`) or a model file
/// (`model` must be the configuration it was saved with). Returns the model file and the
/// configuration to build. `size_given`: the user set a size explicitly, so a pretraining
/// run of another size is an error rather than silently adopted.
///
/// # Errors
/// [`TrainError::Checkpoint`] for a directory that is not a pretraining run, an
/// unreadable `pretrain.json`, a missing path, or a size conflict.
pub fn resolve_init_from(
    path: &Path,
    model: TransformerMConfig,
    size_given: bool,
) -> Result<(PathBuf, TransformerMConfig), TrainError> {
    let bad = |reason: String| TrainError::Checkpoint {
        path: path.to_path_buf(),
        reason,
    };
    if path.is_file() {
        return Ok((path.to_path_buf(), model));
    }
    if !path.is_dir() {
        return Err(bad("no such file or directory".into()));
    }
    let file = path.join("pretrained_model.bpk");
    let spec_path = path.join("pretrain.json");
    if !file.exists() || !spec_path.exists() {
        return Err(bad(
            "not a pretraining run (expected pretrained_model.bpk and pretrain.json from \
             `cargo xtask pretrain`)"
                .into(),
        ));
    }
    let text = std::fs::read_to_string(&spec_path).map_err(|e| bad(e.to_string()))?;
    if serde_json::from_str::<serde_json::Value>(&text)
        .is_ok_and(|v| v.get("kind").and_then(|k| k.as_str()) == Some("mat"))
    {
        return Err(bad(
            "a MAT pretraining run; start a MAT from it (--model mat --init-from)".into(),
        ));
    }
    let pre: PretrainSpec = serde_json::from_str(&text)
        .map_err(|e| bad(format!("pretrain.json is not a pretraining spec: {e}")))?;
    let size = |c: &TransformerMConfig| {
        (
            c.num_layers,
            c.d_model,
            c.ffn_dim,
            c.num_heads,
            c.num_kernels,
            c.layer_norm,
            c.spatial_pos_max,
            c.limits.max_distance,
        )
    };
    if size_given && size(&pre.model) != size(&model) {
        return Err(bad(format!(
            "pretrained with (layers, d_model, ffn, heads, kernels, layer norm, \
             spatial_pos_max, max_distance) = {:?}, but this run asks for {:?}; drop the \
             size flags to use the pretrained size",
            size(&pre.model),
            size(&model)
        )));
    }
    // The architecture is the pretraining run's; the regularisation is this run's (the
    // original pretrains with DropPath 0.1 and fine-tunes QM9 with 0).
    let (num_targets, droppath) = (model.num_targets, model.droppath);
    Ok((
        file,
        pre.model
            .with_num_targets(num_targets)
            .with_droppath(droppath),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::write_json;
    use crate::mode_sampling::ModeProbabilities;
    use crate::transformer_m::{PretrainData, SmilesSource};

    /// `--init-from` a pretraining run: its architecture, this run's targets and DropPath.
    #[test]
    fn init_from_keeps_the_pretrained_size_and_this_runs_droppath() {
        let dir = tempfile::tempdir().unwrap();
        let pretrained = TransformerMConfig::new(3, 32, 32, 4, 8).with_droppath(0.1);
        let spec = PretrainSpec {
            data: PretrainData::Smiles(SmilesSource {
                path: "molecules.csv".into(),
                format: Default::default(),
                smiles_column: "smiles".into(),
                delimiter: ',',
                conformer: Default::default(),
            }),
            model: pretrained,
            steps: 1,
            batch_size: 1,
            learning_rate: 1e-4,
            warmup_steps: 0,
            noise_std: 0.2,
            seed: 0,
            objective: Default::default(),
            modes: ModeProbabilities::new(),
        };
        // Written before the joint objective existed: no objective, no modes.
        let mut value = serde_json::to_value(&spec).unwrap();
        for key in ["objective", "modes"] {
            value.as_object_mut().unwrap().remove(key).unwrap();
        }
        write_json(&dir.path().join("pretrain.json"), &value).unwrap();
        let read: PretrainSpec = serde_json::from_value(value).unwrap();
        assert_eq!(read.objective, super::super::PretrainObjective::Denoising);
        assert_eq!(read.modes, ModeProbabilities::new());
        std::fs::write(dir.path().join("pretrained_model.bpk"), b"").unwrap();
        let fine_tune = TransformerMConfig::small()
            .with_num_targets(2)
            .with_droppath(0.0);
        let (file, model) = resolve_init_from(dir.path(), fine_tune, false).unwrap();
        assert_eq!(file, dir.path().join("pretrained_model.bpk"));
        assert_eq!(
            (model.num_layers, model.d_model, model.num_targets),
            (3, 32, 2)
        );
        assert_eq!(model.droppath, 0.0);
    }
}
