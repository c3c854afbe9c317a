//! A MAT configuration from a JSON file (`train --model mat --config mat.json`, issue #40
//! item 5): [`MatConfig`]'s own field names or the original `make_model`'s parameter names
//! (ardigen/MAT `src/transformer.py`), with either spelling of the choices.
//!
//! | make_model (original)      | MatConfig                   | values                        |
//! |----------------------------|-----------------------------|-------------------------------|
//! | `d_atom`                   | `d_atom`                    |                               |
//! | `N`                        | `num_layers`                |                               |
//! | `d_model`                  | `d_model`                   |                               |
//! | `h`                        | `num_heads`                 |                               |
//! | `dropout`                  | `dropout`                   |                               |
//! | `lambda_attention`         | `lambda_attention`          |                               |
//! | `lambda_distance`          | `lambda_distance`           |                               |
//! | `trainable_lambda`         | `trainable_lambda`          | the raw parameter, as the original |
//! | `N_dense`                  | `n_dense`                   |                               |
//! | `leaky_relu_slope`         | `leaky_relu_slope`          |                               |
//! | `aggregation_type`         | `aggregation`               | `mean`, `sum`, `dummy_node`   |
//! | `dense_output_nonlinearity`| `dense_output_nonlinearity` | `relu`, `tanh`, `none`        |
//! | `distance_matrix_kernel`   | `distance_kernel`           | `softmax`, `exp`              |
//! | `n_output`                 | `num_targets`               |                               |
//! | `scale_norm`               | `norm`                      | `true`/`false`; `LayerNorm`, `ScaleNorm` |
//! | `n_generator_layers`       | `n_generator_layers`        |                               |
//! | `init_type`                | `init`                      | `uniform`, `normal` (Xavier)  |
//! | `use_edge_features`        | `use_edge_features`         | the 11 bond features of `mol_featurize::mat_edges` |
//! | `integrated_distances`     | `integrated_distances`      | read with edge features only, as the original |
//! | `use_adapter`              | (not implemented)           | only `false`                  |
//! | `control_edges`            | (unused by the original)    | any                           |
//!
//! Fields left out take `make_model`'s defaults ([`MatConfig::small`]).

use serde_json::{Map, Value};

use super::config::MatConfig;

/// Why a MAT configuration file was refused.
#[derive(Debug, thiserror::Error)]
pub enum MatConfigFileError {
    /// Not a JSON object.
    #[error("not a JSON object of MAT settings: {0}")]
    Json(String),
    /// A key neither MatConfig nor make_model has.
    #[error("unknown MAT setting {key:?} (MatConfig's names or make_model's: {known})")]
    Unknown {
        /// The key.
        key: String,
        /// The accepted names.
        known: String,
    },
    /// The same setting given twice (under both of its names).
    #[error("{setting} is given twice (as {first:?} and {second:?})")]
    Twice {
        /// Our name of the setting.
        setting: String,
        /// One spelling.
        first: String,
        /// The other.
        second: String,
    },
    /// A value outside the setting's choices, or an option molattn does not implement.
    #[error("{key}: {reason}")]
    Value {
        /// The key as written.
        key: String,
        /// What is wrong.
        reason: String,
    },
}

/// make_model's parameter names and ours: (original, ours).
const ALIASES: [(&str, &str); 5] = [
    ("N", "num_layers"),
    ("h", "num_heads"),
    ("N_dense", "n_dense"),
    ("aggregation_type", "aggregation"),
    ("distance_matrix_kernel", "distance_kernel"),
];

/// Options of make_model that molattn takes only at the value that changes nothing.
const FIXED: [&str; 2] = ["use_adapter", "control_edges"];

/// `value` as one of `choices` (our variant names), matched case-insensitively and
/// ignoring `_`, so `dummy_node`, `DummyNode` and `dummynode` are one choice.
fn choice(key: &str, value: &Value, choices: &[&str]) -> Result<Value, MatConfigFileError> {
    let squash = |s: &str| s.replace('_', "").to_lowercase();
    let text = value.as_str().unwrap_or_default();
    choices
        .iter()
        .find(|c| squash(c) == squash(text))
        .map(|c| Value::String(c.to_string()))
        .ok_or_else(|| MatConfigFileError::Value {
            key: key.into(),
            reason: format!("{value} is not one of {}", choices.join(", ")),
        })
}

/// The keys of a JSON object in file order, duplicates kept (serde_json's `Map` keeps
/// the last of two equal keys without a word; a configuration file should not).
struct Entries(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object of MAT settings")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// Checks what would make [`MatConfig::init`] panic or the model meaningless, naming
/// each setting as the file wrote it (`written` maps our names to the file's).
fn check_sizes(config: &MatConfig, written: &Map<String, Value>) -> Result<(), MatConfigFileError> {
    let name = |ours: &str| match written.get(ours) {
        Some(Value::String(key)) => key.clone(),
        _ => ours.to_string(),
    };
    let bad = |ours: &str, reason: String| MatConfigFileError::Value {
        key: name(ours),
        reason,
    };
    for (ours, value) in [
        ("d_atom", config.d_atom),
        ("d_model", config.d_model),
        ("num_heads", config.num_heads),
        ("num_targets", config.num_targets),
        ("n_generator_layers", config.n_generator_layers),
    ] {
        if value == 0 {
            return Err(bad(ours, "must be at least 1".into()));
        }
    }
    if !config.d_model.is_multiple_of(config.num_heads) {
        return Err(bad(
            "d_model",
            format!(
                "{} is not a multiple of {} = {}",
                config.d_model,
                name("num_heads"),
                config.num_heads
            ),
        ));
    }
    if !(0.0..1.0).contains(&config.dropout) {
        return Err(bad(
            "dropout",
            format!("{} is outside [0, 1)", config.dropout),
        ));
    }
    for (ours, value) in [
        ("lambda_attention", config.lambda_attention),
        ("lambda_distance", config.lambda_distance),
        ("leaky_relu_slope", config.leaky_relu_slope),
    ] {
        if !value.is_finite() {
            return Err(bad(ours, format!("{value} is not a finite number")));
        }
    }
    Ok(())
}

impl MatConfig {
    /// Reads a MAT configuration from JSON text: [`MatConfig`]'s field names or the
    /// original `make_model`'s (the module docs list both), missing fields at the
    /// defaults.
    ///
    /// # Errors
    /// [`MatConfigFileError`], naming the key as written: not a JSON object, an unknown
    /// key (with the accepted ones), a setting given twice (under one name or both), a
    /// value of the wrong type or outside its choices, a size that cannot build a model
    /// (0 layers' width, `d_model` not a multiple of `num_heads`, dropout outside
    /// `[0, 1)`), or an original option molattn does not implement
    /// (`use_adapter`, the small-init `init_type`s) set to anything but its default.
    pub fn from_json_file_text(text: &str) -> Result<Self, MatConfigFileError> {
        let Entries(given) =
            serde_json::from_str(text).map_err(|e| MatConfigFileError::Json(e.to_string()))?;
        let mut config = match serde_json::to_value(MatConfig::small()) {
            Ok(Value::Object(m)) => m,
            _ => return Err(MatConfigFileError::Json("MatConfig serialises".into())),
        };
        let known: Vec<String> = config
            .keys()
            .cloned()
            .chain(ALIASES.iter().map(|(a, _)| a.to_string()))
            .chain(["n_output", "scale_norm", "init_type"].map(String::from))
            .chain(FIXED.map(String::from))
            .collect();
        let mut seen: Map<String, Value> = Map::new();
        let bad = |key: &str, reason: String| MatConfigFileError::Value {
            key: key.into(),
            reason,
        };
        let not_bool = |key: &str, value: &Value| bad(key, format!("{value} is not true or false"));
        for (key, value) in &given {
            let ours = match key.as_str() {
                "init_type" => "init",
                "n_output" => "num_targets",
                "scale_norm" => "norm",
                k => ALIASES.iter().find(|(a, _)| *a == k).map_or(k, |(_, o)| *o),
            };
            if let Some(Value::String(first)) =
                seen.insert(ours.to_string(), Value::String(key.clone()))
            {
                return Err(MatConfigFileError::Twice {
                    setting: ours.into(),
                    first,
                    second: key.clone(),
                });
            }
            let value = match (key.as_str(), ours) {
                ("init_type", _) => choice(key, value, &["Uniform", "Normal"]).map_err(|e| {
                    if value.is_string() {
                        bad(
                            key,
                            format!(
                                "{value}: molattn implements \"uniform\" and \"normal\" \
                                 (Xavier), not the small-init variants"
                            ),
                        )
                    } else {
                        e
                    }
                })?,
                ("use_adapter", _) => match value.as_bool() {
                    Some(false) => continue,
                    Some(true) => {
                        return Err(bad(
                            key,
                            format!("{value}: not implemented in molattn (only false)"),
                        ));
                    }
                    None => return Err(not_bool(key, value)),
                },
                // control_edges is stored by the original's MultiHeadedAttention, never read.
                ("control_edges", _) => match value.as_bool() {
                    Some(_) => continue,
                    None => return Err(not_bool(key, value)),
                },
                ("scale_norm", _) => match value.as_bool() {
                    Some(true) => Value::String("ScaleNorm".into()),
                    Some(false) => Value::String("LayerNorm".into()),
                    None => return Err(not_bool(key, value)),
                },
                (_, "init") => choice(key, value, &["Uniform", "Normal"])?,
                (_, "norm") => choice(key, value, &["LayerNorm", "ScaleNorm"])?,
                (_, "aggregation") => choice(key, value, &["Mean", "Sum", "DummyNode"])?,
                (_, "dense_output_nonlinearity") => choice(key, value, &["Relu", "Tanh", "None"])?,
                (_, "distance_kernel") => choice(key, value, &["Softmax", "Exp"])?,
                (_, o) if config.contains_key(o) => value.clone(),
                _ => {
                    return Err(MatConfigFileError::Unknown {
                        key: key.clone(),
                        known: known.join(", "),
                    });
                }
            };
            let previous = config.insert(ours.to_string(), value.clone());
            // Typed now, one key at a time, so that a wrong type names its key (the rest
            // of the object is still the valid defaults or keys already checked).
            if let Err(e) = serde_json::from_value::<MatConfig>(Value::Object(config.clone())) {
                if let Some(p) = previous {
                    config.insert(ours.to_string(), p);
                }
                return Err(bad(key, format!("{value}: {e}")));
            }
        }
        let parsed: MatConfig = serde_json::from_value(Value::Object(config))
            .map_err(|e| MatConfigFileError::Json(e.to_string()))?;
        check_sizes(&parsed, &seen)?;
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mat::{Aggregation, OutputNonlinearity};
    use attn_core::{DistanceKernel, NormKind};

    #[test]
    fn make_model_names_and_ours_read_the_same_configuration() {
        let original = r#"{"N": 4, "d_model": 64, "h": 4, "N_dense": 1,
            "aggregation_type": "dummy_node", "dense_output_nonlinearity": "tanh",
            "distance_matrix_kernel": "exp", "n_output": 2, "scale_norm": true,
            "trainable_lambda": true, "leaky_relu_slope": 0.1, "init_type": "normal",
            "use_edge_features": false, "control_edges": true, "n_generator_layers": 2}"#;
        let ours = r#"{"num_layers": 4, "d_model": 64, "num_heads": 4, "n_dense": 1,
            "aggregation": "DummyNode", "dense_output_nonlinearity": "Tanh",
            "distance_kernel": "Exp", "num_targets": 2, "norm": "ScaleNorm",
            "trainable_lambda": true, "leaky_relu_slope": 0.1, "n_generator_layers": 2,
            "init": "Normal"}"#;
        let a = MatConfig::from_json_file_text(original).unwrap();
        let b = MatConfig::from_json_file_text(ours).unwrap();
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap()
        );
        assert_eq!(
            (a.num_layers, a.num_heads, a.n_dense, a.num_targets),
            (4, 4, 1, 2)
        );
        assert_eq!(a.aggregation, Aggregation::DummyNode);
        assert_eq!(a.dense_output_nonlinearity, OutputNonlinearity::Tanh);
        assert_eq!(a.distance_kernel, DistanceKernel::Exp);
        assert_eq!(a.norm, NormKind::ScaleNorm);
        // Left out: make_model's defaults.
        assert_eq!((a.dropout, a.lambda_attention, a.d_atom), (0.1, 0.3, 28));
        let empty = MatConfig::from_json_file_text("{}").unwrap();
        assert_eq!(
            serde_json::to_value(&empty).unwrap(),
            serde_json::to_value(MatConfig::small()).unwrap()
        );
    }

    #[test]
    fn unknown_twice_bad_values_and_unimplemented_options_are_named() {
        let err = |text: &str| {
            MatConfig::from_json_file_text(text)
                .unwrap_err()
                .to_string()
        };
        let e = err(r#"{"d_modle": 64}"#);
        assert!(e.contains("\"d_modle\"") && e.contains("num_heads"), "{e}");
        let e = err(r#"{"N": 4, "num_layers": 3}"#);
        assert!(e.contains("num_layers is given twice"), "{e}");
        let e = err(r#"{"aggregation_type": "max"}"#);
        assert!(
            e.contains("aggregation_type") && e.contains("DummyNode"),
            "{e}"
        );
        let e = err(r#"{"use_adapter": true}"#);
        assert!(e.contains("not implemented"), "{e}");
        let edges = MatConfig::from_json_file_text(
            r#"{"use_edge_features": true, "integrated_distances": true}"#,
        )
        .unwrap();
        assert!(edges.use_edge_features && edges.integrated_distances);
        let e = err(r#"{"use_edge_features": 1}"#);
        assert!(e.contains("use_edge_features"), "{e}");
        let e = err(r#"{"init_type": "small_normal_init"}"#);
        assert!(e.contains("not the small-init"), "{e}");
        let normal = MatConfig::from_json_file_text(r#"{"init_type": "normal"}"#).unwrap();
        assert_eq!(normal.init, crate::mat::config::MatInit::Normal);
        let e = err(r#"{"scale_norm": "yes"}"#);
        assert!(e.contains("scale_norm"), "{e}");
        let e = err(r#"{"N": "four"}"#);
        assert!(
            e.starts_with("N: \"four\"") && e.contains("invalid type"),
            "{e}"
        );
        let e = err(r#"{"control_edges": 1}"#);
        assert!(e.contains("control_edges: 1 is not true or false"), "{e}");
        let e = err(r#"{"d_model": 64, "d_model": 32}"#);
        assert!(e.contains("d_model is given twice"), "{e}");
        let e = err(r#"{"d_model": 60, "h": 8}"#);
        assert!(e.contains("d_model: 60 is not a multiple of h = 8"), "{e}");
        let e = err(r#"{"h": 0}"#);
        assert!(e.contains("h: must be at least 1"), "{e}");
        let e = err(r#"{"dropout": 1.0}"#);
        assert!(e.contains("dropout: 1 is outside [0, 1)"), "{e}");
        let upper = MatConfig::from_json_file_text(r#"{"init_type": "Normal"}"#).unwrap();
        assert_eq!(upper.init, crate::mat::config::MatInit::Normal);
        let e = err("[1, 2]");
        assert!(e.contains("not a JSON object"), "{e}");
    }
}
