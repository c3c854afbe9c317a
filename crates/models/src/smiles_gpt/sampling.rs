//! Sampling the next token from logits (temperature, top-k), seeded and on the host, and
//! batched decoding through the KV cache. Separate from the model, as llama-burn's
//! `sampling.rs` and candle's `LogitsProcessor`.

use burn::prelude::*;
use mol_featurize::smiles_tokenizer::{BOS, EOS, PAD, UNK};
use rand::Rng;
use rand::rngs::StdRng;

use super::{Condition, SmilesGpt};

/// How the next token is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SamplingSettings {
    /// Softmax temperature; 0 takes the most likely token (greedy).
    pub temperature: f64,
    /// Keep only the `k` most likely tokens (MolGPT's `top_k`); `None` keeps all.
    pub top_k: Option<usize>,
}

impl Default for SamplingSettings {
    /// Temperature 1, every token (MOSES samples from the model's distribution).
    fn default() -> Self {
        Self {
            temperature: 1.0,
            top_k: None,
        }
    }
}

/// One token id drawn from `logits` (one position's `[vocab_size]` scores) with
/// `settings`; ties in the top-k cut and in greedy decoding go to the lower id. `<pad>`,
/// `<bos>` and `<unk>` (ids 0, 1, 3) are never drawn: none is a target in training, and a
/// sample holding one decodes to no SMILES (on MOSES, 5 of 30,000 samples drew `<unk>`
/// before this rule).
pub fn sample_token(logits: &[f32], settings: &SamplingSettings, rng: &mut StdRng) -> u32 {
    let mut order: Vec<usize> = (0..logits.len())
        .filter(|&i| ![PAD, BOS, UNK].contains(&(i as u32)))
        .collect();
    order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]).then(a.cmp(&b)));
    if settings.temperature <= 0.0 || order.len() == 1 {
        return order[0] as u32;
    }
    if let Some(k) = settings.top_k {
        order.truncate(k.max(1));
    }
    let top = logits[order[0]] as f64;
    let weights: Vec<f64> = order
        .iter()
        .map(|&i| ((logits[i] as f64 - top) / settings.temperature).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let mut u = rng.random::<f64>() * total;
    for (&i, w) in order.iter().zip(&weights) {
        u -= w;
        if u < 0.0 {
            return i as u32;
        }
    }
    *order.last().expect("a vocabulary") as u32
}

/// Continues every sequence of `prompts` (token ids, all the same length, starting with
/// `<bos>`) until it samples `<eos>` or reaches the model's `max_len`, one KV-cached step
/// per token for the whole batch, under `condition` (one row per prompt) for a
/// conditional model. Returns each sequence's tokens after the prompt, `<eos>` included
/// when it was drawn. The same `rng` state gives the same sequences.
///
/// # Errors
/// Prompts of different lengths, an empty or too long prompt, a condition the model
/// does not take or of another batch size.
pub fn sample_batch(
    model: &SmilesGpt,
    prompts: &[Vec<u32>],
    condition: Option<&Condition>,
    settings: &SamplingSettings,
    rng: &mut StdRng,
    device: &Device,
) -> Result<Vec<Vec<u32>>, String> {
    let b = prompts.len();
    let Some(t0) = prompts.first().map(Vec::len) else {
        return Ok(Vec::new());
    };
    if t0 == 0 || prompts.iter().any(|p| p.len() != t0) {
        return Err("prompts of one batch must be non-empty and of one length".into());
    }
    if let Some(c) = condition.filter(|c| c.batch() != b && !c.is_empty()) {
        return Err(format!("a condition of {} rows for {b} prompts", c.batch()));
    }
    let v = model.vocab_size();
    let prefix = condition.map_or(0, Condition::len);
    let mut cache = model.new_cache_with_prefix(b, prefix, device);
    let mut condition = condition;
    let ids: Vec<i64> = prompts.iter().flatten().map(|&i| i as i64).collect();
    let mut input = Tensor::<2, Int>::from_data(TensorData::new(ids, [b, t0]), device);
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); b];
    let mut done = vec![false; b];
    let mut len = t0;
    while len < model.max_len() && done.iter().any(|d| !d) {
        let logits = model.forward_conditioned(input, condition.take(), None, Some(&mut cache))?;
        let t = logits.dims()[1];
        let last: Vec<f32> = logits
            .slice([0..b, t - 1..t, 0..v])
            .into_data()
            .convert::<f32>()
            .try_into_vec::<f32>()
            .map_err(|e| format!("logits: {e:?}"))?;
        let mut next = Vec::with_capacity(b);
        for (row, seq) in out.iter_mut().enumerate() {
            // Finished rows keep decoding (the batch stays rectangular); their draws are
            // not kept, and they take no draw from `rng`.
            let token = if done[row] {
                EOS
            } else {
                let token = sample_token(&last[row * v..(row + 1) * v], settings, rng);
                seq.push(token);
                done[row] = token == EOS;
                token
            };
            next.push(token as i64);
        }
        input = Tensor::<2, Int>::from_data(TensorData::new(next, [b, 1]), device);
        len += 1;
    }
    Ok(out)
}
