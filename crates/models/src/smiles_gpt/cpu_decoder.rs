//! The SMILES GPT's decoding step on the CPU as passes over raw buffers: one new token per
//! sequence through every block, the linear layers as BLAS products on the calling
//! thread, the attention over a preallocated cache ([`attn_core::attend_cached`]).
//!
//! Why by hand: through Burn a step of the small preset is about 120 tensor operations
//! of a few thousand values each, and on the CPU their per-operation cost (allocation,
//! layout, dispatch) was most of the step: sampling ran at 1.05-1.30x PyTorch at batch
//! 256 against issue #36's 2x (docs/RESULTS.md, "The generator's speed against PyTorch").
//! Here a step is 4 products and a few row passes per block, the same arithmetic as
//! [`SmilesGpt::forward`] (the same LayerNorm and GELU kernels as attn-core's fused ops;
//! logits equal within 1e-5, tested).
//!
//! Used by [`super::sampling::sample_batch`] on the CPU backend when a BLAS is loaded
//! (`attn_core::blas`); elsewhere decoding stays on [`SmilesGpt::forward`].

use attn_core::blas::Blas;
use attn_core::{AttentionPattern, RowNorm};
use burn::module::Param;
use burn::nn::{LayerNorm, Linear};
use burn::prelude::*;

use super::{DecoderCache, SmilesGpt};
use crate::transformer_m::LAYER_NORM_EPS;

/// A LayerNorm's `gamma` and `beta`, `[d]` each.
#[derive(Debug, Clone)]
struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

/// A linear layer: `weight` `[d_in, d_out]` row-major (Burn's layout), `bias` `[d_out]`
/// (zeros when the layer has none).
#[derive(Debug, Clone)]
struct Dense {
    weight: Vec<f32>,
    bias: Vec<f32>,
    d_in: usize,
    d_out: usize,
}

/// One block's weights and attention shape.
#[derive(Debug, Clone)]
struct BlockWeights {
    ln_1: Norm,
    qkv: Dense,
    out_proj: Dense,
    ln_2: Norm,
    fc: Dense,
    proj: Dense,
    num_heads: usize,
    d_k: usize,
    d_v: usize,
    pattern: AttentionPattern,
}

/// A [`SmilesGpt`]'s weights copied out of its tensors for [`CpuDecoder`] (about 4 bytes
/// per parameter: 3.3 MB for the small preset).
#[derive(Debug, Clone)]
pub struct CpuWeights {
    blas: &'static Blas,
    d_model: usize,
    vocab_size: usize,
    max_len: usize,
    /// `[vocab_size, d_model]`.
    tok_emb: Vec<f32>,
    /// `[max_len, d_model]`.
    pos_emb: Vec<f32>,
    /// A conditional model's type embedding row 1 (SMILES positions), `[d_model]`.
    smiles_type: Option<Vec<f32>>,
    blocks: Vec<BlockWeights>,
    ln_f: Norm,
    /// `[d_model, vocab_size]`, no bias.
    head: Dense,
}

fn values<const D: usize>(t: Tensor<D>) -> Option<Vec<f32>> {
    t.try_into_vec_as::<f32>().ok()
}

fn norm(layer: &LayerNorm) -> Option<Norm> {
    Some(Norm {
        gamma: values(layer.gamma.val())?,
        beta: values(layer.beta.as_ref()?.val())?,
    })
}

fn dense(layer: &Linear) -> Option<Dense> {
    let [d_in, d_out] = layer.weight.dims();
    let bias = match &layer.bias {
        Some(b) => values(b.val())?,
        None => vec![0.0; d_out],
    };
    Some(Dense {
        weight: values(layer.weight.val())?,
        bias,
        d_in,
        d_out,
    })
}

impl CpuWeights {
    /// The weights of `model` when it lives on the CPU backend without autodiff and a BLAS
    /// is loaded ([`attn_core::blas::blas`]); `None` otherwise (decode with
    /// [`SmilesGpt::forward`]).
    pub fn from_model(model: &SmilesGpt) -> Option<Self> {
        let device = model.pos_emb.device();
        if device != Device::flex() || device.is_autodiff() {
            return None;
        }
        let blas = attn_core::blas::blas()?;
        let param = |p: &Param<Tensor<2>>| values(p.val());
        let blocks = model
            .blocks
            .iter()
            .map(|b| {
                Some(BlockWeights {
                    ln_1: norm(&b.ln_1)?,
                    qkv: dense(&b.attn.qkv)?,
                    out_proj: dense(&b.attn.out_proj)?,
                    ln_2: norm(&b.ln_2)?,
                    fc: dense(&b.fc)?,
                    proj: dense(&b.proj)?,
                    num_heads: b.attn.num_heads,
                    d_k: b.attn.d_k,
                    d_v: b.attn.d_v,
                    pattern: b.attn.pattern(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            blas,
            d_model: model.pos_emb.dims()[1],
            vocab_size: model.vocab_size(),
            max_len: model.max_len(),
            tok_emb: param(&model.tok_emb.weight)?,
            pos_emb: param(&model.pos_emb)?,
            smiles_type: match model.smiles_type() {
                Some(t) => Some(values(t)?),
                None => None,
            },
            blocks,
            ln_f: norm(&model.ln_f)?,
            head: dense(&model.head)?,
        })
    }

    /// Vocabulary size (the width of a step's logits per sequence).
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// Bytes of the layers' product weights (every block's four `Dense` matrices and the
    /// LM head, f32), what each decoding step's products pack whatever its rows: 3.0 MiB
    /// for the small preset, 24 MiB for MolGPT's size.
    pub fn product_weight_bytes(&self) -> usize {
        let floats: usize = self
            .blocks
            .iter()
            .flat_map(|b| [&b.qkv, &b.out_proj, &b.fc, &b.proj])
            .chain([&self.head])
            .map(|d| d.weight.len())
            .sum();
        floats * size_of::<f32>()
    }

    /// `c[rows, d_out] = bias + a[rows, d_in] W`.
    fn apply(&self, layer: &Dense, rows: usize, a: &[f32], c: &mut Vec<f32>) {
        c.clear();
        for _ in 0..rows {
            c.extend_from_slice(&layer.bias);
        }
        self.blas
            .gemm_accumulate([rows, layer.d_out, layer.d_in], a, &layer.weight, c);
    }
}

/// Rows of `norm` applied to `x` into `out` (resized).
fn layer_norm(norm: &Norm, x: &[f32], out: &mut Vec<f32>) {
    out.resize(x.len(), 0.0);
    let kind = RowNorm::Standard {
        eps: LAYER_NORM_EPS,
    };
    attn_core::layer_norm::layer_norm_rows(x, &norm.gamma, &norm.beta, kind, out);
}

/// Incremental decoding of `batch` sequences through [`CpuWeights`]: per block a cache of
/// keys `[B, H, d_k, capacity]` (transposed, see [`attn_core::HeadCache`]) and values
/// `[B, H, capacity, d_v]`, and scratch buffers
/// reused by every step. Runs on the calling thread (decode parts of a batch on threads
/// of their own, as [`super::sampling::sample_batch`] does).
#[derive(Debug, Clone)]
pub struct CpuDecoder<'w> {
    weights: &'w CpuWeights,
    batch: usize,
    capacity: usize,
    len: usize,
    prefix: usize,
    keys: Vec<Vec<f32>>,
    values: Vec<Vec<f32>>,
    x: Vec<f32>,
    h: Vec<f32>,
    wide: Vec<f32>,
    act: Vec<f32>,
    mixed: Vec<f32>,
    branch: Vec<f32>,
    logits: Vec<f32>,
    scores: Vec<f32>,
}

/// Cache buffers of dropped [`CpuDecoder`]s, for the next ones (at most
/// [`MAX_SPARE_CACHE_BUFFERS`] and [`MAX_SPARE_CACHE_FLOATS`]). A decoder's caches are
/// tens of MB (batch 128, the small preset: 67 MB); freshly allocated, each is new pages
/// from the operating system, faulted in and zeroed by the kernel at the first write, on
/// every `sample_batch` call (about 5% of a batch-256 sampling profile).
static SPARE_CACHE_BUFFERS: std::sync::Mutex<Vec<Vec<f32>>> = std::sync::Mutex::new(Vec::new());

/// Spare buffers kept at most (two threads' decoders of up to 16 layers, keys and values).
const MAX_SPARE_CACHE_BUFFERS: usize = 64;

/// Floats kept in spare buffers at most (1 GiB): what a process holds after sampling
/// stays bounded. The small preset at batch 256 on 2 threads caches 134 MB; the MolGPT
/// preset (128 positions) at batch 512 on 2 threads 1.07 GB, just above, so a few of
/// its buffers are allocated afresh each call.
const MAX_SPARE_CACHE_FLOATS: usize = 1 << 28;

/// A buffer of `len` floats, reused from [`SPARE_CACHE_BUFFERS`] when one is large
/// enough (its contents are stale: the caller reads only what it wrote), else new.
pub(super) fn spare_cache_buffer(len: usize) -> Vec<f32> {
    let reused = SPARE_CACHE_BUFFERS.lock().ok().and_then(|mut spare| {
        let at = spare.iter().position(|b| b.capacity() >= len)?;
        Some(spare.swap_remove(at))
    });
    match reused {
        Some(mut buffer) => {
            // Within capacity: no reallocation; the floats past the old length are set
            // once, the rest keep what they held.
            buffer.resize(len, 0.0);
            buffer
        }
        None => vec![0.0; len],
    }
}

impl Drop for CpuDecoder<'_> {
    fn drop(&mut self) {
        if let Ok(mut spare) = SPARE_CACHE_BUFFERS.lock() {
            let mut kept: usize = spare.iter().map(Vec::capacity).sum();
            for buffer in self.keys.drain(..).chain(self.values.drain(..)) {
                if spare.len() < MAX_SPARE_CACHE_BUFFERS
                    && kept + buffer.capacity() <= MAX_SPARE_CACHE_FLOATS
                {
                    kept += buffer.capacity();
                    spare.push(buffer);
                }
            }
        }
    }
}

impl<'w> CpuDecoder<'w> {
    /// Empty caches for `batch` sequences of up to the model's `max_len` tokens, for an
    /// unconditional model (a conditional one starts with its condition through
    /// [`SmilesGpt::forward_conditioned`], then [`CpuDecoder::from_cache`]).
    ///
    /// # Errors
    /// A conditional model, as [`SmilesGpt::forward`] refuses one without its condition.
    pub fn new(weights: &'w CpuWeights, batch: usize) -> Result<Self, String> {
        if weights.smiles_type.is_some() {
            return Err(
                "a conditional model needs its condition (properties / scaffold): \
                        start with forward_conditioned, then CpuDecoder::from_cache"
                    .into(),
            );
        }
        Ok(Self::with_capacity(weights, batch, weights.max_len))
    }

    /// Empty caches of `capacity` positions (conditioning included). The buffers come
    /// from [`spare_cache_buffer`]: only positions below [`CpuDecoder::len`] are ever
    /// read, so what a reused buffer held before does not matter.
    fn with_capacity(weights: &'w CpuWeights, batch: usize, capacity: usize) -> Self {
        Self::on_buffers(weights, batch, capacity, spare_cache_buffer)
    }

    /// [`CpuDecoder::with_capacity`] with each cache buffer of `len` floats from
    /// `buffer(len)`, whatever it holds (the tests hand it buffers of NaN).
    pub(super) fn on_buffers(
        weights: &'w CpuWeights,
        batch: usize,
        capacity: usize,
        mut buffer: impl FnMut(usize) -> Vec<f32>,
    ) -> Self {
        let keys = weights
            .blocks
            .iter()
            .map(|b| buffer(batch * b.num_heads * capacity * b.d_k))
            .collect();
        let values = weights
            .blocks
            .iter()
            .map(|b| buffer(batch * b.num_heads * capacity * b.d_v))
            .collect();
        Self {
            weights,
            batch,
            capacity,
            len: 0,
            prefix: 0,
            keys,
            values,
            x: Vec::new(),
            h: Vec::new(),
            wide: Vec::new(),
            act: Vec::new(),
            mixed: Vec::new(),
            branch: Vec::new(),
            logits: Vec::new(),
            scores: Vec::new(),
        }
    }

    /// Continues a decoding that [`SmilesGpt::forward_conditioned`] started in `cache`
    /// (a conditioned first step, say): its filled positions are copied, its capacity and
    /// conditioning length kept.
    ///
    /// # Errors
    /// A cache of another number of layers or other head sizes than the weights', or
    /// with more conditioning positions than positions.
    pub fn from_cache(weights: &'w CpuWeights, cache: &DecoderCache) -> Result<Self, String> {
        if cache.layers.len() != weights.blocks.len() {
            return Err(format!(
                "a cache of {} layers for a model of {}",
                cache.layers.len(),
                weights.blocks.len()
            ));
        }
        let Some(first) = cache.layers.first() else {
            return Err("a model without blocks".into());
        };
        let batch = first.filled().0.dims()[0];
        if cache.prefix > cache.len() || cache.len() > first.max_len() {
            return Err(format!(
                "a cache of {} positions with {} conditioning positions and capacity {}",
                cache.len(),
                cache.prefix,
                first.max_len()
            ));
        }
        let mut decoder = Self::with_capacity(weights, batch, first.max_len());
        decoder.len = cache.len();
        decoder.prefix = cache.prefix;
        for (i, (layer, block)) in cache.layers.iter().zip(&weights.blocks).enumerate() {
            let (k, v) = layer.filled();
            let want = [batch, block.num_heads, decoder.len];
            if k.dims()[..3] != want || k.dims()[3] != block.d_k || v.dims()[3] != block.d_v {
                return Err(format!(
                    "layer {i}: cached keys {:?} / values {:?}, the model's heads are {} of \
                     d_k {} and d_v {}",
                    k.dims(),
                    v.dims(),
                    block.num_heads,
                    block.d_k,
                    block.d_v
                ));
            }
            let (len, capacity) = (decoder.len, decoder.capacity);
            let keys = values(k).ok_or("cached keys are not f32")?;
            let vals = values(v).ok_or("cached values are not f32")?;
            let (d_k, d_v) = (block.d_k, block.d_v);
            // Keys [len, d_k] per sequence and head into [d_k, capacity]; values
            // [len, d_v] into [capacity, d_v].
            for seq_head in 0..batch * block.num_heads {
                let filled = &keys[seq_head * len * d_k..(seq_head + 1) * len * d_k];
                let keys_t = &mut decoder.keys[i][seq_head * d_k * capacity..];
                for (j, key) in filled.chunks(d_k).enumerate() {
                    for (c, &kc) in key.iter().enumerate() {
                        keys_t[c * capacity + j] = kc;
                    }
                }
                let filled = &vals[seq_head * len * d_v..(seq_head + 1) * len * d_v];
                decoder.values[i][seq_head * capacity * d_v..][..len * d_v].copy_from_slice(filled);
            }
        }
        Ok(decoder)
    }

    /// Positions cached so far, conditioning included.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Nothing cached yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// SMILES tokens cached so far (the position of the next one).
    pub fn tokens(&self) -> usize {
        self.len - self.prefix
    }

    /// Feeds one token per sequence (`tokens`: `[B]` ids) and returns the logits of the
    /// next token, `[B, vocab_size]` row-major: [`SmilesGpt::forward`] on a `[B, 1]` batch
    /// with the caches (dropout off).
    ///
    /// # Errors
    /// `tokens` not `B` ids, an id outside the vocabulary, a sequence already at the
    /// model's `max_len` or a full cache.
    pub fn step(&mut self, tokens: &[u32]) -> Result<&[f32], String> {
        let w = self.weights;
        let (b, d) = (self.batch, w.d_model);
        if tokens.len() != b {
            return Err(format!("{} tokens for a batch of {b}", tokens.len()));
        }
        if let Some(&bad) = tokens.iter().find(|&&t| t as usize >= w.vocab_size) {
            return Err(format!(
                "token id {bad} outside the vocabulary of {}",
                w.vocab_size
            ));
        }
        let pos = self.tokens();
        if pos >= w.max_len {
            return Err(format!(
                "sequence of {} tokens is longer than the model's {} positions",
                pos + 1,
                w.max_len
            ));
        }
        if self.len >= self.capacity {
            return Err(format!(
                "KV cache full: {} positions cached, capacity {}",
                self.len, self.capacity
            ));
        }
        let Self {
            capacity,
            len,
            keys,
            values,
            x,
            h,
            wide,
            act,
            mixed,
            branch,
            logits,
            scores,
            ..
        } = self;
        let (capacity, at) = (*capacity, *len);
        x.clear();
        for &t in tokens {
            let t = t as usize;
            let row = w.tok_emb[t * d..(t + 1) * d]
                .iter()
                .zip(&w.pos_emb[pos * d..(pos + 1) * d]);
            match &w.smiles_type {
                Some(ty) => x.extend(row.zip(ty).map(|((e, p), y)| e + p + y)),
                None => x.extend(row.map(|(e, p)| e + p)),
            }
        }
        for (block, (keys, values)) in w.blocks.iter().zip(keys.iter_mut().zip(values)) {
            let (heads, d_k, d_v) = (block.num_heads, block.d_k, block.d_v);
            layer_norm(&block.ln_1, x, h);
            w.apply(&block.qkv, b, h, wide);
            let width = block.qkv.d_out;
            mixed.resize(b * heads * d_v, 0.0);
            for (r, qkv) in wide.chunks(width).enumerate() {
                for head in 0..heads {
                    let q = &qkv[head * d_k..(head + 1) * d_k];
                    let k = &qkv[(heads + head) * d_k..(heads + head + 1) * d_k];
                    let v_at = 2 * heads * d_k + head * d_v;
                    let v = &qkv[v_at..v_at + d_v];
                    let seq_head = r * heads + head;
                    // Keys transposed ([d_k, capacity]), values [capacity, d_v].
                    let keys_t =
                        &mut keys[seq_head * d_k * capacity..(seq_head + 1) * d_k * capacity];
                    for (c, &kc) in k.iter().enumerate() {
                        keys_t[c * capacity + at] = kc;
                    }
                    let vals =
                        &mut values[seq_head * capacity * d_v..(seq_head + 1) * capacity * d_v];
                    vals[at * d_v..(at + 1) * d_v].copy_from_slice(v);
                    let cache = attn_core::HeadCache {
                        keys_t,
                        values: vals,
                        capacity,
                    };
                    let out = &mut mixed[seq_head * d_v..(seq_head + 1) * d_v];
                    attn_core::attend_cached(q, cache, at, &block.pattern, out, scores);
                }
            }
            w.apply(&block.out_proj, b, mixed, branch);
            x.iter_mut().zip(branch.iter()).for_each(|(x, a)| *x += a);
            layer_norm(&block.ln_2, x, h);
            w.apply(&block.fc, b, h, wide);
            act.resize(wide.len(), 0.0);
            attn_core::gelu::gelu_into(wide, act);
            w.apply(&block.proj, b, act, branch);
            x.iter_mut().zip(branch.iter()).for_each(|(x, m)| *x += m);
        }
        layer_norm(&w.ln_f, x, h);
        w.apply(&w.head, b, h, logits);
        *len += 1;
        Ok(logits.as_slice())
    }
}
