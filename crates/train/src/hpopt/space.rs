//! The search space of `cargo xtask hpopt` and one trial's draw from it.
//!
//! A space maps setting names to the values a trial draws from, uniformly and
//! independently, with two couplings: `num_heads` only among the values that divide the
//! trial's `d_model`, and `lambda_distance` only among those with `lambda_attention +
//! lambda_distance <= 1` (MAT's third weight, `1 - lambda_a - lambda_d`, stays >= 0).
//! `learning_rate` sets the optimiser's peak learning rate; every other name is a field of
//! the family's model configuration (`MatConfig`, `TransformerMConfig`), written with our
//! field names and values as `run.json` spells them (`"Softmax"`, `"DummyNode"`).

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::TrainError;

/// The settings a search draws and the values of each (an ordered map: the draw order,
/// and so a seed's trials, do not depend on hashing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SearchSpace(pub BTreeMap<String, Vec<Value>>);

/// One trial's settings: name -> value, only the searched names.
pub type TrialSettings = BTreeMap<String, Value>;

/// The setting that is not a model field.
pub const LEARNING_RATE: &str = "learning_rate";

impl SearchSpace {
    /// MAT's space: the settings issue #40 names (learning rate, dropout, d_model,
    /// layers, heads, N_dense, the two lambdas, distance kernel, aggregation). ardigen/MAT
    /// publishes no search code and we have not located the paper's value grid, so the
    /// values are ours: the learning rates of huggingmolecules' MAT grid
    /// (`experiments/configs/bases/tune_hyper.gin`: 1e-3 .. 1e-6) cut at 1e-5, and around
    /// `make_model`'s defaults for the rest (d_model 64-1024, 1-8 layers, lambdas
    /// 0-0.5). Trials above d_model 256 or 4 layers are slow on a CPU: a search there
    /// should pass a smaller space (`--space`).
    pub fn mat() -> Self {
        Self(BTreeMap::from([
            (
                LEARNING_RATE.into(),
                vec![
                    json!(1e-3),
                    json!(5e-4),
                    json!(1e-4),
                    json!(5e-5),
                    json!(1e-5),
                ],
            ),
            ("dropout".into(), vec![json!(0.0), json!(0.1), json!(0.2)]),
            (
                "d_model".into(),
                vec![json!(64), json!(128), json!(256), json!(512), json!(1024)],
            ),
            (
                "num_layers".into(),
                vec![json!(1), json!(2), json!(4), json!(6), json!(8)],
            ),
            (
                "num_heads".into(),
                vec![json!(1), json!(2), json!(4), json!(8), json!(16)],
            ),
            ("n_dense".into(), vec![json!(1), json!(2), json!(4)]),
            (
                "lambda_attention".into(),
                vec![json!(0.0), json!(0.1), json!(0.25), json!(0.33), json!(0.5)],
            ),
            (
                "lambda_distance".into(),
                vec![json!(0.0), json!(0.1), json!(0.25), json!(0.33), json!(0.5)],
            ),
            (
                "distance_kernel".into(),
                vec![json!("Exp"), json!("Softmax")],
            ),
            (
                "aggregation".into(),
                vec![json!("Mean"), json!("Sum"), json!("DummyNode")],
            ),
        ]))
    }

    /// Transformer-M's space: learning rate, dropout, d_model (the FFN as wide, as in
    /// the original's configurations), layers and heads, around [`TransformerMConfig::small`]
    /// (ours, not the original's: it publishes no search).
    ///
    /// [`TransformerMConfig::small`]: models::transformer_m::TransformerMConfig::small
    pub fn transformer_m() -> Self {
        Self(BTreeMap::from([
            (
                LEARNING_RATE.into(),
                vec![json!(2e-4), json!(1e-4), json!(5e-5), json!(2e-5)],
            ),
            ("dropout".into(), vec![json!(0.0), json!(0.1)]),
            ("d_model".into(), vec![json!(64), json!(128), json!(256)]),
            ("num_layers".into(), vec![json!(2), json!(4), json!(6)]),
            ("num_heads".into(), vec![json!(4), json!(8)]),
        ]))
    }

    /// Checks the space against a family's model configuration `model` (as JSON):
    /// every name is [`LEARNING_RATE`] or one of its fields other than those the data
    /// decides (`num_targets`, `d_atom`), every list non-empty, and every value of the
    /// field's JSON type (a whole number >= 0 for a count, a number for a real, a string
    /// for a choice).
    ///
    /// # Errors
    /// [`TrainError::Invalid`] naming the setting.
    pub fn check(&self, model: &Value) -> Result<(), TrainError> {
        let fields = model.as_object().cloned().unwrap_or_default();
        for (name, values) in &self.0 {
            let bad = |why: String| TrainError::Invalid(format!("search space: {name}: {why}"));
            if values.is_empty() {
                return Err(bad("no values".into()));
            }
            if ["num_targets", "d_atom"].contains(&name.as_str()) {
                return Err(bad(
                    "decided by the data (its targets and atom features), not searched".into(),
                ));
            }
            let like = if name == LEARNING_RATE {
                json!(1e-3)
            } else {
                fields.get(name).cloned().ok_or_else(|| {
                    bad(format!(
                        "not a setting of this model (learning_rate or one of: {})",
                        fields.keys().cloned().collect::<Vec<_>>().join(", ")
                    ))
                })?
            };
            for v in values {
                let same_kind = match (&like, v) {
                    (Value::Number(a), Value::Number(b)) if a.is_u64() => b.is_u64(),
                    (Value::Number(a), Value::Number(b)) if a.is_i64() => b.is_i64(),
                    (Value::Number(_), Value::Number(_)) => true,
                    (Value::String(_), Value::String(_)) | (Value::Bool(_), Value::Bool(_)) => true,
                    (Value::Null | Value::Array(_) | Value::Object(_), _) => {
                        return Err(bad(format!(
                            "a setting of the form {like} cannot be searched (numbers, \
                             choices and true/false can)"
                        )));
                    }
                    _ => false,
                };
                if !same_kind {
                    return Err(bad(format!("{v} is not a value like {like}")));
                }
                if name == LEARNING_RATE && !v.as_f64().is_some_and(|x| x > 0.0 && x.is_finite()) {
                    return Err(bad(format!("{v} is not a positive learning rate")));
                }
            }
        }
        Ok(())
    }

    /// Trial `trial`'s draw: reproducible from (`seed`, `trial`) alone, so a resumed
    /// search draws the same settings and trial 7 is the same in a search of 10 or 30.
    /// `base` is the model configuration a setting not searched keeps (as JSON), read
    /// for the couplings (the heads must divide the trial's `d_model`, the lambdas sum
    /// to at most 1). A coupling no value satisfies keeps the base's value.
    pub fn sample(&self, seed: u64, trial: usize, base: &Value) -> TrialSettings {
        let mixed = seed ^ (trial as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rng = StdRng::seed_from_u64(mixed);
        let mut drawn = TrialSettings::new();
        for (name, values) in &self.0 {
            // Every name draws once, whatever the couplings keep, so that one setting's
            // coupling never shifts the draws of the others.
            let choice = values.choose(&mut rng).cloned().unwrap_or(Value::Null);
            drawn.insert(name.clone(), choice);
        }
        let current = |drawn: &TrialSettings, name: &str| {
            drawn.get(name).cloned().or_else(|| base.get(name).cloned())
        };
        if let Some(values) = self.0.get("num_heads") {
            let d_model = current(&drawn, "d_model").and_then(|v| v.as_u64());
            let fits: Vec<&Value> = values
                .iter()
                .filter(
                    |h| matches!((h.as_u64(), d_model), (Some(h), Some(d)) if h > 0 && d.is_multiple_of(h)),
                )
                .collect();
            match fits.choose(&mut rng) {
                Some(h) => drawn.insert("num_heads".into(), (*h).clone()),
                None => drawn.remove("num_heads"),
            };
        }
        if let Some(values) = self.0.get("lambda_distance") {
            let a = current(&drawn, "lambda_attention")
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0);
            let fits: Vec<&Value> = values
                .iter()
                .filter(|d| d.as_f64().is_some_and(|d| a + d <= 1.0 + 1e-12))
                .collect();
            match fits.choose(&mut rng) {
                Some(d) => drawn.insert("lambda_distance".into(), (*d).clone()),
                None => drawn.remove("lambda_distance"),
            };
        }
        drawn
    }
}

/// `model` (a configuration as JSON) with `settings`' model fields set, the learning rate
/// left out, and for a `d_model` without an `ffn_dim` of its own, `ffn_dim` set to it when
/// the configuration has one (Transformer-M's FFN is as wide as d_model in the original's
/// configurations).
pub fn with_settings(model: &Value, settings: &TrialSettings) -> Value {
    let mut model = model.clone();
    if let Some(object) = model.as_object_mut() {
        for (name, value) in settings {
            if name != LEARNING_RATE {
                object.insert(name.clone(), value.clone());
            }
        }
        if let Some(d) = settings.get("d_model")
            && !settings.contains_key("ffn_dim")
            && object.contains_key("ffn_dim")
        {
            object.insert("ffn_dim".into(), d.clone());
        }
    }
    model
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mat_base() -> Value {
        serde_json::to_value(models::MatConfig::small()).unwrap()
    }

    #[test]
    fn draws_are_reproducible_coupled_and_within_the_space() {
        let space = SearchSpace::mat();
        let base = mat_base();
        space.check(&base).unwrap();
        let draws: Vec<TrialSettings> = (0..200).map(|t| space.sample(7, t, &base)).collect();
        // The same (seed, trial), the same draw; another seed, other draws.
        assert_eq!(draws[3], space.sample(7, 3, &base));
        let other: Vec<TrialSettings> = (0..200).map(|t| space.sample(8, t, &base)).collect();
        assert!(draws.iter().zip(&other).filter(|(a, b)| a != b).count() > 150);
        for d in &draws {
            for (name, v) in d {
                assert!(space.0[name].contains(v), "{name} = {v}");
            }
            let (dm, h) = (
                d["d_model"].as_u64().unwrap(),
                d["num_heads"].as_u64().unwrap(),
            );
            assert_eq!(dm % h, 0, "{d:?}");
            let sum =
                d["lambda_attention"].as_f64().unwrap() + d["lambda_distance"].as_f64().unwrap();
            assert!(sum <= 1.0, "{d:?}");
            // Applied, the configuration is a MAT the config-file reader accepts.
            let model = with_settings(&base, d);
            models::MatConfig::from_json_file_text(&model.to_string()).unwrap();
        }
        // Every value of a plain setting is drawn about 1/5 of the time (200 draws, 5
        // values: 40 expected, 5.7 std).
        for lr in &space.0[LEARNING_RATE] {
            let n = draws.iter().filter(|d| &d[LEARNING_RATE] == lr).count();
            assert!((20..=60).contains(&n), "{lr}: {n}");
        }
    }

    /// The couplings where they bind (the default space's powers of two always divide,
    /// its lambdas never pass 1): heads that divide the trial's d_model, lambdas that sum
    /// to at most 1, and the base's heads kept where no value divides.
    #[test]
    fn heads_divide_d_model_and_lambdas_sum_to_at_most_one() {
        let space: SearchSpace = serde_json::from_value(json!({
            "d_model": [24, 40],
            "num_heads": [3, 5, 8],
            "lambda_attention": [0.9, 0.2],
            "lambda_distance": [0.05, 0.5],
        }))
        .unwrap();
        let base = mat_base();
        let mut seen = std::collections::BTreeSet::new();
        for t in 0..200 {
            let d = space.sample(3, t, &base);
            let (dm, h) = (
                d["d_model"].as_u64().unwrap(),
                d["num_heads"].as_u64().unwrap(),
            );
            assert_eq!(dm % h, 0, "{d:?}");
            let (a, l) = (
                d["lambda_attention"].as_f64().unwrap(),
                d["lambda_distance"].as_f64().unwrap(),
            );
            assert!(a + l <= 1.0, "{d:?}");
            seen.insert((dm, h, (a * 100.0) as u64, (l * 100.0) as u64));
        }
        // Every admissible combination is drawn: 24 with 3 or 8, 40 with 5 or 8; 0.9
        // with 0.05 only, 0.2 with either.
        assert_eq!(seen.len(), 4 * 3, "{seen:?}");
        // No head divides d_model 7: the base's heads are kept (the setting not drawn).
        let odd: SearchSpace =
            serde_json::from_value(json!({"d_model": [7], "num_heads": [2, 4]})).unwrap();
        let d = odd.sample(0, 0, &base);
        assert!(!d.contains_key("num_heads"), "{d:?}");
    }

    #[test]
    fn a_space_with_unknown_names_or_wrong_values_is_refused() {
        let base = mat_base();
        let err = |space: serde_json::Value| {
            serde_json::from_value::<SearchSpace>(space)
                .unwrap()
                .check(&base)
                .unwrap_err()
                .to_string()
        };
        let e = err(json!({"d_modle": [64]}));
        assert!(e.contains("d_modle") && e.contains("num_heads"), "{e}");
        let e = err(json!({"d_model": []}));
        assert!(e.contains("d_model: no values"), "{e}");
        let e = err(json!({"d_model": [64.5]}));
        assert!(e.contains("d_model: 64.5"), "{e}");
        let e = err(json!({"aggregation": [1]}));
        assert!(e.contains("aggregation: 1"), "{e}");
        let e = err(json!({"learning_rate": [0.0]}));
        assert!(e.contains("positive learning rate"), "{e}");
        let e = err(json!({"num_layers": [-1]}));
        assert!(e.contains("num_layers: -1"), "{e}");
        let e = err(json!({"num_targets": [2]}));
        assert!(e.contains("decided by the data"), "{e}");
    }

    #[test]
    fn transformer_m_d_model_sets_the_ffn_width() {
        let base =
            serde_json::to_value(models::transformer_m::TransformerMConfig::small()).unwrap();
        let space = SearchSpace::transformer_m();
        space.check(&base).unwrap();
        let d = space.sample(1, 0, &base);
        let model = with_settings(&base, &d);
        assert_eq!(model["ffn_dim"], d["d_model"]);
        assert!(model.get(LEARNING_RATE).is_none());
        let _: models::transformer_m::TransformerMConfig = serde_json::from_value(model).unwrap();
    }
}
