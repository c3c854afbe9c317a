//! A trial's settings applied to a family's run definition (the learning rate to the
//! optimiser, the rest to the model configuration), checked as a `--config` file is.

use serde_json::Value;

use super::space::{LEARNING_RATE, TrialSettings, with_settings};
use crate::error::TrainError;
use crate::mat::RunSpec;
use crate::transformer_m::TmRunSpec;

/// The learning rate a trial draws, if it draws one.
fn learning_rate(settings: &TrialSettings) -> Result<Option<f64>, TrainError> {
    settings
        .get(LEARNING_RATE)
        .map(|v| {
            v.as_f64()
                .ok_or_else(|| TrainError::Invalid(format!("learning_rate {v} is not a number")))
        })
        .transpose()
}

/// `spec` (a MAT run) with the trial's settings: the model configuration read back
/// through [`models::MatConfig::from_json_file_text`], so a draw that cannot build a
/// model (`d_model` not a multiple of `num_heads`) is an error naming the setting.
///
/// # Errors
/// [`TrainError::Invalid`] naming the setting.
pub fn mat_trial(spec: &RunSpec, settings: &TrialSettings) -> Result<RunSpec, TrainError> {
    let base = serde_json::to_value(&spec.model).map_err(|e| TrainError::Invalid(e.to_string()))?;
    let model = models::MatConfig::from_json_file_text(&with_settings(&base, settings).to_string())
        .map_err(|e| TrainError::Invalid(format!("trial settings: {e}")))?;
    let mut spec = spec.clone();
    spec.model = model;
    if let Some(lr) = learning_rate(settings)? {
        spec.train.learning_rate = lr;
    }
    Ok(spec)
}

/// `spec` (a Transformer-M run) with the trial's settings (a searched `d_model` also
/// sets `ffn_dim`, [`with_settings`]).
///
/// # Errors
/// [`TrainError::Invalid`]: a value of the wrong type, a width of 0, `d_model` not a
/// multiple of `num_heads`, a dropout or DropPath probability outside `[0, 1)`.
pub fn tm_trial(spec: &TmRunSpec, settings: &TrialSettings) -> Result<TmRunSpec, TrainError> {
    let base: Value =
        serde_json::to_value(&spec.model).map_err(|e| TrainError::Invalid(e.to_string()))?;
    let model: models::transformer_m::TransformerMConfig =
        serde_json::from_value(with_settings(&base, settings))
            .map_err(|e| TrainError::Invalid(format!("trial settings: {e}")))?;
    let bad = |why: String| Err(TrainError::Invalid(format!("trial settings: {why}")));
    for (name, width) in [
        ("num_layers", model.num_layers),
        ("d_model", model.d_model),
        ("ffn_dim", model.ffn_dim),
        ("num_heads", model.num_heads),
        ("num_kernels", model.num_kernels),
    ] {
        if width == 0 {
            return bad(format!("{name} must be at least 1"));
        }
    }
    if !model.d_model.is_multiple_of(model.num_heads) {
        return bad(format!(
            "d_model {} is not a multiple of num_heads {}",
            model.d_model, model.num_heads
        ));
    }
    for (name, p) in [
        ("dropout", model.dropout),
        ("attention_dropout", model.attention_dropout),
        ("activation_dropout", model.activation_dropout),
        ("droppath", model.droppath),
    ] {
        if !(0.0..1.0).contains(&p) {
            return bad(format!("{name} {p} is outside [0, 1)"));
        }
    }
    let mut spec = spec.clone();
    spec.model = model;
    if let Some(lr) = learning_rate(settings)? {
        spec.train.learning_rate = lr;
    }
    Ok(spec)
}
