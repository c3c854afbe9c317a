//! Transformer-M in the original's PCQM4Mv2 setting (issue #41 item 3): `spatial_pos_max`
//! 1024, so no pair is masked and the ions of a salt attend each other through the
//! spatial table's unreachable row (the original's row 511), with the original's full
//! 512-row spatial table (`limits.max_distance` 509). Fixture:
//! `fixtures/gen/transformer_m_fragments.py` (the original code on the molecules,
//! coordinates and weights of `transformer_m_original_io` / `_weights`).

use std::path::Path;

use anyhow::Result;
use burn::prelude::*;
use models::transformer_m::original_layout::collator_inputs;
use models::transformer_m::{Mode, TransformerMBatch, TransformerMConfig};
use mol_featurize::EncodingLimits;

use super::Row;
use super::fixture::Fixture;
use super::transformer_m::{WEIGHTS, fixture_batch, graph_token, original_config};

const IO: &str = "transformer_m_fragments_io.safetensors";
const TOL: f64 = 1e-5;

/// The fixture's configuration in the fragment setting: [`original_config`] with the
/// original's 512-row spatial table and nothing masked.
pub fn fragment_config() -> TransformerMConfig {
    let base = original_config();
    base.clone()
        .with_limits(EncodingLimits {
            max_distance: 509,
            ..base.limits
        })
        .with_spatial_pos_max(1024)
}

/// The fragment-setting rows: inputs (SPD rows with 511 for the salt, masks) and the
/// graph-token state, prediction and denoising output in the 2D+3D and 3D modes.
pub fn rows(fixtures: &Path) -> Result<Vec<Row>> {
    let device = Device::flex();
    let fx = Fixture::read(&fixtures.join("parity").join(IO))?;
    let original = Fixture::read(
        &fixtures
            .join("parity")
            .join("transformer_m_original_io.safetensors"),
    )?;
    let config = fragment_config();
    let model = config
        .init(&device)
        .load_original(&fixtures.join("parity").join(WEIGHTS))?;
    let data = fixture_batch(&original, &config)?;
    let fixture = format!("{IO} (original code)");
    let ours = collator_inputs(&model, &data);
    let mut got: Vec<f32> = ours.spatial_pos.iter().map(|&x| x as f32).collect();
    got.extend(ours.masked.iter().map(|&m| f32::from(u8::from(m))));
    let mut want = fx.values("in.spatial_pos")?.to_vec();
    want.extend_from_slice(fx.values("in.masked")?);
    let unreachable = ours.spatial_pos.iter().filter(|&&x| x == 511).count();
    let mut rows = vec![Row::compare(
        "Transformer-M inputs, fragments unmasked (spatial_pos_max 1024) vs the original",
        &fixture,
        &got,
        &want,
        0.0,
        &format!(
            "SPD rows of a 512-row table ({unreachable} salt pairs at row 511) and masks \
             (padding only)"
        ),
    )];
    let b = data.batch_size;
    for (mode, what) in [("both", "2D+3D"), ("3d", "3D only")] {
        let m = if mode == "both" {
            Mode::Both
        } else {
            Mode::ThreeD
        };
        let batch = TransformerMBatch::from_data(&data, &vec![m; b], &device);
        let out = model.encode(&batch);
        let token = graph_token(&out);
        let denoise = model
            .denoise(&out)
            .ok_or_else(|| anyhow::anyhow!("no denoising head"))?;
        for (part, values, key) in [
            (
                "graph-token state",
                token.try_into_vec_as::<f32>()?,
                "graph_token",
            ),
            (
                "regression output",
                model.predict(&out).try_into_vec_as::<f32>()?,
                "prediction",
            ),
            (
                "denoising head",
                denoise.try_into_vec_as::<f32>()?,
                "denoise",
            ),
        ] {
            let mut want = fx.values(&format!("out.{mode}.{key}"))?.to_vec();
            let mut values = values;
            if key == "denoise" {
                // Real atoms only (see real_atom_rows).
                values = super::transformer_m::real_atom_rows(&values, &batch.key_padding_mask)?;
                want = super::transformer_m::real_atom_rows(&want, &batch.key_padding_mask)?;
            }
            rows.push(Row::compare(
                &format!("Transformer-M {part}, {what}, fragments unmasked (a salt)"),
                &fixture,
                &values,
                &want,
                TOL,
                "the original's PCQM4Mv2 setting: spatial_pos_max 1024, 512-row SPD table",
            ));
        }
    }
    Ok(rows)
}
