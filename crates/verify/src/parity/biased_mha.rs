//! Biased multi-head attention parity rows against DGL 2.1.0's `BiasedMHA`
//! (`fixtures/gen/biased_mha_reference.py`, DGL's own `biased_mha.py` loaded by path):
//! additive and multiplicative bias, without mask, with padded rows (DGL: NaN, ours: 0)
//! and with padded keys only (outputs and gradients).

use std::path::Path;

use anyhow::{Result, anyhow};
use attn_core::{AttnBiasType, BiasedMultiHeadAttention, BiasedMultiHeadAttentionConfig};
use burn::module::Param;
use burn::nn::Linear;
use burn::prelude::*;

use super::Row;
use super::fixture::Fixture;

const FILE: &str = "biased_mha.safetensors";
const TOL: f64 = 1e-5;

/// A PyTorch `nn.Linear` (`weight [out, in]`) as a Burn [`Linear`] (`[in, out]`).
fn linear(fx: &Fixture, name: &str, device: &Device) -> Result<Linear> {
    let weight: Tensor<2> = fx.tensor(&format!("{name}.weight"), device)?;
    let bias: Tensor<1> = fx.tensor(&format!("{name}.bias"), device)?;
    Ok(Linear {
        weight: Param::from_tensor(weight.transpose()),
        bias: Some(Param::from_tensor(bias)),
    })
}

/// The module of bias type `kind` with the fixture's weights, on `device`.
fn module(fx: &Fixture, kind: &str, device: &Device) -> Result<BiasedMultiHeadAttention> {
    let (shape, _) = fx.get(&format!("{kind}.plain.attn_bias"))?;
    let heads = shape[3];
    let (wshape, _) = fx.get(&format!("{kind}.q_proj.weight"))?;
    let bias_type = match kind {
        "add" => AttnBiasType::Add,
        "mul" => AttnBiasType::Mul,
        other => return Err(anyhow!("unknown bias type {other}")),
    };
    let mut m = BiasedMultiHeadAttentionConfig::new(wshape[0], heads)
        .with_attn_bias_type(bias_type)
        .with_dropout(0.0)
        .init(device);
    m.q_proj = linear(fx, &format!("{kind}.q_proj"), device)?;
    m.k_proj = linear(fx, &format!("{kind}.k_proj"), device)?;
    m.v_proj = linear(fx, &format!("{kind}.v_proj"), device)?;
    m.out_proj = linear(fx, &format!("{kind}.out_proj"), device)?;
    Ok(m)
}

fn mask(fx: &Fixture, name: &str, device: &Device) -> Result<Tensor<3, Bool>> {
    Ok(fx.tensor::<3>(name, device)?.equal_elem(1.0))
}

/// Every biased-attention row.
pub fn rows(fixtures: &Path) -> Result<Vec<Row>> {
    let path = fixtures.join("parity").join(FILE);
    let fx = Fixture::read(&path)?;
    let device = Device::flex();
    let mut rows = Vec::new();
    for kind in ["add", "mul"] {
        let m = module(&fx, kind, &device)?;
        let fixture = |case: &str| format!("{FILE} [{kind}.{case}]");

        let out = m.forward(
            fx.tensor(&format!("{kind}.plain.ndata"), &device)?,
            Some(fx.tensor(&format!("{kind}.plain.attn_bias"), &device)?),
            None,
        );
        rows.push(Row::compare(
            &format!("BiasedMHA {kind} vs DGL 2.1.0, no mask"),
            &fixture("plain"),
            &out.try_into_vec_as::<f32>()?,
            fx.values(&format!("{kind}.plain.output"))?,
            TOL,
            "B 3, N 7, d 16, H 4",
        ));

        let out = m.forward(
            fx.tensor(&format!("{kind}.masked.ndata"), &device)?,
            Some(fx.tensor(&format!("{kind}.masked.attn_bias"), &device)?),
            Some(mask(&fx, &format!("{kind}.masked.attn_mask"), &device)?),
        );
        let got = out.try_into_vec_as::<f32>()?;
        let nan_rows = fx.values(&format!("{kind}.masked.dgl_nan_rows"))?;
        let d = got.len() / nan_rows.len();
        let ours_zero = nan_rows
            .iter()
            .enumerate()
            .filter(|(_, v)| **v == 1.0)
            .all(|(r, _)| got[r * d..(r + 1) * d].iter().all(|&x| x == 0.0));
        let mut row = Row::compare(
            &format!("BiasedMHA {kind} vs DGL, padded rows fully masked"),
            &fixture("masked"),
            &got,
            fx.values(&format!("{kind}.masked.output"))?,
            TOL,
            &format!(
                "{} padded query rows: DGL NaN, ours exactly 0 (compared as 0)",
                nan_rows.iter().filter(|v| **v == 1.0).count()
            ),
        );
        row.pass &= ours_zero;
        rows.push(row);

        rows.extend(gradient_rows(&fx, kind, &fixture("keymask"))?);
    }
    Ok(rows)
}

/// Output and gradients of `sum(output * cotangent)` with padded keys masked.
fn gradient_rows(fx: &Fixture, kind: &str, fixture: &str) -> Result<Vec<Row>> {
    let device = Device::flex().autodiff();
    let m = module(fx, kind, &device)?;
    let case = format!("{kind}.keymask");
    let x: Tensor<3> = fx
        .tensor::<3>(&format!("{case}.ndata"), &device)?
        .require_grad();
    let bias: Tensor<4> = fx
        .tensor::<4>(&format!("{case}.attn_bias"), &device)?
        .require_grad();
    let out = m.forward(
        x.clone(),
        Some(bias.clone()),
        Some(mask(fx, &format!("{case}.attn_mask"), &device)?),
    );
    let cotangent: Tensor<3> = fx.tensor(&format!("{case}.cotangent"), &device)?;
    let grads = (out.clone() * cotangent).sum().backward();
    let grad_of = |t: &Tensor<3>| -> Result<Vec<f32>> {
        Ok(t.grad(&grads)
            .ok_or_else(|| anyhow!("no gradient"))?
            .try_into_vec_as::<f32>()?)
    };
    let mut rows = vec![
        Row::compare(
            &format!("BiasedMHA {kind} vs DGL, padded keys masked"),
            fixture,
            &out.clone().try_into_vec_as::<f32>()?,
            fx.values(&format!("{case}.output"))?,
            TOL,
            "node counts 7, 5, 2",
        ),
        Row::compare(
            &format!("BiasedMHA {kind} d(loss)/d(ndata) vs DGL"),
            fixture,
            &grad_of(&x)?,
            fx.values(&format!("{case}.grad_ndata"))?,
            TOL,
            "loss = sum(output * cotangent), cotangent 0 on padded rows",
        ),
        Row::compare(
            &format!("BiasedMHA {kind} d(loss)/d(attn_bias) vs DGL"),
            fixture,
            &bias
                .grad(&grads)
                .ok_or_else(|| anyhow!("no gradient"))?
                .try_into_vec_as::<f32>()?,
            fx.values(&format!("{case}.grad_attn_bias"))?,
            TOL,
            "masked entries: exactly 0 on both sides",
        ),
    ];
    // Parameter gradients, Burn's [in, out] weights transposed back to PyTorch's layout.
    let mut got = Vec::new();
    let mut want = Vec::new();
    for (name, lin) in [
        ("q_proj", &m.q_proj),
        ("k_proj", &m.k_proj),
        ("v_proj", &m.v_proj),
        ("out_proj", &m.out_proj),
    ] {
        let gw = lin
            .weight
            .val()
            .grad(&grads)
            .ok_or_else(|| anyhow!("no gradient for {name}"))?;
        got.extend(gw.transpose().try_into_vec_as::<f32>()?);
        want.extend_from_slice(fx.values(&format!("{case}.grad.{name}.weight"))?);
        let b = lin
            .bias
            .as_ref()
            .ok_or_else(|| anyhow!("{name} has no bias"))?;
        let gb = b
            .val()
            .grad(&grads)
            .ok_or_else(|| anyhow!("no gradient for {name}.bias"))?;
        got.extend(gb.try_into_vec_as::<f32>()?);
        want.extend_from_slice(fx.values(&format!("{case}.grad.{name}.bias"))?);
    }
    rows.push(Row::compare(
        &format!("BiasedMHA {kind} parameter gradients vs DGL"),
        fixture,
        &got,
        &want,
        TOL,
        "q/k/v/out weights and biases",
    ));
    Ok(rows)
}
