//! Loading reference PyTorch MAT weights (`state_dict` as `.pt` or `.safetensors`).
//!
//! The reference module tree (ardigen/MAT `src/transformer.py`, docs/SPEC.md 1.2) differs
//! from ours only in a few names, all mapped by [`REFERENCE_KEY_MAP`] (and, for a generator
//! of more than one layer, by the block indices of its `nn.Sequential`); Linear weights are
//! transposed from PyTorch's `[out, in]` by burn-store's `PyTorchToBurnAdapter`.

use std::path::Path;

use burn::store::{
    ApplyResult, KeyRemapper, ModuleSnapshot, PyTorchToBurnAdapter, PytorchStore, SafetensorsStore,
};

use super::model::MatModel;
pub use crate::load::LoadError;

/// Reference key patterns (regex) -> our module paths. Keys not listed are identical
/// (`src_embed.lut.*`, `encoder.layers.{i}.feed_forward.linears.{j}.*`, `encoder.norm.*`,
/// and `generator.proj.*` of a one-layer generator; a deeper one's keys are mapped by
/// block, see `generator_key_map`). Enum variants of our norms (`LayerNorm` /
/// `ScaleNorm`) are matched without their variant name.
pub const REFERENCE_KEY_MAP: [(&str, &str); 7] = [
    (
        r"^(encoder\.layers\.\d+\.self_attn)\.linears\.0\.",
        "$1.query.",
    ),
    (
        r"^(encoder\.layers\.\d+\.self_attn)\.linears\.1\.",
        "$1.key.",
    ),
    (
        r"^(encoder\.layers\.\d+\.self_attn)\.linears\.2\.",
        "$1.value.",
    ),
    (
        r"^(encoder\.layers\.\d+\.self_attn)\.linears\.3\.",
        "$1.output.",
    ),
    (
        r"^(encoder\.layers\.\d+\.self_attn)\.edges_feature_layer\.linear\.",
        "$1.edge_weights.",
    ),
    (
        r"^(encoder\.layers\.\d+)\.sublayer\.0\.norm\.",
        "$1.norm_attn.",
    ),
    (
        r"^(encoder\.layers\.\d+)\.sublayer\.1\.norm\.",
        "$1.norm_ff.",
    ),
];

/// Key patterns of a generator with `hidden` hidden blocks (`n_generator_layers - 1`):
/// the reference's `generator.proj` is then an `nn.Sequential` of `[Linear, LeakyReLU,
/// Norm, Dropout]` per block and the last Linear, so block `k`'s Linear is `proj.{4k}`,
/// its norm `proj.{4k+2}`, and the output Linear `proj.{4 hidden}` (ardigen/MAT
/// `Generator.__init__`).
fn generator_key_map(hidden: usize) -> Vec<(String, String)> {
    if hidden == 0 {
        return Vec::new();
    }
    let mut map: Vec<(String, String)> = (0..hidden)
        .flat_map(|k| {
            [
                (
                    format!(r"^generator\.proj\.{}\.", 4 * k),
                    format!("generator.hidden.{k}.linear."),
                ),
                (
                    format!(r"^generator\.proj\.{}\.", 4 * k + 2),
                    format!("generator.hidden.{k}.norm."),
                ),
            ]
        })
        .collect();
    map.push((
        format!(r"^generator\.proj\.{}\.", 4 * hidden),
        "generator.proj.".into(),
    ));
    map
}

/// Prefix given to checkpoint keys deliberately not loaded (the generator when
/// fine-tuning a pretrained encoder).
const IGNORED: &str = "ignored.";

/// Which parts of a reference checkpoint to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadParts {
    /// Every parameter, generator included (parity with a reference model).
    #[default]
    All,
    /// Embedding and encoder only; `generator.*` keys are ignored and the model keeps
    /// its freshly initialised head (fine-tuning from the pretrained MAT, as the
    /// reference notebook does).
    EncoderOnly,
}

impl MatModel {
    /// Loads a reference PyTorch MAT `state_dict` from `.pt`/`.pth` (torch.save) or
    /// `.safetensors` into this model (built with the matching [`super::MatConfig`]).
    ///
    /// # Errors
    /// [`LoadError::Read`] for unreadable files; [`LoadError::Mismatch`] listing missing
    /// and unexpected keys and shape mismatches when the checkpoint does not fit.
    pub fn load_reference_weights(
        mut self,
        path: &Path,
        parts: LoadParts,
    ) -> Result<Self, LoadError> {
        let shown = path.display().to_string();
        let read_err = |reason: String| LoadError::Read {
            path: shown.clone(),
            reason,
        };
        let mut remapper = KeyRemapper::new();
        if parts == LoadParts::EncoderOnly {
            remapper = remapper
                .add_pattern(r"^generator\.", format!("{IGNORED}generator."))
                .map_err(|e| read_err(e.to_string()))?;
        }
        for (from, to) in REFERENCE_KEY_MAP
            .iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .chain(generator_key_map(self.generator.hidden.len()))
        {
            remapper = remapper
                .add_pattern(&from, &to)
                .map_err(|e| read_err(e.to_string()))?;
        }
        let is_safetensors = path.extension().is_some_and(|e| e == "safetensors");
        let result: ApplyResult = if is_safetensors {
            let mut store = SafetensorsStore::from_file(path)
                .with_from_adapter(PyTorchToBurnAdapter)
                .remap(remapper)
                .skip_enum_variants(true)
                .allow_partial(true)
                .validate(false);
            self.load_from(&mut store)
                .map_err(|e| read_err(e.to_string()))?
        } else {
            let mut store = PytorchStore::from_file(path)
                .remap(remapper)
                .skip_enum_variants(true)
                .map_indices_contiguous(false)
                .allow_partial(true)
                .validate(false);
            self.load_from(&mut store)
                .map_err(|e| read_err(e.to_string()))?
        };
        let missing: Vec<String> = result
            .missing
            .iter()
            .map(|(p, _)| p.clone())
            .filter(|p| !(parts == LoadParts::EncoderOnly && p.starts_with("generator.")))
            .collect();
        let unexpected: Vec<String> = result
            .unused
            .iter()
            .filter(|k| !k.starts_with(IGNORED))
            .cloned()
            .collect();
        LoadError::check(shown, missing, unexpected, &result)?;
        Ok(self)
    }
}
