//! How `run.json` files written by earlier versions read as today's specs: serde
//! deserializers used with `#[serde(deserialize_with = ...)]` and `alias`, so that a spec
//! is read in one pass and no file is rewritten.
//!
//! - MAT runs from before `MatConfig`'s `n_output` became `num_targets`
//!   ([`mat_config`]).
//! - Transformer-M runs from before multi-task training: one `target` (or `targets`) and
//!   scalar `target_mean` / `target_std` ([`one_or_many`]).

use models::MatConfig;
use models::transformer_m::TransformerMConfig;
use serde::{Deserialize, Deserializer};

/// A value or a list of them, read as a list (a scalar `x` is `[x]`).
///
/// # Errors
/// The deserializer's, when the value is neither a `T` nor a list of `T`.
pub fn one_or_many<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany<T> {
        One(T),
        Many(Vec<T>),
    }
    Ok(match OneOrMany::<T>::deserialize(deserializer)? {
        OneOrMany::One(v) => vec![v],
        OneOrMany::Many(v) => v,
    })
}

/// A MAT configuration, `n_output` read as `num_targets` and a missing `init` (written
/// before it existed) as `Uniform` (burn's `Config` derive takes no serde attributes, so
/// both are done on the JSON object before it is typed).
///
/// # Errors
/// The deserializer's, when the value is not a MAT configuration; a configuration
/// written before `init` existed with `trainable_lambda` on: molattn then normalised the
/// learnt lambdas (`relu(l) / sum relu(l)`) where the original, and molattn since, uses
/// them raw, so its weights would load into another model.
pub fn mat_config<'de, D>(deserializer: D) -> Result<MatConfig, D::Error>
where
    D: Deserializer<'de>,
{
    let mut json = serde_json::Value::deserialize(deserializer)?;
    if let Some(model) = json.as_object_mut()
        && let Some(n) = model.remove("n_output")
    {
        model.entry("num_targets").or_insert(n);
    }
    if let Some(model) = json.as_object_mut()
        && !model.contains_key("init")
    {
        if model.get("trainable_lambda") == Some(&serde_json::Value::Bool(true)) {
            return Err(serde::de::Error::custom(
                "this MAT run was written by an older molattn whose trainable lambdas were \
                 normalised (relu(l) / sum relu(l)); they are now used raw, as the original \
                 does, so its weights would load into another model: retrain it",
            ));
        }
        model.insert("init".into(), serde_json::json!("Uniform"));
    }
    // Written before edge features existed: the adjacency, as then.
    if let Some(model) = json.as_object_mut() {
        for key in ["use_edge_features", "integrated_distances"] {
            model.entry(key).or_insert(serde_json::json!(false));
        }
    }
    serde_json::from_value(json).map_err(serde::de::Error::custom)
}

/// A Transformer-M configuration written before `droppath` or `readout` existed reads
/// with 0 and `cls` (burn's
/// `Config` derive requires every field when deserializing, its defaults are `new()`'s).
///
/// # Errors
/// The deserializer's, when the value is not a Transformer-M configuration.
pub fn tm_config<'de, D>(deserializer: D) -> Result<TransformerMConfig, D::Error>
where
    D: Deserializer<'de>,
{
    let mut json = serde_json::Value::deserialize(deserializer)?;
    if let Some(model) = json.as_object_mut() {
        model.entry("droppath").or_insert(serde_json::json!(0.0));
        model.entry("readout").or_insert(serde_json::json!("cls"));
    }
    serde_json::from_value(json).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Targets {
        #[serde(alias = "target", deserialize_with = "one_or_many")]
        target_columns: Vec<String>,
        #[serde(default, deserialize_with = "one_or_many")]
        target_mean: Vec<f32>,
    }

    #[test]
    fn scalars_and_old_names_read_as_lists() {
        let old: Targets =
            serde_json::from_str(r#"{"target": "gap", "target_mean": 0.25}"#).unwrap();
        assert_eq!(
            (old.target_columns, old.target_mean),
            (vec!["gap".to_string()], vec![0.25])
        );
        let new: Targets =
            serde_json::from_str(r#"{"target_columns": ["a", "b"], "target_mean": [1, 2]}"#)
                .unwrap();
        assert_eq!(
            (new.target_columns.len(), new.target_mean),
            (2, vec![1.0, 2.0])
        );
        let none: Targets = serde_json::from_str(r#"{"target_columns": []}"#).unwrap();
        assert!(none.target_mean.is_empty());
    }

    #[test]
    fn n_output_reads_as_num_targets() {
        #[derive(Deserialize)]
        struct Spec {
            #[serde(deserialize_with = "mat_config")]
            model: MatConfig,
        }
        let mut model = serde_json::to_value(MatConfig::small()).unwrap();
        let object = model.as_object_mut().unwrap();
        object.remove("num_targets");
        object.insert("n_output".into(), 3.into());
        let spec: Spec = serde_json::from_value(serde_json::json!({ "model": model })).unwrap();
        assert_eq!(spec.model.num_targets, 3);
    }

    /// A configuration written before `init` existed reads with the uniform
    /// initialiser, unless its lambdas were trainable (then normalised, now raw): refused.
    #[test]
    fn old_mat_configurations_read_with_uniform_init_and_old_trainable_lambdas_are_refused() {
        #[derive(Deserialize, Debug)]
        struct Spec {
            #[serde(deserialize_with = "mat_config")]
            #[allow(dead_code)]
            model: MatConfig,
        }
        let mut model = serde_json::to_value(MatConfig::small()).unwrap();
        model.as_object_mut().unwrap().remove("init");
        let spec: Spec =
            serde_json::from_value(serde_json::json!({ "model": model.clone() })).unwrap();
        assert_eq!(spec.model.init, models::mat::MatInit::Uniform);
        model["trainable_lambda"] = true.into();
        let err = serde_json::from_value::<Spec>(serde_json::json!({ "model": model.clone() }))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("normalised") && err.contains("retrain"),
            "{err}"
        );
        // Written since: trainable lambdas load.
        model["init"] = "Normal".into();
        let spec: Spec = serde_json::from_value(serde_json::json!({ "model": model })).unwrap();
        assert!(spec.model.trainable_lambda);
    }
}
