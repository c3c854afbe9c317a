//! SMILES corpora for the generator: a column of a delimited file, tokenized with the
//! run's vocabulary, with the properties and scaffold a conditional model is trained on;
//! rows that cannot be used reported with their reasons.

use std::path::{Path, PathBuf};

use mol_featurize::properties::{MolProperty, compute_properties};
use mol_featurize::scaffold::bemis_murcko_scaffold;
use mol_featurize::{Molecule, SmilesVocab};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::TrainError;

/// Where a generator's training SMILES come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmilesCorpus {
    /// Delimited file (CSV by default) with a header.
    pub path: PathBuf,
    /// Column holding the SMILES.
    pub smiles_column: String,
    /// Field delimiter.
    pub delimiter: char,
    /// Use only the first this many rows (after the header).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// A row left out of training, with why (`skipped.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedSmiles {
    /// 0-based data row (the header is not counted).
    pub row: usize,
    /// The cell as read.
    pub smiles: String,
    /// The reason, in words.
    pub reason: String,
}

impl SmilesCorpus {
    /// The SMILES cells with their rows, surrounding spaces trimmed.
    ///
    /// # Errors
    /// An unreadable file, a missing column, or a malformed CSV record (named by line).
    pub fn read(&self) -> Result<Vec<(usize, String)>, TrainError> {
        let delimiter = crate::data::delimiter_byte(self.delimiter)?;
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .flexible(true)
            .from_path(&self.path)
            .map_err(|e| csv_error(&self.path, e))?;
        let headers = reader.headers().map_err(|e| csv_error(&self.path, e))?;
        let column = headers
            .iter()
            .position(|h| h.trim() == self.smiles_column)
            .ok_or_else(|| {
                TrainError::Invalid(format!(
                    "{}: no column {:?} (columns: {:?})",
                    self.path.display(),
                    self.smiles_column,
                    headers.iter().collect::<Vec<_>>()
                ))
            })?;
        let mut rows = Vec::new();
        for (row, record) in reader.records().enumerate() {
            if self.limit.is_some_and(|n| row >= n) {
                break;
            }
            let record = record.map_err(|e| csv_error(&self.path, e))?;
            rows.push((row, record.get(column).unwrap_or("").trim().to_string()));
        }
        Ok(rows)
    }
}

fn csv_error(path: &Path, e: csv::Error) -> TrainError {
    TrainError::Invalid(format!("{}: {e}", path.display()))
}

/// What a conditional generator is trained on (MolGPT `train.py --props ... --scaffold`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GptCondition {
    /// Properties, computed from each training molecule (RDKit's definitions).
    #[serde(default)]
    pub props: Vec<MolProperty>,
    /// Condition on each molecule's Bemis-Murcko scaffold (RDKit `MurckoScaffoldSmiles`;
    /// empty, all `<pad>`, for an acyclic molecule).
    #[serde(default)]
    pub scaffold: bool,
    /// Standardise the property values with the training set's mean and standard
    /// deviation ([`PropScaling`]) before the model sees them; `false` feeds them raw, as
    /// MolGPT does.
    #[serde(default)]
    pub standardize: bool,
}

/// The standardisation of a run's property values: the model sees `(v - mean) / std`
/// per property (fitted on the training examples; stored in `run.json`). An option
/// beside MolGPT's raw values, for properties far from 0 (TPSA about 60 square
/// Angstrom). On logP it made no difference: fine-tuned from the 600k MOSES run on 250k
/// molecules, raw and standardised logP moved the samples' mean logP by the same 0.27-0.29
/// per unit requested (docs/RESULTS.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PropScaling {
    /// Mean per property.
    pub mean: Vec<f64>,
    /// Standard deviation per property (1 where the training values are constant).
    pub std: Vec<f64>,
}

impl PropScaling {
    /// Mean and standard deviation of the examples' properties; `None` without any.
    pub fn fit(examples: &[GptExample]) -> Option<Self> {
        let n_props = examples.first().map_or(0, |e| e.props.len());
        if n_props == 0 {
            return None;
        }
        let n = examples.len() as f64;
        let mean: Vec<f64> = (0..n_props)
            .map(|k| examples.iter().map(|e| f64::from(e.props[k])).sum::<f64>() / n)
            .collect();
        let std = (0..n_props)
            .map(|k| {
                let var = examples
                    .iter()
                    .map(|e| (f64::from(e.props[k]) - mean[k]).powi(2))
                    .sum::<f64>()
                    / n;
                if var > 0.0 { var.sqrt() } else { 1.0 }
            })
            .collect();
        Some(Self { mean, std })
    }

    /// Standardises `values` (one per property, in order) in place.
    pub fn apply(&self, values: &mut [f32]) {
        for (k, v) in values.iter_mut().enumerate() {
            *v = ((f64::from(*v) - self.mean[k]) / self.std[k]) as f32;
        }
    }
}

impl GptCondition {
    /// Neither properties nor a scaffold.
    pub fn is_empty(&self) -> bool {
        self.props.is_empty() && !self.scaffold
    }
}

/// One training sequence with its condition.
#[derive(Debug, Clone, PartialEq)]
pub struct GptExample {
    /// `<bos> ... <eos>` token ids.
    pub tokens: Vec<u32>,
    /// The condition's property values, in its order (empty without properties).
    pub props: Vec<f32>,
    /// The scaffold's token ids, no `<bos>` / `<eos>` (empty without a scaffold
    /// condition or for an acyclic molecule).
    pub scaffold: Vec<u32>,
}

/// The condition of one row: its property values and its scaffold SMILES (RDKit's
/// Bemis-Murcko form; empty for an acyclic molecule or without a scaffold condition).
#[derive(Debug, Clone, PartialEq)]
pub struct RowCondition {
    /// Property values, in the condition's order.
    pub props: Vec<f32>,
    /// Scaffold SMILES.
    pub scaffold: String,
}

/// The [`RowCondition`] of each row (`None` for all without a condition), or why it has
/// none: a SMILES that is not a molecule, a property or scaffold the toolkit cannot
/// compute. Computed on rayon's threads.
pub fn row_conditions(
    rows: &[(usize, String)],
    condition: &GptCondition,
) -> Vec<Option<Result<RowCondition, String>>> {
    if condition.is_empty() {
        return vec![None; rows.len()];
    }
    rows.par_iter()
        .map(|(_, smiles)| {
            let mol = Molecule::from_smiles(smiles).map_err(|e| e.to_string())?;
            let props = compute_properties(&mol, &condition.props)
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|v| v as f32)
                .collect();
            let scaffold = if condition.scaffold {
                bemis_murcko_scaffold(&mol).map_err(|e| format!("scaffold: {e}"))?
            } else {
                String::new()
            };
            Ok(RowCondition { props, scaffold })
        })
        .map(Some)
        .collect()
}

/// The examples of each row that fits `max_len` tokens and has its condition
/// (`conditions` from [`row_conditions`]), and the rows left out: empty cells, SMILES
/// the vocabulary cannot encode (the token or character named), SMILES longer than
/// `max_len` tokens, rows without a condition (the reason given) and scaffolds the
/// vocabulary cannot encode.
pub fn encode_examples(
    rows: &[(usize, String)],
    conditions: &[Option<Result<RowCondition, String>>],
    vocab: &SmilesVocab,
    max_len: usize,
) -> (Vec<GptExample>, Vec<SkippedSmiles>) {
    let (sequences, mut skipped) = encode_rows(rows, vocab, max_len);
    let mut examples = Vec::with_capacity(sequences.len());
    for (index, tokens) in sequences {
        let (row, smiles) = &rows[index];
        let skip = |reason: String| SkippedSmiles {
            row: *row,
            smiles: smiles.clone(),
            reason,
        };
        let example = match &conditions[index] {
            None => Ok(GptExample {
                tokens,
                props: Vec::new(),
                scaffold: Vec::new(),
            }),
            Some(Err(e)) => Err(skip(e.clone())),
            Some(Ok(c)) => scaffold_ids(&c.scaffold, vocab)
                .map(|scaffold| GptExample {
                    tokens,
                    props: c.props.clone(),
                    scaffold,
                })
                .map_err(skip),
        };
        match example {
            Ok(e) => examples.push(e),
            Err(s) => skipped.push(s),
        }
    }
    skipped.sort_by_key(|s| s.row);
    (examples, skipped)
}

/// The token ids of `mol`'s Bemis-Murcko scaffold (no `<bos>` / `<eos>`; empty for an
/// acyclic molecule).
///
/// # Errors
/// The scaffold cannot be computed or has a token outside `vocab` (named).
pub fn scaffold_tokens(mol: &Molecule, vocab: &SmilesVocab) -> Result<Vec<u32>, String> {
    let scaffold = bemis_murcko_scaffold(mol).map_err(|e| e.to_string())?;
    scaffold_ids(&scaffold, vocab)
}

/// The token ids of a scaffold SMILES (no `<bos>` / `<eos>`; empty for `""`).
fn scaffold_ids(scaffold: &str, vocab: &SmilesVocab) -> Result<Vec<u32>, String> {
    if scaffold.is_empty() {
        return Ok(Vec::new());
    }
    let mut ids = vocab
        .encode(scaffold)
        .map_err(|e| format!("scaffold {scaffold}: {e}"))?;
    ids.pop();
    ids.remove(0);
    Ok(ids)
}

/// Token ids (`<bos> ... <eos>`) of each row that fits `max_len` tokens, with the row's
/// index in `rows`, and the rows left out: empty cells, SMILES the vocabulary cannot
/// encode (the token or character named), and SMILES longer than `max_len` tokens.
pub fn encode_rows(
    rows: &[(usize, String)],
    vocab: &SmilesVocab,
    max_len: usize,
) -> (Vec<(usize, Vec<u32>)>, Vec<SkippedSmiles>) {
    let mut kept = Vec::with_capacity(rows.len());
    let mut skipped = Vec::new();
    for (index, (row, smiles)) in rows.iter().enumerate() {
        let skip = |reason: String| SkippedSmiles {
            row: *row,
            smiles: smiles.clone(),
            reason,
        };
        if smiles.is_empty() {
            skipped.push(skip("empty SMILES cell".into()));
            continue;
        }
        match vocab.encode(smiles) {
            Ok(ids) if ids.len() <= max_len => kept.push((index, ids)),
            Ok(ids) => skipped.push(skip(format!(
                "{} tokens with <bos> and <eos>, more than the model's {max_len} positions",
                ids.len()
            ))),
            Err(e) => skipped.push(skip(e.to_string())),
        }
    }
    (kept, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prop_scaling_standardises_each_property() {
        let example = |props: Vec<f32>| GptExample {
            tokens: vec![1, 2],
            props,
            scaffold: Vec::new(),
        };
        let examples = [example(vec![1.0, 5.0]), example(vec![3.0, 5.0])];
        let scaling = PropScaling::fit(&examples).unwrap();
        // Population standard deviation; a constant property keeps its scale (std 1).
        assert_eq!(scaling.mean, vec![2.0, 5.0]);
        assert_eq!(scaling.std, vec![1.0, 1.0]);
        let mut values = vec![4.0f32, 5.5];
        scaling.apply(&mut values);
        assert_eq!(values, vec![2.0, 0.5]);
        assert!(PropScaling::fit(&[example(Vec::new())]).is_none());
    }
}
