//! Loading an ORIGINAL Transformer-M checkpoint (fairseq names, written by the original
//! lsj2408/Transformer-M code in `fixtures/gen/transformer_m_original.py`) and matching its
//! outputs; the full per-mode comparison is `cargo xtask parity`.

use std::path::PathBuf;

use burn::prelude::*;
use models::LoadError;
use models::transformer_m::{Mode, TransformerMBatch, TransformerMConfig};
use mol_featurize::graphormer::featurize;
use mol_featurize::{EncodingLimits, Molecule, pad_graphormer_batch};
use safetensors::SafeTensors;

fn parity(name: &str) -> PathBuf {
    crate::manifest_dir()
        .join("../../fixtures/parity")
        .join(name)
}

/// The fixture's configuration (see the generator's docstring).
fn config() -> TransformerMConfig {
    TransformerMConfig::new(2, 16, 24, 4, 8)
        .with_limits(EncodingLimits {
            max_hops: 3,
            ..EncodingLimits::default()
        })
        .with_spatial_pos_max(6)
}

#[test]
fn original_checkpoint_loads_and_predicts_as_the_original_code() {
    let _rng = crate::rng_shared();
    let dev = Device::flex();
    let model = config()
        .init(&dev)
        .load_original(&parity("transformer_m_original_weights.safetensors"))
        .unwrap();
    let bytes = std::fs::read(parity("transformer_m_original_io.safetensors")).unwrap();
    let (_, header) = SafeTensors::read_metadata(&bytes).unwrap();
    let smiles: Vec<String> =
        serde_json::from_str(&header.metadata().as_ref().unwrap()["smiles"]).unwrap();
    let io = SafeTensors::deserialize(&bytes).unwrap();
    let f32s = |name: &str| -> Vec<f32> {
        io.tensor(name)
            .unwrap()
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let xyz = f32s("in.coordinates");
    let n = xyz.len() / 3 / smiles.len();
    let feats: Vec<_> = smiles
        .iter()
        .enumerate()
        .map(|(g, s)| {
            let mol = Molecule::from_smiles(s).unwrap();
            let coords = (0..mol.num_atoms())
                .map(|i| {
                    let o = (g * n + i) * 3;
                    [xyz[o], xyz[o + 1], xyz[o + 2]]
                })
                .collect();
            featurize(&mol, 3, Some(coords)).unwrap()
        })
        .collect();
    let data = pad_graphormer_batch(&feats.iter().collect::<Vec<_>>(), &config().limits).unwrap();
    for (mode, key) in [
        (Mode::Both, "both"),
        (Mode::TwoD, "2d"),
        (Mode::ThreeD, "3d"),
    ] {
        let batch = TransformerMBatch::from_data(&data, &vec![mode; data.batch_size], &dev);
        let out = model.encode(&batch);
        let got = model.predict(&out).try_into_vec_as::<f32>().unwrap();
        let want = f32s(&format!("out.{key}.prediction"));
        let noise = model
            .denoise(&out)
            .unwrap()
            .try_into_vec_as::<f32>()
            .unwrap();
        // Real atoms only: the packed encoder leaves padded atoms' states 0 where the
        // original computes them (no loss reads those rows).
        let padding = batch
            .key_padding_mask
            .clone()
            .into_data()
            .try_to_vec::<bool>()
            .unwrap();
        let real = |v: Vec<f32>| -> Vec<f32> {
            v.chunks(3)
                .zip(&padding)
                .filter(|(_, p)| !**p)
                .flat_map(|(r, _)| r.to_vec())
                .collect()
        };
        let noise = real(noise);
        let want_noise = real(f32s(&format!("out.{key}.denoise")));
        assert!(padding.contains(&true) && noise.len() > 30);
        for (g, w) in got.iter().chain(&noise).zip(want.iter().chain(&want_noise)) {
            assert!((g - w).abs() < 1e-5, "{key}: {g} vs {w}");
        }
    }
}

#[test]
fn original_checkpoint_for_another_size_is_a_mismatch_naming_the_tensors() {
    let _rng = crate::rng_shared();
    let err = TransformerMConfig::new(2, 32, 24, 4, 8)
        .init(&Device::flex())
        .load_original(&parity("transformer_m_original_weights.safetensors"))
        .unwrap_err();
    match err {
        LoadError::Mismatch { mismatched, .. } => {
            assert!(
                mismatched
                    .iter()
                    .any(|m| m.starts_with("atom_encoder.atom_embedding.weight")),
                "{mismatched:?}"
            );
        }
        other => panic!("expected a mismatch, got {other}"),
    }
}

#[test]
fn original_checkpoint_loads_without_the_denoising_head_but_not_into_pre_ln() {
    let _rng = crate::rng_shared();
    let weights = parity("transformer_m_original_weights.safetensors");
    let no_head = config()
        .with_denoising_head(false)
        .init(&Device::flex())
        .load_original(&weights)
        .unwrap();
    assert!(no_head.denoise_head.is_none());
    let err = config()
        .with_layer_norm(models::transformer_m::LayerNormPlacement::Pre)
        .init(&Device::flex())
        .load_original(&weights)
        .unwrap_err();
    assert!(err.to_string().contains("post-LN"), "{err}");
}
