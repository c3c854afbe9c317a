//! The weights file of `bench --generate`: the generator's parameters in
//! `bench/torch_gpt.py`'s names and PyTorch's `[out, in]` layout (safetensors), its sizes
//! as metadata, and a check batch with Burn's logits.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};
use burn::prelude::*;
use models::SmilesGpt;
use mol_featurize::smiles_tokenizer::BOS;

/// Tensors written for PyTorch: name, shape, little-endian bytes, dtype.
type Named = Vec<(String, Vec<usize>, Vec<u8>, safetensors::Dtype)>;

/// Appends `t` as f32 (transposed first when `transpose`, Burn's `[in, out]` to PyTorch's
/// `[out, in]`).
fn push<const D: usize>(
    list: &mut Named,
    name: String,
    t: Tensor<D>,
    transpose: bool,
) -> Result<()> {
    let t = if transpose { t.transpose() } else { t };
    let dims = t.dims().to_vec();
    let values: Vec<f32> = t.try_into_vec_as()?;
    let raw = values.iter().flat_map(|x| x.to_le_bytes()).collect();
    list.push((name, dims, raw, safetensors::Dtype::F32));
    Ok(())
}

fn push_layer_norm(list: &mut Named, name: &str, norm: &burn::nn::LayerNorm) -> Result<()> {
    push(list, format!("{name}.weight"), norm.gamma.val(), false)?;
    let beta = norm.beta.as_ref().context("LayerNorm without beta")?;
    push(list, format!("{name}.bias"), beta.val(), false)
}

fn push_linear(list: &mut Named, name: &str, lin: &burn::nn::Linear) -> Result<()> {
    push(list, format!("{name}.weight"), lin.weight.val(), true)?;
    match &lin.bias {
        Some(b) => push(list, format!("{name}.bias"), b.val(), false),
        None => Ok(()),
    }
}

/// Writes `net`'s weights in `bench/torch_gpt.py`'s names and PyTorch's `[out, in]`
/// layout, its sizes and `dropout` as metadata, and a check batch (`check.tokens`
/// `[4, 20]`, Burn's `check.logits` `[4, 20, vocab_size]`).
pub(super) fn write_weights(net: &SmilesGpt, dropout: f64, path: &Path) -> Result<()> {
    let mut list = Named::new();
    push(
        &mut list,
        "tok_emb.weight".into(),
        net.tok_emb.weight.val(),
        false,
    )?;
    push(&mut list, "pos_emb".into(), net.pos_emb.val(), false)?;
    for (l, block) in net.blocks.iter().enumerate() {
        let p = format!("blocks.{l}");
        push_layer_norm(&mut list, &format!("{p}.ln_1"), &block.ln_1)?;
        push_linear(&mut list, &format!("{p}.qkv"), &block.attn.qkv)?;
        push_linear(&mut list, &format!("{p}.out_proj"), &block.attn.out_proj)?;
        push_layer_norm(&mut list, &format!("{p}.ln_2"), &block.ln_2)?;
        push_linear(&mut list, &format!("{p}.fc"), &block.fc)?;
        push_linear(&mut list, &format!("{p}.proj"), &block.proj)?;
    }
    push_layer_norm(&mut list, "ln_f", &net.ln_f)?;
    push_linear(&mut list, "head", &net.head)?;
    // The check batch: <bos> then tokens cycling through the vocabulary.
    let device = Device::flex();
    let v = net.vocab_size() as i64;
    let ids: Vec<i64> = (0..80i64)
        .map(|i| {
            if i % 20 == 0 {
                BOS as i64
            } else {
                4 + (i * 7) % (v - 4)
            }
        })
        .collect();
    let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids.clone(), [4, 20]), &device);
    let logits = net
        .forward(tokens, None, None)
        .map_err(anyhow::Error::msg)?;
    push(&mut list, "check.logits".into(), logits, false)?;
    list.push((
        "check.tokens".into(),
        vec![4, 20],
        ids.iter().flat_map(|x| x.to_le_bytes()).collect(),
        safetensors::Dtype::I64,
    ));
    let views = list
        .iter()
        .map(|(name, dims, raw, dtype)| {
            Ok((
                name.clone(),
                safetensors::tensor::TensorView::new(*dtype, dims.clone(), raw)?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    let metadata: HashMap<String, String> = [
        ("vocab_size", net.vocab_size()),
        ("max_len", net.max_len()),
        ("d_model", net.tok_emb.weight.dims()[1]),
        ("num_layers", net.blocks.len()),
        ("num_heads", net.blocks[0].attn.num_heads),
        ("d_ff", net.blocks[0].fc.weight.dims()[1]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .chain([("dropout".to_string(), dropout.to_string())])
    .collect();
    safetensors::tensor::serialize_to_file(views, Some(metadata), path)?;
    Ok(())
}
