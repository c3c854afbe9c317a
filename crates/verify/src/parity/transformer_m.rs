//! Transformer-M parity rows against the ORIGINAL code (lsj2408/Transformer-M 45647e1,
//! run unmodified by `fixtures/gen/transformer_m_original.py`): the original's state dict
//! loaded through our key map, our featurization of the same SMILES and coordinates
//! checked against the original preprocessing, and the embeddings, graph-token state,
//! regression output and denoising output in the 2D+3D, 2D, 3D and mixed modes.

use std::path::Path;

use anyhow::{Result, anyhow};
use burn::prelude::*;
use models::transformer_m::original_layout::collator_inputs;
use models::transformer_m::{Mode, TransformerM, TransformerMBatch, TransformerMConfig};
use mol_featurize::graphormer::{GraphormerBatchData, featurize};
use mol_featurize::{EncodingLimits, Molecule, pad_graphormer_batch};

use super::Row;
use super::fixture::Fixture;

pub(super) const WEIGHTS: &str = "transformer_m_original_weights.safetensors";
const IO: &str = "transformer_m_original_io.safetensors";
const TOL: f64 = 1e-5;

/// The fixture's configuration: 2 layers, d 16, FFN 24, 4 heads, K 8, 3 hops,
/// spatial_pos_max 6, the original's post-LN architecture.
pub fn original_config() -> TransformerMConfig {
    TransformerMConfig::new(2, 16, 24, 4, 8)
        .with_limits(EncodingLimits {
            max_hops: 3,
            ..EncodingLimits::default()
        })
        .with_spatial_pos_max(6)
        .with_attention_dropout(0.0)
        .with_activation_dropout(0.0)
}

/// The model with the original checkpoint's weights.
pub fn original_model(fixtures: &Path, device: &Device) -> Result<TransformerM> {
    Ok(original_config()
        .init(device)
        .load_original(&fixtures.join("parity").join(WEIGHTS))?)
}

/// Our featurization of the fixture's SMILES with its coordinates, padded.
pub(super) fn fixture_batch(
    fx: &Fixture,
    config: &TransformerMConfig,
) -> Result<GraphormerBatchData> {
    let smiles: Vec<String> = serde_json::from_str(fx.meta("smiles")?)?;
    let (shape, xyz) = fx.get("in.coordinates")?;
    let n = shape[1];
    let feats = smiles
        .iter()
        .enumerate()
        .map(|(g, s)| {
            let mol = Molecule::from_smiles(s)?;
            let coords = (0..mol.num_atoms())
                .map(|i| {
                    let o = (g * n + i) * 3;
                    [xyz[o], xyz[o + 1], xyz[o + 2]]
                })
                .collect();
            Ok(featurize(&mol, config.limits.max_hops, Some(coords))?)
        })
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<_> = feats.iter().collect();
    pad_graphormer_batch(&refs, &config.limits).map_err(|e| anyhow!(e))
}

/// The graph token's state after the last layer, `[B, d]`.
pub(super) fn graph_token(out: &models::transformer_m::EncoderOutput) -> Tensor<2> {
    let [bs, _, d] = out.states.dims();
    out.states
        .clone()
        .slice([0..bs, 0..1, 0..d])
        .reshape([bs, d])
}

/// The denoising head's rows of real atoms: `values` is `[B, N, 3]` row-major,
/// `key_padding_mask` `[B, N]` (`true` = padding). The encoder runs packed on flex and
/// leaves padded atoms' states 0 where the original computes them, so the head's padded
/// rows (which no loss reads) differ by design; real atoms are compared.
pub(super) fn real_atom_rows(
    values: &[f32],
    key_padding_mask: &Tensor<2, Bool>,
) -> Result<Vec<f32>> {
    let padding = key_padding_mask
        .clone()
        .into_data()
        .convert::<bool>()
        .try_into_vec::<bool>()
        .map_err(|e| anyhow!("{e:?}"))?;
    if values.len() != padding.len() * 3 {
        return Err(anyhow!(
            "denoising output of {} values for {} atoms",
            values.len(),
            padding.len()
        ));
    }
    Ok(values
        .chunks(3)
        .zip(&padding)
        .filter(|(_, pad)| !**pad)
        .flat_map(|(row, _)| row.iter().copied())
        .collect())
}

/// Every Transformer-M row.
pub fn rows(fixtures: &Path) -> Result<Vec<Row>> {
    let device = Device::flex();
    let fx = Fixture::read(&fixtures.join("parity").join(IO))?;
    let config = original_config();
    let model = original_model(fixtures, &device)?;
    let data = fixture_batch(&fx, &config)?;
    let fixture = format!("{IO} (original code)");
    let mut rows = vec![input_row(&fx, &model, &data, &fixture)?];
    let b = data.batch_size;
    for (mode, modes, what) in [
        ("both", vec![Mode::Both; b], "2D+3D (original eval path)"),
        ("2d", vec![Mode::TwoD; b], "2D only"),
        ("3d", vec![Mode::ThreeD; b], "3D only"),
        (
            "mixed",
            vec![Mode::Both, Mode::TwoD, Mode::ThreeD, Mode::ThreeD],
            "one batch mixing the modes",
        ),
    ] {
        let batch = TransformerMBatch::from_data(&data, &modes, &device);
        let embedded = model.embed(&batch);
        let out = model.encode(&batch);
        let token = graph_token(&out);
        let row = |part: &str, got: Vec<f32>, want: &str, note: &str| -> Result<Row> {
            let mut want = fx.values(&format!("out.{mode}.{want}"))?.to_vec();
            let mut got = got;
            if part == "denoising head" {
                got = real_atom_rows(&got, &batch.key_padding_mask)?;
                want = real_atom_rows(&want, &batch.key_padding_mask)?;
            }
            Ok(Row::compare(
                &format!("Transformer-M {part}, {what}"),
                &fixture,
                &got,
                &want,
                TOL,
                note,
            ))
        };
        rows.push(row(
            "embeddings (layer 0 input)",
            embedded.states.try_into_vec_as::<f32>()?,
            "layer0_in",
            "atoms + degree + 0.01 x 3D feature, graph token, embedding LayerNorm",
        )?);
        rows.push(row(
            "graph-token state (2 post-LN layers)",
            token.try_into_vec_as::<f32>()?,
            "graph_token",
            "SPD / multi-hop edge / 3D biases, masked far pairs",
        )?);
        rows.push(row(
            "regression output",
            model.predict(&out).try_into_vec_as::<f32>()?,
            "prediction",
            "lm_head_transform_weight, GELU, LayerNorm, embed_out + learned bias",
        )?);
        rows.push(row(
            "denoising head",
            model
                .denoise(&out)
                .ok_or_else(|| anyhow!("no denoising head"))?
                .try_into_vec_as::<f32>()?,
            "denoise",
            "AtomTaskHead: full pair bias, three biased axis projections (real atoms)",
        )?);
    }
    Ok(rows)
}

/// Our featurization against the original preprocessing (ogb `smiles2graph`,
/// `preprocess_item`, `algos.pyx` ported, `collator_3d`): every index of every tensor.
fn input_row(
    fx: &Fixture,
    model: &TransformerM,
    data: &GraphormerBatchData,
    fixture: &str,
) -> Result<Row> {
    let ours = collator_inputs(model, data);
    let as_f32 = |v: &[i64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    let mut got = Vec::new();
    let mut want = Vec::new();
    let mut differing = Vec::new();
    for (name, values) in [
        ("in.x", as_f32(&ours.x)),
        ("in.in_degree", as_f32(&ours.in_degree)),
        ("in.spatial_pos", as_f32(&ours.spatial_pos)),
        ("in.edge_input", as_f32(&ours.edge_input)),
        ("in.node_type_edge", as_f32(&ours.node_type_edge)),
        (
            "in.masked",
            ours.masked.iter().map(|&m| m as u8 as f32).collect(),
        ),
    ] {
        let reference = fx.values(name)?;
        if reference.len() != values.len() {
            return Err(anyhow!(
                "{name}: {} values, ours {}",
                reference.len(),
                values.len()
            ));
        }
        let wrong = values.iter().zip(reference).filter(|(a, b)| a != b).count();
        if wrong > 0 {
            differing.push(format!("{name}: {wrong} differ"));
        }
        got.extend(values);
        want.extend_from_slice(reference);
    }
    Ok(Row::compare(
        "Transformer-M inputs vs the original preprocessing",
        fixture,
        &got,
        &want,
        0.0,
        &format!(
            "x, degrees, SPD, multi-hop paths (Floyd-Warshall order), node_type_edge, masks: {} indices{}",
            got.len(),
            if differing.is_empty() {
                String::new()
            } else {
                format!(" ({})", differing.join(", "))
            }
        ),
    ))
}

/// ONNX rows: the small preset (initial weights, seeded) and the original checkpoint
/// exported and run in ONNX Runtime and tract on two batches of real molecules with
/// conformer coordinates: 3 molecules in 2D / 3D / 2D+3D modes, and 5 molecules (a salt
/// among them) in 3D mode.
#[cfg(feature = "onnx")]
pub fn onnx_rows(fixtures: &Path) -> Result<Vec<Row>> {
    let device = Device::flex();
    device.seed(5);
    let small = TransformerMConfig::small()
        .with_attention_dropout(0.0)
        .with_activation_dropout(0.0);
    let mut rows = onnx_rows_for(
        "Transformer-M small (2D and 3D inputs)",
        &small.init(&device),
        &small,
    )?;
    rows.extend(onnx_rows_for(
        "Transformer-M original checkpoint (2D and 3D inputs)",
        &original_model(fixtures, &device)?,
        &original_config(),
    )?);
    Ok(rows)
}

#[cfg(feature = "onnx")]
fn onnx_rows_for(
    name: &str,
    model: &TransformerM,
    config: &TransformerMConfig,
) -> Result<Vec<Row>> {
    use export::Case;
    use mol_featurize::{ConformerOptions, GraphormerFeaturizer, featurize_all};

    let device = Device::flex();
    let featurizer = GraphormerFeaturizer {
        max_hops: config.limits.max_hops,
        conformer: ConformerOptions::default(),
    };
    let feats = |smiles: &[&str]| -> Result<Vec<mol_featurize::GraphormerFeatures>> {
        let smiles: Vec<String> = smiles.iter().map(|s| s.to_string()).collect();
        let (out, report) = featurize_all(&smiles, &featurizer, false);
        if report.n_skipped > 0 {
            return Err(anyhow!("not featurized: {:?}", report.skipped));
        }
        Ok(out.into_iter().flatten().collect())
    };
    let mut cases = Vec::new();
    for (smiles, modes) in [
        (
            vec!["CCO", "c1ccncc1", "CC(=O)Nc1ccc(O)cc1"],
            vec![Mode::TwoD, Mode::ThreeD, Mode::Both],
        ),
        (
            vec![
                "C",
                "CC(=O)[O-].[Na+]",
                "O=C1CCCN1",
                "FC(F)(F)c1ccccc1",
                "CCCCCCCCCCCCO",
            ],
            vec![Mode::ThreeD; 5],
        ),
    ] {
        let f = feats(&smiles)?;
        let refs: Vec<&mol_featurize::GraphormerFeatures> = f.iter().collect();
        let data = pad_graphormer_batch(&refs, &config.limits).map_err(anyhow::Error::msg)?;
        let want = model
            .forward(&TransformerMBatch::from_data(&data, &modes, &device))
            .try_into_vec_as::<f32>()?;
        cases.push(Case {
            label: format!("{} x {} atoms", data.batch_size, data.n_atoms),
            feeds: export::transformer_m::transformer_m_feeds(&data, &modes),
            want,
        });
    }
    let onnx = export::transformer_m_to_onnx(model, &[]);
    Ok(super::onnx::rows(name, &onnx, "prediction", &cases))
}
