//! Biased multi-head self-attention of Graphormer and Transformer-M, with DGL's
//! `BiasedMHA` semantics (docs/SPEC.md 2.1; Ying et al. 2021, arXiv 2106.05234, Eq. 6-7;
//! reference: DGL 2.1 `python/dgl/nn/pytorch/gt/biased_mha.py`).

use burn::module::Param;
use burn::nn::{Dropout, DropoutConfig, Initializer, Linear, LinearConfig};
use burn::prelude::*;

use crate::mask::MASKED_LOGIT;

/// How `attn_bias` enters the attention scores.
#[derive(Config, Debug, Copy, PartialEq, Eq)]
pub enum AttnBiasType {
    /// `scores + attn_bias` (Graphormer; DGL `attn_bias_type="add"`).
    Add,
    /// `scores * attn_bias` (DGL `attn_bias_type="mul"`).
    Mul,
}

/// Configuration of [`BiasedMultiHeadAttention`] (DGL `BiasedMHA(feat_size, num_heads,
/// bias, attn_bias_type, attn_drop)`).
#[derive(Config, Debug)]
pub struct BiasedMultiHeadAttentionConfig {
    /// d_model (DGL `feat_size`).
    pub d_model: usize,
    /// Number of heads H; `d_k = d_model / H`.
    pub num_heads: usize,
    /// Bias terms on the four projections.
    #[config(default = true)]
    pub bias: bool,
    /// Additive or multiplicative bias.
    #[config(default = "AttnBiasType::Add")]
    pub attn_bias_type: AttnBiasType,
    /// Dropout on the attention weights (DGL `attn_drop`).
    #[config(default = 0.1)]
    pub dropout: f64,
}

/// Multi-head self-attention with a per-head pair bias:
///
/// ```text
/// scores[b,h,i,j] = (x W_q + b_q)_i . (x W_k + b_k)_j * d_k^-1/2
/// scores          = scores + attn_bias[b,i,j,h]      (or * attn_bias, Mul)
/// scores[attn_mask[b,i,j]] = masked
/// out = concat_h(softmax_j(scores) (x W_v + b_v)) W_o + b_o
/// ```
///
/// A query row whose keys are all masked (a padded atom) gives output 0 and passes
/// gradient 0, where DGL and PyTorch produce NaN (DGL #5476, PyTorch #41508): masked
/// scores use the finite [`MASKED_LOGIT`] and such rows are zeroed after the output
/// projection.
#[derive(Module, Debug)]
pub struct BiasedMultiHeadAttention {
    /// W_q, `[d_model, d_model]` (Burn layout: input first).
    pub q_proj: Linear,
    /// W_k.
    pub k_proj: Linear,
    /// W_v.
    pub v_proj: Linear,
    /// W_o.
    pub out_proj: Linear,
    /// Dropout on the attention weights.
    pub dropout: Dropout,
    /// H.
    pub num_heads: usize,
    /// d_k.
    pub d_k: usize,
    /// `true` for [`AttnBiasType::Mul`].
    pub multiplicative: bool,
}

impl BiasedMultiHeadAttentionConfig {
    /// Builds the module with DGL's initialisation: Xavier uniform with gain `2^-1/2`
    /// for W_q, W_k, W_v, gain 1 for W_o, output bias 0 (the q/k/v biases keep
    /// `nn.Linear`'s default, as DGL leaves them).
    ///
    /// # Panics
    /// If `d_model` is not divisible by `num_heads` (a configuration error).
    pub fn init(&self, device: &Device) -> BiasedMultiHeadAttention {
        assert_eq!(
            self.d_model % self.num_heads,
            0,
            "d_model must be divisible by num_heads"
        );
        let linear = |gain: f64| {
            LinearConfig::new(self.d_model, self.d_model)
                .with_bias(self.bias)
                .with_initializer(Initializer::XavierUniform { gain })
                .init(device)
        };
        let mut out_proj = linear(1.0);
        // A fresh trainable zero bias (`Param::map` onto a new tensor would freeze it).
        if self.bias {
            out_proj.bias = Some(Param::from_tensor(Tensor::zeros([self.d_model], device)));
        }
        BiasedMultiHeadAttention {
            q_proj: linear(std::f64::consts::FRAC_1_SQRT_2),
            k_proj: linear(std::f64::consts::FRAC_1_SQRT_2),
            v_proj: linear(std::f64::consts::FRAC_1_SQRT_2),
            out_proj,
            dropout: DropoutConfig::new(self.dropout).init(),
            num_heads: self.num_heads,
            d_k: self.d_model / self.num_heads,
            multiplicative: self.attn_bias_type == AttnBiasType::Mul,
        }
    }
}

/// The ways [`BiasedMultiHeadAttention::forward_heads_first`] computes the op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// Our fused kernel (flex, f32, additive bias).
    Fused,
    /// Burn's `attention` module op (inference, additive bias, a mask).
    BurnAttention,
    /// The explicit ops of the formula.
    Explicit,
}

impl BiasedMultiHeadAttention {
    /// Applies biased self-attention.
    ///
    /// - `x`: `[B, N, d_model]` node states (DGL `ndata`).
    /// - `attn_bias`: `[B, N, N, H]`, indexed `[batch, query, key, head]`, or `None`.
    /// - `attn_mask`: `[B, N, N]`, `true` = the key must not be attended to by that
    ///   query, or `None`.
    ///
    /// Returns `[B, N, d_model]`; fully masked query rows are exactly 0.
    pub fn forward(
        &self,
        x: Tensor<3>,
        attn_bias: Option<Tensor<4>>,
        attn_mask: Option<Tensor<3, Bool>>,
    ) -> Tensor<3> {
        let bias = attn_bias.map(|b| b.permute([0, 3, 1, 2]));
        self.forward_heads_first(x, bias, attn_mask)
    }

    /// [`BiasedMultiHeadAttention::forward`] with the bias already laid out
    /// `[B, H, N, N]` (as Graphormer's encoders build it), saving a permute.
    ///
    /// The one entry of this op: it picks the path by backend, dtype and autodiff, and
    /// every path computes the same function (the formula above; fully masked query rows
    /// exactly 0, with gradient 0):
    /// - f32 on the CPU backend (flex) with an additive bias: ours
    ///   ([`crate::fused_attention()`]: one pass per molecule over
    ///   `softmax(QK^T / sqrt(d_k) + bias)` and `V`, forward and backward, with this
    ///   layer's dropout), for training and inference;
    /// - otherwise, without autodiff, an additive bias and a mask: Burn's
    ///   `burn::tensor::module::attention` (inference: no dropout);
    /// - everything else: the explicit ops (dropout included).
    pub fn forward_heads_first(
        &self,
        x: Tensor<3>,
        attn_bias: Option<Tensor<4>>,
        attn_mask: Option<Tensor<3, Bool>>,
    ) -> Tensor<3> {
        let path = self.path(&x, attn_mask.is_some());
        self.forward_on(path, x, attn_bias, attn_mask)
    }

    /// The path [`BiasedMultiHeadAttention::forward_heads_first`] takes for `x`.
    fn path(&self, x: &Tensor<3>, masked: bool) -> Path {
        if self.multiplicative {
            Path::Explicit
        } else if crate::flex_data::on_flex_f32(x) {
            Path::Fused
        } else if masked && !x.is_autodiff() {
            Path::BurnAttention
        } else {
            Path::Explicit
        }
    }

    /// [`BiasedMultiHeadAttention::forward_heads_first`] on a given path (tests compare
    /// the paths), fully masked query rows zeroed on each.
    fn forward_on(
        &self,
        path: Path,
        x: Tensor<3>,
        attn_bias: Option<Tensor<4>>,
        attn_mask: Option<Tensor<3, Bool>>,
    ) -> Tensor<3> {
        let [b, n, d] = x.dims();
        let row_masked = attn_mask.as_ref().map(|mask| mask.clone().all_dim(2));
        let out = match path {
            Path::Explicit => {
                return self
                    .forward_heads_first_with_weights(x, attn_bias, attn_mask)
                    .0;
            }
            Path::Fused => {
                let q = crate::linear(&self.q_proj, x.clone());
                let k = crate::linear(&self.k_proj, x.clone());
                let v = crate::linear(&self.v_proj, x);
                let cfg = crate::FusedAttention {
                    num_heads: self.num_heads,
                    scale: (self.d_k as f64).powf(-0.5) as f32,
                    softmax_weight: 1.0,
                };
                let inputs = crate::FusedAttentionInputs {
                    attn_bias,
                    attn_mask,
                    p_mix: None,
                    dropout: Some(&self.dropout),
                };
                let out = crate::fused_attention(cfg, q, k, v, inputs)
                    .expect("the fused kernel takes f32 on flex");
                crate::linear(&self.out_proj, out)
            }
            Path::BurnAttention => {
                let h = self.num_heads;
                let heads = |t: Tensor<3>| t.reshape([b, n, h, self.d_k]).swap_dims(1, 2);
                let q = heads(crate::linear(&self.q_proj, x.clone()));
                let k = heads(crate::linear(&self.k_proj, x.clone()));
                let v = heads(crate::linear(&self.v_proj, x));
                let mask = attn_mask.map(|m| m.reshape([b, 1, n, n]).expand([b, h, n, n]));
                let out = burn::tensor::module::attention(
                    q,
                    k,
                    v,
                    mask,
                    attn_bias,
                    burn::tensor::ops::AttentionModuleOptions::default(),
                );
                crate::linear(&self.out_proj, out.swap_dims(1, 2).reshape([b, n, d]))
            }
        };
        // A fully masked row: a uniform average on the fused path, NaN in Burn's kernel;
        // 0 here as on the explicit path (the mask_fill also stops its gradient).
        match row_masked {
            Some(rows) => out.mask_fill(rows.expand([b, n, d]), 0.0),
            None => out,
        }
    }

    /// [`BiasedMultiHeadAttention::forward_heads_first`], also returning the attention
    /// weights `softmax(QK^T / sqrt(d_k) + bias)` that multiply the values in this call,
    /// `[B, H, N, N]` (before dropout; masked keys get 0).
    pub fn forward_heads_first_with_weights(
        &self,
        x: Tensor<3>,
        attn_bias: Option<Tensor<4>>,
        attn_mask: Option<Tensor<3, Bool>>,
    ) -> (Tensor<3>, Tensor<4>) {
        let [b, n, d] = x.dims();
        let h = self.num_heads;
        let heads = |t: Tensor<3>| t.reshape([b, n, h, self.d_k]).swap_dims(1, 2);
        let q =
            heads(crate::linear(&self.q_proj, x.clone())).mul_scalar((self.d_k as f64).powf(-0.5));
        let k = heads(crate::linear(&self.k_proj, x.clone()));
        let v = heads(crate::linear(&self.v_proj, x));
        let mut scores = crate::matmul(q, k.swap_dims(2, 3));
        if let Some(bias) = attn_bias {
            scores = if self.multiplicative {
                scores * bias
            } else {
                scores + bias
            };
        }
        let row_masked = attn_mask.map(|mask| {
            let full = mask.clone().reshape([b, 1, n, n]).expand([b, h, n, n]);
            scores = scores.clone().mask_fill(full, MASKED_LOGIT);
            mask.all_dim(2)
        });
        let weights = crate::softmax::softmax_last(scores);
        let probs = crate::dropout(&self.dropout, weights.clone());
        let out = crate::matmul(probs, v).swap_dims(1, 2).reshape([b, n, d]);
        let out = crate::linear(&self.out_proj, out);
        let out = match row_masked {
            Some(rows) => out.mask_fill(rows.expand([b, n, d]), 0.0),
            None => out,
        };
        (out, weights)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Distribution, TensorData};

    fn device() -> Device {
        Device::flex()
    }

    /// Reference in f64 loops, straight from the docstring formula.
    fn reference(
        m: &BiasedMultiHeadAttention,
        x: &[f32],
        bias: &[f32],
        mask: &[bool],
        [b, n, d]: [usize; 3],
    ) -> Vec<f64> {
        let h = m.num_heads;
        let dk = m.d_k;
        let w = |l: &Linear| {
            (
                l.weight.val().into_data().try_to_vec::<f32>().unwrap(),
                l.bias
                    .as_ref()
                    .map(|p| p.val().into_data().try_to_vec::<f32>().unwrap())
                    .unwrap_or(vec![0.0; d]),
            )
        };
        let proj = |(wt, bs): &(Vec<f32>, Vec<f32>), rows: &[f64]| -> Vec<f64> {
            let k = rows.len() / d;
            let mut out = vec![0.0; k * d];
            for r in 0..k {
                for o in 0..d {
                    out[r * d + o] = bs[o] as f64
                        + (0..d)
                            .map(|i| rows[r * d + i] * wt[i * d + o] as f64)
                            .sum::<f64>();
                }
            }
            out
        };
        let xs: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let (q, k, v) = (
            proj(&w(&m.q_proj), &xs),
            proj(&w(&m.k_proj), &xs),
            proj(&w(&m.v_proj), &xs),
        );
        let mut attn = vec![0.0; b * n * d];
        let mut dead = vec![false; b * n];
        for g in 0..b {
            for i in 0..n {
                dead[g * n + i] = (0..n).all(|j| mask[(g * n + i) * n + j]);
                for hh in 0..h {
                    let mut s: Vec<f64> = (0..n)
                        .map(|j| {
                            let dot: f64 = (0..dk)
                                .map(|c| {
                                    q[(g * n + i) * d + hh * dk + c]
                                        * k[(g * n + j) * d + hh * dk + c]
                                })
                                .sum();
                            let raw = dot / (dk as f64).sqrt();
                            let bb = bias[((g * n + i) * n + j) * h + hh] as f64;
                            if m.multiplicative { raw * bb } else { raw + bb }
                        })
                        .collect();
                    for j in 0..n {
                        if mask[(g * n + i) * n + j] {
                            s[j] = f64::NEG_INFINITY;
                        }
                    }
                    let mx = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = s.iter().map(|&v| (v - mx).exp()).collect();
                    let z: f64 = e.iter().sum();
                    for c in 0..dk {
                        attn[(g * n + i) * d + hh * dk + c] = (0..n)
                            .map(|j| e[j] / z * v[(g * n + j) * d + hh * dk + c])
                            .sum();
                    }
                }
            }
        }
        let mut out = proj(&w(&m.out_proj), &attn);
        for (r, &is_dead) in dead.iter().enumerate() {
            if is_dead {
                out[r * d..(r + 1) * d].fill(0.0);
            }
        }
        out
    }

    fn case(kind: AttnBiasType) {
        let dev = device();
        dev.seed(7);
        let (b, n, d, h) = (2, 5, 8, 2);
        let mut m = BiasedMultiHeadAttentionConfig::new(d, h)
            .with_attn_bias_type(kind)
            .with_dropout(0.0)
            .init(&dev);
        // Non-zero output bias so that zeroing dead rows is visible.
        m.out_proj.bias = m.out_proj.bias.map(|p| p.map(|t| t.add_scalar(0.3)));
        let x = Tensor::<3>::random([b, n, d], Distribution::Normal(0.0, 1.0), &dev);
        let bias = Tensor::<4>::random([b, n, n, h], Distribution::Normal(1.0, 0.5), &dev);
        // Molecule 1 has 3 atoms: padded keys masked, padded query rows fully masked.
        let lens = [5usize, 3];
        let mask: Vec<bool> = (0..b * n * n)
            .map(|p| {
                let (g, i, j) = (p / (n * n), (p / n) % n, p % n);
                i >= lens[g] || j >= lens[g]
            })
            .collect();
        let out = m.forward(
            x.clone(),
            Some(bias.clone()),
            Some(Tensor::from_data(
                TensorData::new(mask.clone(), [b, n, n]),
                &dev,
            )),
        );
        let got = out.into_data().try_to_vec::<f32>().unwrap();
        let want = reference(
            &m,
            &x.into_data().try_to_vec::<f32>().unwrap(),
            &bias.into_data().try_to_vec::<f32>().unwrap(),
            &mask,
            [b, n, d],
        );
        for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
            assert!((g as f64 - w).abs() < 1e-5, "{kind:?} [{k}]: {g} vs {w}");
        }
        // Padded rows 3, 4 of molecule 1 are exactly zero.
        assert!(got[(n + 3) * d..].iter().all(|&v| v == 0.0));
    }

    /// Under autodiff on flex, the fused path (ours, training included) gives the explicit
    /// path's output and the gradients of x and attn_bias, with a key padding mask that
    /// leaves every row a key (as Transformer-M's graph token does).
    #[test]
    fn fused_path_matches_the_explicit_path_under_autodiff() {
        use burn::tensor::Tolerance;
        let dev = Device::flex().autodiff();
        let m = BiasedMultiHeadAttentionConfig::new(16, 4)
            .with_dropout(0.0)
            .init(&dev);
        let x = Tensor::<3>::random([2, 5, 16], Distribution::Normal(0.0, 1.0), &dev);
        let bias = Tensor::<4>::random([2, 4, 5, 5], Distribution::Normal(0.0, 1.0), &dev);
        let mask = Tensor::<3, Bool>::from_data(
            TensorData::new(
                (0..50).map(|e| e >= 25 && e % 5 >= 3).collect::<Vec<_>>(),
                [2, 5, 5],
            ),
            &dev,
        );
        let run = |fused: bool| {
            let (x, bias) = (
                x.clone().detach().require_grad(),
                bias.clone().detach().require_grad(),
            );
            let path = if fused { Path::Fused } else { Path::Explicit };
            let y = m.forward_on(path, x.clone(), Some(bias.clone()), Some(mask.clone()));
            let grads = (y.clone() * y.clone()).sum().backward();
            [
                y.inner().into_data(),
                x.grad(&grads).unwrap().into_data(),
                bias.grad(&grads).unwrap().into_data(),
            ]
        };
        for (f, e) in run(true).iter().zip(&run(false)) {
            f.assert_approx_eq::<f32>(e, Tolerance::rel_abs(1e-4, 1e-5));
        }
    }

    /// One semantics on every path: with a fully masked query row (molecule 1's atoms 3
    /// and 4 see no key), the fused kernel, Burn's attention op and the explicit ops give
    /// the same output, 0 on that row; under autodiff the fused and explicit paths also
    /// give the same finite gradients, 0 for the masked atoms' features.
    #[test]
    fn every_path_zeroes_a_fully_masked_row() {
        use burn::tensor::Tolerance;
        let dev = Device::flex().autodiff();
        dev.seed(11);
        let (b, n, d) = (2, 5, 16);
        let mut m = BiasedMultiHeadAttentionConfig::new(d, 4)
            .with_dropout(0.0)
            .init(&dev);
        // A non-zero output bias (a fresh leaf): an unzeroed masked row would show it.
        m.out_proj.bias = Some(Param::from_tensor(Tensor::full([d], 0.3, &dev)));
        let x = Tensor::<3>::random([b, n, d], Distribution::Normal(0.0, 1.0), &dev);
        let bias = Tensor::<4>::random([b, 4, n, n], Distribution::Normal(0.0, 1.0), &dev);
        let mask: Vec<bool> = (0..b * n * n)
            .map(|p| {
                let (g, i, j) = (p / (n * n), (p / n) % n, p % n);
                g == 1 && (i >= 3 || j >= 3)
            })
            .collect();
        let mask = Tensor::<3, Bool>::from_data(TensorData::new(mask, [b, n, n]), &dev);
        let run = |path: Path| {
            let (x, bias) = (
                x.clone().detach().require_grad(),
                bias.clone().detach().require_grad(),
            );
            let y = m.forward_on(path, x.clone(), Some(bias.clone()), Some(mask.clone()));
            let grads = (y.clone() * y.clone()).sum().backward();
            [y.inner().into_data(), x.grad(&grads).unwrap().into_data()]
        };
        let [fused, fused_grad] = run(Path::Fused);
        let [explicit, explicit_grad] = run(Path::Explicit);
        let inner = m.valid();
        let burn = inner
            .forward_on(
                Path::BurnAttention,
                x.inner(),
                Some(bias.inner()),
                Some(mask.inner()),
            )
            .into_data();
        let tol = Tolerance::rel_abs(1e-4, 1e-5);
        fused.assert_approx_eq::<f32>(&explicit, tol);
        burn.assert_approx_eq::<f32>(&explicit, tol);
        fused_grad.assert_approx_eq::<f32>(&explicit_grad, tol);
        let masked_rows = (n + 3) * d..;
        for out in [&fused, &explicit, &burn] {
            let v = out.try_to_vec::<f32>().unwrap();
            assert!(v[masked_rows.clone()].iter().all(|&e| e == 0.0), "{v:?}");
            assert!(v[..(n + 3) * d].iter().all(|&e| e != 0.0));
        }
        let g = fused_grad.try_to_vec::<f32>().unwrap();
        assert!(g.iter().all(|e| e.is_finite()));
        assert!(g[masked_rows].iter().all(|&e| e == 0.0), "{g:?}");
    }

    #[test]
    fn additive_bias_matches_the_formula_with_padding() {
        case(AttnBiasType::Add);
    }

    #[test]
    fn multiplicative_bias_matches_the_formula_with_padding() {
        case(AttnBiasType::Mul);
    }

    #[test]
    fn fully_masked_rows_have_zero_finite_gradients() {
        let dev = device().autodiff();
        dev.seed(3);
        let (b, n, d) = (1, 3, 4);
        let m = BiasedMultiHeadAttentionConfig::new(d, 2)
            .with_dropout(0.0)
            .init(&dev);
        let x = Tensor::<3>::random([b, n, d], Distribution::Normal(0.0, 1.0), &dev).require_grad();
        let bias = Tensor::<4>::zeros([b, n, n, 2], &dev).require_grad();
        // Atom 2 is padding.
        let mask: Vec<bool> = (0..n * n).map(|p| p / n == 2 || p % n == 2).collect();
        let out = m.forward(
            x.clone(),
            Some(bias.clone()),
            Some(Tensor::from_data(TensorData::new(mask, [b, n, n]), &dev)),
        );
        let grads = out.sum().backward();
        let gx = x
            .grad(&grads)
            .unwrap()
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        let gb = bias
            .grad(&grads)
            .unwrap()
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        assert!(gx.iter().chain(&gb).all(|v| v.is_finite()));
        // The padded atom's features and every bias entry touching it get no gradient.
        assert!(gx[2 * d..].iter().all(|&v| v == 0.0), "{gx:?}");
        for p in 0..n * n {
            if p / n == 2 || p % n == 2 {
                assert_eq!(gb[p * 2], 0.0);
                assert_eq!(gb[p * 2 + 1], 0.0);
            }
        }
        assert!(gx[..2 * d].iter().any(|&v| v != 0.0));
    }

    #[test]
    fn init_follows_dgl() {
        let dev = device();
        dev.seed(1);
        let d = 64;
        let m = BiasedMultiHeadAttentionConfig::new(d, 8).init(&dev);
        let bound = |gain: f64| gain * (6.0 / (2 * d) as f64).sqrt();
        let max = |l: &Linear| l.weight.val().abs().max().into_scalar::<f32>() as f64;
        let qb = bound(std::f64::consts::FRAC_1_SQRT_2);
        assert!(max(&m.q_proj) <= qb && max(&m.q_proj) > 0.9 * qb);
        assert!(max(&m.out_proj) <= bound(1.0) && max(&m.out_proj) > qb);
        let ob = m.out_proj.bias.as_ref().unwrap().val();
        assert_eq!(ob.abs().sum().into_scalar::<f32>(), 0.0);
    }
}
