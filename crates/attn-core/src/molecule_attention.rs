//! MAT molecule self-attention (Maziarka et al. 2020, arXiv 2002.08264, Eq. 2;
//! reference: ardigen/MAT `src/transformer.py`, `attention` and `MultiHeadedAttention`).

use burn::module::Param;
use burn::nn::{Dropout, DropoutConfig, Initializer, Linear, LinearConfig};
use burn::prelude::*;

use crate::flex_data::{is_tracked, on_flex_f32};
use crate::fused_attention::{FusedAttention, FusedAttentionInputs, fused_attention};
use crate::mask::{MASKED_DISTANCE, MASKED_LOGIT, key_mask_3d, key_mask_4d};

/// Added to the adjacency row sums before normalising (reference: 1e-6).
pub const ADJACENCY_EPS: f64 = 1e-6;

/// The distance kernel `g(D)` of Eq. 2.
#[derive(Config, Debug, Copy, PartialEq, Eq)]
pub enum DistanceKernel {
    /// `softmax(-D)` over keys (reference default).
    Softmax,
    /// `exp(-D)` elementwise (the pretrained MAT).
    Exp,
}

/// Configuration of [`MoleculeAttention`].
#[derive(Config, Debug)]
pub struct MoleculeAttentionConfig {
    /// d_model.
    pub d_model: usize,
    /// Number of heads H; `d_k = d_model / H`.
    pub num_heads: usize,
    /// Dropout on the mixed attention weights.
    #[config(default = 0.1)]
    pub dropout: f64,
    /// lambda_a, weight of the self-attention term.
    #[config(default = 0.3)]
    pub lambda_attention: f64,
    /// lambda_d, weight of the distance term; lambda_g = 1 - lambda_a - lambda_d.
    #[config(default = 0.3)]
    pub lambda_distance: f64,
    /// The distance kernel g.
    #[config(default = "DistanceKernel::Softmax")]
    pub distance_kernel: DistanceKernel,
    /// Learn the three lambdas (reference `trainable_lambda`): a `[3]` parameter
    /// initialised to `[lambda_a, lambda_d, 1 - lambda_a - lambda_d]` that multiplies the
    /// three terms as it is, neither clipped nor normalised, as the original does
    /// (`attention()` in ardigen/MAT's `src/transformer.py`).
    #[config(default = false)]
    pub trainable_lambda: bool,
    /// Bond features per pair in place of the adjacency (reference `use_edge_features`):
    /// the number of channels `d_edge` of the edge tensor given to
    /// [`MoleculeAttention::edge_adjacency`] (11 in the original), `None` for the
    /// adjacency.
    #[config(default = "None")]
    pub d_edge: Option<usize>,
    /// With `d_edge`: append `g(D)` to the edge features as one more channel (reference
    /// `integrated_distances`; the original's `d_edge` is then 12).
    #[config(default = false)]
    pub integrated_distances: bool,
}

/// Molecule self-attention, per head (Eq. 2 of the MAT paper):
///
/// ```text
/// p_attn = softmax(Q K^T / sqrt(d_k))          keys masked with -1e12
/// p_dist = g(D)                                 padded keys at distance +inf (1e12)
/// p_adj  = A / (rowsum(A) + 1e-6)
/// out    = (lambda_a p_attn + lambda_d p_dist + lambda_g p_adj) V,  heads concatenated, W_o
/// ```
///
/// Q, K, V, O are `Linear(d_model, d_model)` with bias (reference `linears.{0,1,2,3}`).
#[derive(Module, Debug)]
pub struct MoleculeAttention {
    /// W_q.
    pub query: Linear,
    /// W_k.
    pub key: Linear,
    /// W_v.
    pub value: Linear,
    /// W_o.
    pub output: Linear,
    /// Dropout on the mixed probabilities.
    pub dropout: Dropout,
    /// Trainable `[lambda_a, lambda_d, lambda_g]` (only with `trainable_lambda`).
    pub lambdas: Option<Param<Tensor<1>>>,
    /// `w` of `relu(w . e_ij)`, `Linear(d_edge (+1), 1)` without bias (reference
    /// `edges_feature_layer.linear`; only with `d_edge`).
    pub edge_weights: Option<Linear>,
    /// Whether `g(D)` is appended to the edge features (reference
    /// `integrated_distances`).
    pub integrated_distances: bool,
    /// H.
    pub num_heads: usize,
    /// d_k.
    pub d_k: usize,
    /// Fixed lambda_a.
    pub lambda_attention: f64,
    /// Fixed lambda_d.
    pub lambda_distance: f64,
    /// `true` for `exp(-D)`, `false` for `softmax(-D)`.
    pub exp_kernel: bool,
}

impl MoleculeAttentionConfig {
    /// Builds the module with Xavier-uniform weights (reference init: every parameter
    /// with dim > 1) on `device`.
    ///
    /// # Panics
    /// If `d_model` is not divisible by `num_heads` (a configuration error).
    pub fn init(&self, device: &Device) -> MoleculeAttention {
        assert_eq!(
            self.d_model % self.num_heads,
            0,
            "d_model must be divisible by num_heads"
        );
        let linear = || {
            LinearConfig::new(self.d_model, self.d_model)
                .with_initializer(Initializer::XavierUniform { gain: 1.0 })
                .init(device)
        };
        let lambda_adjacency = 1.0 - self.lambda_attention - self.lambda_distance;
        MoleculeAttention {
            query: linear(),
            key: linear(),
            value: linear(),
            output: linear(),
            dropout: DropoutConfig::new(self.dropout).init(),
            lambdas: self.trainable_lambda.then(|| {
                Param::from_tensor(Tensor::from_floats(
                    [
                        self.lambda_attention as f32,
                        self.lambda_distance as f32,
                        lambda_adjacency as f32,
                    ],
                    device,
                ))
            }),
            edge_weights: self.d_edge.map(|d_edge| {
                LinearConfig::new(d_edge + usize::from(self.integrated_distances), 1)
                    .with_bias(false)
                    .with_initializer(Initializer::XavierUniform { gain: 1.0 })
                    .init(device)
            }),
            integrated_distances: self.d_edge.is_some() && self.integrated_distances,
            num_heads: self.num_heads,
            d_k: self.d_model / self.num_heads,
            lambda_attention: self.lambda_attention,
            lambda_distance: self.lambda_distance,
            exp_kernel: self.distance_kernel == DistanceKernel::Exp,
        }
    }
}

/// The layer-invariant terms of Eq. 2 for one batch: they depend only on the inputs, so
/// an encoder computes them once and every layer reuses them
/// ([`MoleculeAttention::prepare`], [`MoleculeAttention::forward_prepared`]).
#[derive(Debug, Clone)]
pub struct PreparedInputs {
    /// `g(D)` with padded keys at distance 1e12: `[B, N, N]`.
    pub p_dist: Tensor<3>,
    /// Row-normalised adjacency `A / (rowsum(A) + 1e-6)`: `[B, N, N]`.
    pub p_adj: Tensor<3>,
    /// Key padding mask broadcast to the scores: `[B, H, N, N]`, `true` = masked.
    pub key_mask: Tensor<4, Bool>,
    /// The same mask for one head: `[B, N, N]` (the fused kernel's input).
    pub key_mask_3d: Tensor<3, Bool>,
}

impl MoleculeAttention {
    /// Applies molecule self-attention.
    ///
    /// - `x`: `[B, N, d_model]` node states.
    /// - `adjacency`: `[B, N, N]`, 1 for bonds and self loops.
    /// - `distances`: `[B, N, N]` in Angstrom.
    /// - `key_padding_mask`: `[B, N]`, `true` = padding (never attended to).
    ///
    /// Returns `[B, N, d_model]`. Padded query rows get finite values (no NaN).
    pub fn forward(
        &self,
        x: Tensor<3>,
        adjacency: Tensor<3>,
        distances: Tensor<3>,
        key_padding_mask: Tensor<2, Bool>,
    ) -> Tensor<3> {
        let prepared = self.prepare(adjacency, distances, key_padding_mask);
        self.forward_prepared(x, &prepared)
    }

    /// The layer-invariant terms of Eq. 2 (shapes as in [`MoleculeAttention::forward`]):
    /// the same for every layer with this module's distance kernel.
    pub fn prepare(
        &self,
        adjacency: Tensor<3>,
        distances: Tensor<3>,
        key_padding_mask: Tensor<2, Bool>,
    ) -> PreparedInputs {
        let n = key_padding_mask.dims()[1];
        let key_mask = key_mask_4d(key_padding_mask.clone(), self.num_heads, n);
        let mask_3d = key_mask_3d(key_padding_mask, n);
        let distances = distances.mask_fill(mask_3d.clone(), MASKED_DISTANCE);
        let p_dist = if self.exp_kernel {
            distances.neg().exp()
        } else {
            crate::softmax::softmax_last(distances.neg())
        };
        let p_adj = adjacency.clone() / adjacency.sum_dim(2).add_scalar(ADJACENCY_EPS);
        PreparedInputs {
            p_dist,
            p_adj,
            key_mask,
            key_mask_3d: mask_3d,
        }
    }

    /// The adjacency term of Eq. 2 made from bond features, as the original's
    /// `use_edge_features` makes it (`EdgeFeaturesLayer` and `attention()` in ardigen/MAT's
    /// `src/transformer.py`): `e = relu(w . edges_ij)` per pair, with `g(D)` appended as
    /// the last channel when `integrated_distances`, then row-normalised as the adjacency
    /// is, `e / (rowsum(e) + 1e-6)`; every head shares it.
    ///
    /// - `edges`: `[B, N, N, d_edge]` (the original's `[B, d_edge, N, N]`, channels last).
    /// - `p_dist`: `g(D)` of [`MoleculeAttention::prepare`], `[B, N, N]`.
    ///
    /// Returns `[B, N, N]`, or `None` for a module without edge features.
    pub fn edge_adjacency(&self, edges: Tensor<4>, p_dist: &Tensor<3>) -> Option<Tensor<3>> {
        let weights = self.edge_weights.as_ref()?;
        let [b, n, _, _] = edges.dims();
        let edges = if self.integrated_distances {
            Tensor::cat(vec![edges, p_dist.clone().unsqueeze_dim::<4>(3)], 3)
        } else {
            edges
        };
        let e = burn::tensor::activation::relu(crate::linear(weights, edges).reshape([b, n, n]));
        Some(e.clone() / e.sum_dim(2).add_scalar(ADJACENCY_EPS))
    }

    /// [`MoleculeAttention::forward`] with the terms of [`MoleculeAttention::prepare`].
    /// On the CPU backend (f32) with fixed lambdas and untracked distances and adjacency
    /// (no gradient asked for them), the attention core is one fused op each way
    /// ([`crate::fused_attention()`]); otherwise the ops of
    /// [`MoleculeAttention::forward_prepared_with_weights`], the same function.
    pub fn forward_prepared(&self, x: Tensor<3>, prepared: &PreparedInputs) -> Tensor<3> {
        let fused = self.lambdas.is_none()
            && on_flex_f32(&x)
            && !is_tracked(&prepared.p_dist)
            && !is_tracked(&prepared.p_adj);
        if !fused {
            return self.forward_prepared_with_weights(x, prepared).0;
        }
        let p_mix = self.fixed_mix(prepared.p_dist.clone(), prepared.p_adj.clone());
        let (cfg, [q, k, v]) = self.fused_projections(x);
        let inputs = FusedAttentionInputs {
            attn_bias: None,
            attn_mask: Some(prepared.key_mask_3d.clone()),
            p_mix: Some(p_mix),
            dropout: Some(&self.dropout),
        };
        let out = fused_attention(cfg, q, k, v, inputs)
            .expect("the fused kernel takes f32 on flex with untracked p_mix");
        crate::linear(&self.output, out)
    }

    /// `lambda_d p_dist + lambda_g p_adj` with the fixed lambdas (any shape): the
    /// distance and adjacency part of Eq. 2, the same for every head.
    pub(crate) fn fixed_mix<const D: usize>(
        &self,
        p_dist: Tensor<D>,
        p_adj: Tensor<D>,
    ) -> Tensor<D> {
        let (la, ld) = (self.lambda_attention, self.lambda_distance);
        p_dist.mul_scalar(ld) + p_adj.mul_scalar(1.0 - la - ld)
    }

    /// Q, K, V of `x` (`[.., d_model]` rows) and the fused core's settings with the fixed
    /// lambda_a: what the padded and the packed fused paths share.
    pub(crate) fn fused_projections(&self, x: Tensor<3>) -> (FusedAttention, [Tensor<3>; 3]) {
        let q = crate::linear(&self.query, x.clone());
        let k = crate::linear(&self.key, x.clone());
        let v = crate::linear(&self.value, x);
        let cfg = FusedAttention {
            num_heads: self.num_heads,
            scale: (1.0 / (self.d_k as f64).sqrt()) as f32,
            softmax_weight: self.lambda_attention as f32,
        };
        (cfg, [q, k, v])
    }

    /// [`MoleculeAttention::forward_prepared`], also returning the attention weights of
    /// Eq. 2 that multiply the values in this call, `[B, H, N, N]`:
    /// `lambda_a softmax(QK^T / sqrt(d_k)) + lambda_d g(D) + lambda_g A_norm` (before
    /// dropout; rows sum to 1 over real keys). Used to draw what the model attends to.
    pub fn forward_prepared_with_weights(
        &self,
        x: Tensor<3>,
        prepared: &PreparedInputs,
    ) -> (Tensor<3>, Tensor<4>) {
        let [b, n, d_model] = x.dims();
        let h = self.num_heads;
        // [B, N, d] -> [B, H, N, d_k]
        let heads = |t: Tensor<3>| t.reshape([b, n, h, self.d_k]).swap_dims(1, 2);
        let q = heads(crate::linear(&self.query, x.clone()));
        let k = heads(crate::linear(&self.key, x.clone()));
        let v = heads(crate::linear(&self.value, x));

        let scores = crate::matmul(q, k.transpose()).div_scalar((self.d_k as f64).sqrt());
        let scores = scores.mask_fill(prepared.key_mask.clone(), MASKED_LOGIT);
        let p_attn = crate::softmax::softmax_last(scores);

        let p = match &self.lambdas {
            // Fixed lambdas: scalar multiplies (in place on the backend).
            None => {
                let p_mix = self.fixed_mix(prepared.p_dist.clone(), prepared.p_adj.clone());
                p_attn.mul_scalar(self.lambda_attention) + p_mix.unsqueeze_dim::<4>(1)
            }
            Some(_) => {
                let (la, ld, lg) = self.lambda_weights(&p_attn.device());
                let p_mix: Tensor<3> = prepared.p_dist.clone() * ld + prepared.p_adj.clone() * lg;
                p_attn * la + p_mix.unsqueeze_dim::<4>(1) // broadcast over heads
            }
        };
        let out = crate::matmul(crate::dropout(&self.dropout, p.clone()), v)
            .swap_dims(1, 2)
            .reshape([b, n, d_model]);
        (crate::linear(&self.output, out), p)
    }

    /// `[lambda_a, lambda_d, lambda_g]` as the forward pass uses them: the fixed
    /// values, or the trainable parameter's raw values (reference `trainable_lambda`:
    /// `softmax_attention * p_attn + ...` multiplies by the parameter itself). The one
    /// place the formula lives (the ONNX lowering reads it).
    ///
    /// # Panics
    /// If the backend cannot read the three values back as f32 (it always can on
    /// Burn's backends).
    pub fn lambda_values(&self, device: &Device) -> [f32; 3] {
        let v: Vec<f32> = self
            .lambda_vector(device)
            .into_data()
            .convert::<f32>()
            .try_to_vec()
            .expect("three f32 lambdas");
        [v[0], v[1], v[2]]
    }

    /// `[lambda_a, lambda_d, lambda_g]` as a `[3]` tensor (see [`Self::lambda_values`]).
    fn lambda_vector(&self, device: &Device) -> Tensor<1> {
        match &self.lambdas {
            Some(p) => p.val(),
            None => Tensor::from_floats(
                [
                    self.lambda_attention as f32,
                    self.lambda_distance as f32,
                    (1.0 - self.lambda_attention - self.lambda_distance) as f32,
                ],
                device,
            ),
        }
    }

    /// `(lambda_a, lambda_d, lambda_g)` as scalar tensors `[1, 1, 1, 1]`-broadcastable.
    fn lambda_weights(&self, device: &Device) -> (Tensor<4>, Tensor<3>, Tensor<3>) {
        let lambdas = self.lambda_vector(device);
        let la = lambdas.clone().slice(0..1).reshape([1, 1, 1, 1]);
        let ld = lambdas.clone().slice(1..2).reshape([1, 1, 1]);
        let lg = lambdas.slice(2..3).reshape([1, 1, 1]);
        (la, ld, lg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With lambda_a = 0 and lambda_d = 0 the output is W_o(mean of bonded V rows):
    /// checked against a hand computation on a 3-node graph.
    #[test]
    fn adjacency_only_mixes_bonded_neighbours() {
        let dev = Device::flex();
        let cfg = MoleculeAttentionConfig::new(2, 1)
            .with_dropout(0.0)
            .with_lambda_attention(0.0)
            .with_lambda_distance(0.0);
        let mut att = cfg.init(&dev);
        let eye = |dev: &Device| Tensor::<2>::from_floats([[1.0, 0.0], [0.0, 1.0]], dev);
        for lin in [
            &mut att.query,
            &mut att.key,
            &mut att.value,
            &mut att.output,
        ] {
            lin.weight = Param::from_tensor(eye(&dev));
            lin.bias = Some(Param::from_tensor(Tensor::zeros([2], &dev)));
        }
        let x = Tensor::<3>::from_floats([[[1.0, 0.0], [0.0, 2.0], [4.0, 4.0]]], &dev);
        let adj =
            Tensor::<3>::from_floats([[[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]], &dev);
        let dist = Tensor::<3>::zeros([1, 3, 3], &dev);
        let mask =
            Tensor::<2, Bool>::from_data(TensorData::new(vec![false, false, true], [1, 3]), &dev);
        let y: Vec<f32> = att
            .forward(x, adj, dist, mask)
            .try_into_vec_as::<f32>()
            .unwrap();
        let s = 1.0 / (2.0 + 1e-6);
        let t = 1.0 / (3.0 + 1e-6);
        let want = [s * 1.0, s * 2.0, t * 5.0, t * 6.0, 0.0, 0.0];
        for (a, w) in y.iter().zip(want) {
            assert!((a - w).abs() < 1e-5, "{y:?} vs {want:?}");
        }
    }

    /// On flex, `forward_prepared` (the fused core) gives the unfused ops' output and
    /// input gradient (`forward_prepared_with_weights`); with the distances tracked it
    /// takes the unfused path, so they get a gradient.
    #[test]
    fn fused_core_agrees_with_the_unfused_ops() {
        use burn::tensor::{Distribution, Tolerance};
        let dev = Device::flex().autodiff();
        let att = MoleculeAttentionConfig::new(16, 4)
            .with_dropout(0.0)
            .init(&dev);
        let x = Tensor::<3>::random([2, 5, 16], Distribution::Normal(0.0, 1.0), &dev);
        let adj = Tensor::<3>::random([2, 5, 5], Distribution::Bernoulli(0.4), &dev);
        let dist = Tensor::<3>::random([2, 5, 5], Distribution::Uniform(0.0, 4.0), &dev);
        let mask = Tensor::<2, Bool>::from_data(
            TensorData::new(
                (0..10).map(|i| i == 9 || i == 8).collect::<Vec<_>>(),
                [2, 5],
            ),
            &dev,
        );
        let run = |fused: bool| {
            let x = x.clone().detach().require_grad();
            let prepared = att.prepare(adj.clone(), dist.clone(), mask.clone());
            let y = if fused {
                att.forward_prepared(x.clone(), &prepared)
            } else {
                att.forward_prepared_with_weights(x.clone(), &prepared).0
            };
            let grads = (y.clone() * y.clone()).sum().backward();
            [y.inner().into_data(), x.grad(&grads).unwrap().into_data()]
        };
        for (f, u) in run(true).iter().zip(&run(false)) {
            f.assert_approx_eq::<f32>(u, Tolerance::rel_abs(1e-4, 1e-5));
        }
        let dist = dist.require_grad();
        let y = att.forward(x, adj, dist.clone(), mask);
        let grads = y.sum().backward();
        assert!(dist.grad(&grads).is_some(), "distances lost their gradient");
    }

    #[test]
    fn padded_rows_and_fully_masked_keys_stay_finite() {
        let dev = Device::flex().autodiff();
        let att = MoleculeAttentionConfig::new(8, 2).init(&dev);
        let x = Tensor::<3>::random([2, 4, 8], burn::tensor::Distribution::Default, &dev)
            .require_grad();
        let adj = Tensor::<3>::zeros([2, 4, 4], &dev);
        let dist = Tensor::<3>::zeros([2, 4, 4], &dev);
        // Second molecule entirely padding: every key masked.
        let mask = Tensor::<2, Bool>::from_data(
            TensorData::new(
                vec![false, false, true, true, true, true, true, true],
                [2, 4],
            ),
            &dev,
        );
        let y = att.forward(x.clone(), adj, dist, mask);
        let v: Vec<f32> = y.clone().try_into_vec_as::<f32>().unwrap();
        assert!(v.iter().all(|a| a.is_finite()));
        let grads = y.sum().backward();
        let g: Vec<f32> = x.grad(&grads).unwrap().try_into_vec_as::<f32>().unwrap();
        assert!(g.iter().all(|a| a.is_finite()));
    }
}
