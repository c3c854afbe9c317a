//! Configuration of the SMILES generator (serde), with MolGPT's size and a small CPU
//! preset.

use attn_core::AttentionPattern;
use burn::prelude::*;

/// A GPT-style decoder over SMILES tokens (MolGPT, Bagal et al., J. Chem. Inf. Model.
/// 2022; its `model.py` `GPTConfig`): token + learned position embeddings, `num_layers`
/// pre-LN blocks of causal self-attention and a GELU feed-forward, a final LayerNorm and
/// an LM head over the vocabulary.
#[derive(Config, Debug, PartialEq)]
pub struct SmilesGptConfig {
    /// Vocabulary size (the run's `vocab.json`, specials included).
    pub vocab_size: usize,
    /// Longest sequence in tokens, `<bos>` and `<eos>` included (MolGPT `block_size`).
    #[config(default = 128)]
    pub max_len: usize,
    /// d_model (MolGPT `n_embd`).
    #[config(default = 256)]
    pub d_model: usize,
    /// Blocks (MolGPT `n_layer`).
    #[config(default = 8)]
    pub num_layers: usize,
    /// Heads (MolGPT `n_head`).
    #[config(default = 8)]
    pub num_heads: usize,
    /// Feed-forward width (MolGPT: 4 d_model).
    #[config(default = 1024)]
    pub d_ff: usize,
    /// Dropout on embeddings, attention weights and residual branches (MolGPT 0.1).
    #[config(default = 0.1)]
    pub dropout: f64,
    /// Attention pattern of every block (causal; a window and global tokens for local /
    /// sparse attention).
    #[config(default = "AttentionPattern::causal()")]
    pub pattern: AttentionPattern,
    /// Properties the model is conditioned on (MolGPT `num_props`): their values `[B,
    /// num_props]` go through one linear layer into one token before the SMILES; `None`
    /// (or 0) for none. An `Option` so that a `run.json` written before conditioning
    /// reads as unconditional (serde leaves a missing `Option` field `None`).
    pub num_props: Option<usize>,
    /// Scaffold tokens the model is conditioned on (MolGPT `scaffold_maxlen`): the
    /// scaffold SMILES's tokens, right-padded with `<pad>` to this length, come first;
    /// `None` (or 0) for no scaffold conditioning.
    pub scaffold_max_len: Option<usize>,
}

impl SmilesGptConfig {
    /// Conditioned on properties or a scaffold (the model then has MolGPT's type
    /// embedding).
    pub fn is_conditional(&self) -> bool {
        self.num_props() > 0 || self.scaffold_max_len() > 0
    }

    /// Properties conditioned on (0: none).
    pub fn num_props(&self) -> usize {
        self.num_props.unwrap_or(0)
    }

    /// Scaffold positions (0: no scaffold condition).
    pub fn scaffold_max_len(&self) -> usize {
        self.scaffold_max_len.unwrap_or(0)
    }

    /// Conditioning positions before `<bos>`: `scaffold_max_len`, plus 1 with properties.
    pub fn prefix_len(&self) -> usize {
        self.scaffold_max_len() + usize::from(self.num_props() > 0)
    }

    /// MolGPT's size: 8 layers, 8 heads, d_model 256, d_ff 1024 (about 6.4M parameters
    /// with a 100-token vocabulary and 128 positions).
    pub fn molgpt(vocab_size: usize) -> Self {
        Self::new(vocab_size)
    }

    /// A size that trains on 2 CPU cores in minutes: 4 layers, 4 heads, d_model 128,
    /// d_ff 512.
    pub fn small(vocab_size: usize) -> Self {
        Self::new(vocab_size)
            .with_d_model(128)
            .with_num_layers(4)
            .with_num_heads(4)
            .with_d_ff(512)
    }
}
