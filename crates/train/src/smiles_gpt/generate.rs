//! Sampling molecules from a trained generator: batched KV-cached decoding, each sample
//! decoded to SMILES and checked by parsing and sanitising it (RDKit's rules through
//! `mol_featurize::Molecule`), with the reason when it is not a molecule.

use std::collections::HashSet;

use burn::prelude::*;
use models::smiles_gpt::Condition;
use models::smiles_gpt::sampling::{SamplingSettings, sample_batch};
use mol_featurize::properties::MolProperty;
use mol_featurize::smiles_tokenizer::{BOS, EOS};
use mol_featurize::{Molecule, canonical_smiles};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::GptRun;
use crate::error::TrainError;

/// One generated sample (a row of `gen.csv`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedRow {
    /// The decoded SMILES (the prefix included; empty when nothing was decoded).
    pub smiles: String,
    /// Parses and sanitises to a molecule.
    pub valid: bool,
    /// Canonical SMILES of a valid sample (empty otherwise).
    pub canonical: String,
    /// Why the sample is not a molecule (empty when valid).
    pub reason: String,
}

/// Validity, uniqueness and novelty of a set of samples, as MOSES defines them
/// (`moses/metrics/metrics.py`: `fraction_valid`; `fraction_unique` over the valid
/// samples' canonical SMILES; `novelty`: the share of unique valid samples whose canonical
/// SMILES is not a training molecule's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerationSummary {
    /// Samples drawn.
    pub n: usize,
    /// Valid share.
    pub valid: f64,
    /// Unique share of the valid samples.
    pub unique: f64,
    /// Novel share of the unique valid samples (against the run's training corpus); NaN
    /// when no training molecule parsed.
    pub novelty: f64,
    /// Seconds spent sampling (decoding and validity checks).
    pub seconds: f64,
}

/// What to sample.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateRequest {
    /// Samples to draw.
    pub n: usize,
    /// Sequences per decoding batch.
    pub batch_size: usize,
    /// Every sample starts `<bos>` + the tokens of this SMILES start (`""` for none).
    pub prefix: String,
    /// Temperature and top-k.
    pub settings: SamplingSettings,
    /// Seed: the same request gives the same rows.
    pub seed: u64,
    /// The requested property values (in the run's property order) and scaffold of a
    /// conditional run.
    pub condition: Option<GenerateCondition>,
}

/// What a conditional run's samples are asked for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GenerateCondition {
    /// One value per property of the run, in its order (logP; TPSA in square Angstrom;
    /// QED).
    pub props: Vec<f64>,
    /// A scaffold SMILES (RDKit's Bemis-Murcko scaffold of the wanted molecules).
    pub scaffold: Option<String>,
}

impl GenerateCondition {
    /// The condition of `(property, value)` pairs given by name (`generate --prop`),
    /// put in `run`'s property order, with `scaffold`; `None` when neither is given.
    ///
    /// # Errors
    /// A property the run is not conditioned on, one of the run's properties missing or
    /// given twice.
    pub fn named(
        run: &GptRun,
        props: &[(MolProperty, f64)],
        scaffold: Option<String>,
    ) -> Result<Option<Self>, TrainError> {
        let want = &run.spec.condition.props;
        let invalid = |m: String| Err(TrainError::Invalid(m));
        if let Some((p, _)) = props.iter().find(|(p, _)| !want.contains(p)) {
            return invalid(format!(
                "--prop {p}: the run is conditioned on [{}]",
                want.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
            ));
        }
        let mut values = Vec::with_capacity(want.len());
        for p in want {
            match props.iter().filter(|(q, _)| q == p).collect::<Vec<_>>()[..] {
                [(_, v)] => values.push(*v),
                [] => {
                    return invalid(format!(
                        "the run is conditioned on {p}: give --prop {p}=VALUE"
                    ));
                }
                _ => return invalid(format!("--prop {p} given more than once")),
            }
        }
        if values.is_empty() && scaffold.is_none() {
            return Ok(None);
        }
        Ok(Some(Self {
            props: values,
            scaffold,
        }))
    }
}

/// Draws `request.n` samples from `run`. `progress` is called with the number of
/// samples done after each batch.
///
/// # Errors
/// A prefix the vocabulary cannot encode or as long as the model's context, a zero batch
/// size, a temperature below 0 or not finite, top-k 0 ([`TrainError::Invalid`]), decoding
/// errors.
pub fn generate(
    run: &GptRun,
    request: &GenerateRequest,
    device: &Device,
    mut progress: impl FnMut(usize),
) -> Result<Vec<GeneratedRow>, TrainError> {
    let GenerateRequest {
        n,
        batch_size,
        prefix,
        settings,
        seed,
        condition,
    } = request;
    let (n, batch_size, seed) = (*n, *batch_size, *seed);
    if batch_size == 0 {
        return Err(TrainError::Invalid("batch size must be at least 1".into()));
    }
    let t = settings.temperature;
    if !(t >= 0.0 && t.is_finite()) {
        return Err(TrainError::Invalid(format!(
            "temperature {t}: it must be a finite number >= 0 (0: greedy)"
        )));
    }
    if settings.top_k == Some(0) {
        return Err(TrainError::Invalid("top-k must be at least 1".into()));
    }
    let mut prompt = run
        .vocab
        .encode(prefix)
        .map_err(|e| TrainError::Invalid(format!("--prefix: {e}")))?;
    prompt.pop(); // <eos>
    debug_assert_eq!(prompt[0], BOS);
    if prompt.len() >= run.model.max_len() {
        return Err(TrainError::Invalid(format!(
            "--prefix {prefix:?} fills the model's {} positions",
            run.model.max_len()
        )));
    }
    let condition = condition_row(run, condition.as_ref())?;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut rows = Vec::with_capacity(n);
    while rows.len() < n {
        let b = batch_size.min(n - rows.len());
        let prompts = vec![prompt.clone(); b];
        let batch_condition = condition.as_ref().map(|(props, scaffold)| Condition {
            props: props.as_ref().map(|p| {
                Tensor::<1>::from_data(TensorData::new(p.clone(), [p.len()]), device)
                    .reshape([1, p.len()])
                    .repeat_dim(0, b)
            }),
            scaffold: scaffold.as_ref().map(|s| {
                Tensor::<1, Int>::from_data(TensorData::new(s.clone(), [s.len()]), device)
                    .reshape([1, s.len()])
                    .repeat_dim(0, b)
            }),
        });
        let samples = sample_batch(
            &run.model,
            &prompts,
            batch_condition.as_ref(),
            settings,
            &mut rng,
            device,
        )
        .map_err(TrainError::Invalid)?;
        for tokens in samples {
            rows.push(check(run, prefix, &tokens));
        }
        progress(rows.len());
    }
    Ok(rows)
}

/// The property values and padded scaffold ids of one sample, checked against the run.
type ConditionRow = (Option<Vec<f32>>, Option<Vec<i64>>);

fn condition_row(
    run: &GptRun,
    condition: Option<&GenerateCondition>,
) -> Result<Option<ConditionRow>, TrainError> {
    let spec = &run.spec.condition;
    let invalid = |m: String| Err(TrainError::Invalid(m));
    let Some(c) = condition.filter(|c| !c.props.is_empty() || c.scaffold.is_some()) else {
        if spec.is_empty() {
            return Ok(None);
        }
        return invalid(format!(
            "the run is conditioned on {}: give its values",
            describe(spec)
        ));
    };
    if spec.is_empty() {
        return invalid("the run is unconditional: it takes no properties or scaffold".into());
    }
    if c.props.len() != spec.props.len() {
        return invalid(format!(
            "{} property values for a run conditioned on {} properties ({})",
            c.props.len(),
            spec.props.len(),
            describe(spec)
        ));
    }
    if c.props.iter().any(|v| !v.is_finite()) {
        return invalid(format!("property values must be finite: {:?}", c.props));
    }
    let scaffold = match (&c.scaffold, spec.scaffold) {
        (Some(s), true) => {
            let mol = Molecule::from_smiles(s)
                .map_err(|e| TrainError::Invalid(format!("--scaffold {s}: {e}")))?;
            let mut ids = super::data::scaffold_tokens(&mol, &run.vocab)
                .map_err(|e| TrainError::Invalid(format!("--scaffold {s}: {e}")))?;
            let n = run.spec.model.scaffold_max_len();
            if ids.len() > n {
                return invalid(format!(
                    "--scaffold {s}: {} tokens; the model takes at most {n}",
                    ids.len()
                ));
            }
            ids.resize(n, mol_featurize::smiles_tokenizer::PAD);
            Some(ids.into_iter().map(i64::from).collect())
        }
        (None, true) => return invalid("the run is conditioned on a scaffold: give one".into()),
        (Some(_), false) => return invalid("the run is not conditioned on a scaffold".into()),
        (None, false) => None,
    };
    let props = (!spec.props.is_empty()).then(|| {
        let mut values: Vec<f32> = c.props.iter().map(|&v| v as f32).collect();
        if let Some(scaling) = &run.spec.prop_scaling {
            scaling.apply(&mut values);
        }
        values
    });
    Ok(Some((props, scaffold)))
}

fn describe(c: &super::GptCondition) -> String {
    let mut parts: Vec<String> = c.props.iter().map(|p| p.name().to_string()).collect();
    if c.scaffold {
        parts.push("scaffold".into());
    }
    parts.join(", ")
}

fn check(run: &GptRun, prefix: &str, tokens: &[u32]) -> GeneratedRow {
    let row = |smiles: String, reason: String| GeneratedRow {
        smiles,
        valid: false,
        canonical: String::new(),
        reason,
    };
    let ended = tokens.last() == Some(&EOS);
    let body = match run.vocab.decode(tokens) {
        Ok(body) => body,
        Err(e) => return row(format!("{prefix}{}", e_partial(&e)), e.to_string()),
    };
    let smiles = format!("{prefix}{body}");
    if !ended {
        return row(
            smiles,
            format!(
                "no <eos> within the model's {} positions",
                run.model.max_len()
            ),
        );
    }
    match Molecule::from_smiles(&smiles).and_then(|m| canonical_smiles(&m)) {
        Ok(canonical) => GeneratedRow {
            smiles,
            valid: true,
            canonical,
            reason: String::new(),
        },
        Err(e) => row(smiles, e.to_string()),
    }
}

fn e_partial(e: &mol_featurize::TokenizeError) -> String {
    match e {
        mol_featurize::TokenizeError::BadId { partial, .. } => partial.clone(),
        _ => String::new(),
    }
}

/// [`GenerationSummary`] of `rows` against the canonical SMILES of the training corpus
/// `train` (the rows' own canonical SMILES are compared as they are).
pub fn summarize(
    rows: &[GeneratedRow],
    train: &HashSet<String>,
    seconds: f64,
) -> GenerationSummary {
    let valid: Vec<&str> = rows
        .iter()
        .filter(|r| r.valid)
        .map(|r| r.canonical.as_str())
        .collect();
    let unique: HashSet<&str> = valid.iter().copied().collect();
    let share = |a: usize, b: usize| {
        if b == 0 {
            f64::NAN
        } else {
            a as f64 / b as f64
        }
    };
    let novel = unique.iter().filter(|s| !train.contains(**s)).count();
    GenerationSummary {
        n: rows.len(),
        valid: share(valid.len(), rows.len()),
        unique: share(unique.len(), valid.len()),
        novelty: if train.is_empty() {
            f64::NAN
        } else {
            share(novel, unique.len())
        },
        seconds,
    }
}

/// Canonical SMILES of the run's training corpus (rows that do not parse left out), parsed
/// on rayon's threads (a MOSES corpus is hundreds of thousands of SMILES).
///
/// # Errors
/// An unreadable corpus.
pub fn corpus_canonical(run: &GptRun) -> Result<HashSet<String>, TrainError> {
    Ok(run
        .spec
        .corpus
        .read()?
        .into_par_iter()
        .filter_map(|(_, s)| {
            Molecule::from_smiles(&s)
                .and_then(|m| canonical_smiles(&m))
                .ok()
        })
        .collect())
}
