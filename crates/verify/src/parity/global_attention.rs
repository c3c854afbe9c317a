//! MSA column global attention parity rows: AlphaFold Algorithm 19 in JAX + dm-haiku
//! (`fixtures/gen/global_attention_reference.py`), weights loaded by their AlphaFold
//! names, ragged masks with a fully masked column, in f32 and with bf16 inputs.

use std::path::Path;

use anyhow::{Result, anyhow};
use burn::prelude::*;
use burn::tensor::FloatDType;
#[cfg(feature = "onnx")]
use export::{Case, Feed};
use models::{MsaColumnGlobalAttention, MsaColumnGlobalAttentionConfig};

use super::Row;
use super::fixture::Fixture;
#[cfg(feature = "onnx")]
use super::onnx;

const FILE: &str = "global_attention.safetensors";

/// f32 output tolerance.
const TOL: f64 = 1e-5;

/// bf16 tolerance: bf16 keeps 8 significant bits, the outputs of this case reach |9.1|
/// where one bf16 step is 2^-4 = 0.0625, and the two sides round different
/// intermediates (XLA accumulates bf16 dots and sums in f32); under 2 steps at the largest
/// magnitude, rounded down to 0.1. (The JAX bf16 result itself is 0.049 from the f32 one.)
const TOL_BF16: f64 = 0.1;

/// The cases written by the fixture script: (haiku scope, description).
const CASES: [(&str, &str); 3] = [
    ("msa_column_global_attention", "gated, c_m 16, H 4, c 8"),
    (
        "msa_column_global_attention_ungated",
        "ungated, c_m 16, H 4, c 8",
    ),
    (
        "msa_column_global_attention_default",
        "AlphaFold extra-MSA defaults: c_m 64, H 8, c 8, gated",
    ),
];

/// The block configured from the shapes in the fixture.
fn block(
    fx: &Fixture,
    scope: &str,
    path: &Path,
    device: &Device,
) -> Result<MsaColumnGlobalAttention> {
    let (shape, _) = fx.get(&format!("{scope}/attention//query_w"))?;
    let [c_m, num_heads, c] = shape[..] else {
        return Err(anyhow!("{scope}: query_w is not [c_m, H, c]"));
    };
    let gating = fx.get(&format!("{scope}/attention//gating_w")).is_ok();
    let config = MsaColumnGlobalAttentionConfig::new()
        .with_c_m(c_m)
        .with_num_heads(num_heads)
        .with_c(c)
        .with_gating(gating);
    Ok(config.init(device).load_alphafold_params(path, scope)?)
}

/// Parity rows for every case, plus the bf16 row of the gated case.
pub fn rows(fixtures: &Path) -> Result<Vec<Row>> {
    let path = fixtures.join("parity").join(FILE);
    let fx = Fixture::read(&path)?;
    let device = Device::flex();
    let mut rows = Vec::new();
    for (scope, description) in CASES {
        let model = block(&fx, scope, &path, &device)?;
        let msa_act: Tensor<3> = fx.tensor(&format!("{scope}.msa_act"), &device)?;
        let msa_mask: Tensor<2> = fx.tensor(&format!("{scope}.msa_mask"), &device)?;
        let padding = msa_mask.equal_elem(0.0);
        let fixture = format!("{FILE} [{scope}]");
        #[cfg(feature = "onnx")]
        rows.extend(onnx_rows(description, &model, &msa_act, &padding)?);
        #[cfg(not(feature = "onnx"))]
        let _ = description;
        let out = model.forward(msa_act.clone(), padding.clone());
        rows.push(Row::compare(
            "MSA column global attention (f32)",
            &fixture,
            &out.try_into_vec_as::<f32>()?,
            fx.values(&format!("{scope}.output"))?,
            TOL,
            &format!(
                "{description}; ragged masks, one single-sequence and one fully masked column"
            ),
        ));
        if let Ok(want) = fx.values(&format!("{scope}.output_bf16")) {
            let out = model
                .forward(msa_act.cast(FloatDType::BF16), padding)
                .cast(FloatDType::F32);
            rows.push(Row::compare(
                "MSA column global attention (bf16 inputs)",
                &fixture,
                &out.try_into_vec_as::<f32>()?,
                want,
                TOL_BF16,
                "bf16 activations and weights, LayerNorm and softmax in f32 on both sides; \
                 bound 0.1 = 1.6 bf16 steps at the largest output (|y| = 9.1, step 0.0625)",
            ));
        }
    }
    Ok(rows)
}

/// The ONNX inputs of one MSA and Burn's output on it.
#[cfg(feature = "onnx")]
fn onnx_case(
    model: &MsaColumnGlobalAttention,
    msa_act: Tensor<3>,
    padding: Tensor<2, Bool>,
) -> Result<Case> {
    let [n_seq, n_res, c_m] = msa_act.dims();
    let mask: Vec<bool> = padding.clone().into_data().iter::<bool>().collect();
    let act: Vec<f32> = msa_act.clone().try_into_vec_as()?;
    Ok(Case {
        label: format!("{n_seq} x {n_res}"),
        feeds: vec![
            Feed::f32("msa_act", &[n_seq, n_res, c_m], act),
            Feed::bool("msa_padding_mask", &[n_seq, n_res], mask),
        ],
        want: model.forward(msa_act, padding).try_into_vec_as()?,
    })
}

/// ONNX export of the block, run on the fixture MSA and on a crop of it (fewer
/// sequences, residues 1..5: the ragged, fully masked and single-sequence columns).
#[cfg(feature = "onnx")]
fn onnx_rows(
    description: &str,
    model: &MsaColumnGlobalAttention,
    msa_act: &Tensor<3>,
    padding: &Tensor<2, Bool>,
) -> Result<Vec<Row>> {
    let [n_seq, _, _] = msa_act.dims();
    let keep = 0..(n_seq * 7 / 10).max(1);
    let cases = [
        onnx_case(model, msa_act.clone(), padding.clone())?,
        onnx_case(
            model,
            msa_act.clone().slice([keep.clone(), 1..5]),
            padding.clone().slice([keep, 1..5]),
        )?,
    ];
    let proto = export::msa_global_attention_to_onnx(
        model,
        &[("molattn.model".into(), "msa_column_global_attention".into())],
    );
    Ok(onnx::rows(
        &format!("MSA global attention ({description})"),
        &proto,
        "msa_update",
        &cases,
    ))
}
