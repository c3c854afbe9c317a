//! Which keys a query may attend to in a token sequence: causal, local (sliding window)
//! and global-token patterns, as boolean masks with the workspace convention (`true` =
//! masked out).

use burn::prelude::*;
use serde::{Deserialize, Serialize};

/// The attention pattern of a sequence model, over absolute token positions `i` (query)
/// and `j` (key), both 0-based from the start of the sequence:
///
/// - `causal`: `j > i` is masked (autoregressive decoding; Vaswani et al. 2017, Sec. 3.2.3).
/// - `window = Some(w)`: local attention, only `|i - j| < w` is attended (with `causal`,
///   the `w` keys `i - w + 1 ..= i`; Child et al. 2019's "local" / Longformer's sliding
///   window, Beltagy et al. 2020, Sec. 3.1). `None`: dense.
/// - `global_tokens = g`: positions `0..g` attend to every key and are attended by every
///   query, window or not (Longformer's global attention, Sec. 3.1); `causal` still
///   applies to them.
///
/// The default is plain causal attention (`causal`, no window, no global tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttentionPattern {
    /// Mask keys after the query (autoregressive).
    #[serde(default = "yes")]
    pub causal: bool,
    /// Local attention window `w >= 1` (keys with `|i - j| < w`), or dense.
    #[serde(default)]
    pub window: Option<usize>,
    /// Leading positions that attend / are attended globally.
    #[serde(default)]
    pub global_tokens: usize,
}

fn yes() -> bool {
    true
}

impl Default for AttentionPattern {
    fn default() -> Self {
        Self::causal()
    }
}

impl AttentionPattern {
    /// Dense causal attention.
    pub fn causal() -> Self {
        Self {
            causal: true,
            window: None,
            global_tokens: 0,
        }
    }

    /// Causal attention over a window of `w` keys (`i - w + 1 ..= i`) plus `global_tokens`
    /// leading positions.
    pub fn local(window: usize, global_tokens: usize) -> Self {
        Self {
            causal: true,
            window: Some(window),
            global_tokens,
        }
    }

    /// Whether query position `i` may attend to key position `j` (absolute positions).
    pub fn allows(&self, i: usize, j: usize) -> bool {
        if self.causal && j > i {
            return false;
        }
        if i < self.global_tokens || j < self.global_tokens {
            return true;
        }
        match self.window {
            Some(w) => i.abs_diff(j) < w,
            None => true,
        }
    }

    /// Checks the pattern: a window of 0 would mask every key.
    ///
    /// # Errors
    /// A message naming the bad setting.
    pub fn validate(&self) -> Result<(), String> {
        if self.window == Some(0) {
            return Err("attention window must be at least 1 token".into());
        }
        Ok(())
    }

    /// The pattern's mask `[n_q, n_k]` for queries at absolute positions
    /// `offset .. offset + n_q` and keys at `0 .. n_k` (`offset` is the number of tokens
    /// already in a KV cache; 0 for a full forward), `true` = masked.
    pub fn mask_values(&self, n_q: usize, n_k: usize, offset: usize) -> Vec<bool> {
        let mut values = Vec::with_capacity(n_q * n_k);
        for i in 0..n_q {
            for j in 0..n_k {
                values.push(!self.allows(offset + i, j));
            }
        }
        values
    }

    /// [`AttentionPattern::mask_values`] as a tensor `[n_q, n_k]` on `device`.
    pub fn mask(&self, n_q: usize, n_k: usize, offset: usize, device: &Device) -> Tensor<2, Bool> {
        Tensor::from_bool(
            TensorData::new(self.mask_values(n_q, n_k, offset), [n_q, n_k]),
            device,
        )
    }
}

/// The score mask `[B, H, n_q, n_k]` (`true` = masked) of `pattern` for queries at
/// `offset ..` and keys `0 .. n_k`, combined with a `key_padding_mask` `[B, n_k]` (`true` =
/// padding, as PyTorch's `key_padding_mask`); `None` when nothing is masked (non-causal,
/// dense, no padding).
pub fn score_mask(
    pattern: &AttentionPattern,
    key_padding_mask: Option<Tensor<2, Bool>>,
    [b, h, n_q, n_k]: [usize; 4],
    offset: usize,
    device: &Device,
) -> Option<Tensor<4, Bool>> {
    let dense = !pattern.causal && pattern.window.is_none();
    let structural = (!dense).then(|| {
        pattern
            .mask(n_q, n_k, offset, device)
            .reshape([1, 1, n_q, n_k])
            .expand([b, h, n_q, n_k])
    });
    let padding = key_padding_mask.map(|m| {
        assert_eq!(
            m.dims(),
            [b, n_k],
            "key_padding_mask must be [B, n_k] over every key (cached ones included)"
        );
        crate::mask::key_mask_4d(m, h, n_q)
    });
    match (structural, padding) {
        (Some(s), Some(p)) => Some(s.bool_or(p)),
        (s, p) => s.or(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causal_window_and_global_tokens_allow_the_documented_keys() {
        let causal = AttentionPattern::causal();
        assert!(causal.allows(3, 3) && causal.allows(3, 0) && !causal.allows(3, 4));
        let local = AttentionPattern::local(2, 0);
        // Query 5 sees keys 4 and 5 only.
        let seen: Vec<usize> = (0..8).filter(|&j| local.allows(5, j)).collect();
        assert_eq!(seen, vec![4, 5]);
        let global = AttentionPattern::local(2, 1);
        let seen: Vec<usize> = (0..8).filter(|&j| global.allows(5, j)).collect();
        assert_eq!(seen, vec![0, 4, 5]);
        // The global token itself stays causal.
        assert!(global.allows(0, 0) && !global.allows(0, 1));
        let bidirectional = AttentionPattern {
            causal: false,
            window: Some(2),
            global_tokens: 1,
        };
        let seen: Vec<usize> = (0..8).filter(|&j| bidirectional.allows(0, j)).collect();
        assert_eq!(seen, (0..8).collect::<Vec<_>>());
        let seen: Vec<usize> = (0..8).filter(|&j| bidirectional.allows(4, j)).collect();
        assert_eq!(seen, vec![0, 3, 4, 5]);
    }

    #[test]
    fn offset_shifts_the_queries() {
        let causal = AttentionPattern::causal();
        // Query at absolute position 2 over keys 0..4.
        assert_eq!(causal.mask_values(1, 4, 2), vec![false, false, false, true]);
        assert!(AttentionPattern::local(0, 0).validate().is_err());
    }
}
