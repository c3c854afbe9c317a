//! Which model family a run directory holds, recorded as `kind` in its `run.json`.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::TrainError;

/// The model family of a training run (`"kind"` in `run.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunKind {
    /// MAT ([`crate::RunSpec`]).
    Mat,
    /// Transformer-M ([`crate::transformer_m::TmRunSpec`]).
    TransformerM,
    /// The SMILES generator ([`crate::smiles_gpt::GptRunSpec`]).
    SmilesGpt,
}

impl std::fmt::Display for RunKind {
    /// The `--model` spelling: `mat`, `transformer-m`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunKind::Mat => "mat",
            RunKind::TransformerM => "transformer-m",
            RunKind::SmilesGpt => "smiles-gpt",
        })
    }
}

impl RunKind {
    /// [`RunKind::Mat`] (serde default of MAT runs written before `kind` existed).
    pub fn mat() -> Self {
        RunKind::Mat
    }

    /// [`RunKind::TransformerM`] (serde default of Transformer-M runs written before
    /// `kind` existed).
    pub fn transformer_m() -> Self {
        RunKind::TransformerM
    }
}

/// The kind of the run in `run_dir`: its `run.json`'s `kind`; for runs written before
/// that field, Transformer-M when the spec has an `eval_mode`, else MAT.
///
/// # Errors
/// [`TrainError::Checkpoint`] when `run.json` is missing or not JSON.
pub fn run_kind(run_dir: &Path) -> Result<RunKind, TrainError> {
    Ok(read_run_json(run_dir)?.1)
}

/// `run_dir/run.json` as JSON and the run's kind (see [`run_kind`]), read once.
///
/// # Errors
/// [`TrainError::Checkpoint`] when `run.json` is missing, not JSON, or its `kind` is
/// not a known one.
pub(crate) fn read_run_json(run_dir: &Path) -> Result<(serde_json::Value, RunKind), TrainError> {
    let path = run_dir.join("run.json");
    let checkpoint = |reason: String| TrainError::Checkpoint {
        path: path.clone(),
        reason,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| checkpoint(e.to_string()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| checkpoint(e.to_string()))?;
    let kind = match json.get("kind") {
        Some(kind) => {
            serde_json::from_value(kind.clone()).map_err(|e| checkpoint(e.to_string()))?
        }
        None if json.get("eval_mode").is_some() => RunKind::TransformerM,
        None => RunKind::Mat,
    };
    Ok((json, kind))
}

/// The family whose fields `json` has (`eval_mode`: Transformer-M, `corpus`: the
/// generator, `featurizer`: MAT), whatever its `kind` says.
fn family_by_fields(json: &serde_json::Value) -> Option<RunKind> {
    if json.get("eval_mode").is_some() {
        Some(RunKind::TransformerM)
    } else if json.get("corpus").is_some() {
        Some(RunKind::SmilesGpt)
    } else if json.get("featurizer").is_some() {
        Some(RunKind::Mat)
    } else {
        None
    }
}

/// Why a `run.json` of `kind` did not read as that family's spec, in words: serde's
/// message, and when its fields are another family's, that `kind` was likely edited
/// (an edited kind gave "data did not match any variant of untagged enum TmData").
pub(crate) fn spec_error(json: &serde_json::Value, kind: RunKind, e: &serde_json::Error) -> String {
    match family_by_fields(json) {
        Some(other) if other != kind => format!(
            "its `kind` says --model {kind} but its fields are those of a --model {other} \
             run: was `kind` edited? Set it back to \"{other}\" ({e})"
        ),
        _ => format!("not a readable --model {kind} run: {e}"),
    }
}

/// The `run.json` of `run_dir` as `T`, after checking that the run is of `kind`.
///
/// # Errors
/// [`TrainError::Checkpoint`] naming `run.json` when it is missing, malformed, or the run
/// is of another kind.
pub fn read_run_spec<T: serde::de::DeserializeOwned>(
    run_dir: &Path,
    kind: RunKind,
) -> Result<T, TrainError> {
    let path = run_dir.join("run.json");
    let (json, found) = read_run_json(run_dir)?;
    if found != kind {
        return Err(TrainError::Checkpoint {
            path,
            reason: format!("a --model {found} run, not a --model {kind} run"),
        });
    }
    typed(run_dir, json, kind)
}

/// `json` (the `run.json` of `run_dir`, of `kind`) as the family's spec type.
///
/// # Errors
/// [`TrainError::Checkpoint`] with [`spec_error`]'s words.
pub(crate) fn typed<T: DeserializeOwned>(
    run_dir: &Path,
    json: serde_json::Value,
    kind: RunKind,
) -> Result<T, TrainError> {
    T::deserialize(&json).map_err(|e| TrainError::Checkpoint {
        path: run_dir.join("run.json"),
        reason: spec_error(&json, kind, &e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_field_wins_and_old_runs_are_told_apart_by_their_fields() {
        let dir = std::env::temp_dir().join(format!("molattn-run-kind-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |text: &str| std::fs::write(dir.join("run.json"), text).unwrap();
        write(r#"{"kind": "transformer-m"}"#);
        assert_eq!(run_kind(&dir).unwrap(), RunKind::TransformerM);
        write(r#"{"kind": "mat", "eval_mode": "both"}"#);
        assert_eq!(run_kind(&dir).unwrap(), RunKind::Mat);
        write(r#"{"eval_mode": "both"}"#);
        assert_eq!(run_kind(&dir).unwrap(), RunKind::TransformerM);
        write(r#"{"smiles_column": "smiles"}"#);
        assert_eq!(run_kind(&dir).unwrap(), RunKind::Mat);
        write("not json");
        assert!(run_kind(&dir).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Issue #37 item 10: a MAT run whose `kind` was edited to transformer-m is named
    /// as such, not by serde's untagged-enum message.
    #[test]
    fn an_edited_kind_is_named() {
        let json = serde_json::json!({"kind": "transformer-m", "featurizer": {}, "data": "x.csv"});
        let e =
            serde_json::from_value::<crate::transformer_m::TmRunSpec>(json.clone()).unwrap_err();
        let why = spec_error(&json, RunKind::TransformerM, &e);
        assert!(
            why.contains("fields are those of a --model mat run") && why.contains("\"mat\""),
            "{why}"
        );
    }
}
