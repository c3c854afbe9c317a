//! MSA column global attention: loading AlphaFold-named parameters from the fixture of
//! `fixtures/gen/global_attention_reference.py` (JAX + dm-haiku), its outputs, and masks.

use std::path::PathBuf;

use burn::prelude::*;
use burn::tensor::Device;
use models::{LoadError, MsaColumnGlobalAttention, MsaColumnGlobalAttentionConfig};
use safetensors::SafeTensors;

const GATED: &str = "msa_column_global_attention";
const UNGATED: &str = "msa_column_global_attention_ungated";

fn fixture() -> PathBuf {
    crate::manifest_dir().join("../../fixtures/parity/global_attention.safetensors")
}

/// `name` from the fixture as `(shape, values)`.
fn read(name: &str) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(fixture()).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let view = st.tensor(name).unwrap();
    let values = view
        .data()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (view.shape().to_vec(), values)
}

fn tensor<const D: usize>(name: &str, dev: &Device) -> Tensor<D> {
    let (shape, values) = read(name);
    Tensor::from_data(TensorData::new(values, shape), dev)
}

fn small(gating: bool) -> MsaColumnGlobalAttentionConfig {
    MsaColumnGlobalAttentionConfig::new()
        .with_c_m(16)
        .with_num_heads(4)
        .with_c(8)
        .with_gating(gating)
}

fn load(gating: bool, scope: &str, dev: &Device) -> Result<MsaColumnGlobalAttention, LoadError> {
    small(gating)
        .init(dev)
        .load_alphafold_params(&fixture(), scope)
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn haiku_parameters_load_and_reproduce_the_jax_output() {
    let _rng = crate::rng_shared();
    let dev = Device::flex();
    for (gating, scope) in [(true, GATED), (false, UNGATED)] {
        let block = load(gating, scope, &dev).unwrap();
        // gating_b was drawn as 1 + 0.5 N(0, 1): a failed mapping leaves the init value 1.
        if gating {
            let b: Vec<f32> = block
                .attention
                .gating_b
                .as_ref()
                .unwrap()
                .val()
                .try_into_vec_as()
                .unwrap();
            assert!(b.iter().any(|v| (v - 1.0).abs() > 0.1));
        }
        let msa_act: Tensor<3> = tensor(&format!("{scope}.msa_act"), &dev);
        let mask: Tensor<2> = tensor(&format!("{scope}.msa_mask"), &dev);
        let out: Vec<f32> = block
            .forward(msa_act, mask.equal_elem(0.0))
            .try_into_vec_as()
            .unwrap();
        let want = read(&format!("{scope}.output")).1;
        let err = max_abs_diff(&out, &want);
        assert!(err <= 1e-5, "{scope}: max abs {err}");
    }
}

#[test]
fn mismatched_configurations_are_reported() {
    let _rng = crate::rng_shared();
    let dev = Device::flex();
    // Gated parameters into an ungated block: gating_w and gating_b are unexpected.
    match load(false, GATED, &dev) {
        Err(LoadError::Mismatch { unexpected, .. }) => {
            assert!(
                unexpected.iter().any(|k| k.contains("gating_w")),
                "{unexpected:?}"
            );
            assert!(
                unexpected.iter().any(|k| k.contains("gating_b")),
                "{unexpected:?}"
            );
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
    // An ungated file for a gated block: the gating parameters are missing.
    match load(true, UNGATED, &dev) {
        Err(LoadError::Mismatch { missing, .. }) => {
            assert!(
                missing.iter().any(|k| k.contains("gating_w")),
                "{missing:?}"
            );
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
    // Wrong width: every tensor has a shape mismatch.
    let wide = small(true).with_c_m(32).init(&dev);
    match wide.load_alphafold_params(&fixture(), GATED) {
        Err(LoadError::Mismatch { mismatched, .. }) => assert!(!mismatched.is_empty()),
        other => panic!("expected a mismatch, got {other:?}"),
    }
    // An unknown scope loads nothing.
    assert!(matches!(
        load(true, "evoformer", &dev),
        Err(LoadError::Mismatch { .. })
    ));
    assert!(matches!(
        small(true)
            .init(&dev)
            .load_alphafold_params(&PathBuf::from("missing.safetensors"), GATED),
        Err(LoadError::Read { .. })
    ));
}

/// All-ones mask vs ragged: the output of a present row depends only on present rows
/// of its column, and a fully masked column is finite.
#[test]
fn masked_rows_do_not_leak_into_present_rows() {
    let _rng = crate::rng_shared();
    let dev = Device::flex();
    let block = load(true, GATED, &dev).unwrap();
    let msa_act: Tensor<3> = tensor(&format!("{GATED}.msa_act"), &dev);
    let [n_seq, n_res, _] = msa_act.dims();
    // Column 1 keeps its first 7 sequences; rows 7.. are padding.
    let mask = Tensor::<2, Bool>::from_data(
        TensorData::new(
            (0..n_seq * n_res)
                .map(|i| i % n_res == 1 && i / n_res >= 7)
                .collect::<Vec<_>>(),
            [n_seq, n_res],
        ),
        &dev,
    );
    let before: Vec<f32> = block
        .forward(msa_act.clone(), mask.clone())
        .try_into_vec_as()
        .unwrap();
    // Scramble the padded rows of column 1.
    let noise = Tensor::<3>::random(
        [n_seq - 7, 1, 16],
        burn::tensor::Distribution::Normal(0.0, 100.0),
        &dev,
    );
    let scrambled = msa_act.clone().slice_assign([7..n_seq, 1..2, 0..16], noise);
    let after: Vec<f32> = block.forward(scrambled, mask).try_into_vec_as().unwrap();
    for s in 0..7 {
        for r in 0..n_res {
            let i = (s * n_res + r) * 16;
            assert!(max_abs_diff(&before[i..i + 16], &after[i..i + 16]) < 1e-5);
        }
    }
    // Everything masked: finite.
    let all = Tensor::<2, Bool>::from_data(
        TensorData::new(vec![true; n_seq * n_res], [n_seq, n_res]),
        &dev,
    );
    let out: Vec<f32> = block.forward(msa_act, all).try_into_vec_as().unwrap();
    assert!(out.iter().all(|v| v.is_finite()));
}

/// The default configuration is AlphaFold's extra-MSA block and starts as the zero map.
#[test]
fn default_configuration_is_alphafold_extra_msa() {
    let _rng = crate::rng_shared();
    let dev = Device::flex();
    let config = MsaColumnGlobalAttentionConfig::new();
    assert_eq!((config.c_m, config.num_heads, config.c), (64, 8, 8));
    let block = config.init(&dev);
    assert_eq!(block.attention.query_w.dims(), [64, 8, 8]);
    assert_eq!(block.attention.output_w.dims(), [8, 8, 64]);
    let out: Vec<f32> = block
        .forward(
            Tensor::random([5, 3, 64], burn::tensor::Distribution::Default, &dev),
            Tensor::<2, Bool>::from_data(TensorData::new(vec![false; 15], [5, 3]), &dev),
        )
        .try_into_vec_as()
        .unwrap();
    assert!(out.iter().all(|v| *v == 0.0));
}
