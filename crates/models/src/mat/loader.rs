//! Loading reference PyTorch MAT weights (`state_dict` as `.pt` or `.safetensors`).
//!
//! The reference module tree (ardigen/MAT `src/transformer.py`, docs/SPEC.md 1.2) differs
//! from ours only in a few names, all mapped by [`REFERENCE_KEY_MAP`]; Linear weights are
//! transposed from PyTorch's `[out, in]` by burn-store's `PyTorchToBurnAdapter`.

use std::path::Path;

use burn::store::{
    ApplyResult, KeyRemapper, ModuleSnapshot, PyTorchToBurnAdapter, PytorchStore, SafetensorsStore,
};

use super::model::MatModel;
pub use crate::load::LoadError;

/// Reference key patterns (regex) -> our module paths. Keys not listed are identical
/// (`src_embed.lut.*`, `encoder.layers.{i}.feed_forward.linears.{j}.*`, `encoder.norm.*`,
/// `generator.proj.*`). Enum variants of our norms (`LayerNorm` / `ScaleNorm`) are
/// matched without their variant name.
pub const REFERENCE_KEY_MAP: [(&str, &str); 6] = [
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
        r"^(encoder\.layers\.\d+)\.sublayer\.0\.norm\.",
        "$1.norm_attn.",
    ),
    (
        r"^(encoder\.layers\.\d+)\.sublayer\.1\.norm\.",
        "$1.norm_ff.",
    ),
];

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
        for (from, to) in REFERENCE_KEY_MAP {
            remapper = remapper
                .add_pattern(from, to)
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
