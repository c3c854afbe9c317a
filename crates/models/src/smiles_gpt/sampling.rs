//! Sampling the next token from logits (temperature, top-k), seeded and on the host, and
//! batched decoding through the KV cache. Separate from the model, as llama-burn's
//! `sampling.rs` and candle's `LogitsProcessor`.

use burn::prelude::*;
use mol_featurize::smiles_tokenizer::{BOS, EOS, PAD, UNK};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{Condition, CpuDecoder, CpuWeights, DecoderCache, SmilesGpt};

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
/// per token, under `condition` (one row per prompt) for a conditional model. Returns each
/// sequence's tokens after the prompt, `<eos>` included when it was drawn.
///
/// Each sequence draws from its own generator, seeded from `rng` in row order, so the
/// same `rng` state gives the same sequences however the batch is split. On the CPU
/// backend the batch is decoded in [`crate::parallel::inference_parts`] contiguous parts
/// at once, each on a thread of its own (sequences do not interact; a decoding step of a
/// small batch is too small for Burn's per-operation threading, which then costs more
/// than it gains), and with a BLAS loaded the steps run through [`CpuDecoder`] (the
/// same logits as [`SmilesGpt::forward`] within float rounding, without Burn's
/// per-operation cost), each part in chunks of [`decode_chunk_rows`] sequences.
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
    let parts = crate::parallel::inference_parts(device);
    sample_batch_in_parts(model, prompts, condition, settings, rng, device, parts)
}

/// [`sample_batch`] with the batch decoded in `parts` contiguous parts at once (clamped
/// to `1..=batch`).
///
/// # Errors
/// As [`sample_batch`].
pub fn sample_batch_in_parts(
    model: &SmilesGpt,
    prompts: &[Vec<u32>],
    condition: Option<&Condition>,
    settings: &SamplingSettings,
    rng: &mut StdRng,
    device: &Device,
    parts: usize,
) -> Result<Vec<Vec<u32>>, String> {
    let b = prompts.len();
    let Some(t0) = prompts.first().map(Vec::len) else {
        return Ok(Vec::new());
    };
    if t0 == 0 || prompts.iter().any(|p| p.len() != t0) {
        return Err("prompts of one batch must be non-empty and of one length".into());
    }
    let condition = condition.filter(|c| !c.is_empty());
    if let Some(c) = condition.filter(|c| c.batch() != b) {
        return Err(format!("a condition of {} rows for {b} prompts", c.batch()));
    }
    let seeds: Vec<u64> = (0..b).map(|_| rng.random()).collect();
    let weights = CpuWeights::from_model(model);
    let decode = |start: usize, end: usize| {
        let part = condition.map(|c| c.rows(start, end));
        decode_rows(
            model,
            weights.as_ref(),
            &prompts[start..end],
            part.as_ref(),
            settings,
            &seeds[start..end],
            device,
        )
    };
    let chunk_rows = decode_chunk_rows(weights.as_ref(), b);
    let outputs = crate::parallel::run_in_parts_chunked(b, parts, chunk_rows, decode)?;
    let mut out = Vec::with_capacity(b);
    for part in outputs {
        out.extend(part?);
    }
    Ok(out)
}

/// The largest product weights (bytes, [`CpuWeights::product_weight_bytes`]) for which
/// [`decode_chunk_rows`] decodes in small chunks: between the small preset's 3.0 MiB and
/// MolGPT's 24 MiB, the two sizes measured.
pub const CHUNKED_DECODE_MAX_WEIGHT_BYTES: usize = 8 << 20;

/// How many of a part's `rows` sequences one decoder holds at once (a larger part is
/// decoded in chunks of this many, one after another): through [`CpuDecoder`] (`weights`
/// given), 8 when the product weights take at most [`CHUNKED_DECODE_MAX_WEIGHT_BYTES`],
/// else all `rows`; through Burn's forward (`None`), all `rows`, since its per-operation
/// cost falls with larger batches.
///
/// A step reads every cached key and value of the sequences it holds, and the caches of
/// 128 sequences (64 MiB for the small preset at 128 positions) fall out of the CPU's
/// caches where 8 sequences' stay in them; but each product also packs its whole weight
/// matrix whatever the rows, so fewer rows pay more per row, and with large weights that
/// cost wins. Measured on 2 Zen 4 cores, a batch of 256, 64 steps (docs/RESULTS.md,
/// "Sampling in chunks"), molecules/s: the small preset 724-789 at once, 1,087-1,160 in
/// chunks of 8, 961-1,009 of 16; MolGPT's size 129 at once, 112 in chunks of 64, 56 of 8.
pub fn decode_chunk_rows(weights: Option<&CpuWeights>, rows: usize) -> usize {
    match weights {
        Some(w) if w.product_weight_bytes() <= CHUNKED_DECODE_MAX_WEIGHT_BYTES => 8,
        _ => rows,
    }
}

/// The decoding loop of one part: row `i` draws from a generator seeded with `seeds[i]`.
/// With `weights` the steps run through [`CpuDecoder`] (a conditioned first step
/// through [`SmilesGpt::forward_conditioned`], its cache then copied), otherwise through
/// [`SmilesGpt::forward_conditioned`] with Burn's caches.
pub(super) fn decode_rows(
    model: &SmilesGpt,
    weights: Option<&CpuWeights>,
    prompts: &[Vec<u32>],
    condition: Option<&Condition>,
    settings: &SamplingSettings,
    seeds: &[u64],
    device: &Device,
) -> Result<Vec<Vec<u32>>, String> {
    let b = prompts.len();
    let t0 = prompts[0].len();
    let (mut decoding, first) = Decoding::start(model, weights, prompts, condition, device)?;
    let mut rngs: Vec<StdRng> = seeds.iter().map(|&s| StdRng::seed_from_u64(s)).collect();
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); b];
    let mut done = vec![false; b];
    let mut len = t0;
    let v = model.vocab_size();
    let mut first = Some(first);
    while len < model.max_len() && done.iter().any(|d| !d) {
        let logits = match first.take() {
            Some(first) => first,
            None => decoding.next(&next_tokens(&out, &done))?,
        };
        for (row, seq) in out.iter_mut().enumerate() {
            // Finished rows keep decoding (the batch stays rectangular); their draws are
            // not kept.
            if !done[row] {
                let token = sample_token(&logits[row * v..(row + 1) * v], settings, &mut rngs[row]);
                seq.push(token);
                done[row] = token == EOS;
            }
        }
        len += 1;
    }
    Ok(out)
}

/// Each row's last drawn token (`<eos>` for a finished row): the next step's input.
fn next_tokens(out: &[Vec<u32>], done: &[bool]) -> Vec<u32> {
    out.iter()
        .zip(done)
        .map(|(seq, &d)| if d { EOS } else { *seq.last().unwrap_or(&EOS) })
        .collect()
}

/// Where a part's decoding steps run.
enum Stepper<'w> {
    /// The fused CPU step.
    Fused(Box<CpuDecoder<'w>>),
    /// Burn's forward with its caches.
    Burn(DecoderCache),
}

/// The KV-cached decoding of one batch, one token per sequence per step, through
/// [`CpuDecoder`] when `weights` are given, else through [`SmilesGpt::forward_conditioned`]
/// with Burn's caches (what [`sample_batch`] runs in each part; `bench --generate` runs it
/// for a fixed number of steps).
pub struct Decoding<'m, 'w> {
    model: &'m SmilesGpt,
    stepper: Stepper<'w>,
    device: Device,
}

impl<'m, 'w> Decoding<'m, 'w> {
    /// Runs `prompts` (token ids `[B, T]`, all of one length) under `condition` (one row
    /// per prompt, a conditional model only) and returns the decoding with the logits of
    /// the prompts' last position, `[B, vocab_size]` row-major. With `weights` an
    /// unconditional prompt runs position by position through the fused step; a
    /// conditioned one runs through Burn's forward and its cache is handed over.
    ///
    /// # Errors
    /// As [`SmilesGpt::forward_conditioned`] (a prompt longer than `max_len`, a
    /// conditional model without its condition, ...) and [`CpuDecoder::step`].
    pub fn start(
        model: &'m SmilesGpt,
        weights: Option<&'w CpuWeights>,
        prompts: &[Vec<u32>],
        condition: Option<&Condition>,
        device: &Device,
    ) -> Result<(Self, Vec<f32>), String> {
        let Some(t0) = prompts.first().map(Vec::len) else {
            return Err("no prompts".into());
        };
        let b = prompts.len();
        let (stepper, first) = match weights {
            // Unconditional: the prompt one position at a time through the fused step (a
            // conditional model without its condition goes to Burn's forward, which
            // refuses it).
            Some(w) if condition.is_none() && !model.is_conditional() => {
                let mut decoder = CpuDecoder::new(w, b)?;
                let mut logits = Vec::new();
                for col in 0..t0 {
                    let column: Vec<u32> = prompts.iter().map(|p| p[col]).collect();
                    logits = decoder.step(&column)?.to_vec();
                }
                (Stepper::Fused(Box::new(decoder)), logits)
            }
            _ => {
                let prefix = condition.map_or(0, Condition::len);
                let mut cache = model.new_cache_with_prefix(b, prefix, device);
                let ids: Vec<i64> = prompts.iter().flatten().map(|&i| i as i64).collect();
                let input = Tensor::<2, Int>::from_data(TensorData::new(ids, [b, t0]), device);
                let logits = model.forward_conditioned(input, condition, None, Some(&mut cache))?;
                let first = last_position(logits)?;
                match weights {
                    Some(w) => (
                        Stepper::Fused(Box::new(CpuDecoder::from_cache(w, &cache)?)),
                        first,
                    ),
                    None => (Stepper::Burn(cache), first),
                }
            }
        };
        let decoding = Self {
            model,
            stepper,
            device: device.clone(),
        };
        Ok((decoding, first))
    }

    /// Feeds one token per row (`tokens`: `[B]` ids) and returns the next logits,
    /// `[B, vocab_size]` row-major.
    ///
    /// # Errors
    /// As [`CpuDecoder::step`] / [`SmilesGpt::forward`]: a wrong number of tokens, an id
    /// outside the vocabulary, a sequence past `max_len`.
    pub fn next(&mut self, tokens: &[u32]) -> Result<Vec<f32>, String> {
        match &mut self.stepper {
            Stepper::Fused(decoder) => Ok(decoder.step(tokens)?.to_vec()),
            Stepper::Burn(cache) => {
                let ids: Vec<i64> = tokens.iter().map(|&t| t as i64).collect();
                let input = Tensor::<2, Int>::from_data(
                    TensorData::new(ids, [tokens.len(), 1]),
                    &self.device,
                );
                last_position(self.model.forward(input, None, Some(cache))?)
            }
        }
    }
}

/// The logits of the last position of `logits` `[B, T, vocab_size]`, `[B, vocab_size]`
/// row-major.
fn last_position(logits: Tensor<3>) -> Result<Vec<f32>, String> {
    let [b, t, v] = logits.dims();
    logits
        .slice([0..b, t - 1..t, 0..v])
        .into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(|e| format!("logits: {e:?}"))
}
