//! AlphaFold global attention (Jumper et al. 2021, Nature 596:583, Supplementary
//! Algorithm 19 `MSAColumnGlobalAttention`, lines 2-8; reference: deepmind/alphafold
//! `alphafold/model/modules.py` `GlobalAttention`, OpenFold `msa.py`).
//!
//! Every column (batch entry) attends with **one** query, the masked mean of its rows,
//! split into `H` heads, against a single key/value head shared by all query heads, so
//! the cost is linear in the number of rows: this is what lets AlphaFold attend over
//! thousands of extra MSA sequences.

use burn::module::Param;
use burn::nn::Initializer;
use burn::prelude::*;
use burn::tensor::FloatDType;
use burn::tensor::activation::sigmoid;

use crate::softmax::softmax_last;

/// Scale of the additive mask bias `MASK_BIAS * (mask - 1)` (AlphaFold: `1e9`).
///
/// Unlike `-inf`, it keeps a fully masked column finite: its logits are all equal,
/// so its softmax is uniform.
pub const MASK_BIAS: f64 = 1e9;

/// Added to the mask count of the masked-mean query (AlphaFold `utils.mask_mean`: `1e-10`).
pub const MASK_MEAN_EPS: f64 = 1e-10;

/// Configuration of [`GlobalAttention`] (AlphaFold `GlobalAttention` with `num_head`,
/// `key_dim = value_dim = num_heads * c`, `gating`, `zero_init`).
#[derive(Config, Debug)]
pub struct GlobalAttentionConfig {
    /// Channels of the input rows, `c_in` (`c_m` in the MSA stack).
    pub c_in: usize,
    /// Number of query heads H.
    pub num_heads: usize,
    /// Channels per head `c`, shared by queries, the single key head and the value head.
    pub c: usize,
    /// Output channels `c_out` (AlphaFold: `c_in`).
    pub c_out: usize,
    /// Sigmoid gating of the output per row and channel (Alg. 19 line 7).
    #[config(default = true)]
    pub gating: bool,
    /// AlphaFold's `zero_init`: output projection zero, gating weights zero and gating
    /// bias one, so a freshly built block outputs `output_b = 0`. With `false` the output
    /// projection is Glorot-uniform.
    #[config(default = true)]
    pub zero_init: bool,
}

/// Global attention over the rows of each column (Algorithm 19 lines 2-8).
///
/// Parameters keep AlphaFold's shapes and names, so a haiku checkpoint maps one to one:
///
/// ```text
/// q_avg = sum_k mask_k m_k / (sum_k mask_k + 1e-10)          [B, c_in]
/// q     = q_avg . query_w * c^-1/2                           [B, H, c]
/// k, v  = m . key_w, m . value_w                             [B, K, c]  (one head)
/// a     = softmax_k(q . k + 1e9 (mask - 1))                  [B, H, K]  (in f32)
/// o     = a . v                                              [B, H, c]
/// g     = sigmoid(m . gating_w + gating_b)                   [B, K, H, c]
/// out   = (g * o) . output_w + output_b                      [B, K, c_out]
/// ```
///
/// Without gating `o . output_w + output_b` is one vector per column, broadcast over its
/// rows (AlphaFold returns it with a length-1 row axis and lets the residual add
/// broadcast).
#[derive(Module, Debug)]
pub struct GlobalAttention {
    /// `query_w`: `[c_in, H, c]`.
    pub query_w: Param<Tensor<3>>,
    /// `key_w`: `[c_in, c]`, no bias.
    pub key_w: Param<Tensor<2>>,
    /// `value_w`: `[c_in, c]`, no bias.
    pub value_w: Param<Tensor<2>>,
    /// `gating_w`: `[c_in, H, c]` (gating only).
    pub gating_w: Option<Param<Tensor<3>>>,
    /// `gating_b`: `[H, c]` (gating only).
    pub gating_b: Option<Param<Tensor<2>>>,
    /// `output_w`: `[H, c, c_out]`.
    pub output_w: Param<Tensor<3>>,
    /// `output_b`: `[c_out]`.
    pub output_b: Param<Tensor<1>>,
}

/// AlphaFold's Glorot-uniform for a weight of `shape` (haiku `VarianceScaling(1.0,
/// "fan_avg", "uniform")`, whose fans treat leading axes as a receptive field:
/// `fan_in = shape[-2] * rf`, `fan_out = shape[-1] * rf`, `rf = prod(shape[..-2])`).
fn glorot_uniform(shape: &[usize]) -> Initializer {
    let (fan_in, fan_out) = match shape {
        [n] => (*n, *n),
        _ => {
            let rf: usize = shape[..shape.len() - 2].iter().product();
            (shape[shape.len() - 2] * rf, shape[shape.len() - 1] * rf)
        }
    };
    let limit = (3.0 / ((fan_in + fan_out) as f64 / 2.0)).sqrt();
    Initializer::Uniform {
        min: -limit,
        max: limit,
    }
}

impl GlobalAttentionConfig {
    /// Builds the module on `device` with AlphaFold's initialisation: Glorot-uniform
    /// query/key/value, and the zero/one gating and output init of
    /// [`GlobalAttentionConfig::zero_init`].
    pub fn init(&self, device: &Device) -> GlobalAttention {
        let (c_in, h, c, c_out) = (self.c_in, self.num_heads, self.c, self.c_out);
        let output_init = if self.zero_init {
            Initializer::Zeros
        } else {
            glorot_uniform(&[h, c, c_out])
        };
        GlobalAttention {
            query_w: glorot_uniform(&[c_in, h, c]).init([c_in, h, c], device),
            key_w: glorot_uniform(&[c_in, c]).init([c_in, c], device),
            value_w: glorot_uniform(&[c_in, c]).init([c_in, c], device),
            gating_w: self
                .gating
                .then(|| Initializer::Zeros.init([c_in, h, c], device)),
            gating_b: self.gating.then(|| Initializer::Ones.init([h, c], device)),
            output_w: output_init.init([h, c, c_out], device),
            output_b: Initializer::Zeros.init([c_out], device),
        }
    }
}

impl GlobalAttention {
    /// Number of query heads H.
    pub fn num_heads(&self) -> usize {
        self.query_w.dims()[1]
    }

    /// Channels per head `c`.
    pub fn head_dim(&self) -> usize {
        self.query_w.dims()[2]
    }

    /// Attends over the rows of each of the `B` columns.
    ///
    /// - `q_data`: `[B, K, c_in]`, rows averaged into the query and gated.
    /// - `m_data`: `[B, K, c_in]`, rows giving keys and values (the same tensor in
    ///   AlphaFold's MSA column global attention).
    /// - `key_padding_mask`: `[B, K]`, `true` = the row is padding (AlphaFold mask 0).
    ///
    /// Returns `[B, K, c_out]` in the dtype of `m_data`. Mixed precision as AlphaFold's
    /// bf16 mode: parameters are cast to the input's float dtype (bf16/f16 inputs run
    /// the projections in that dtype) while the softmax is computed in f32. A fully
    /// masked column gives finite values (a zero query, uniform weights) and finite
    /// gradients.
    pub fn forward(
        &self,
        q_data: Tensor<3>,
        m_data: Tensor<3>,
        key_padding_mask: Tensor<2, Bool>,
    ) -> Tensor<3> {
        let [b, k, c_in] = m_data.dims();
        let [_, h, c] = self.query_w.dims();
        let c_out = self.output_b.dims()[0];
        let dtype = m_data.dtype();
        let float_dtype = FloatDType::from(dtype);

        // mask: 1 = present, as AlphaFold's float masks.
        let present = key_padding_mask.bool_not().float().cast(float_dtype); // [B, K]
        let present_rows = present.clone().reshape([b, k, 1]);
        let q_avg = (q_data.clone() * present_rows.clone()).sum_dim(1)
            / present_rows.sum_dim(1).add_scalar(MASK_MEAN_EPS); // [B, 1, c_in]
        let query_w = self.query_w.val().cast(float_dtype).reshape([c_in, h * c]);
        let q = crate::matmul(q_avg.reshape([b, c_in]), query_w)
            .mul_scalar((c as f64).powf(-0.5))
            .reshape([b, h, c]);

        let rows = m_data.reshape([b * k, c_in]);
        let keys =
            crate::matmul(rows.clone(), self.key_w.val().cast(float_dtype)).reshape([b, k, c]);
        let values = crate::matmul(rows, self.value_w.val().cast(float_dtype)).reshape([b, k, c]);

        let bias = present
            .sub_scalar(1.0)
            .mul_scalar(MASK_BIAS)
            .reshape([b, 1, k]);
        let logits = crate::matmul(q, keys.swap_dims(1, 2)) + bias; // [B, H, K]
        let weights = softmax_last(logits.cast(FloatDType::F32)).cast(float_dtype);
        let attended = crate::matmul(weights, values).reshape([b, 1, h * c]); // [B, 1, H*c]

        let output_w = self
            .output_w
            .val()
            .cast(float_dtype)
            .reshape([h * c, c_out]);
        let output_b = self.output_b.val().cast(float_dtype).reshape([1, c_out]);
        match (&self.gating_w, &self.gating_b) {
            (Some(gating_w), Some(gating_b)) => {
                let gate = sigmoid(
                    crate::matmul(
                        q_data.reshape([b * k, c_in]),
                        gating_w.val().cast(float_dtype).reshape([c_in, h * c]),
                    ) + gating_b.val().cast(float_dtype).reshape([1, h * c]),
                )
                .reshape([b, k, h * c]);
                crate::matmul((gate * attended).reshape([b * k, h * c]), output_w)
                    .add(output_b)
                    .reshape([b, k, c_out])
            }
            _ => crate::matmul(attended.reshape([b, h * c]), output_w)
                .add(output_b)
                .reshape([b, 1, c_out])
                .expand([b, k, c_out]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Algorithm 19 lines 2-8 in f64 loops, for one column.
    #[allow(clippy::too_many_arguments)]
    fn naive_column(
        rows: &[Vec<f64>],
        present: &[bool],
        query_w: &[f64],
        key_w: &[f64],
        value_w: &[f64],
        gating: Option<(&[f64], &[f64])>,
        output_w: &[f64],
        output_b: &[f64],
        (h, c): (usize, usize),
    ) -> Vec<Vec<f64>> {
        let c_in = rows[0].len();
        let c_out = output_b.len();
        let count: f64 = present.iter().map(|&p| p as u8 as f64).sum();
        let q_avg: Vec<f64> = (0..c_in)
            .map(|a| {
                rows.iter()
                    .zip(present)
                    .map(|(r, &p)| if p { r[a] } else { 0.0 })
                    .sum::<f64>()
                    / (count + MASK_MEAN_EPS)
            })
            .collect();
        let proj = |x: &[f64], w: &[f64], cols: usize, j: usize| -> f64 {
            (0..x.len()).map(|a| x[a] * w[a * cols + j]).sum()
        };
        let keys: Vec<Vec<f64>> = rows
            .iter()
            .map(|r| (0..c).map(|j| proj(r, key_w, c, j)).collect())
            .collect();
        let values: Vec<Vec<f64>> = rows
            .iter()
            .map(|r| (0..c).map(|j| proj(r, value_w, c, j)).collect())
            .collect();
        let mut attended = vec![0.0; h * c];
        for head in 0..h {
            let q: Vec<f64> = (0..c)
                .map(|j| proj(&q_avg, query_w, h * c, head * c + j) / (c as f64).sqrt())
                .collect();
            let logits: Vec<f64> = keys
                .iter()
                .zip(present)
                .map(|(kr, &p)| {
                    let dot: f64 = q.iter().zip(kr).map(|(a, b)| a * b).sum();
                    // f32 rounding of `dot - 1e9` drops `dot`, as in the f32 module.
                    if p { dot } else { -MASK_BIAS }
                })
                .collect();
            let max = logits.iter().cloned().fold(f64::MIN, f64::max);
            let exps: Vec<f64> = logits.iter().map(|l| (l - max).exp()).collect();
            let total: f64 = exps.iter().sum();
            for j in 0..c {
                attended[head * c + j] = exps
                    .iter()
                    .zip(&values)
                    .map(|(e, v)| e / total * v[j])
                    .sum();
            }
        }
        rows.iter()
            .map(|r| {
                let gated: Vec<f64> = match gating {
                    Some((gw, gb)) => (0..h * c)
                        .map(|i| attended[i] / (1.0 + (-(proj(r, gw, h * c, i) + gb[i])).exp()))
                        .collect(),
                    None => attended.clone(),
                };
                (0..c_out)
                    .map(|o| proj(&gated, output_w, c_out, o) + output_b[o])
                    .collect()
            })
            .collect()
    }

    fn values(t: &Tensor<3>) -> Vec<f64> {
        t.clone()
            .try_into_vec_as::<f32>()
            .unwrap()
            .iter()
            .map(|&v| v as f64)
            .collect()
    }

    fn param_values<const D: usize>(p: &Param<Tensor<D>>) -> Vec<f64> {
        p.val()
            .try_into_vec_as::<f32>()
            .unwrap()
            .iter()
            .map(|&v| v as f64)
            .collect()
    }

    /// Masks: none, ragged, a single present row, a fully masked column; gating on/off.
    #[test]
    fn matches_algorithm_19_in_f64_for_every_mask_kind() {
        let dev = Device::flex();
        dev.seed(3);
        let (b, k, c_in, h, c) = (4, 5, 6, 2, 3);
        let masks = [
            [false; 5],                        // none
            [false, false, false, true, true], // ragged
            [true, false, true, true, true],   // a single present row
            [true; 5],                         // fully masked column
        ];
        for gating in [true, false] {
            let att = GlobalAttentionConfig::new(c_in, h, c, c_in)
                .with_gating(gating)
                .with_zero_init(false)
                .init(&dev);
            // Non-trivial gating parameters.
            let att = GlobalAttention {
                gating_w: att
                    .gating_w
                    .map(|_| glorot_uniform(&[c_in, h, c]).init([c_in, h, c], &dev)),
                gating_b: att.gating_b.map(|_| {
                    Initializer::Uniform {
                        min: -1.0,
                        max: 1.0,
                    }
                    .init([h, c], &dev)
                }),
                output_b: Initializer::Uniform {
                    min: -0.5,
                    max: 0.5,
                }
                .init([c_in], &dev),
                ..att
            };
            let x = Tensor::<3>::random([b, k, c_in], burn::tensor::Distribution::Default, &dev);
            let mask = Tensor::<2, Bool>::from_data(TensorData::new(masks.concat(), [b, k]), &dev);
            let got = values(&att.forward(x.clone(), x.clone(), mask));
            let xs = values(&x);
            let gating_w = att.gating_w.as_ref().map(param_values);
            let gating_b = att.gating_b.as_ref().map(param_values);
            for (col, mask) in masks.iter().enumerate() {
                let rows: Vec<Vec<f64>> = (0..k)
                    .map(|r| xs[(col * k + r) * c_in..(col * k + r + 1) * c_in].to_vec())
                    .collect();
                let present: Vec<bool> = mask.iter().map(|m| !m).collect();
                let want = naive_column(
                    &rows,
                    &present,
                    &param_values(&att.query_w),
                    &param_values(&att.key_w),
                    &param_values(&att.value_w),
                    gating_w.as_deref().zip(gating_b.as_deref()),
                    &param_values(&att.output_w),
                    &param_values(&att.output_b),
                    (h, c),
                );
                for (r, row) in want.iter().enumerate() {
                    for (o, w) in row.iter().enumerate() {
                        let g = got[(col * k + r) * c_in + o];
                        assert!(
                            (g - w).abs() < 1e-5,
                            "gating {gating}, column {col} ({mask:?}), row {r}, channel {o}: {g} vs {w}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn zero_init_outputs_the_bias_and_fully_masked_gradients_are_finite() {
        let dev = Device::flex().autodiff();
        let att = GlobalAttentionConfig::new(8, 4, 2, 8).init(&dev);
        let x = Tensor::<3>::random([2, 3, 8], burn::tensor::Distribution::Default, &dev)
            .require_grad();
        let mask = Tensor::<2, Bool>::from_data(
            TensorData::new(vec![false, true, false, true, true, true], [2, 3]),
            &dev,
        );
        let y = att.forward(x.clone(), x.clone(), mask);
        assert!(values(&y).iter().all(|v| *v == 0.0));
        // Gradients flow through the (zero) output projection to its weights and stay
        // finite for the fully masked column.
        let grads = (y * 2.0).sum().backward();
        let g = att
            .output_w
            .grad(&grads)
            .unwrap()
            .try_into_vec_as::<f32>()
            .unwrap();
        assert!(g.iter().all(|v| v.is_finite()) && g.iter().any(|v| *v != 0.0));
        let gx = x.grad(&grads).unwrap().try_into_vec_as::<f32>().unwrap();
        assert!(gx.iter().all(|v| v.is_finite()));
    }

    /// bf16 activations: the softmax runs in f32 and the result is bf16, close to f32.
    #[test]
    fn bf16_inputs_give_bf16_output_close_to_f32() {
        let dev = Device::flex();
        dev.seed(5);
        let att = GlobalAttentionConfig::new(16, 4, 4, 16)
            .with_zero_init(false)
            .init(&dev);
        let x = Tensor::<3>::random([3, 7, 16], burn::tensor::Distribution::Default, &dev);
        let mask = Tensor::<2, Bool>::from_data(
            TensorData::new(
                (0..21).map(|i| i % 7 >= 5 || i >= 14).collect::<Vec<_>>(),
                [3, 7],
            ),
            &dev,
        );
        let full = values(&att.forward(x.clone(), x.clone(), mask.clone()));
        let x16 = x.cast(FloatDType::BF16);
        let half = att.forward(x16.clone(), x16, mask);
        assert_eq!(half.dtype(), burn::tensor::DType::BF16);
        let half = values(&half.cast(FloatDType::F32));
        let worst = full
            .iter()
            .zip(&half)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(half.iter().all(|v| v.is_finite()));
        assert!(worst < 5e-2, "bf16 vs f32 max abs {worst}");
    }
}
