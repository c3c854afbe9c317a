//! Loading reference PyTorch MAT state dicts (`fixtures/parity/mat_small_weights.pt`,
//! written by `fixtures/gen/mat_reference.py` with the reference module tree).

use std::path::PathBuf;

use burn::prelude::*;
use burn::tensor::Device;
use models::MatConfig;
use models::mat::{LoadError, LoadParts};

fn small_pt() -> PathBuf {
    crate::manifest_dir().join("../../fixtures/parity/mat_small_weights.pt")
}

fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.try_into_vec_as::<f32>().unwrap()
}

#[test]
fn full_state_dict_loads_with_reference_names() {
    let _rng = crate::rng_shared();
    let dev = Device::flex();
    let model = MatConfig::small()
        .init(&dev)
        .load_reference_weights(&small_pt(), LoadParts::All)
        .unwrap();
    // generator.proj.bias from fixtures/gen/prng.py: uniform("generator.proj.bias", -0.1, 0.1)
    let bias = values(model.generator.proj.bias.as_ref().unwrap().val());
    assert_eq!(bias.len(), 1);
    assert!((bias[0] - 0.0).abs() < 0.1 && bias[0] != 0.0);
    // a_2 gains were drawn in [0.9, 1.1): a wrong mapping would leave the init value 1.
    let a_2 = match &model.encoder.layers[1].norm_ff {
        attn_core::MatNorm::LayerNorm(n) => values(n.a_2.val()),
        attn_core::MatNorm::ScaleNorm(_) => panic!("LayerNorm expected"),
    };
    assert!(a_2.iter().all(|v| (0.9..1.1).contains(v)) && a_2.iter().any(|v| *v != 1.0));
}

#[test]
fn encoder_only_keeps_the_fresh_generator() {
    let _rng = crate::rng_exclusive();
    let dev = Device::flex();
    dev.seed(1);
    let fresh = MatConfig::small().with_num_targets(3).init(&dev);
    let before = values(fresh.generator.proj.weight.val());
    let model = fresh
        .load_reference_weights(&small_pt(), LoadParts::EncoderOnly)
        .unwrap();
    // A 3-task head is kept as initialised although the checkpoint has a 1-task head.
    assert_eq!(values(model.generator.proj.weight.val()), before);
    let lut = values(model.src_embed.lut.weight.val());
    let full = MatConfig::small()
        .init(&dev)
        .load_reference_weights(&small_pt(), LoadParts::All)
        .unwrap();
    assert_eq!(lut, values(full.src_embed.lut.weight.val()));
}

#[test]
fn wrong_configuration_lists_missing_unexpected_and_mismatched() {
    let _rng = crate::rng_shared();
    let dev = Device::flex();
    let err = MatConfig::small()
        .with_num_layers(3)
        .with_d_model(64)
        .init(&dev)
        .load_reference_weights(&small_pt(), LoadParts::All)
        .unwrap_err();
    match &err {
        LoadError::Mismatch {
            missing,
            mismatched,
            ..
        } => {
            assert!(
                missing.iter().any(|k| k.starts_with("encoder.layers.2.")),
                "{missing:?}"
            );
            assert!(!mismatched.is_empty());
        }
        other => panic!("expected a mismatch, got {other}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("mat_small_weights.pt") && text.contains("missing"),
        "{text}"
    );
    let missing_file = MatConfig::small()
        .init(&dev)
        .load_reference_weights(&PathBuf::from("/nonexistent.pt"), LoadParts::All);
    assert!(matches!(missing_file, Err(LoadError::Read { .. })));
}
