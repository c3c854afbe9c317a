//! Checkpoints: ours (PyTorch layout, our module paths) and the original's (fairseq
//! state dict of lsj2408/Transformer-M, `encoder.molecule_encoder.*` and the head's
//! `encoder.*` names), mapped by one key-map table ([`TransformerM::original_key_map`]).
//!
//! The original stores its categorical tables with a 512-row block per feature and its
//! collator's index offsets (`data/wrapper.py` `convert_to_single_emb` plus the
//! collator's `+ 1`); ours are compact. [`super::original_layout`] gives, for each of our rows,
//! the original row it holds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use burn::prelude::*;
use burn::store::burn_pack::Tensor as PackTensor;
use burn::store::{
    ApplyResult, ModuleSnapshot, ModuleStore, PyTorchToBurnAdapter, PytorchStore, SafetensorsStore,
    bridge,
};

use super::model::TransformerM;
use crate::load::LoadError;

/// Prefix of the encoder's parameters in an original checkpoint.
pub const ORIGINAL_PREFIX: &str = "encoder.molecule_encoder.";

/// How one of our tensors is made from the original checkpoint (names relative to
/// [`ORIGINAL_PREFIX`]; a name starting `../` is relative to `encoder.`, the head's).
#[derive(Debug, Clone)]
pub enum Source {
    /// The original tensor as it is (PyTorch layout).
    Same(String),
    /// Rows of an original table, chosen by a [`super::original_layout`] function of our row.
    Rows(String, fn(&TransformerM, usize) -> usize),
    /// The sum of two original tables, row by row (same rows).
    SumRows(String, String),
    /// The original tensor flattened, its first values taken in our shape (the per-hop
    /// matrices: the original allocates `num_edge_dis` hops, we keep `max_hops`).
    Leading(String),
    /// The original tensor flattened into our shape (the same number of values).
    Reshape(String),
}

/// A checkpoint tensor as f32 values and its shape.
struct Loaded {
    shape: Vec<usize>,
    values: Vec<f32>,
}

impl TransformerM {
    /// Loads parameters from a `.safetensors` file with PyTorch naming (Linear weights
    /// `[out, in]`, LayerNorm `weight`/`bias`) and this module's paths.
    ///
    /// # Errors
    /// [`LoadError::Read`] for unreadable files, [`LoadError::Mismatch`] for missing,
    /// unexpected or mis-shaped tensors.
    pub fn load_pytorch_safetensors(mut self, path: &Path) -> Result<Self, LoadError> {
        let shown = path.display().to_string();
        let mut store = SafetensorsStore::from_file(path)
            .with_from_adapter(PyTorchToBurnAdapter)
            .allow_partial(true)
            .validate(false);
        let result: ApplyResult = self.load_from(&mut store).map_err(|e| LoadError::Read {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        let missing = result.missing.iter().map(|(p, _)| p.clone()).collect();
        let unexpected = result.unused.clone();
        LoadError::check(shown, missing, unexpected, &result)?;
        Ok(self)
    }

    /// The key map: every parameter of this model (our module path, PyTorch naming)
    /// with its source in an original checkpoint. Parts the model lacks (pre-LN norms,
    /// no denoising head) are skipped by the loader.
    pub fn original_key_map(&self) -> Vec<(String, Source)> {
        use super::original_layout::{atom_row, bond_row, spatial_row, type_row_i, type_row_j};
        let same = |ours: &str, theirs: &str| (ours.to_string(), Source::Same(theirs.into()));
        let rows = |ours: &str, theirs: &str, pick: fn(&TransformerM, usize) -> usize| {
            (ours.to_string(), Source::Rows(theirs.into(), pick))
        };
        let leading = |ours: &str, theirs: &str| (ours.to_string(), Source::Leading(theirs.into()));
        let mut map = vec![
            rows(
                "atom_encoder.atom_embedding.weight",
                "atom_feature.atom_encoder.weight",
                atom_row,
            ),
            (
                "atom_encoder.degree_embedding.weight".into(),
                Source::SumRows(
                    "atom_feature.in_degree_encoder.weight".into(),
                    "atom_feature.out_degree_encoder.weight".into(),
                ),
            ),
            same(
                "atom_encoder.graph_token",
                "atom_feature.graph_token.weight",
            ),
            rows(
                "bias_encoder.spatial_embedding.weight",
                "molecule_attn_bias.spatial_pos_encoder.weight",
                spatial_row,
            ),
            rows(
                "bias_encoder.edge_embedding.weight",
                "molecule_attn_bias.edge_encoder.weight",
                bond_row,
            ),
            leading(
                "bias_encoder.edge_hop_weight",
                "molecule_attn_bias.edge_dis_encoder.weight",
            ),
            same(
                "bias_encoder.virtual_distance",
                "molecule_attn_bias.graph_token_virtual_distance.weight",
            ),
            (
                "gaussian.means".into(),
                Source::Reshape("molecule_3d_bias.gbf.means.weight".into()),
            ),
            (
                "gaussian.stds".into(),
                Source::Reshape("molecule_3d_bias.gbf.stds.weight".into()),
            ),
            rows(
                "gaussian.mul_i.weight",
                "molecule_3d_bias.gbf.mul.weight",
                type_row_i,
            ),
            rows(
                "gaussian.mul_j.weight",
                "molecule_3d_bias.gbf.mul.weight",
                type_row_j,
            ),
            rows(
                "gaussian.bias_i.weight",
                "molecule_3d_bias.gbf.bias.weight",
                type_row_i,
            ),
            rows(
                "gaussian.bias_j.weight",
                "molecule_3d_bias.gbf.bias.weight",
                type_row_j,
            ),
            same("head.dense.weight", "../lm_head_transform_weight.weight"),
            same("head.dense.bias", "../lm_head_transform_weight.bias"),
            same("head.layer_norm.weight", "../layer_norm.weight"),
            same("head.layer_norm.bias", "../layer_norm.bias"),
            same("head.out.weight", "../embed_out.weight"),
            same("head.out.bias", "../lm_output_learned_bias"),
        ];
        let linear_or_norm = [
            (
                "pair_bias_3d.dense",
                "molecule_3d_bias.gbf_proj.layer1".to_string(),
            ),
            (
                "pair_bias_3d.out",
                "molecule_3d_bias.gbf_proj.layer2".into(),
            ),
            ("atom_proj_3d", "molecule_3d_bias.edge_proj".into()),
            ("emb_layer_norm", "emb_layer_norm".into()),
        ];
        let mut parts: Vec<(String, String)> = linear_or_norm
            .into_iter()
            .map(|(a, b)| (a.to_string(), b))
            .collect();
        for i in 0..self.layers.len() {
            for part in [
                "self_attn.q_proj",
                "self_attn.k_proj",
                "self_attn.v_proj",
                "self_attn.out_proj",
                "self_attn_layer_norm",
                "final_layer_norm",
                "fc1",
                "fc2",
            ] {
                let name = format!("layers.{i}.{part}");
                parts.push((name.clone(), name));
            }
        }
        for part in [
            "q_proj",
            "k_proj",
            "v_proj",
            "force_proj1",
            "force_proj2",
            "force_proj3",
        ] {
            parts.push((format!("denoise_head.{part}"), format!("atom_proc.{part}")));
        }
        for (ours, theirs) in parts {
            for p in ["weight", "bias"] {
                map.push(same(&format!("{ours}.{p}"), &format!("{theirs}.{p}")));
            }
        }
        map
    }

    /// Loads an original Transformer-M checkpoint (lsj2408/Transformer-M, fairseq
    /// state dict): a `.safetensors` file with its names, or the `.pt` checkpoint
    /// itself (its `model` entry, or a bare state dict). Tables are re-indexed into
    /// ours ([`super::original_layout`]); the in- and out-degree tables are summed. The model
    /// must be post-LN ([`super::LayerNormPlacement::Post`]) with the checkpoint's
    /// sizes; a denoising head is loaded when the model has one (a checkpoint without
    /// `atom_proc` loads into a model built without it).
    ///
    /// # Errors
    /// [`LoadError::Read`] for unreadable files and for pre-LN models;
    /// [`LoadError::Mismatch`] for tensors the
    /// model needs and the file lacks, file tensors the model has no place for (the
    /// original's optional extra tables, e.g. `proj_out`, are reported), and shapes that
    /// differ from the model's.
    pub fn load_original(mut self, path: &Path) -> Result<Self, LoadError> {
        let shown = path.display().to_string();
        let read_err = |reason: String| LoadError::Read {
            path: shown.clone(),
            reason,
        };
        if self.final_layer_norm.is_some() {
            return Err(read_err(
                "original checkpoints are post-LN: build the model with \
                 LayerNormPlacement::Post"
                    .into(),
            ));
        }
        let file = read_all(path).map_err(read_err)?;
        // The original always builds its denoising head; a model without one skips it.
        let skipped = |k: &str| {
            self.denoise_head.is_none() && k.starts_with(&format!("{ORIGINAL_PREFIX}atom_proc."))
        };
        let full = |name: &str| match name.strip_prefix("../") {
            Some(head) => format!("encoder.{head}"),
            None => format!("{ORIGINAL_PREFIX}{name}"),
        };
        let ours = self.snapshot_shapes();
        let mut used = BTreeSet::new();
        let mut tensors = Vec::new();
        let mut missing = Vec::new();
        let mut mismatched = Vec::new();
        for (path_ours, source) in self.original_key_map() {
            let Some(want) = ours.get(&path_ours) else {
                continue; // a part this model does not have (pre-LN norms, no head)
            };
            let keys = match &source {
                Source::Same(k) | Source::Leading(k) | Source::Reshape(k) | Source::Rows(k, _) => {
                    vec![full(k)]
                }
                Source::SumRows(a, b) => vec![full(a), full(b)],
            };
            if let Some(k) = keys.iter().find(|k| !file.contains_key(*k)) {
                missing.push(format!("{path_ours} (from {k})"));
                continue;
            }
            used.extend(keys.iter().cloned());
            let first = &file[&keys[0]];
            let made = build(&self, &source, want, first, &file, &keys);
            let Some(made) = made_if_fits(made, want) else {
                mismatched.push(format!(
                    "{path_ours}: model {:?}, from {} {:?}",
                    want, keys[0], first.shape
                ));
                continue;
            };
            tensors.push(bridge::from_data(
                TensorData::new(made.values, made.shape),
                path_ours,
                None,
            ));
        }
        let unexpected: Vec<String> = file
            .keys()
            .filter(|k| !used.contains(*k) && !skipped(k))
            .cloned()
            .collect();
        if !missing.is_empty() || !unexpected.is_empty() || !mismatched.is_empty() {
            return Err(LoadError::Mismatch {
                path: shown,
                missing,
                unexpected,
                mismatched,
            });
        }
        let result = self.apply(tensors, None, Some(Box::new(PyTorchToBurnAdapter)), false);
        let missing = result.missing.iter().map(|(p, _)| p.clone()).collect();
        LoadError::check(shown, missing, result.unused.clone(), &result)?;
        Ok(self)
    }

    /// Our parameters' paths with their shapes in PyTorch layout (Linear weights
    /// `[out, in]`).
    fn snapshot_shapes(&self) -> BTreeMap<String, Vec<usize>> {
        self.collect(
            None,
            Some(Box::new(burn::store::BurnToPyTorchAdapter)),
            false,
        )
        .into_iter()
        .map(|t: PackTensor| (t.name.clone(), t.shape.to_vec()))
        .collect()
    }
}

/// Our tensor of shape `want` from `source`.
fn build(
    model: &TransformerM,
    source: &Source,
    want: &[usize],
    first: &Loaded,
    file: &BTreeMap<String, Loaded>,
    keys: &[String],
) -> Loaded {
    let rows = |t: &Loaded, pick: &dyn Fn(usize) -> usize| {
        // A 1-D table has width 1 (the empty product); a zero-width table width 0.
        let w: usize = t.shape.iter().skip(1).product();
        let n = t.shape.first().copied().unwrap_or(0);
        if t.values.len() != n * w {
            return None;
        }
        let mut values = Vec::with_capacity(want[0] * w);
        for r in 0..want[0] {
            let o = pick(r);
            if o >= n {
                return None;
            }
            values.extend_from_slice(&t.values[o * w..(o + 1) * w]);
        }
        Some(Loaded {
            shape: [vec![want[0]], t.shape[1..].to_vec()].concat(),
            values,
        })
    };
    let wrong = || Loaded {
        shape: first.shape.clone(),
        values: vec![],
    };
    match source {
        Source::Same(_) => Loaded {
            shape: first.shape.clone(),
            values: first.values.clone(),
        },
        Source::Leading(_) | Source::Reshape(_) => {
            let count: usize = want.iter().product();
            let exact = matches!(source, Source::Reshape(_));
            if first.values.len() < count || (exact && first.values.len() != count) {
                return wrong();
            }
            Loaded {
                shape: want.to_vec(),
                values: first.values[..count].to_vec(),
            }
        }
        Source::Rows(_, pick) => rows(first, &|r| pick(model, r)).unwrap_or_else(wrong),
        Source::SumRows(..) => {
            let second = &file[&keys[1]];
            match (rows(first, &|r| r), rows(second, &|r| r)) {
                (Some(mut a), Some(b)) if a.shape == b.shape => {
                    a.values
                        .iter_mut()
                        .zip(&b.values)
                        .for_each(|(x, y)| *x += y);
                    a
                }
                _ => wrong(),
            }
        }
    }
}

/// `made` when its shape is `want` (a bias `[1]` stands for `[num_targets]` only when
/// that is 1).
fn made_if_fits(made: Loaded, want: &[usize]) -> Option<Loaded> {
    (made.shape == want && made.values.len() == want.iter().product::<usize>()).then_some(made)
}

/// Every tensor of a `.safetensors` or PyTorch `.pt` file as f32.
fn read_all(path: &Path) -> Result<BTreeMap<String, Loaded>, String> {
    let is_pt = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("pt" | "pth" | "bin")
    );
    let convert = |all: &BTreeMap<String, PackTensor>| -> Result<BTreeMap<String, Loaded>, String> {
        all.iter()
            .map(|(name, t)| {
                let data = bridge::to_data(t).map_err(|e| format!("{name}: {e}"))?;
                let shape = data.shape().to_vec();
                let values = data
                    .convert::<f32>()
                    .try_into_vec::<f32>()
                    .map_err(|e| format!("{name}: {e:?}"))?;
                Ok((name.clone(), Loaded { shape, values }))
            })
            .collect()
    };
    if is_pt {
        // A fairseq checkpoint holds the state dict under `model`; a bare state dict is
        // read whole. When both fail, both reasons are reported.
        let mut store = PytorchStore::from_file(path).with_top_level_key("model");
        let under_model = match store.get_all_tensors() {
            Ok(all) if !all.is_empty() => return convert(all),
            Ok(_) => "no tensors under `model`".to_string(),
            Err(e) => e.to_string(),
        };
        let mut store = PytorchStore::from_file(path);
        let all = store.get_all_tensors().map_err(|e| {
            format!("not a fairseq checkpoint ({under_model}) nor a state dict ({e})")
        })?;
        convert(all)
    } else {
        let mut store = SafetensorsStore::from_file(path);
        let all = store.get_all_tensors().map_err(|e| e.to_string())?;
        convert(all)
    }
}
