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
    /// The original's `spatial_pos_max`
    /// ([`TransformerMConfig::with_original_spatial_pos_max`]; 1024 lets fragments attend).
    pub spatial_pos_max: Option<usize>,
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
            || self.spatial_pos_max.is_some()
    }

    /// The preset (`base`: the paper's 12 layers, d 768; else the small one) with the
    /// overrides applied.
    ///
    /// # Errors
    /// A `spatial_pos_max` that [`TransformerMConfig::with_original_spatial_pos_max`]
    /// refuses.
    pub fn config(&self, base: bool) -> Result<TransformerMConfig, crate::TrainError> {
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
        match self.spatial_pos_max {
            Some(n) => c
                .with_original_spatial_pos_max(n)
                .map_err(crate::TrainError::Invalid),
            None => Ok(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No override.
    fn none() -> SizeOverrides {
        SizeOverrides {
            layers: None,
            d_model: None,
            num_heads: None,
            kernels: None,
            layer_norm: None,
            gaussian_init: GaussianInit::Original,
            droppath: 0.0,
            spatial_pos_max: None,
        }
    }

    #[test]
    fn overrides_replace_the_preset_and_d_model_sets_the_ffn_width() {
        let none = none();
        assert!(!none.any());
        let small = TransformerMConfig::small();
        let c = none.config(false).unwrap();
        assert_eq!((c.num_layers, c.d_model), (small.num_layers, small.d_model));
        let some = SizeOverrides {
            layers: Some(3),
            d_model: Some(48),
            layer_norm: Some(LayerNormPlacement::Pre),
            ..none
        };
        assert!(some.any());
        let c = some.config(true).unwrap();
        assert_eq!((c.num_layers, c.d_model, c.ffn_dim), (3, 48, 48));
        assert_eq!(c.num_heads, TransformerMConfig::base().num_heads);
        assert!(matches!(c.layer_norm, LayerNormPlacement::Pre));
        // DropPath is not a size, and reaches the configuration.
        let droppath = SizeOverrides {
            droppath: 0.1,
            ..none
        };
        assert!(!droppath.any());
        assert_eq!(droppath.config(false).unwrap().droppath, 0.1);
    }

    /// The original's `spatial_pos_max`: up to 509 masks far pairs (the table grows to
    /// hold every unmasked distance), 511+ masks nothing on the original's 512-row table;
    /// 510 and 0 are refused.
    #[test]
    fn spatial_pos_max_as_the_original_reads_it() {
        let with = |n| SizeOverrides {
            spatial_pos_max: Some(n),
            ..none()
        };
        assert!(with(1024).any());
        let c = with(1024).config(false).unwrap();
        assert_eq!((c.spatial_pos_max, c.limits.max_distance), (1024, 509));
        assert_eq!(c.limits.spatial_rows(), 512);
        let c = with(6).config(false).unwrap();
        assert_eq!((c.spatial_pos_max, c.limits.max_distance), (6, 20));
        let c = with(40).config(false).unwrap();
        assert_eq!((c.spatial_pos_max, c.limits.max_distance), (40, 40));
        let c = with(511).config(false).unwrap();
        assert_eq!((c.spatial_pos_max, c.limits.max_distance), (511, 509));
        for bad in [0, 510] {
            let e = with(bad).config(false).unwrap_err().to_string();
            assert!(e.contains(&format!("spatial_pos_max {bad}")), "{e}");
        }
        // Each accepted setting builds.
        for n in [6, 40, 1024] {
            let _ = with(n)
                .config(false)
                .unwrap()
                .init(&burn::tensor::Device::flex());
        }
    }
}
