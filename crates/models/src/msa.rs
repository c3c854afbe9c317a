//! AlphaFold MSA column global attention (Jumper et al. 2021, Supplementary Algorithm 19
//! `MSAColumnGlobalAttention`; reference: deepmind/alphafold `alphafold/model/modules.py`
//! `MSAColumnGlobalAttention`, used in the extra-MSA stack).

use std::path::Path;

use attn_core::{GlobalAttention, GlobalAttentionConfig};
use burn::nn::{LayerNorm, LayerNormConfig};
use burn::prelude::*;
use burn::store::{ApplyResult, KeyRemapper, ModuleSnapshot, SafetensorsStore};
use burn::tensor::FloatDType;

use crate::load::LoadError;

/// Haiku module path of the block in AlphaFold (`.../extra_msa_stack/<this>`), the
/// default scope of [`MsaColumnGlobalAttention::load_alphafold_params`].
pub const ALPHAFOLD_SCOPE: &str = "msa_column_global_attention";

/// Configuration of [`MsaColumnGlobalAttention`]; defaults are AlphaFold's extra-MSA
/// stack (`c_m` 64, 8 heads, `c` = 64 / 8 = 8, gated, zero-initialised).
#[derive(Config, Debug)]
pub struct MsaColumnGlobalAttentionConfig {
    /// MSA channels `c_m` (AlphaFold extra MSA: 64).
    #[config(default = 64)]
    pub c_m: usize,
    /// Query heads H.
    #[config(default = 8)]
    pub num_heads: usize,
    /// Channels per head `c`.
    #[config(default = 8)]
    pub c: usize,
    /// Sigmoid output gating.
    #[config(default = true)]
    pub gating: bool,
    /// AlphaFold's zero initialisation of the gating and output projections.
    #[config(default = true)]
    pub zero_init: bool,
    /// LayerNorm epsilon (haiku default 1e-5).
    #[config(default = 1e-5)]
    pub layer_norm_eps: f64,
}

/// MSA column global attention: LayerNorm over channels, then [`GlobalAttention`] of
/// every residue column over its sequences. The caller adds the residual, as in
/// AlphaFold.
#[derive(Module, Debug)]
pub struct MsaColumnGlobalAttention {
    /// `query_norm` (haiku `scale` = `gamma`, `offset` = `beta`).
    pub query_norm: LayerNorm,
    /// `attention`.
    pub attention: GlobalAttention,
    /// Epsilon of `query_norm` (Burn keeps its own private; exporters need it).
    pub layer_norm_eps: f64,
}

impl MsaColumnGlobalAttentionConfig {
    /// Builds the block on `device` (AlphaFold initialisation, see
    /// [`GlobalAttentionConfig::init`]).
    pub fn init(&self, device: &Device) -> MsaColumnGlobalAttention {
        MsaColumnGlobalAttention {
            query_norm: LayerNormConfig::new(self.c_m)
                .with_epsilon(self.layer_norm_eps)
                .init(device),
            attention: GlobalAttentionConfig::new(self.c_m, self.num_heads, self.c, self.c_m)
                .with_gating(self.gating)
                .with_zero_init(self.zero_init)
                .init(device),
            layer_norm_eps: self.layer_norm_eps,
        }
    }
}

impl MsaColumnGlobalAttention {
    /// Applies the block.
    ///
    /// - `msa_act`: `[N_seq, N_res, c_m]` MSA activations, f32, or bf16/f16 for
    ///   AlphaFold's mixed precision (LayerNorm and softmax then run in f32).
    /// - `msa_padding_mask`: `[N_seq, N_res]`, `true` = padding (AlphaFold `msa_mask` 0).
    ///
    /// Returns `[N_seq, N_res, c_m]` in the dtype of `msa_act`; columns whose sequences
    /// are all masked give finite values.
    pub fn forward(&self, msa_act: Tensor<3>, msa_padding_mask: Tensor<2, Bool>) -> Tensor<3> {
        let dtype = FloatDType::from(msa_act.dtype());
        let columns = msa_act.swap_dims(0, 1); // [N_res, N_seq, c_m]
        let normed = attn_core::apply_layer_norm(
            &self.query_norm,
            self.layer_norm_eps,
            columns.cast(FloatDType::F32),
        )
        .cast(dtype);
        let mask = msa_padding_mask.swap_dims(0, 1);
        self.attention
            .forward(normed.clone(), normed, mask)
            .swap_dims(0, 1)
    }

    /// Loads AlphaFold-named haiku parameters from a `.safetensors` file whose keys are
    /// flattened as in AlphaFold's parameter files, `<module path>//<parameter>`:
    /// `{scope}/query_norm//scale|offset` `[c_m]`, `{scope}/attention//query_w`
    /// `[c_m, H, c]`, `key_w`/`value_w` `[c_m, c]`, `gating_w` `[c_m, H, c]`, `gating_b`
    /// `[H, c]`, `output_w` `[H, c, c_m]`, `output_b` `[c_m]` (our
    /// `fixtures/gen/global_attention_reference.py` writes them). Keys outside `scope`
    /// are ignored. AlphaFold's released files stack the extra-MSA layers on a leading
    /// axis; export one layer's slice to load it here.
    ///
    /// # Errors
    /// [`LoadError::Read`] for unreadable files; [`LoadError::Mismatch`] when a parameter
    /// of this configuration is missing, the scope holds unknown parameters, or shapes
    /// differ (e.g. gating parameters for an ungated configuration).
    pub fn load_alphafold_params(mut self, path: &Path, scope: &str) -> Result<Self, LoadError> {
        let shown = path.display().to_string();
        let read_err = |reason: String| LoadError::Read {
            path: shown.clone(),
            reason,
        };
        let scope_re = regex::escape(scope);
        let mut remapper = KeyRemapper::new();
        for (from, to) in [
            (
                format!(r"^{scope_re}/query_norm//scale$"),
                "query_norm.gamma",
            ),
            (
                format!(r"^{scope_re}/query_norm//offset$"),
                "query_norm.beta",
            ),
            (format!(r"^{scope_re}/attention//(\w+)$"), "attention.$1"),
        ] {
            remapper = remapper
                .add_pattern(&from, to)
                .map_err(|e| read_err(e.to_string()))?;
        }
        let mut store = SafetensorsStore::from_file(path)
            .remap(remapper)
            .allow_partial(true)
            .validate(false);
        let result: ApplyResult = self
            .load_from(&mut store)
            .map_err(|e| read_err(e.to_string()))?;
        let missing = result.missing.iter().map(|(p, _)| p.clone()).collect();
        let unexpected = result
            .unused
            .iter()
            .filter(|k| k.starts_with(&format!("{scope}/")) || k.starts_with("attention."))
            .cloned()
            .collect();
        LoadError::check(shown, missing, unexpected, &result)?;
        Ok(self)
    }
}
