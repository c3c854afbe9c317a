//! The full MAT model (reference `make_model` -> `GraphTransformer`).

use burn::prelude::*;

use super::batch::MatBatch;
use super::config::MatConfig;
use super::embedding::Embedding;
use super::encoder::Encoder;
use super::generator::Generator;

/// Molecule Attention Transformer: embedding -> encoder -> generator.
///
/// Field names follow the reference module tree (`src_embed`, `encoder`,
/// `generator`) so checkpoints map one to one.
#[derive(Module, Debug)]
pub struct MatModel {
    /// Atom-feature embedding.
    pub src_embed: Embedding,
    /// Encoder stack.
    pub encoder: Encoder,
    /// Pooling and output head.
    pub generator: Generator,
}

impl MatConfig {
    /// Builds a MAT on `device` with Xavier-uniform weight matrices, or Xavier-normal
    /// ones when [`MatConfig::init`] is [`super::config::MatInit::Normal`] (the reference
    /// `make_model`'s `init_type`). Seed the device first (`device.seed(s)`) for a
    /// reproducible initialisation.
    pub fn init(&self, device: &Device) -> MatModel {
        let model = MatModel {
            src_embed: Embedding::new(self.d_atom, self.d_model, self.dropout, device),
            encoder: Encoder::new(self, device),
            generator: Generator::new(self, device),
        };
        match self.init {
            super::config::MatInit::Uniform => model,
            super::config::MatInit::Normal => model.map(&mut XavierNormal),
        }
    }
}

/// Redraws every weight matrix from Xavier normal, as the reference `make_model` does
/// for `init_type='normal'` (`nn.init.xavier_normal_` on each parameter with
/// `dim() > 1`). A Burn Linear weight is `[fan_in, fan_out]`; the std
/// `sqrt(2 / (fan_in + fan_out))` is symmetric in the two.
struct XavierNormal;

impl burn::module::ModuleMapper for XavierNormal {
    fn map_float<const D: usize>(
        &mut self,
        param: burn::module::Param<Tensor<D>>,
    ) -> burn::module::Param<Tensor<D>> {
        if D != 2 {
            return param;
        }
        let (id, tensor, mapper) = param.consume();
        let dims = tensor.dims();
        let std = (2.0 / (dims[0] + dims[1]) as f64).sqrt();
        let drawn = Tensor::<D>::random(
            tensor.shape(),
            burn::tensor::Distribution::Normal(0.0, std),
            &tensor.device(),
        );
        burn::module::Param::from_mapped_value(id, drawn, mapper)
    }
}

impl MatModel {
    /// Predicts `[B, num_targets]` (raw: regression values or classification logits).
    ///
    /// # Panics
    /// A model with `use_edge_features` given a batch without
    /// [`MatBatch::edge_features`] (as every method that runs the encoder).
    pub fn forward(&self, batch: &MatBatch) -> Tensor<2> {
        let h = self.encode(batch);
        self.generator.forward(h, batch.key_padding_mask.clone())
    }

    /// [`forward`](Self::forward) with the batch cut into `parts` contiguous groups of
    /// molecules that run at once on rayon's threads; outputs `[B, num_targets]` in the
    /// batch's order, each molecule's values those of `forward` (molecules do not interact).
    ///
    /// For CPU inference. Burn's flex backend parallelises large GEMMs but runs
    /// elementwise ops (softmax, masks, norms) on one thread, so a small model leaves
    /// cores idle; measured on 2 cores against plain `forward` in the same run
    /// (docs/BENCHMARKS.md): MAT small 1.27-1.3x, the pretrained size 1.0-1.25x (its GEMMs
    /// are already parallel). Not for training: burn-autodiff serialises concurrent
    /// graphs. `parts` is clamped to `1..=B`; 1 is `forward`.
    pub fn forward_parallel(&self, batch: &MatBatch, parts: usize) -> Tensor<2> {
        crate::parallel::forward_in_parts(batch.node_features.dims()[0], parts, |start, end| {
            self.forward(&batch.molecules(start, end))
        })
    }

    /// The prediction from embedded atom states `embedded` (`[B, N, d_model]`, the output
    /// of [`MatModel::src_embed`]) and each layer's attention weights `[B, H, N, N]` as the
    /// forward pass applied them. For attributions: gradients reach `embedded`.
    pub fn forward_embedded(
        &self,
        embedded: Tensor<3>,
        batch: &MatBatch,
    ) -> (Tensor<2>, Vec<Tensor<4>>) {
        let (h, attention) = self.encoder.forward_with_attention(
            embedded,
            batch.adjacency.clone(),
            batch.distances.clone(),
            batch.key_padding_mask.clone(),
            batch.edge_features.clone(),
        );
        (
            self.generator.forward(h, batch.key_padding_mask.clone()),
            attention,
        )
    }

    /// The molecule embedding `[B, d_model]`: the encoder's atom states pooled as the
    /// generator pools them, the input of [`MatModel::head`].
    pub fn molecule_embedding(&self, batch: &MatBatch) -> Tensor<2> {
        self.generator
            .pool(self.encode(batch), batch.key_padding_mask.clone())
    }

    /// Per-atom embeddings `[B, N - 1, d_model]`: the encoder's atom states without the
    /// dummy node (index `i` is heavy atom `i` of the molecule; rows past a molecule's
    /// atoms are padding).
    pub fn atom_embeddings(&self, batch: &MatBatch) -> Tensor<3> {
        let h = self.encode(batch);
        let [b, n, d] = h.dims();
        h.slice([0..b, 1.min(n)..n, 0..d])
    }

    /// The head on molecule embeddings ([`MatModel::molecule_embedding`]):
    /// `[B, d_model]` -> `[B, num_targets]`, raw as [`MatModel::forward`].
    pub fn head(&self, embedding: Tensor<2>) -> Tensor<2> {
        self.generator.head(embedding)
    }

    /// Atom states after the encoder, `[B, N, d_model]` (padding rows 0 on flex, where
    /// they are not computed: [`Encoder::forward`]).
    ///
    /// # Panics
    /// As [`MatModel::forward`].
    pub fn encode(&self, batch: &MatBatch) -> Tensor<3> {
        let x = self.src_embed.forward(batch.node_features.clone());
        self.encoder.forward(
            x,
            batch.adjacency.clone(),
            batch.distances.clone(),
            batch.key_padding_mask.clone(),
            batch.edge_features.clone(),
        )
    }
}
