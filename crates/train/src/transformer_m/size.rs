//! A Transformer-M preset with the user's size overrides (`--layers`, `--d-model`,
//! `--num-heads`, `--kernels`, `--layer-norm`, `--gaussian-init`), as `train` and
//! `pretrain` build their model configuration.

use models::transformer_m::{GaussianInit, LayerNormPlacement, TransformerMConfig};

/// Overrides of a Transformer-M preset's size; `None` keeps the preset's.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeOverrides {
    /// Encoder layers.
    pub layers: Option<usize>,
    /// `d_model`, and the FFN width with it (the original's presets keep them equal).
    pub d_model: Option<usize>,
    /// Attention heads.
    pub num_heads: Option<usize>,
    /// Gaussian kernels K.
    pub kernels: Option<usize>,
    /// LayerNorm placement.
    pub layer_norm: Option<LayerNormPlacement>,
    /// Gaussian layer initialisation (always set: the original's by default).
    pub gaussian_init: GaussianInit,
    /// The encoder's DropPath probability (always set, 0 by default; not a size: it is
    /// this run's regularisation, kept over a pretraining run's by `--init-from`).
    pub droppath: f64,
}

impl SizeOverrides {
    /// Whether a size was overridden (the Gaussian initialisation does not count): a
    /// pretraining run's size then does not replace the preset's
    /// ([`super::resolve_init_from`]).
    pub fn any(&self) -> bool {
        self.layers.is_some()
            || self.d_model.is_some()
            || self.num_heads.is_some()
            || self.kernels.is_some()
            || self.layer_norm.is_some()
    }

    /// The preset (`base`: the paper's 12 layers, d 768; else the small one) with the
    /// overrides applied.
    pub fn config(&self, base: bool) -> TransformerMConfig {
        let mut c = if base {
            TransformerMConfig::base()
        } else {
            TransformerMConfig::small()
        };
        if let Some(v) = self.layers {
            c.num_layers = v;
        }
        if let Some(v) = self.d_model {
            c.d_model = v;
            c.ffn_dim = v;
        }
        if let Some(v) = self.num_heads {
            c.num_heads = v;
        }
        if let Some(v) = self.kernels {
            c.num_kernels = v;
        }
        c.gaussian_init = self.gaussian_init;
        c.droppath = self.droppath;
        if let Some(placement) = self.layer_norm {
            c.layer_norm = placement;
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_the_preset_and_d_model_sets_the_ffn_width() {
        let none = SizeOverrides {
            layers: None,
            d_model: None,
            num_heads: None,
            kernels: None,
            layer_norm: None,
            gaussian_init: GaussianInit::Original,
            droppath: 0.0,
        };
        assert!(!none.any());
        let small = TransformerMConfig::small();
        let c = none.config(false);
        assert_eq!((c.num_layers, c.d_model), (small.num_layers, small.d_model));
        let some = SizeOverrides {
            layers: Some(3),
            d_model: Some(48),
            layer_norm: Some(LayerNormPlacement::Pre),
            ..none
        };
        assert!(some.any());
        let c = some.config(true);
        assert_eq!((c.num_layers, c.d_model, c.ffn_dim), (3, 48, 48));
        assert_eq!(c.num_heads, TransformerMConfig::base().num_heads);
        assert!(matches!(c.layer_norm, LayerNormPlacement::Pre));
        // DropPath is not a size, and reaches the configuration.
        let droppath = SizeOverrides {
            droppath: 0.1,
            ..none
        };
        assert!(!droppath.any());
        assert_eq!(droppath.config(false).droppath, 0.1);
    }
}
