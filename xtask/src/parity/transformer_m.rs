//! Transformer-M parity rows against our PyTorch reference
//! (`fixtures/gen/transformer_m_reference.py`): Gaussian basis, atom + degree encoding,
//! spatial (SPD) and multi-hop edge encodings, the full attention bias with the graph
//! token, one pre-LN encoder layer, and the whole model's regression and denoising
//! outputs, on a padded batch of three molecules in modes 2D+3D, 2D and 3D.

use std::path::Path;

use anyhow::Result;
use burn::prelude::*;
use models::transformer_m::{TransformerM, TransformerMBatch, TransformerMConfig};
use mol_featurize::EncodingLimits;

use super::Row;
use super::fixture::Fixture;

const WEIGHTS: &str = "transformer_m_weights.safetensors";
const IO: &str = "transformer_m_io.safetensors";
const TOL: f64 = 1e-5;

/// The reference script's configuration: d 16, H 4, K 8, FFN 24, 2 layers, limits 4/6/3.
pub fn reference_config() -> TransformerMConfig {
    TransformerMConfig::new(2, 16, 24, 4, 8)
        .with_limits(EncodingLimits {
            max_degree: 4,
            max_distance: 6,
            max_hops: 3,
        })
        .with_dropout(0.0)
        .with_attention_dropout(0.0)
        .with_activation_dropout(0.0)
}

/// The model with the reference weights.
pub fn reference_model(fixtures: &Path, device: &Device) -> Result<TransformerM> {
    Ok(reference_config()
        .init(device)
        .load_pytorch_safetensors(&fixtures.join("parity").join(WEIGHTS))?)
}

fn reference_batch_from(fx: &Fixture, device: &Device) -> Result<TransformerMBatch> {
    let int3 = |name: &str| -> Result<Tensor<3, Int>> { Ok(fx.tensor::<3>(name, device)?.int()) };
    Ok(TransformerMBatch {
        atom_index: int3("in.atom_index")?,
        degree_index: fx.tensor::<2>("in.degree_index", device)?.int(),
        spatial_index: int3("in.spatial_index")?,
        edge_index: fx.tensor::<5>("in.edge_index", device)?.int(),
        path_length: fx.tensor("in.path_length", device)?,
        pair_type: int3("in.pair_type")?,
        coordinates: fx.tensor("in.coordinates", device)?,
        padding: fx.tensor::<2>("in.padding", device)?.equal_elem(1.0),
        use_2d: fx.tensor("in.use_2d", device)?,
        use_3d: fx.tensor("in.use_3d", device)?,
    })
}

/// Every Transformer-M row.
pub fn rows(fixtures: &Path) -> Result<Vec<Row>> {
    let device = Device::flex();
    let fx = Fixture::read(&fixtures.join("parity").join(IO))?;
    let model = reference_model(fixtures, &device)?;
    let batch = reference_batch_from(&fx, &device)?;
    let fixture = format!("{IO} (our PyTorch reference)");
    let row = |component: &str, got: Tensor<4>, want: &str, note: &str| -> Result<Row> {
        Ok(Row::compare(
            component,
            &fixture,
            &got.try_into_vec_as::<f32>()?,
            fx.values(want)?,
            TOL,
            note,
        ))
    };
    let (dist, _) = TransformerM::geometry(batch.coordinates.clone());
    let psi = model.gaussian.forward(dist, batch.pair_type.clone());
    let atoms = model.atom_features(&batch);
    let [b, n, d] = atoms.dims();
    let embedded = model.embed(&batch);
    let layer0_in: Tensor<3> = fx.tensor("out.layer0_in", &device)?;
    let layer0_bias: Tensor<4> = fx.tensor("out.attn_bias", &device)?;
    let layer0 = model.layers[0].forward(layer0_in, layer0_bias, embedded.attn_mask.clone());
    let out = model.encode(&batch);
    let prediction = model.predict(&out);
    let denoise = model
        .denoise(&out)
        .expect("the reference has a denoising head");
    let t = n + 1;
    Ok(vec![
        row(
            "Transformer-M Gaussian basis psi (K 8)",
            psi,
            "out.gaussian",
            "pair-type affine, |sigma| + 0.01; distances in Angstrom",
        )?,
        row(
            "Transformer-M atom + degree encoding",
            atoms.reshape([b, n, 1, d]),
            "out.atom_features",
            "9 OGB features summed; degree only where 2D is on",
        )?,
        row(
            "Transformer-M spatial (SPD) encoding",
            model.spatial_bias(&batch),
            "out.spatial_bias",
            "incl. unreachable and padding rows",
        )?,
        row(
            "Transformer-M multi-hop edge encoding",
            model.edge_bias(&batch),
            "out.edge_bias",
            "3 hops, per-hop H x H weights",
        )?,
        row(
            "Transformer-M attention bias with graph token",
            embedded.attn_bias,
            "out.attn_bias",
            "2D + 3D channels by mode, virtual distance",
        )?,
        row(
            "Transformer-M embeddings (layer 0 input)",
            embedded.states.reshape([b, t, 1, d]),
            "out.layer0_in",
            "graph token + atoms incl. 3D atom feature",
        )?,
        row(
            "Transformer-M encoder layer 0",
            layer0.reshape([b, t, 1, d]),
            "out.layer0_out",
            "pre-LN, biased MHA, GELU FFN",
        )?,
        row(
            "Transformer-M regression output (2 layers)",
            prediction.reshape([b, 1, 1, 1]),
            "out.prediction",
            "graph token head",
        )?,
        row(
            "Transformer-M 3D denoising head",
            denoise.reshape([b, n, 3, 1]),
            "out.denoise",
            "equivariant NodeTaskHead",
        )?,
    ])
}

/// ONNX rows: the small preset (initial weights, seeded) and the reference model (large
/// random weights, 2 layers) exported and run in ONNX Runtime and tract on two batches
/// of real molecules with conformer coordinates: 3 molecules in 2D / 3D / 2D+3D modes,
/// and 5 molecules (a salt among them) in 3D mode.
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
        "Transformer-M reference weights (2D and 3D inputs)",
        &reference_model(fixtures, &device)?,
        &reference_config(),
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
    use models::transformer_m::Mode;
    use mol_featurize::graphormer::featurize;
    use mol_featurize::{ConformerOptions, Molecule, conformer, pad_graphormer_batch};

    let device = Device::flex();
    let feats = |smiles: &[&str]| -> Result<Vec<mol_featurize::GraphormerFeatures>> {
        smiles
            .iter()
            .map(|s| {
                let mol = Molecule::from_smiles(s)?;
                let (xyz, _) = conformer::coordinates(&mol, &ConformerOptions::default())
                    .ok_or_else(|| anyhow::anyhow!("{s}: no coordinates"))?;
                let xyz = xyz
                    .iter()
                    .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32])
                    .collect();
                Ok(featurize(&mol, config.limits.max_hops, Some(xyz))?)
            })
            .collect()
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
                "C#N",
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
            label: format!("{} x {} atoms", data.batch, data.atoms),
            feeds: export::transformer_m::transformer_m_feeds(&data, &modes),
            want,
        });
    }
    let onnx = export::transformer_m_to_onnx(model, &[]);
    Ok(super::onnx::rows(name, &onnx, "prediction", &cases))
}
