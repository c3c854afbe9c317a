//! MAT encoder: pre-norm layers of molecule attention and FFN, then a final norm
//! (reference `Encoder`, `EncoderLayer`, `SublayerConnection`).

use attn_core::{MatNorm, MoleculeAttention, MoleculeAttentionConfig, PackedInputs};
use burn::nn::{Dropout, DropoutConfig};
use burn::prelude::*;

use super::config::MatConfig;
use super::feed_forward::FeedForward;

/// One encoder layer:
/// `x = x + Dropout(MolAttn(Norm(x)))`; `x = x + Dropout(FFN(Norm(x)))`.
#[derive(Module, Debug)]
pub struct EncoderLayer {
    /// Reference `self_attn`.
    pub self_attn: MoleculeAttention,
    /// Reference `feed_forward`.
    pub feed_forward: FeedForward,
    /// Reference `sublayer.0.norm`.
    pub norm_attn: MatNorm,
    /// Reference `sublayer.1.norm`.
    pub norm_ff: MatNorm,
    /// Reference `sublayer.{0,1}.dropout`.
    pub dropout: Dropout,
}

/// The stack of [`EncoderLayer`]s and the final norm (reference `encoder.norm`).
#[derive(Module, Debug)]
pub struct Encoder {
    /// Reference `encoder.layers.{i}`.
    pub layers: Vec<EncoderLayer>,
    /// Reference `encoder.norm`.
    pub norm: MatNorm,
}

impl Encoder {
    /// Builds the encoder of `config`.
    pub fn new(config: &MatConfig, device: &Device) -> Self {
        let attn = MoleculeAttentionConfig::new(config.d_model, config.num_heads)
            .with_dropout(config.dropout)
            .with_lambda_attention(config.lambda_attention)
            .with_lambda_distance(config.lambda_distance)
            .with_distance_kernel(config.distance_kernel)
            .with_trainable_lambda(config.trainable_lambda)
            .with_d_edge(
                config
                    .use_edge_features
                    .then_some(mol_featurize::MAT_D_EDGE),
            )
            .with_integrated_distances(config.integrated_distances);
        let layers = (0..config.num_layers)
            .map(|_| EncoderLayer {
                self_attn: attn.init(device),
                feed_forward: FeedForward::new(
                    config.d_model,
                    config.n_dense,
                    config.dropout,
                    config.leaky_relu_slope,
                    config.dense_output_nonlinearity,
                    device,
                ),
                norm_attn: MatNorm::new(config.norm, config.d_model, device),
                norm_ff: MatNorm::new(config.norm, config.d_model, device),
                dropout: DropoutConfig::new(config.dropout).init(),
            })
            .collect();
        Self {
            layers,
            norm: MatNorm::new(config.norm, config.d_model, device),
        }
    }

    /// `x: [B, N, d_model]`, `adjacency`, `distances: [B, N, N]`,
    /// `key_padding_mask: [B, N]` (`true` = padding), `edges: [B, N, N, d_edge]` (bond
    /// features, read by a model with `use_edge_features` only) -> `[B, N, d_model]`.
    ///
    /// # Panics
    /// A model with `use_edge_features` given no `edges` (the training and prediction
    /// pipelines featurize them whenever the model asks for them).
    ///
    /// On flex (f32, fixed lambdas, no gradient asked for distances or adjacency, a batch
    /// with padding whose distance and adjacency weights from real atoms to padding are 0,
    /// as featurised batches' are) the padding rows are not computed and come out 0
    /// (`run_packed`); elsewhere they hold whatever the layers made of them. Real atoms'
    /// rows are the same either way (without dropout; with it, equal in distribution:
    /// the masks are drawn for the packed rows), and nothing downstream reads the padding
    /// rows (MAT pools real atoms only).
    pub fn forward(
        &self,
        x: Tensor<3>,
        adjacency: Tensor<3>,
        distances: Tensor<3>,
        key_padding_mask: Tensor<2, Bool>,
        edges: Option<Tensor<4>>,
    ) -> Tensor<3> {
        self.run(x, adjacency, distances, key_padding_mask, edges, false)
            .0
    }

    /// [`Encoder::forward`], also returning each layer's attention weights
    /// `[B, H, N, N]` as that layer applied them
    /// ([`MoleculeAttention::forward_prepared_with_weights`]).
    pub fn forward_with_attention(
        &self,
        x: Tensor<3>,
        adjacency: Tensor<3>,
        distances: Tensor<3>,
        key_padding_mask: Tensor<2, Bool>,
        edges: Option<Tensor<4>>,
    ) -> (Tensor<3>, Vec<Tensor<4>>) {
        self.run(x, adjacency, distances, key_padding_mask, edges, true)
    }

    /// The layers, with each layer's attention weights when `with_weights` (else an empty
    /// list, and the fused attention core where the backend has it).
    fn run(
        &self,
        mut x: Tensor<3>,
        adjacency: Tensor<3>,
        distances: Tensor<3>,
        key_padding_mask: Tensor<2, Bool>,
        edges: Option<Tensor<4>>,
        with_weights: bool,
    ) -> (Tensor<3>, Vec<Tensor<4>>) {
        // g(D), the normalised adjacency and the masks are the same in every layer:
        // computed once per batch (every layer shares the configured distance kernel).
        let Some(first) = self.layers.first() else {
            return (self.norm.forward(x), Vec::new());
        };
        let prepared = first
            .self_attn
            .prepare(adjacency, distances, key_padding_mask.clone());
        // With edge features each layer makes its own adjacency term from the bonds.
        let with_edges = first.self_attn.edge_weights.is_some();
        let edges = with_edges
            .then(|| edges.expect("a MAT with use_edge_features needs the batch's edge features"));
        // Every layer's lambdas fixed (prepare_packed checks the first layer's).
        let fixed = self.layers.iter().all(|l| l.self_attn.lambdas.is_none());
        if !with_weights
            && !with_edges
            && fixed
            && let Some(packed) = first
                .self_attn
                .prepare_packed(&x, &prepared, &key_padding_mask)
        {
            return (self.run_packed(x, &packed), Vec::new());
        }
        let mut weights = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            let own;
            let p_adj = edges
                .clone()
                .and_then(|e| layer.self_attn.edge_adjacency(e, &prepared.p_dist));
            let prepared = match p_adj {
                Some(p_adj) => {
                    own = attn_core::PreparedInputs {
                        p_adj,
                        ..prepared.clone()
                    };
                    &own
                }
                None => &prepared,
            };
            let h = layer.norm_attn.forward(x.clone());
            let a = if with_weights {
                let (a, w) = layer.self_attn.forward_prepared_with_weights(h, prepared);
                weights.push(w);
                a
            } else {
                // Without the weights: the fused attention core on the CPU.
                layer.self_attn.forward_prepared(h, prepared)
            };
            x = x + attn_core::dropout(&layer.dropout, a);
            let f = layer.feed_forward.forward(layer.norm_ff.forward(x.clone()));
            x = x + attn_core::dropout(&layer.dropout, f);
        }
        (self.norm.forward(x), weights)
    }

    /// The layers on the real atoms only (`attn_core::packing`): `x: [B, N, d_model]` ->
    /// `[B, N, d_model]` with zeros at padding. Every row-wise layer (norms, projections,
    /// feed-forward, residuals) sees `[1, R, d_model]`; the attention is the packed fused
    /// core. Without dropout, real atoms' rows equal the padded path's (to f32 rounding),
    /// and so do the prediction and every parameter's gradient: padding never reaches a
    /// real atom (its keys are masked and its distance and adjacency weights are 0,
    /// checked by `prepare_packed`) and the generator pools real atoms only. With dropout
    /// the masks are drawn for the packed rows (the same distribution).
    fn run_packed(&self, x: Tensor<3>, packed: &PackedInputs) -> Tensor<3> {
        let mut x = packed.batch.pack(x);
        for layer in &self.layers {
            let h = layer.norm_attn.forward(x.clone());
            let a = layer.self_attn.forward_packed(h, packed);
            x = x + attn_core::dropout(&layer.dropout, a);
            let f = layer.feed_forward.forward(layer.norm_ff.forward(x.clone()));
            x = x + attn_core::dropout(&layer.dropout, f);
        }
        packed.batch.unpack(self.norm.forward(x))
    }
}
