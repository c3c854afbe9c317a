//! How well conditional samples meet their condition, as MolGPT's
//! `evaluate/get_metrics.py` measures it: per property, the mean and the standard
//! deviation of `|requested - generated|` over the valid samples; with a scaffold, the
//! share of valid samples whose Bemis-Murcko scaffold is the requested one.

use mol_featurize::properties::MolProperty;
use mol_featurize::scaffold::bemis_murcko_scaffold;
use mol_featurize::{Molecule, canonical_smiles};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::GptRun;
use super::generate::{GenerateCondition, GeneratedRow};
use crate::error::TrainError;

/// One property's deviation from its requested value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PropertyDeviation {
    /// The property.
    pub property: MolProperty,
    /// The requested value.
    pub target: f64,
    /// Mean of the generated values over the valid samples.
    pub mean: f64,
    /// Mean absolute deviation from `target` (MolGPT's MAD).
    pub mad: f64,
    /// Sample standard deviation of the absolute deviation (MolGPT's SD, pandas `std`).
    pub sd: f64,
    /// Valid samples the figures are over.
    pub n: usize,
}

/// The condition report of one `generate` call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionReport {
    /// One entry per property of the run.
    pub properties: Vec<PropertyDeviation>,
    /// The requested scaffold, canonical (RDKit's Bemis-Murcko form).
    pub scaffold: Option<String>,
    /// Share of the valid samples with exactly that scaffold (MolGPT's "similarity 1").
    pub same_scaffold: Option<f64>,
}

/// The [`ConditionReport`] of `rows` sampled from `run` under `condition`.
///
/// # Errors
/// A requested scaffold that does not parse.
pub fn condition_report(
    run: &GptRun,
    condition: &GenerateCondition,
    rows: &[GeneratedRow],
) -> Result<ConditionReport, TrainError> {
    let props = &run.spec.condition.props;
    // Properties and scaffold of each valid sample; a sample the toolkit fails on
    // afterwards (none so far: it parsed as valid) is left out of the figures.
    let measured: Vec<(Vec<f64>, Option<String>)> = rows
        .par_iter()
        .filter(|r| r.valid)
        .filter_map(|r| {
            let mol = Molecule::from_smiles(&r.canonical).ok()?;
            let values = props
                .iter()
                .map(|p| p.compute(&mol).ok())
                .collect::<Option<Vec<f64>>>()?;
            let scaffold = condition
                .scaffold
                .as_ref()
                .and_then(|_| bemis_murcko_scaffold(&mol).ok());
            Some((values, scaffold))
        })
        .collect();
    let n = measured.len();
    let properties = props
        .iter()
        .zip(&condition.props)
        .enumerate()
        .map(|(k, (&property, &target))| {
            let values: Vec<f64> = measured.iter().map(|(v, _)| v[k]).collect();
            let dev: Vec<f64> = values.iter().map(|v| (v - target).abs()).collect();
            let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len().max(1) as f64;
            let mad = mean(&dev);
            let sd = if n > 1 {
                (dev.iter().map(|d| (d - mad).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
            } else {
                f64::NAN
            };
            PropertyDeviation {
                property,
                target,
                mean: mean(&values),
                mad,
                sd,
                n,
            }
        })
        .collect();
    let scaffold = condition
        .scaffold
        .as_ref()
        .map(|s| {
            Molecule::from_smiles(s)
                .and_then(|m| bemis_murcko_scaffold(&m))
                .and_then(|sc| Molecule::from_smiles(&sc).and_then(|m| canonical_smiles(&m)))
                .map_err(|e| TrainError::Invalid(format!("--scaffold {s}: {e}")))
        })
        .transpose()?;
    let same_scaffold = scaffold.as_ref().map(|want| {
        let same = measured
            .iter()
            .filter(|(_, got)| {
                got.as_ref().is_some_and(|g| {
                    Molecule::from_smiles(g)
                        .and_then(|m| canonical_smiles(&m))
                        .is_ok_and(|c| &c == want)
                })
            })
            .count();
        same as f64 / n.max(1) as f64
    });
    Ok(ConditionReport {
        properties,
        scaffold,
        same_scaffold,
    })
}
