//! What a trained model looks at, drawn on the molecule (issue #16; the pictures of MAT's
//! interpretability section, Maziarka et al. 2020, section 5).
//!
//! For one molecule and a trained MAT or Transformer-M run:
//! - attention: each layer's attention weights `[H, T, T]` as the forward pass applied
//!   them (`MatModel::forward_embedded`, `TransformerM::encode_embedded`), token 0 being
//!   MAT's dummy node or Transformer-M's graph token, then the atoms. Drawn: token 0's
//!   attention to each atom (the row the pooled state reads), one head or the mean of
//!   the heads, and the whole matrix as a heat map.
//! - contribution: gradient x input (Shrikumar et al. 2016, arXiv 1605.01713, "Gradient *
//!   Input") at the encoder's input, `c_i = sum_d h_id dy/dh_id` for atom `i`'s embedded
//!   state `h_i` and the first output `y` (standardised units for regression, the logit
//!   for classification); positive values push the prediction up.
//!
//! Dropout is off (the configs are loaded with dropout 0), so the numbers are those of
//! inference and the same on every call.

use std::path::{Path, PathBuf};

use burn::prelude::*;
use models::MatBatch;
use models::transformer_m::TransformerMBatch;
use mol_featurize::conformer::{CoordinateMethod, coordinates};
use mol_featurize::depict::{atom_weight_svg, element_symbol};
use mol_featurize::graphormer::featurize as graphormer_features;
use mol_featurize::{Molecule, pad_batch, pad_graphormer_batch};
use serde::{Deserialize, Serialize};

use crate::error::TrainError;
use crate::mat::spec::RunSpec;
use crate::plot::{heat_map, svg_to_png};
use crate::run_file::RunSpecFile;
use crate::transformer_m::TmRunSpec;

/// What [`explain`] found for one molecule (written as `explanation.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// The SMILES.
    pub smiles: String,
    /// `mat` or `transformer-m`.
    pub model: String,
    /// Token labels: `dummy` or `graph`, then element symbol and atom index (`O0`, `C1`).
    pub tokens: Vec<String>,
    /// The model's first output in the dataset's units (regression) or the probability
    /// of class 1 (classification).
    pub prediction: f32,
    /// `attention[layer][head]`: row-major `T x T` weights (row = query token).
    pub attention: Vec<Vec<Vec<f32>>>,
    /// Gradient x input per atom (module docs), `N` values.
    pub contribution: Vec<f32>,
}

impl Explanation {
    /// Token 0's attention to each atom (`N` values) in `layer` (default: the last),
    /// for `head` (default: the mean over heads).
    ///
    /// # Errors
    /// [`TrainError::Invalid`] when the layer or head does not exist.
    pub fn token0_attention(
        &self,
        layer: Option<usize>,
        head: Option<usize>,
    ) -> Result<Vec<f32>, TrainError> {
        let matrix = self.matrix(layer, head)?;
        let t = self.tokens.len();
        Ok(matrix[1..t].to_vec())
    }

    /// The `T x T` attention matrix of `layer` / `head` (defaults as in
    /// [`Explanation::token0_attention`]).
    ///
    /// # Errors
    /// [`TrainError::Invalid`] when the layer or head does not exist.
    pub fn matrix(
        &self,
        layer: Option<usize>,
        head: Option<usize>,
    ) -> Result<Vec<f32>, TrainError> {
        let n_layers = self.attention.len();
        let l = layer.unwrap_or(n_layers.saturating_sub(1));
        let heads = self.attention.get(l).ok_or_else(|| {
            TrainError::Invalid(format!("layer {l} does not exist ({n_layers} layers)"))
        })?;
        match head {
            Some(h) => heads.get(h).cloned().ok_or_else(|| {
                TrainError::Invalid(format!("head {h} does not exist ({} heads)", heads.len()))
            }),
            None => {
                let mut mean = vec![0.0; heads.first().map_or(0, Vec::len)];
                for w in heads {
                    for (m, v) in mean.iter_mut().zip(w) {
                        *m += v / heads.len() as f32;
                    }
                }
                Ok(mean)
            }
        }
    }
}

fn invalid(e: impl std::fmt::Display) -> TrainError {
    TrainError::Invalid(e.to_string())
}

fn values<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, TrainError> {
    t.try_into_vec_as::<f32>()
        .map_err(|e| invalid(format!("{e:?}")))
}

/// `[1, H, T, T]` per layer -> `attention[layer][head]`.
fn split_heads(weights: Vec<Tensor<4>>) -> Result<Vec<Vec<Vec<f32>>>, TrainError> {
    weights
        .into_iter()
        .map(|w| {
            let [_, h, t, _] = w.dims();
            let v = values(w)?;
            Ok((0..h)
                .map(|k| v[k * t * t..(k + 1) * t * t].to_vec())
                .collect())
        })
        .collect()
}

fn token_labels(first: &str, mol: &Molecule) -> Vec<String> {
    std::iter::once(first.to_string())
        .chain(mol.atoms().iter().enumerate().map(|(i, a)| {
            let symbol = element_symbol(a.atomic_number);
            format!("{symbol}{i}")
        }))
        .collect()
}

/// Side of a molecule's drawing in pixels: 400 up to 30 heavy atoms, then growing with
/// the square root of the atom count (so the bond length stays about constant for a
/// compact molecule; 400 px was illegible above ~60 atoms), at most 4,000.
pub fn depiction_side(num_atoms: usize) -> u32 {
    let side = 400.0 * (num_atoms as f64 / 30.0).sqrt();
    side.clamp(400.0, 4000.0) as u32
}

/// One molecule explained and drawn by [`explain_each`].
#[derive(Debug, Clone)]
pub struct Explained {
    /// The explanation.
    pub explanation: Explanation,
    /// Its folder.
    pub dir: PathBuf,
    /// The files [`render`] wrote.
    pub files: Vec<PathBuf>,
}

/// [`explain`] and [`render`] for every SMILES, into `out/mol-<k>` (`k` the SMILES'
/// position): a SMILES that fails is that entry's error (naming it), and the others are
/// explained as if it were not there.
pub fn explain_each(
    run_dir: &Path,
    smiles: &[String],
    (layer, head): (Option<usize>, Option<usize>),
    out: &Path,
    device: &Device,
) -> Vec<Result<Explained, TrainError>> {
    smiles
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let explanation = explain(run_dir, s, device)?;
            let dir = out.join(format!("mol-{k}"));
            let files = render(&explanation, layer, head, &dir)?;
            Ok(Explained {
                explanation,
                dir,
                files,
            })
        })
        .collect()
}

/// Explains `smiles` with the run in `run_dir` (MAT or Transformer-M, told apart by its
/// `run.json`), on `device` (its autodiff form is used for the gradients).
///
/// # Errors
/// [`TrainError`] when the run cannot be read, or the molecule cannot be featurized as
/// the run did (the SMILES is named).
pub fn explain(run_dir: &Path, smiles: &str, device: &Device) -> Result<Explanation, TrainError> {
    match RunSpecFile::load(run_dir)? {
        RunSpecFile::Mat(spec) => explain_mat(run_dir, &spec, smiles, device),
        RunSpecFile::TransformerM(spec) => explain_transformer_m(run_dir, &spec, smiles, device),
        RunSpecFile::SmilesGpt(_) => Err(TrainError::generator_run(run_dir, "explained")),
    }
}

fn explain_mat(
    run_dir: &Path,
    spec: &RunSpec,
    smiles: &str,
    device: &Device,
) -> Result<Explanation, TrainError> {
    let device = device.clone().autodiff();
    let inference = RunSpec {
        model: spec.model.clone().with_dropout(0.0),
        ..spec.clone()
    };
    let model = inference.load_best_model(run_dir, &device)?;
    let mol = Molecule::from_smiles(smiles).map_err(invalid)?;
    let featurizer = mol_featurize::MatFeaturizer {
        conformer: crate::smiles_conformer::conformer_for_smiles(
            &spec.featurizer.conformer,
            run_dir,
        ),
        ..spec.featurizer.clone()
    };
    let features = featurizer.featurize_smiles(smiles).map_err(invalid)?;
    let batch = MatBatch::from_data(&pad_batch(&[&features]).map_err(invalid)?, &device);
    let embedded = model
        .src_embed
        .forward(batch.node_features.clone())
        .detach()
        .require_grad();
    let (y, attention) = model.forward_embedded(embedded.clone(), &batch);
    let first = y.clone().slice([0..1, 0..1]);
    let grads = first.clone().sum().backward();
    let grad = embedded
        .grad(&grads)
        .ok_or_else(|| invalid("no gradient at the embedded atoms"))?;
    let per_token = values((embedded.inner() * grad).sum_dim(2))?;
    let raw = values(first.inner())?[0];
    let prediction = spec.labels().output(&[raw])[0];
    Ok(Explanation {
        smiles: smiles.to_string(),
        model: "mat".into(),
        tokens: token_labels("dummy", &mol),
        prediction,
        attention: split_heads(attention.into_iter().map(|a| a.inner()).collect())?,
        contribution: per_token[1..].to_vec(),
    })
}

fn explain_transformer_m(
    run_dir: &Path,
    spec: &TmRunSpec,
    smiles: &str,
    device: &Device,
) -> Result<Explanation, TrainError> {
    let device = device.clone().autodiff();
    let inference = TmRunSpec {
        model: spec
            .model
            .clone()
            .with_dropout(0.0)
            .with_attention_dropout(0.0)
            .with_activation_dropout(0.0),
        ..spec.clone()
    };
    let model = inference.load_best_model(run_dir, &device)?;
    let mol = Molecule::from_smiles(smiles).map_err(invalid)?;
    // The 3D channel gets a conformer made as in training (RDKit's recipe); a molecule
    // left with a 2D layout runs in 2D, as in training.
    let conformer =
        crate::smiles_conformer::conformer_for_smiles(&spec.featurizer().conformer, run_dir);
    let xyz = coordinates(&mol, &conformer)
        .filter(|(_, method)| *method == CoordinateMethod::Embed3d)
        .map(|(xyz, _)| {
            xyz.iter()
                .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32])
                .collect::<Vec<_>>()
        });
    let features = graphormer_features(&mol, spec.model.limits.max_hops, xyz).map_err(invalid)?;
    let data = pad_graphormer_batch(&[&features], &spec.model.limits).map_err(invalid)?;
    let batch = TransformerMBatch::from_data(&data, &[spec.eval_mode], &device);
    let mut embedded = model.embed(&batch);
    embedded.states = embedded.states.detach().require_grad();
    let states = embedded.states.clone();
    let (out, attention) = model.encode_embedded(embedded);
    let first = model.predict(&out).slice([0..1, 0..1]);
    let grads = first.clone().sum().backward();
    let grad = states
        .grad(&grads)
        .ok_or_else(|| invalid("no gradient at the embedded atoms"))?;
    let per_token = values((states.inner() * grad).sum_dim(2))?;
    let raw = values(first.inner())?[0];
    Ok(Explanation {
        smiles: smiles.to_string(),
        model: "transformer-m".into(),
        tokens: token_labels("graph", &mol),
        prediction: spec.labels().output(&[raw])[0],
        attention: split_heads(attention.into_iter().map(|a| a.inner()).collect())?,
        contribution: per_token[1..].to_vec(),
    })
}

/// Writes the pictures and numbers of `explanation` into `out_dir`:
/// `attention.svg`/`.png` (token 0's attention to each atom, blue), `contribution.svg`/
/// `.png` (gradient x input, blue up, red down), `attention_matrix.png` (heat map with
/// atom labels) and `explanation.json`. `layer` / `head` as in
/// [`Explanation::token0_attention`]. Returns the paths written.
///
/// # Errors
/// [`TrainError`] for a missing layer or head, a molecule that no longer parses, or a
/// file that cannot be written.
pub fn render(
    explanation: &Explanation,
    layer: Option<usize>,
    head: Option<usize>,
    out_dir: &Path,
) -> Result<Vec<PathBuf>, TrainError> {
    std::fs::create_dir_all(out_dir).map_err(|e| TrainError::io(out_dir, e))?;
    let mol = Molecule::from_smiles(&explanation.smiles).map_err(invalid)?;
    let which = format!(
        "layer {}, {}",
        layer.unwrap_or(explanation.attention.len().saturating_sub(1)),
        head.map_or("mean of heads".to_string(), |h| format!("head {h}"))
    );
    let mut written = Vec::new();
    let attention: Vec<f64> = explanation
        .token0_attention(layer, head)?
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    let contribution: Vec<f64> = explanation
        .contribution
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    for (name, weights) in [("attention", &attention), ("contribution", &contribution)] {
        let side = depiction_side(mol.num_atoms());
        let svg = atom_weight_svg(&mol, weights, side, side).map_err(invalid)?;
        let svg_path = out_dir.join(format!("{name}.svg"));
        std::fs::write(&svg_path, &svg).map_err(|e| TrainError::io(&svg_path, e))?;
        let png_path = out_dir.join(format!("{name}.png"));
        svg_to_png(&svg, &png_path)?;
        written.extend([svg_path, png_path]);
    }
    let matrix_path = out_dir.join("attention_matrix.png");
    // Short axis labels: "d" / "g" for the dummy node / graph token (named in the caption).
    let mut labels = explanation.tokens.clone();
    if let Some(first) = labels.first_mut() {
        *first = first.chars().take(1).collect();
    }
    heat_map(
        &matrix_path,
        &format!(
            "{} attention, {which} ({}: {}): {}",
            explanation.model,
            labels.first().map_or("", String::as_str),
            explanation.tokens.first().map_or("", String::as_str),
            explanation.smiles
        ),
        &labels,
        &explanation.matrix(layer, head)?,
    )?;
    written.push(matrix_path);
    let json_path = out_dir.join("explanation.json");
    crate::checkpoint::write_json(&json_path, explanation)?;
    written.push(json_path);
    Ok(written)
}
