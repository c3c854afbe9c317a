//! The assembled Transformer-M: embeddings and attention bias (original
//! `TransformerMEncoder.forward`), encoder layers, heads.

use attn_core::mask::MASKED_LOGIT;
use burn::nn::{Dropout, LayerNorm, Linear};
use burn::prelude::*;

use super::ATOM_3D_SCALE;
use super::batch::TransformerMBatch;
use super::encoder::EncoderLayer;
use super::encodings::{AtomEncoder, BiasEncoder};
use super::gaussian::{GaussianLayer, PairBias3d, geometry};
use super::heads::{DenoisingHead, RegressionHead};
use super::init::apply_layer_norm;

/// The Transformer-M encoder with a regression head and an optional denoising head.
#[derive(Module, Debug)]
pub struct TransformerM {
    /// Atom features and graph token.
    pub atom_encoder: AtomEncoder,
    /// 2D attention biases.
    pub bias_encoder: BiasEncoder,
    /// Gaussian basis of the 3D channel.
    pub gaussian: GaussianLayer,
    /// 3D pair bias MLP.
    pub pair_bias_3d: PairBias3d,
    /// `Linear(K, d)` of the summed Gaussian features (3D atom feature; original
    /// `edge_proj`).
    pub atom_proj_3d: Linear,
    /// LayerNorm on the embeddings (post-LN only; original `emb_layer_norm`).
    pub emb_layer_norm: Option<LayerNorm>,
    /// Dropout on the input embeddings.
    pub embedding_dropout: Dropout,
    /// Encoder layers.
    pub layers: Vec<EncoderLayer>,
    /// LN after the last layer (pre-LN only).
    pub final_layer_norm: Option<LayerNorm>,
    /// Graph-level head.
    pub head: RegressionHead,
    /// 3D denoising head (pretraining).
    pub denoise_head: Option<DenoisingHead>,
    /// H.
    pub num_heads: usize,
    /// Pairs at least this many bonds apart (and unreachable pairs) are masked.
    pub spatial_pos_max: usize,
    /// [`super::config::TmReadout::code`] of the head's readout (read it with
    /// [`TransformerM::readout`]).
    pub readout: usize,
}

/// The encoder's inputs, from [`TransformerM::embed`].
#[derive(Debug, Clone)]
pub struct Embedded {
    /// `[B, N + 1, d]` token states, graph token first.
    pub states: Tensor<3>,
    /// `[B, H, N + 1, N + 1]` attention bias (masked pairs at [`MASKED_LOGIT`]).
    pub attn_bias: Tensor<4>,
    /// `[B, N + 1, N + 1]` `true` = padded key.
    pub attn_mask: Tensor<3, Bool>,
    /// `[B, H, N, N]` the pair bias between atoms (no graph token), masked pairs and
    /// padded keys at [`MASKED_LOGIT`] (for the denoising head).
    pub pair_bias: Tensor<4>,
    /// `[B, N, N, 3]` unit vectors between atoms, zero where the 3D channel is off.
    pub delta_pos: Tensor<4>,
}

/// What the encoder returns.
#[derive(Debug, Clone)]
pub struct EncoderOutput {
    /// `[B, N + 1, d]` final states (index 0 = graph token).
    pub states: Tensor<3>,
    /// `[B, H, N, N]` see [`Embedded::pair_bias`]; after a packed [`TransformerM::encode`]
    /// rows of padded atoms lack the 3D term (0 there; no real atom reads them).
    pub pair_bias: Tensor<4>,
    /// `[B, N, N, 3]` see [`Embedded::delta_pos`].
    pub delta_pos: Tensor<4>,
    /// `[B, N]`, `true` at padded atom rows (the graph token left out).
    pub atom_padding: Tensor<2, Bool>,
}

impl TransformerM {
    /// Pairwise distances `[B, N, N]` (Angstrom) and unit vectors `[B, N, N, 3]`
    /// ([`geometry`]).
    pub fn geometry(coordinates: Tensor<3>) -> (Tensor<3>, Tensor<4>) {
        geometry(coordinates)
    }

    /// Atom features `[B, N, d]` before the 3D feature and the graph token
    /// ([`AtomEncoder::forward`]).
    pub fn atom_features(&self, batch: &TransformerMBatch) -> Tensor<3> {
        self.atom_encoder.forward(batch)
    }

    /// Graphormer's spatial encoding `[B, H, N, N]` ([`BiasEncoder::spatial`]).
    pub fn spatial_bias(&self, batch: &TransformerMBatch) -> Tensor<4> {
        self.bias_encoder.spatial(batch)
    }

    /// Graphormer's multi-hop edge encoding `[B, H, N, N]` ([`BiasEncoder::edge`]).
    pub fn edge_bias(&self, batch: &TransformerMBatch) -> Tensor<4> {
        self.bias_encoder.edge(batch)
    }

    /// `[B, N, N]` `true` where a pair must not attend: at least `spatial_pos_max`
    /// bonds apart, or in different fragments (original collator: `attn_bias = -inf`
    /// where `spatial_pos >= spatial_pos_max`).
    pub fn far_pairs(&self, batch: &TransformerMBatch) -> Tensor<3, Bool> {
        batch
            .spatial_index
            .clone()
            .greater_elem(self.spatial_pos_max as i64)
    }

    /// The 3D channel: the Gaussian features `[B, N, N, K]` zeroed where `j` is padding
    /// (as the original masks them before summing over `j`), the pair bias
    /// `[B, H, N, N]` (from the unmasked features), and the unit vectors `[B, N, N, 3]`.
    /// Padded query rows keep the original's values (for a loaded checkpoint even
    /// padded positions match it).
    pub fn channel_3d(&self, batch: &TransformerMBatch) -> (Tensor<4>, Tensor<4>, Tensor<4>) {
        let [b, n] = batch.key_padding_mask.dims();
        let (dist, unit) = geometry(batch.coordinates.clone());
        let psi = self.gaussian.forward(dist, batch.atom_type.clone());
        let k = psi.dims()[3];
        let bias = self.pair_bias_3d.forward(psi.clone());
        let padded_key = batch
            .key_padding_mask
            .clone()
            .reshape([b, 1, n, 1])
            .expand([b, n, n, k]);
        (psi.mask_fill(padded_key, 0.0), bias, unit)
    }

    /// [`TransformerM::channel_3d`] on the real pairs of `atoms` (the packing of
    /// `batch.key_padding_mask`): the Gaussian features summed over each atom's real
    /// partners `[B, N, K]`, the pair bias `[B, H, N, N]` and the unit vectors
    /// `[B, N, N, 3]`, equal to the padded channel's at real atoms and real pairs; 0 at
    /// padding. The basis and the bias MLP (a `K x K` layer on every pair, the costliest
    /// step of a small model's forward) run on `sum(n_b^2)` pairs instead of `B N^2`.
    pub fn channel_3d_packed(
        &self,
        batch: &TransformerMBatch,
        atoms: &attn_core::PackedBatch,
    ) -> (Tensor<3>, Tensor<4>, Tensor<4>) {
        let (dist, unit) = geometry(batch.coordinates.clone());
        let psi = self
            .gaussian
            .forward_pairs(dist, batch.atom_type.clone(), atoms);
        let bias = self.pair_bias_3d.forward_rows(psi.clone());
        let psi_sum = atoms.unpack(atoms.sum_pairs_per_row(psi));
        (psi_sum, atoms.unpack_pair_features(bias), unit)
    }

    /// The encoder's inputs: token states `[B, N + 1, d]` (graph token first, after the
    /// embedding LayerNorm when post-LN), the full attention bias `[B, H, N + 1, N + 1]`,
    /// the key padding mask `[B, N + 1, N + 1]`, and the pair bias / unit vectors for
    /// the denoising head.
    ///
    /// Every position, padding included, holds the original's values (the parity rows
    /// compare them). [`TransformerM::encode`] embeds with the 3D channel on the real pairs
    /// only ([`TransformerM::channel_3d_packed`]).
    pub fn embed(&self, batch: &TransformerMBatch) -> Embedded {
        self.embed_on(batch, false)
    }

    /// [`TransformerM::embed`], the 3D channel packed where `pack` and the backend allow
    /// (then positions with a padded atom hold 0 where the original has values no real
    /// token reads).
    fn embed_on(&self, batch: &TransformerMBatch, pack: bool) -> Embedded {
        let [b, n] = batch.key_padding_mask.dims();
        let h = self.num_heads;
        let s2 = batch.use_2d.clone().reshape([b, 1, 1, 1]);
        let s3 = batch.use_3d.clone().reshape([b, 1, 1, 1]);
        let atoms = pack
            .then(|| attn_core::PackedBatch::for_fused(&batch.coordinates, &batch.key_padding_mask))
            .flatten();
        let (psi_sum, bias_3d, unit) = match &atoms {
            Some(atoms) => self.channel_3d_packed(batch, atoms),
            None => {
                let (psi, bias_3d, unit) = self.channel_3d(batch);
                let k = psi.dims()[3];
                (psi.sum_dim(2).reshape([b, n, k]), bias_3d, unit)
            }
        };
        let atom_3d = attn_core::linear(&self.atom_proj_3d, psi_sum).mul_scalar(ATOM_3D_SCALE);
        let atoms = self.atom_features(batch) + atom_3d * s3.clone().reshape([b, 1, 1]);
        let d = atoms.dims()[2];
        let token = self
            .atom_encoder
            .graph_token
            .val()
            .reshape([1, 1, d])
            .expand([b, 1, d]);
        let states = Tensor::cat(vec![token, atoms], 1);
        let states = match &self.emb_layer_norm {
            Some(norm) => apply_layer_norm(norm, states),
            None => states,
        };
        let states = attn_core::dropout(&self.embedding_dropout, states);

        let padded_key = batch
            .key_padding_mask
            .clone()
            .reshape([b, 1, n])
            .expand([b, n, n]);
        let masked = self
            .far_pairs(batch)
            .bool_or(padded_key)
            .reshape([b, 1, n, n])
            .expand([b, h, n, n]);
        let inner = ((self.spatial_bias(batch) + self.edge_bias(batch)) * s2
            + bias_3d * s3.clone())
        .mask_fill(masked, MASKED_LOGIT);
        let t = self
            .bias_encoder
            .virtual_distance
            .val()
            .reshape([1, h, 1, 1]);
        let column = t.clone().expand([b, h, n, 1]);
        let row = t.expand([b, h, 1, n + 1]);
        let attn_bias = Tensor::cat(vec![row, Tensor::cat(vec![column, inner.clone()], 3)], 2);

        let token_padding =
            Tensor::<2, Bool>::from_data(TensorData::new(vec![false; b], [b, 1]), &states.device());
        let key_padding = Tensor::cat(vec![token_padding, batch.key_padding_mask.clone()], 1);
        let attn_mask = key_padding.reshape([b, 1, n + 1]).expand([b, n + 1, n + 1]);
        Embedded {
            states,
            attn_bias,
            attn_mask,
            pair_bias: inner,
            delta_pos: unit * s3,
        }
    }

    /// Runs the encoder: [`TransformerM::embed`], the layers, and the final LayerNorm of
    /// pre-LN models. Output states `[B, N + 1, d]`, graph token first.
    ///
    /// On flex (f32) with padding in the batch the layers run on the real tokens only
    /// ([`attn_core::packing`]: row-wise layers on `[1, R, d]`, the attention on each
    /// molecule's `t_b x t_b` block of the bias), and the padded rows of the output are 0;
    /// elsewhere (and for layers with DropPath while training) they hold whatever the
    /// layers made of them. Real tokens' rows, predictions, the denoising head's real
    /// atoms and every gradient are the same either way (to f32 rounding; with dropout,
    /// equal in distribution): padded keys are masked, so padding never reaches a real
    /// token.
    pub fn encode(&self, batch: &TransformerMBatch) -> EncoderOutput {
        self.encode_on(batch, true)
    }

    /// [`TransformerM::encode`] with every layer on the padded batch (the reference the
    /// packed layers are tested and benchmarked against).
    pub fn encode_padded(&self, batch: &TransformerMBatch) -> EncoderOutput {
        self.encode_on(batch, false)
    }

    /// [`TransformerM::encode`], packed where `pack` and [`TransformerM::packing`] allow.
    fn encode_on(&self, batch: &TransformerMBatch, pack: bool) -> EncoderOutput {
        let e = self.embed_on(batch, pack);
        let x = match pack.then(|| self.packing(&e)).flatten() {
            Some(packed) => {
                let bias = packed.pack_head_pairs(e.attn_bias.clone());
                let mut x = packed.pack(e.states);
                for layer in &self.layers {
                    x = layer.forward_packed(x, bias.clone(), &packed);
                }
                // The final LayerNorm (pre-LN) on the real rows too: padded rows stay 0.
                packed.unpack(self.final_norm(x))
            }
            None => {
                let mut x = e.states;
                for layer in &self.layers {
                    x = layer.forward(x, e.attn_bias.clone(), e.attn_mask.clone());
                }
                self.final_norm(x)
            }
        };
        self.output(x, e.pair_bias, e.delta_pos, &e.attn_mask)
    }

    /// The LayerNorm after the last layer (pre-LN models), else `x`.
    fn final_norm(&self, x: Tensor<3>) -> Tensor<3> {
        match &self.final_layer_norm {
            Some(norm) => apply_layer_norm(norm, x),
            None => x,
        }
    }

    /// The packing of the embedded batch's tokens when [`TransformerM::encode`] runs its
    /// layers packed (see there), else `None`.
    fn packing(&self, e: &Embedded) -> Option<attn_core::PackedBatch> {
        let device = e.states.device();
        if !self.layers.iter().all(|l| l.packs(&device)) {
            return None;
        }
        // Row 0 of the `[B, T, T]` key mask is every token's key padding.
        let [b, t, _] = e.attn_mask.dims();
        let key_padding = e
            .attn_mask
            .clone()
            .slice([0..b, 0..1, 0..t])
            .reshape([b, t]);
        attn_core::PackedBatch::for_fused(&e.states, &key_padding)
    }

    /// The encoder on already embedded inputs ([`TransformerM::embed`]; gradients reach
    /// `embedded.states`), with each layer's attention weights `[B, H, N + 1, N + 1]`
    /// as the layers applied them (index 0 = graph token). The same math as
    /// [`TransformerM::encode`], through the explicit (unfused) attention path.
    pub fn encode_embedded(&self, embedded: Embedded) -> (EncoderOutput, Vec<Tensor<4>>) {
        let e = embedded;
        let mut x = e.states;
        let mut weights = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            let (y, w) = layer.forward_with_weights(x, e.attn_bias.clone(), e.attn_mask.clone());
            x = y;
            weights.push(w);
        }
        (
            self.output(self.final_norm(x), e.pair_bias, e.delta_pos, &e.attn_mask),
            weights,
        )
    }

    /// The encoder's output around its final states `states` (after the final norm).
    fn output(
        &self,
        states: Tensor<3>,
        pair_bias: Tensor<4>,
        delta_pos: Tensor<4>,
        attn_mask: &Tensor<3, Bool>,
    ) -> EncoderOutput {
        // Row 0 of the `[B, N + 1, N + 1]` key mask is the key padding of every token;
        // its columns 1.. are the atoms'.
        let [b, t, _] = attn_mask.dims();
        let atom_padding = attn_mask
            .clone()
            .slice([0..b, 0..1, 1..t])
            .reshape([b, t - 1]);
        EncoderOutput {
            states,
            pair_bias,
            delta_pos,
            atom_padding,
        }
    }

    /// How the regression head reads the encoder.
    pub fn readout(&self) -> super::config::TmReadout {
        super::config::TmReadout::from_code(self.readout)
    }

    /// Graph-level predictions `[B, num_targets]` from an encoder output: the head on
    /// the graph token, or on every atom token pooled as [`TransformerM::readout`] says
    /// (the original's QM9 criterion, `graph_prediction_qm9`: padded atoms' outputs set
    /// to 0, then `sum(dim=1)`, or for `mean` divided by the molecule's own atom count
    /// where the original divides by the batch's padded length).
    pub fn predict(&self, out: &EncoderOutput) -> Tensor<2> {
        use super::config::TmReadout;
        let readout = self.readout();
        if readout == TmReadout::Cls {
            return self.head.forward(Self::graph_token(out));
        }
        let [b, t, d] = out.states.dims();
        let n = t - 1;
        let atoms = out
            .states
            .clone()
            .slice([0..b, 1..t, 0..d])
            .reshape([b * n, d]);
        let per_atom = self.head.forward(atoms);
        let c = per_atom.dims()[1];
        let real = out
            .atom_padding
            .clone()
            .bool_not()
            .float()
            .reshape([b, n, 1]);
        let summed = (per_atom.reshape([b, n, c]) * real.clone())
            .sum_dim(1)
            .reshape([b, c]);
        match readout {
            TmReadout::Sum | TmReadout::Cls => summed,
            TmReadout::Mean => summed / real.sum_dim(1).reshape([b, 1]).clamp_min(1.0),
        }
    }

    /// The graph token's final state `[B, d]` of an encoder output: what the regression
    /// head reads with the `cls` readout (original `TransformerMEncoder` output
    /// `x[:, 0, :]`).
    pub fn graph_token(out: &EncoderOutput) -> Tensor<2> {
        let [b, _, d] = out.states.dims();
        out.states.clone().slice([0..b, 0..1, 0..d]).reshape([b, d])
    }

    /// The molecule embedding `[B, d]`: with the `cls` readout [`TransformerM::encode`]'s
    /// graph token, the input of [`TransformerM::head`]'s forward; with an atom readout
    /// (`mean`, `sum`) the mean of the molecule's real atom states, since the head then
    /// reads atoms and the graph token is not what a prediction comes from (the head of a
    /// pooled embedding is not the pooled head: it is not linear).
    pub fn molecule_embedding(&self, batch: &TransformerMBatch) -> Tensor<2> {
        let out = self.encode(batch);
        if self.readout() == super::config::TmReadout::Cls {
            return Self::graph_token(&out);
        }
        let [b, t, d] = out.states.dims();
        let real = out.atom_padding.bool_not().float().reshape([b, t - 1, 1]);
        let summed = (out.states.slice([0..b, 1..t, 0..d]) * real.clone())
            .sum_dim(1)
            .reshape([b, d]);
        summed / real.sum_dim(1).reshape([b, 1]).clamp_min(1.0)
    }

    /// Per-atom embeddings `[B, N, d]`: the encoder's final atom states without the graph
    /// token (index `i` is heavy atom `i`; rows past a molecule's atoms are padding).
    pub fn atom_embeddings(&self, batch: &TransformerMBatch) -> Tensor<3> {
        let states = self.encode(batch).states;
        let [b, t, d] = states.dims();
        states.slice([0..b, 1.min(t)..t, 0..d])
    }

    /// `encode` then `predict`: `[B, num_targets]`.
    pub fn forward(&self, batch: &TransformerMBatch) -> Tensor<2> {
        self.predict(&self.encode(batch))
    }

    /// [`forward`](Self::forward) with the batch cut into `parts` contiguous groups of
    /// molecules run at once on rayon's threads; `[B, num_targets]` in the batch's order,
    /// each molecule's values those of `forward` (molecules do not interact).
    ///
    /// For CPU inference, as [`crate::MatModel::forward_parallel`]: Burn's flex backend
    /// runs elementwise ops (the Gaussian basis, GELU) on one thread. Not for training
    /// (burn-autodiff serialises concurrent graphs). `parts` is clamped to `1..=B`.
    pub fn forward_parallel(&self, batch: &TransformerMBatch, parts: usize) -> Tensor<2> {
        crate::parallel::forward_in_parts(batch.key_padding_mask.dims()[0], parts, |start, end| {
            self.forward(&batch.molecules(start, end))
        })
    }

    /// Predicted coordinate noise `[B, N, 3]` (rows of padded atoms too: the original's
    /// values after [`TransformerM::encode_padded`], not after a packed
    /// [`TransformerM::encode`]; only real atoms' rows are meaningful), or `None`
    /// without a denoising head. For a molecule whose 3D channel is off the unit
    /// vectors are zero, so its rows are the three projections' biases (the original
    /// returns no output for a batch without coordinates, and zeroes molecules that are
    /// not 3D-only in its training loss).
    pub fn denoise(&self, out: &EncoderOutput) -> Option<Tensor<3>> {
        let head = self.denoise_head.as_ref()?;
        let [b, t, d] = out.states.dims();
        let atoms = out.states.clone().slice([0..b, 1..t, 0..d]);
        Some(head.forward(atoms, out.pair_bias.clone(), out.delta_pos.clone()))
    }
}
