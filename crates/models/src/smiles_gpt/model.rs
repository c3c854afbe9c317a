//! The SMILES GPT: embeddings, pre-LN blocks, LM head (MolGPT `model.py`: `GPT`, `Block`,
//! `CausalSelfAttention`), with MolGPT's property and scaffold conditioning
//! ([`super::Condition`]).

use attn_core::{KvCache, SequenceAttentionConfig, SequenceSelfAttention};
use burn::module::Param;
use burn::nn::{
    Dropout, DropoutConfig, Embedding, EmbeddingConfig, Initializer, LayerNorm, Linear,
    LinearConfig,
};
use burn::prelude::*;
use burn::tensor::activation::log_softmax;

use super::condition::Condition;
use super::config::SmilesGptConfig;
use crate::transformer_m::init::{apply_layer_norm, layer_norm};

/// One pre-LN block: `x + attn(ln_1(x))`, then `x + mlp(ln_2(x))` (MolGPT `Block`).
#[derive(Module, Debug)]
pub struct Block {
    /// LayerNorm before attention.
    pub ln_1: LayerNorm,
    /// Causal self-attention.
    pub attn: SequenceSelfAttention,
    /// LayerNorm before the feed-forward.
    pub ln_2: LayerNorm,
    /// `[d_model, d_ff]`.
    pub fc: Linear,
    /// `[d_ff, d_model]`.
    pub proj: Linear,
    /// Dropout on both residual branches (MolGPT `resid_pdrop`).
    pub dropout: Dropout,
}

impl Block {
    fn forward(
        &self,
        x: Tensor<3>,
        key_padding_mask: Option<Tensor<2, Bool>>,
        cache: Option<&mut KvCache>,
    ) -> Result<Tensor<3>, String> {
        let a = self.attn.forward(
            apply_layer_norm(&self.ln_1, x.clone()),
            key_padding_mask,
            cache,
        )?;
        let x = x + attn_core::dropout(&self.dropout, a);
        let h = attn_core::gelu(attn_core::linear(
            &self.fc,
            apply_layer_norm(&self.ln_2, x.clone()),
        ));
        let m = attn_core::linear(&self.proj, h);
        Ok(x + attn_core::dropout(&self.dropout, m))
    }
}

/// A decoder over SMILES tokens (see [`SmilesGptConfig`]).
#[derive(Module, Debug)]
pub struct SmilesGpt {
    /// Token embedding `[vocab_size, d_model]`.
    pub tok_emb: Embedding,
    /// Learned position embedding `[max_len, d_model]` (MolGPT: zeros at init).
    pub pos_emb: Param<Tensor<2>>,
    /// Dropout on the embeddings (MolGPT `embd_pdrop`).
    pub drop: Dropout,
    /// Blocks.
    pub blocks: Vec<Block>,
    /// Final LayerNorm.
    pub ln_f: LayerNorm,
    /// LM head `[d_model, vocab_size]`, no bias.
    pub head: Linear,
    /// MolGPT's type embedding `[2, d_model]` (row 0: conditioning, row 1: SMILES
    /// tokens); present in a conditional model only (for an unconditional one MolGPT's
    /// row 1 is a constant the position embedding absorbs).
    pub type_emb: Option<Embedding>,
    /// MolGPT's `prop_nn`: `[num_props, d_model]`, with bias; present with properties.
    pub prop_nn: Option<Linear>,
}

/// The KV caches of every layer of one decoding batch.
#[derive(Debug, Clone)]
pub struct DecoderCache {
    /// One per block.
    pub layers: Vec<KvCache>,
    /// Conditioning positions at the start of the caches (filled by the first
    /// conditioned forward).
    pub prefix: usize,
}

impl DecoderCache {
    /// Positions cached so far, conditioning included.
    pub fn len(&self) -> usize {
        self.layers.first().map_or(0, KvCache::len)
    }

    /// SMILES tokens cached so far (the SMILES position of the next one).
    pub fn tokens(&self) -> usize {
        self.len().saturating_sub(self.prefix)
    }

    /// Nothing cached yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keeps the sequences at `rows` of the batch.
    pub fn select_rows(&mut self, rows: Tensor<1, Int>) {
        for layer in &mut self.layers {
            layer.select_rows(rows.clone());
        }
    }
}

impl SmilesGptConfig {
    /// Builds the model: linear and embedding weights N(0, 0.02), biases 0, LayerNorms
    /// (1, 0), position embedding 0 (MolGPT `_init_weights`).
    ///
    /// # Panics
    /// If `d_model` is not divisible by `num_heads`, or the pattern is invalid
    /// (configuration errors).
    pub fn init(&self, device: &Device) -> SmilesGpt {
        let normal = Initializer::Normal {
            mean: 0.0,
            std: 0.02,
        };
        let linear = |d_in: usize, d_out: usize, bias: bool| {
            let mut layer = LinearConfig::new(d_in, d_out)
                .with_bias(bias)
                .with_initializer(normal.clone())
                .init(device);
            if bias {
                layer.bias = Some(Param::from_tensor(Tensor::zeros([d_out], device)));
            }
            layer
        };
        let blocks = (0..self.num_layers)
            .map(|_| Block {
                ln_1: layer_norm(self.d_model, device),
                attn: SequenceAttentionConfig::new(self.d_model, self.num_heads)
                    .with_dropout(self.dropout)
                    .with_pattern(self.pattern)
                    .init(device),
                ln_2: layer_norm(self.d_model, device),
                fc: linear(self.d_model, self.d_ff, true),
                proj: linear(self.d_ff, self.d_model, true),
                dropout: DropoutConfig::new(self.dropout).init(),
            })
            .collect();
        SmilesGpt {
            tok_emb: EmbeddingConfig::new(self.vocab_size, self.d_model)
                .with_initializer(normal.clone())
                .init(device),
            pos_emb: Param::from_tensor(Tensor::zeros([self.max_len, self.d_model], device)),
            drop: DropoutConfig::new(self.dropout).init(),
            blocks,
            ln_f: layer_norm(self.d_model, device),
            head: linear(self.d_model, self.vocab_size, false),
            type_emb: self.is_conditional().then(|| {
                EmbeddingConfig::new(2, self.d_model)
                    .with_initializer(normal.clone())
                    .init(device)
            }),
            prop_nn: (self.num_props() > 0).then(|| linear(self.num_props(), self.d_model, true)),
        }
    }
}

impl SmilesGpt {
    /// Longest sequence the position embedding covers.
    pub fn max_len(&self) -> usize {
        self.pos_emb.dims()[0]
    }

    /// Vocabulary size.
    pub fn vocab_size(&self) -> usize {
        self.head.weight.dims()[1]
    }

    /// Conditioned on properties or a scaffold.
    pub fn is_conditional(&self) -> bool {
        self.type_emb.is_some()
    }

    /// Empty caches for `batch` sequences of up to [`SmilesGpt::max_len`] tokens.
    pub fn new_cache(&self, batch: usize, device: &Device) -> DecoderCache {
        self.new_cache_with_prefix(batch, 0, device)
    }

    /// Empty caches for `batch` sequences of `prefix` conditioning positions
    /// ([`Condition::len`]) and up to [`SmilesGpt::max_len`] tokens.
    pub fn new_cache_with_prefix(
        &self,
        batch: usize,
        prefix: usize,
        device: &Device,
    ) -> DecoderCache {
        DecoderCache {
            layers: self
                .blocks
                .iter()
                .map(|b| b.attn.new_cache(batch, prefix + self.max_len(), device))
                .collect(),
            prefix: 0,
        }
    }

    /// Logits `[B, T, vocab_size]` of the next token after each of `tokens` `[B, T]`
    /// (an unconditional model, or later steps of a conditioned decoding: see
    /// [`SmilesGpt::forward_conditioned`]).
    ///
    /// - `key_padding_mask`: `[B, n_k]` over every key (cached then new), `true` = a
    ///   `<pad>` position; `None` when no sequence is padded (right padding under the causal
    ///   mask never reaches a real token and may also be left out).
    /// - `cache`: with the layers' caches, `tokens` are the new tokens at positions
    ///   `cache.len() ..`, appended to the caches.
    ///
    /// # Errors
    /// A sequence longer than [`SmilesGpt::max_len`] (cache included), a cache of
    /// another batch size, or a conditional model given no cached condition.
    pub fn forward(
        &self,
        tokens: Tensor<2, Int>,
        key_padding_mask: Option<Tensor<2, Bool>>,
        cache: Option<&mut DecoderCache>,
    ) -> Result<Tensor<3>, String> {
        self.forward_conditioned(tokens, None, key_padding_mask, cache)
    }

    /// As [`SmilesGpt::forward`], with `condition`'s positions before the tokens
    /// (MolGPT `GPT.forward(idx, prop=, scaffold=)`). The logits are the tokens' only.
    /// With a cache, the condition goes with the first call (an empty cache), which
    /// records its length; later calls give `None`. Positions of the position embedding
    /// count SMILES tokens only.
    ///
    /// # Errors
    /// As [`SmilesGpt::forward`]; a condition the model was not built for, a condition
    /// with a non-empty cache, a conditional model without one, a key padding mask with
    /// a condition.
    pub fn forward_conditioned(
        &self,
        tokens: Tensor<2, Int>,
        condition: Option<&Condition>,
        key_padding_mask: Option<Tensor<2, Bool>>,
        mut cache: Option<&mut DecoderCache>,
    ) -> Result<Tensor<3>, String> {
        let [_, t] = tokens.dims();
        let cached = cache.as_ref().map_or(0, |c| c.len());
        let offset = cache.as_ref().map_or(0, |c| c.tokens());
        let condition = condition.filter(|c| !c.is_empty());
        match (condition.is_some(), cached > 0, self.is_conditional()) {
            (true, true, _) => {
                return Err("the condition goes with the first step (an empty cache)".into());
            }
            (false, false, true) => {
                return Err(
                    "a conditional model needs its condition (properties / scaffold)".into(),
                );
            }
            _ => {}
        }
        if condition.is_some() && key_padding_mask.is_some() {
            return Err("a key padding mask is not taken with a condition".into());
        }
        if offset + t > self.max_len() {
            return Err(format!(
                "sequence of {} tokens is longer than the model's {} positions",
                offset + t,
                self.max_len()
            ));
        }
        let d = self.pos_emb.dims()[1];
        let pos = self
            .pos_emb
            .val()
            .slice([offset..offset + t, 0..d])
            .reshape([1, t, d]);
        let mut embedded = self.tok_emb.forward(tokens) + pos;
        if let Some(type1) = self.smiles_type() {
            embedded = embedded + type1;
        }
        let mut x = attn_core::dropout(&self.drop, embedded);
        let prefix = match condition {
            Some(c) => {
                let p = self.prefix_embeddings(c)?;
                x = Tensor::cat(vec![p, x], 1);
                c.len()
            }
            None => 0,
        };
        if let Some(c) = cache.as_deref_mut()
            && prefix > 0
        {
            c.prefix = prefix;
        }
        for (i, block) in self.blocks.iter().enumerate() {
            let layer_cache = cache.as_deref_mut().map(|c| &mut c.layers[i]);
            x = block.forward(x, key_padding_mask.clone(), layer_cache)?;
        }
        if prefix > 0 {
            let [b, n, _] = x.dims();
            x = x.slice([0..b, prefix..n, 0..d]);
        }
        let x = apply_layer_norm(&self.ln_f, x);
        Ok(attn_core::linear(&self.head, x))
    }

    /// Mean next-token cross-entropy (nats) of `tokens` `[B, T]` (`<bos> ... <eos>`, then
    /// `<pad>` = 0) under `condition`: the logits of positions `0 .. T - 1` against tokens
    /// `1 .. T`, padded targets left out (MolGPT also leaves the conditioning positions'
    /// logits out). Returns the loss `[1]` and the number of predicted tokens.
    ///
    /// # Errors
    /// As [`SmilesGpt::forward_conditioned`].
    pub fn next_token_loss(
        &self,
        tokens: Tensor<2, Int>,
        condition: Option<&Condition>,
    ) -> Result<(Tensor<1>, usize), String> {
        let [b, t] = tokens.dims();
        if t < 2 {
            return Err("a training sequence needs <bos> and at least one more token".into());
        }
        let inputs = tokens.clone().slice([0..b, 0..t - 1]);
        let targets = tokens.slice([0..b, 1..t]);
        let logits = self.forward_conditioned(inputs, condition, None, None)?;
        let v = self.vocab_size();
        let log_p = log_softmax(logits.reshape([b * (t - 1), v]), 1);
        let targets = targets.reshape([b * (t - 1), 1]);
        let real = targets
            .clone()
            .not_equal_elem(mol_featurize::smiles_tokenizer::PAD as i64)
            .float()
            .reshape([b * (t - 1)]);
        let picked = log_p.gather(1, targets).reshape([b * (t - 1)]);
        let count = real.clone().sum().into_scalar::<f32>();
        let n = count as usize;
        let loss = -(picked * real).sum() / (count.max(1.0) as f64);
        Ok((loss, n))
    }
}
