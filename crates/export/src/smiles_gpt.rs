//! Lowering of the SMILES generator's decoder step ([`SmilesGpt`], MolGPT's decoder) to
//! ONNX, with past keys and values in and out, as Hugging Face Optimum exports GPT-2
//! "with past": the same arithmetic as `models::smiles_gpt` op for op.
//!
//! Inputs (`batch`, `sequence`, `past_sequence` symbolic):
//! - `input_ids` int64 `[batch, sequence]`: the new tokens (the whole prompt on the first
//!   step, one token per step after it); every row of a batch has the same length (no
//!   padding input: the sampler's batches are rectangular).
//! - `past_key_values.{l}.key` f32 `[batch, H, past_sequence, d_k]` and
//!   `past_key_values.{l}.value` f32 `[batch, H, past_sequence, d_v]` for every layer `l`:
//!   the keys and values of the tokens before `input_ids` (`past_sequence` = 0 on the
//!   first step). Their length gives the new tokens' positions.
//!
//! Outputs:
//! - `logits` f32 `[batch, sequence, vocab_size]`: the next-token scores after each new
//!   token;
//! - `present.{l}.key` / `present.{l}.value`: the past with the new tokens' keys and
//!   values appended (`[batch, H, past_sequence + sequence, d]`), the next step's past.
//!
//! The attention pattern (causal, window, global tokens; `attn_core::AttentionPattern`)
//! is built in the graph from the absolute positions. Positions past the model's
//! `max_len` are an error of the runtime (`Gather` out of range).

use attn_core::mask::MASKED_LOGIT;
use attn_core::{AttentionPattern, SequenceSelfAttention};
use burn::prelude::*;
use models::smiles_gpt::{Block, SmilesGpt};
use onnx_protobuf::ModelProto;

use crate::graph::{Attr, Dim, Elem, GraphBuilder};
use crate::mat::{linear, values};
// Transformer-M's LayerNorm (eps 1e-5, as the generator's) and exact GELU lowerings.
use crate::transformer_m::{gelu, layer_norm};

/// Name of layer `l`'s past keys input.
pub fn past_key(l: usize) -> String {
    format!("past_key_values.{l}.key")
}

/// Name of layer `l`'s past values input.
pub fn past_value(l: usize) -> String {
    format!("past_key_values.{l}.value")
}

/// Name of layer `l`'s present keys output.
pub fn present_key(l: usize) -> String {
    format!("present.{l}.key")
}

/// Name of layer `l`'s present values output.
pub fn present_value(l: usize) -> String {
    format!("present.{l}.value")
}

/// A rank-0 int64 constant.
fn i64_scalar(g: &mut GraphBuilder, value: i64) -> String {
    let v = g.i64s(&[value]);
    g.node("Squeeze", &[&v], &[])
}

/// The pattern's mask `[sequence, past_sequence + sequence]` (`true` = not attended) for
/// queries at `q_pos` `[sequence, 1]` and keys at `k_pos` `[1, total]` (int64), as
/// `AttentionPattern::allows`; `None` when the pattern masks nothing.
fn pattern_mask(
    g: &mut GraphBuilder,
    pattern: &AttentionPattern,
    q_pos: &str,
    k_pos: &str,
) -> Option<String> {
    let causal = pattern
        .causal
        .then(|| g.node("Greater", &[k_pos, q_pos], &[]));
    let far = pattern.window.map(|w| {
        let diff = g.sub(q_pos, k_pos);
        let dist = g.node("Abs", &[&diff], &[]);
        let w = i64_scalar(g, w as i64 - 1);
        let far = g.node("Greater", &[&dist, &w], &[]);
        if pattern.global_tokens == 0 {
            return far;
        }
        let n_global = i64_scalar(g, pattern.global_tokens as i64);
        let q_global = g.node("Less", &[q_pos, &n_global], &[]);
        let k_global = g.node("Less", &[k_pos, &n_global], &[]);
        let global = g.node("Or", &[&q_global, &k_global], &[]);
        let local = g.node("Not", &[&global], &[]);
        g.node("And", &[&far, &local], &[])
    });
    match (causal, far) {
        (Some(c), Some(f)) => Some(g.node("Or", &[&c, &f], &[])),
        (c, f) => c.or(f),
    }
}

/// A present output: its value, output name and last dimension.
type Present = (String, String, usize);

/// Layer `l`'s causal self-attention on `x` `[batch, sequence, d_model]`; declares its
/// past inputs and adds its present keys and values to `presents` (declared as outputs
/// after `logits`, so that `logits` is the graph's first output).
fn attention(
    g: &mut GraphBuilder,
    x: &str,
    (name, l): (&str, usize),
    attn: &SequenceSelfAttention,
    mask: Option<&str>,
    presents: &mut Vec<Present>,
) -> String {
    let (b, past) = (Dim::Symbolic("batch"), Dim::Symbolic("past_sequence"));
    let (h, d_k, d_v) = (attn.num_heads, attn.d_k, attn.d_v);
    // The merged projection's columns are [q | k | v] (`SequenceSelfAttention::project`):
    // three products of the same dot products, one per part.
    let [d_model, _] = attn.qkv.weight.dims();
    let w = attn.qkv.weight.val();
    let bias = attn.qkv.bias.as_ref().map(|p| p.val());
    let part = |g: &mut GraphBuilder, label: &str, start: usize, width: usize| {
        let cols = start..start + h * width;
        let wv = w
            .clone()
            .slice([0..d_model, cols.clone()])
            .into_data()
            .try_to_vec::<f32>()
            .expect("f32 weights");
        let bv = bias
            .as_ref()
            .map(|b| b.clone().slice([cols]).into_data().try_to_vec::<f32>())
            .transpose()
            .expect("f32 bias");
        let y = g.linear(
            x,
            &format!("{name}.attn.qkv.{label}"),
            (&[d_model, h * width], &wv),
            bv.as_deref(),
        );
        let y = g.reshape(&y, &[0, 0, h as i64, width as i64]);
        g.transpose(&y, &[0, 2, 1, 3])
    };
    let q = part(g, "q", 0, d_k);
    let k_new = part(g, "k", h * d_k, d_k);
    let v_new = part(g, "v", 2 * h * d_k, d_v);
    let past_k = g.input(
        &past_key(l),
        Elem::F32,
        &[b.clone(), Dim::Fixed(h), past.clone(), Dim::Fixed(d_k)],
    );
    let past_v = g.input(
        &past_value(l),
        Elem::F32,
        &[b.clone(), Dim::Fixed(h), past, Dim::Fixed(d_v)],
    );
    let k = g.node("Concat", &[&past_k, &k_new], &[("axis", Attr::Int(2))]);
    let v = g.node("Concat", &[&past_v, &v_new], &[("axis", Attr::Int(2))]);
    presents.push((k.clone(), present_key(l), d_k));
    presents.push((v.clone(), present_value(l), d_v));
    let kt = g.transpose(&k, &[0, 1, 3, 2]);
    let scores = g.matmul(&q, &kt);
    let scale = g.scalar((d_k as f32).powf(-0.5));
    let scores = g.mul(&scores, &scale);
    let scores = match mask {
        // Every query attends to itself, so no row is fully masked.
        Some(mask) => {
            let masked = g.scalar(MASKED_LOGIT);
            g.node("Where", &[mask, &masked, &scores], &[])
        }
        None => scores,
    };
    let probs = g.node("Softmax", &[&scores], &[("axis", Attr::Int(-1))]);
    let o = g.matmul(&probs, &v);
    let o = g.transpose(&o, &[0, 2, 1, 3]);
    let o = g.reshape(&o, &[0, 0, (h * d_v) as i64]);
    linear(g, &o, &format!("{name}.attn.out_proj"), &attn.out_proj)
}

/// One pre-LN block (`x + attn(ln_1(x))`, then `x + mlp(ln_2(x))`).
fn block(
    g: &mut GraphBuilder,
    x: &str,
    l: usize,
    block: &Block,
    mask: Option<&str>,
    presents: &mut Vec<Present>,
) -> String {
    let name = format!("blocks.{l}");
    let ln = layer_norm(g, x, &format!("{name}.ln_1"), &block.ln_1);
    let a = attention(g, &ln, (&name, l), &block.attn, mask, presents);
    let x = g.add(x, &a);
    let ln = layer_norm(g, &x, &format!("{name}.ln_2"), &block.ln_2);
    let f = linear(g, &ln, &format!("{name}.fc"), &block.fc);
    let f = gelu(g, &f);
    let f = linear(g, &f, &format!("{name}.proj"), &block.proj);
    g.add(&x, &f)
}

/// Lowers `model` (its current weights; dropout off) to the decoder step graph described
/// in the module documentation; `metadata` goes into `metadata_props`.
pub fn smiles_gpt_step_to_onnx(model: &SmilesGpt, metadata: &[(String, String)]) -> ModelProto {
    let (b, t) = (Dim::Symbolic("batch"), Dim::Symbolic("sequence"));
    let mut g = GraphBuilder::new("smiles_gpt_step");
    let ids = g.input("input_ids", Elem::I64, &[b.clone(), t.clone()]);
    // Positions: the new tokens sit at past .. past + sequence.
    let past = g.node(
        "Shape",
        &[&past_key(0)],
        &[("start", Attr::Int(2)), ("end", Attr::Int(3))],
    );
    let new = g.node(
        "Shape",
        &[&ids],
        &[("start", Attr::Int(1)), ("end", Attr::Int(2))],
    );
    let past = g.node("Squeeze", &[&past], &[]);
    let new = g.node("Squeeze", &[&new], &[]);
    let total = g.add(&past, &new);
    let (zero, one) = (i64_scalar(&mut g, 0), i64_scalar(&mut g, 1));
    let q_pos = g.node("Range", &[&past, &total, &one], &[]);
    let k_pos = g.node("Range", &[&zero, &total, &one], &[]);

    let [vocab, d] = model.tok_emb.weight.dims();
    let tok = g.f32_tensor("tok_emb", &[vocab, d], &values(&model.tok_emb.weight));
    let max_len = model.max_len();
    let pos = g.f32_tensor("pos_emb", &[max_len, d], &values(&model.pos_emb));
    let x_tok = g.node("Gather", &[&tok, &ids], &[("axis", Attr::Int(0))]);
    let x_pos = g.node("Gather", &[&pos, &q_pos], &[("axis", Attr::Int(0))]);
    let mut x = g.add(&x_tok, &x_pos);

    let q_col = g.unsqueeze(&q_pos, &[1]);
    let k_row = g.unsqueeze(&k_pos, &[0]);
    // One mask per distinct pattern (every block has the model's one today).
    let mut masks: Vec<(AttentionPattern, Option<String>)> = Vec::new();
    let mut presents = Vec::new();
    for (l, blk) in model.blocks.iter().enumerate() {
        let pattern = blk.attn.pattern();
        let mask = match masks.iter().find(|(p, _)| *p == pattern) {
            Some((_, m)) => m.clone(),
            None => {
                let m = pattern_mask(&mut g, &pattern, &q_col, &k_row);
                masks.push((pattern, m.clone()));
                m
            }
        };
        x = block(&mut g, &x, l, blk, mask.as_deref(), &mut presents);
    }
    let x = layer_norm(&mut g, &x, "ln_f", &model.ln_f);
    let logits = linear(&mut g, &x, "head", &model.head);
    g.output(
        &logits,
        "logits",
        Elem::F32,
        &[b.clone(), t, Dim::Fixed(model.vocab_size())],
    );
    let h = model.blocks.first().map_or(0, |blk| blk.attn.num_heads);
    for (value, name, d) in presents {
        g.output(
            &value,
            &name,
            Elem::F32,
            &[
                b.clone(),
                Dim::Fixed(h),
                Dim::Symbolic("total_sequence"),
                Dim::Fixed(d),
            ],
        );
    }
    g.finish(metadata)
}

/// Empty past keys and values (`past_sequence` = 0) for `batch` sequences: the first
/// step's feeds besides `input_ids`.
pub fn empty_past(model: &SmilesGpt, batch: usize) -> Vec<crate::Feed> {
    let mut feeds = Vec::new();
    for (l, blk) in model.blocks.iter().enumerate() {
        let (h, d_k, d_v) = (blk.attn.num_heads, blk.attn.d_k, blk.attn.d_v);
        feeds.push(crate::Feed::f32(
            &past_key(l),
            &[batch, h, 0, d_k],
            Vec::new(),
        ));
        feeds.push(crate::Feed::f32(
            &past_value(l),
            &[batch, h, 0, d_v],
            Vec::new(),
        ));
    }
    feeds
}

/// How greedy decoding through the exported step graph in ONNX Runtime compared with
/// Burn's KV-cached greedy decoding ([`verify_greedy`]).
#[derive(Debug, Clone)]
pub struct GreedyAgreement {
    /// Prompts decoded.
    pub prompts: usize,
    /// Prompts whose decoded tokens are identical in both.
    pub identical: usize,
    /// Tokens decoded by ONNX Runtime, over all prompts.
    pub tokens: usize,
    /// Largest absolute difference of the logits of every fed position (ONNX Runtime's
    /// steps against Burn's full forward over the same tokens).
    pub max_abs: f64,
    /// Largest relative difference over logits with |value| > 1e-3.
    pub max_rel: f64,
    /// The first prompt whose tokens differ, with both continuations.
    pub first_difference: Option<String>,
}

/// The largest-logit token as the sampler takes it (`<pad>`, `<bos>`, `<unk>` never
/// drawn; ties to the lower id).
fn greedy_token(logits: &[f32]) -> u32 {
    use models::smiles_gpt::sampling::{SamplingSettings, sample_token};
    use rand::SeedableRng;
    let greedy = SamplingSettings {
        temperature: 0.0,
        top_k: None,
    };
    sample_token(logits, &greedy, &mut rand::rngs::StdRng::seed_from_u64(0))
}

/// Each row's decoded tokens, and each row's logits of every fed position.
type GreedyBatch = (Vec<Vec<u32>>, Vec<Vec<f32>>);

/// Decodes `prompts` (all of one length) greedily through the step graph in `session`,
/// as `models::smiles_gpt::sampling::sample_batch` does (finished rows fed `<eos>`).
/// Returns each row's continuation and the fed tokens' logits `[B, fed, V]` (row-major).
fn onnxruntime_greedy_batch(
    session: &mut crate::verify::OnnxRuntimeSession,
    model: &SmilesGpt,
    prompts: &[Vec<u32>],
) -> Result<GreedyBatch, crate::ExportError> {
    use mol_featurize::smiles_tokenizer::EOS;
    let (b, v) = (prompts.len(), model.vocab_size());
    let layers = model.blocks.len();
    let mut names = vec!["logits".to_string()];
    for l in 0..layers {
        names.push(present_key(l));
        names.push(present_value(l));
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut past = empty_past(model, b);
    let mut input: Vec<i64> = prompts.iter().flatten().map(|&t| t as i64).collect();
    let mut t = prompts[0].len();
    let mut len = t;
    let mut out = vec![Vec::new(); b];
    let mut logits_rows = vec![Vec::new(); b];
    let mut done = vec![false; b];
    while len < model.max_len() && done.iter().any(|d| !d) {
        let mut feeds = vec![crate::Feed::i64("input_ids", &[b, t], input)];
        feeds.append(&mut past);
        let mut results = session.run_outputs(&feeds, &names)?.into_iter();
        let (_, logits) = results.next().expect("logits");
        for (row, seq) in logits.chunks(t * v).enumerate() {
            logits_rows[row].extend_from_slice(seq);
        }
        past = (0..layers)
            .flat_map(|l| [past_key(l), past_value(l)])
            .zip(results)
            .map(|(name, (shape, values))| crate::Feed::f32(&name, &shape, values))
            .collect();
        input = (0..b)
            .map(|row| {
                let token = if done[row] {
                    EOS
                } else {
                    let last = &logits[(row * t + t - 1) * v..(row * t + t) * v];
                    let token = greedy_token(last);
                    out[row].push(token);
                    done[row] = token == EOS;
                    token
                };
                token as i64
            })
            .collect();
        t = 1;
        len += 1;
    }
    Ok((out, logits_rows))
}

/// Decodes every prompt greedily (a token list starting with `<bos>`) through the step
/// graph `onnx` in ONNX Runtime and through `model` in Burn (KV cache), prompts of one
/// length batched together, and compares the tokens and the logits.
///
/// # Errors
/// [`crate::ExportError::Runtime`] when ONNX Runtime cannot be loaded or a step fails,
/// or Burn's decoding fails (an empty or too long prompt).
pub fn verify_greedy(
    model: &SmilesGpt,
    onnx: &std::path::Path,
    prompts: &[Vec<u32>],
    device: &Device,
) -> Result<GreedyAgreement, crate::ExportError> {
    use models::smiles_gpt::sampling::{SamplingSettings, sample_batch};
    use rand::SeedableRng;
    let burn_err = |reason: String| crate::ExportError::Runtime {
        runtime: "burn",
        reason,
    };
    let mut session = crate::verify::OnnxRuntimeSession::open(onnx, None)?;
    let mut by_len: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (i, p) in prompts.iter().enumerate() {
        by_len.entry(p.len()).or_default().push(i);
    }
    let greedy = SamplingSettings {
        temperature: 0.0,
        top_k: None,
    };
    let mut agreement = GreedyAgreement {
        prompts: prompts.len(),
        identical: 0,
        tokens: 0,
        max_abs: 0.0,
        max_rel: 0.0,
        first_difference: None,
    };
    let v = model.vocab_size();
    for rows in by_len.values() {
        let group: Vec<Vec<u32>> = rows.iter().map(|&i| prompts[i].clone()).collect();
        let mut rng = rand::rngs::StdRng::seed_from_u64(0);
        let want =
            sample_batch(model, &group, None, &greedy, &mut rng, device).map_err(burn_err)?;
        let (got, ort_logits) = onnxruntime_greedy_batch(&mut session, model, &group)?;
        // Burn's logits of the same fed tokens: the prompt, then each step's token (the
        // last one drawn is not fed).
        let fed = ort_logits[0].len() / v;
        let tokens: Vec<i64> = group
            .iter()
            .zip(&got)
            .flat_map(|(p, cont)| {
                let mut seq: Vec<i64> = p.iter().map(|&t| t as i64).collect();
                seq.extend(cont.iter().map(|&t| t as i64));
                seq.resize(fed, mol_featurize::smiles_tokenizer::EOS as i64);
                seq
            })
            .collect();
        let input =
            Tensor::<2, Int>::from_data(TensorData::new(tokens, [group.len(), fed]), device);
        let burn_logits: Vec<f32> = model
            .forward(input, None, None)
            .map_err(burn_err)?
            .into_data()
            .try_to_vec::<f32>()
            .map_err(|e| burn_err(format!("{e:?}")))?;
        let (a, r) = crate::verify::max_differences(&ort_logits.concat(), &burn_logits);
        agreement.max_abs = agreement.max_abs.max(a);
        agreement.max_rel = agreement.max_rel.max(r);
        for ((&i, w), g) in rows.iter().zip(&want).zip(&got) {
            agreement.tokens += g.len();
            if w == g {
                agreement.identical += 1;
            } else if agreement.first_difference.is_none() {
                agreement.first_difference = Some(format!(
                    "prompt {i} {:?}: Burn {w:?}, ONNX Runtime {g:?}",
                    prompts[i]
                ));
            }
        }
    }
    Ok(agreement)
}

/// `n` prompts made from the model's own samples (temperature 1, `seed`): prompt `i` is
/// `<bos>` and the first `i % 6` tokens of sample `i` (fewer when the sample is
/// shorter), so that prompt lengths 1 to 6 are covered.
///
/// # Errors
/// Burn's decoding failing.
pub fn sampled_prompts(
    model: &SmilesGpt,
    n: usize,
    seed: u64,
    device: &Device,
) -> Result<Vec<Vec<u32>>, String> {
    use models::smiles_gpt::sampling::{SamplingSettings, sample_batch};
    use mol_featurize::smiles_tokenizer::{BOS, EOS};
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let samples = sample_batch(
        model,
        &vec![vec![BOS]; n],
        None,
        &SamplingSettings::default(),
        &mut rng,
        device,
    )?;
    Ok(samples
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let body: Vec<u32> = s.iter().copied().take_while(|&t| t != EOS).collect();
            let k = (i % 6).min(body.len());
            std::iter::once(BOS)
                .chain(body[..k].iter().copied())
                .collect()
        })
        .collect())
}
