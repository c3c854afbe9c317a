//! Every branch of the lowerings (norm kinds, distance kernels, trainable lambdas,
//! pooling, generator depth, gating) exported and run in tract (pure Rust), against the
//! Burn module on a padded batch. ONNX Runtime and the checker run in `cargo xtask parity`.

use attn_core::{DistanceKernel, NormKind};
use burn::prelude::*;
use burn::tensor::Distribution;
use export::verify::{max_differences, run_tract};
use export::{Feed, FeedData};
use models::mat::{Aggregation, OutputNonlinearity};
use models::{MatBatch, MatConfig, MatModel, MsaColumnGlobalAttentionConfig};

fn path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("molattn-test-{}-{name}.onnx", std::process::id()))
}

fn f32_feed(name: &str, shape: &[usize], t: Tensor<3>) -> Feed {
    Feed {
        name: name.into(),
        shape: shape.to_vec(),
        data: FeedData::F32(t.try_into_vec_as().unwrap()),
    }
}

/// A padded batch of 3 molecules with 5, 2 and 4 real atoms (N = 5), no bonds into
/// padding (as the featurizer pads).
fn batch(dev: &Device, d_atom: usize) -> MatBatch {
    let real = [5, 2, 4];
    let mask: Vec<bool> = real
        .iter()
        .flat_map(|&r| (0..5).map(move |i| i >= r))
        .collect();
    let bonds: Vec<f32> = real
        .iter()
        .flat_map(|&r| (0..25).map(move |ij| f32::from(ij / 5 < r && ij % 5 < r)))
        .collect();
    let adjacency = Tensor::<3>::random([3, 5, 5], Distribution::Bernoulli(0.4), dev)
        * Tensor::from_data(TensorData::new(bonds, [3, 5, 5]), dev);
    MatBatch {
        node_features: Tensor::random([3, 5, d_atom], Distribution::Default, dev),
        adjacency,
        distances: Tensor::random([3, 5, 5], Distribution::Uniform(0.5, 6.0), dev),
        key_padding_mask: Tensor::from_data(TensorData::new(mask, [3, 5]), dev),
        edge_features: None,
    }
}

fn check_mat(name: &str, config: MatConfig) {
    let dev = Device::flex();
    dev.seed(11);
    let model: MatModel = config.with_dropout(0.0).init(&dev);
    let b = batch(&dev, model.src_embed.lut.weight.dims()[0]);
    let want: Vec<f32> = model.forward(&b).try_into_vec_as().unwrap();
    let feeds = export::mat_batch_feeds(&b).unwrap();
    let file = path(name);
    export::write_model(&export::mat_to_onnx(&model, &[]), &file).unwrap();
    let got = run_tract(&file, &feeds).unwrap();
    let _ = std::fs::remove_file(&file);
    let (max_abs, _) = max_differences(&got, &want);
    assert!(
        max_abs <= 1e-4,
        "{name}: tract vs Burn {max_abs} ({got:?} vs {want:?})"
    );
}

#[test]
fn mat_reference_defaults() {
    check_mat(
        "mat-default",
        MatConfig::small().with_d_model(32).with_num_heads(4),
    );
}

#[test]
fn mat_scale_norm_exp_kernel_trainable_lambdas_dummy_pooling_two_generator_layers() {
    check_mat(
        "mat-variants",
        MatConfig::small()
            .with_d_model(32)
            .with_num_heads(2)
            .with_norm(NormKind::ScaleNorm)
            .with_distance_kernel(DistanceKernel::Exp)
            .with_trainable_lambda(true)
            .with_aggregation(Aggregation::DummyNode)
            .with_n_generator_layers(2)
            .with_dense_output_nonlinearity(OutputNonlinearity::Tanh)
            .with_leaky_relu_slope(0.1)
            .with_num_targets(2),
    );
}

#[test]
fn mat_sum_pooling_no_output_nonlinearity() {
    check_mat(
        "mat-sum",
        MatConfig::small()
            .with_d_model(16)
            .with_num_heads(2)
            .with_aggregation(Aggregation::Sum)
            .with_dense_output_nonlinearity(OutputNonlinearity::None),
    );
}

/// The graph runs its row-wise work on the real atoms only (`export::packing`): NaN in
/// every padded atom's features leaves the prediction equal to Burn's on the clean batch.
/// A padded graph reads those rows into the values of the attention, where a weight of 0
/// times NaN is NaN.
#[test]
fn mat_never_reads_padded_atoms() {
    let dev = Device::flex();
    dev.seed(13);
    let model: MatModel = MatConfig::small()
        .with_d_model(32)
        .with_num_heads(4)
        .with_dropout(0.0)
        .init(&dev);
    let d_atom = model.src_embed.lut.weight.dims()[0];
    let b = batch(&dev, d_atom);
    let want: Vec<f32> = model.forward(&b).try_into_vec_as().unwrap();
    let mask: Vec<bool> = b
        .key_padding_mask
        .clone()
        .into_data()
        .iter::<bool>()
        .collect();
    let mut feeds = export::mat_batch_feeds(&b).unwrap();
    let FeedData::F32(features) = &mut feeds[0].data else {
        panic!("node_features is the first feed")
    };
    for (atom, &padded) in mask.iter().enumerate() {
        if padded {
            features[atom * d_atom..(atom + 1) * d_atom].fill(f32::NAN);
        }
    }
    assert!(mask.iter().filter(|&&m| m).count() >= 4);
    let file = path("mat-packed");
    export::write_model(&export::mat_to_onnx(&model, &[]), &file).unwrap();
    let got = run_tract(&file, &feeds).unwrap();
    let _ = std::fs::remove_file(&file);
    assert!(got.iter().all(|v| v.is_finite()), "{got:?}");
    let (max_abs, _) = max_differences(&got, &want);
    assert!(
        max_abs <= 1e-4,
        "tract vs Burn {max_abs} ({got:?} vs {want:?})"
    );
}

/// Transformer-M with the named options changed (pre-LN, a short spatial_pos_max that
/// masks pairs in a chain) against Burn in every mode: the lowering follows the module.
#[test]
fn transformer_m_pre_ln_and_far_pair_mask() {
    use models::transformer_m::{LayerNormPlacement, Mode, TransformerMBatch, TransformerMConfig};
    use mol_featurize::graphormer::featurize;
    use mol_featurize::{EncodingLimits, Molecule, pad_graphormer_batch};

    let dev = Device::flex();
    dev.seed(12);
    for placement in [LayerNormPlacement::Post, LayerNormPlacement::Pre] {
        let config = TransformerMConfig::new(2, 16, 24, 4, 8)
            .with_layer_norm(placement)
            .with_spatial_pos_max(3)
            .with_attention_dropout(0.0)
            .with_activation_dropout(0.0);
        let model = config.init(&dev);
        let feats: Vec<_> = ["CCCCCCO", "c1ccncc1", "CC(=O)[O-].[Na+]"]
            .iter()
            .map(|s| {
                let mol = Molecule::from_smiles(s).unwrap();
                let xyz = (0..mol.num_atoms())
                    .map(|i| [1.4 * i as f32, (i % 3) as f32 * 0.7, 0.3 * i as f32])
                    .collect();
                featurize(&mol, 5, Some(xyz)).unwrap()
            })
            .collect();
        let data = pad_graphormer_batch(
            &feats.iter().collect::<Vec<_>>(),
            &EncodingLimits::default(),
        )
        .unwrap();
        let modes = [Mode::Both, Mode::TwoD, Mode::ThreeD];
        let want: Vec<f32> = model
            .forward(&TransformerMBatch::from_data(&data, &modes, &dev))
            .try_into_vec_as()
            .unwrap();
        let file = path(&format!("tm-{placement:?}"));
        export::write_model(&export::transformer_m_to_onnx(&model, &[]), &file).unwrap();
        let got = run_tract(
            &file,
            &export::transformer_m::transformer_m_feeds(&data, &modes),
        )
        .unwrap();
        let _ = std::fs::remove_file(&file);
        let (max_abs, _) = max_differences(&got, &want);
        assert!(max_abs <= 1e-4, "{placement:?}: tract vs Burn {max_abs}");
    }
}

#[test]
fn msa_global_attention_gated_and_ungated() {
    let dev = Device::flex();
    dev.seed(5);
    for gating in [true, false] {
        let block = MsaColumnGlobalAttentionConfig::new()
            .with_c_m(12)
            .with_num_heads(3)
            .with_c(4)
            .with_gating(gating)
            .with_zero_init(false)
            .init(&dev);
        let act = Tensor::<3>::random([6, 4, 12], Distribution::Normal(0.0, 1.0), &dev);
        // Column 3 fully masked, column 1 ragged.
        let mask: Vec<bool> = (0..24)
            .map(|i| i % 4 == 3 || (i % 4 == 1 && i / 4 >= 3))
            .collect();
        let padding = Tensor::<2, Bool>::from_data(TensorData::new(mask.clone(), [6, 4]), &dev);
        let want: Vec<f32> = block
            .forward(act.clone(), padding)
            .try_into_vec_as()
            .unwrap();
        let feeds = vec![
            f32_feed("msa_act", &[6, 4, 12], act),
            Feed {
                name: "msa_padding_mask".into(),
                shape: vec![6, 4],
                data: FeedData::Bool(mask),
            },
        ];
        let file = path(&format!("msa-{gating}"));
        export::write_model(&export::msa_global_attention_to_onnx(&block, &[]), &file).unwrap();
        let got = run_tract(&file, &feeds).unwrap();
        let _ = std::fs::remove_file(&file);
        let (max_abs, _) = max_differences(&got, &want);
        assert!(max_abs <= 1e-4, "gating {gating}: tract vs Burn {max_abs}");
    }
}

/// The SMILES generator's decoder step with a past of 5 tokens and 3 new ones (dense
/// causal; a window of 3 with one global token): logits equal Burn's KV-cached forward.
#[test]
fn smiles_gpt_step_with_past_dense_and_local() {
    use attn_core::AttentionPattern;
    use burn::module::Param;
    use models::SmilesGptConfig;
    for pattern in [AttentionPattern::causal(), AttentionPattern::local(3, 1)] {
        let dev = Device::flex();
        dev.seed(5);
        let mut model = SmilesGptConfig::small(20)
            .with_max_len(16)
            .with_d_model(32)
            .with_num_layers(2)
            .with_d_ff(64)
            .with_dropout(0.0)
            .with_pattern(pattern)
            .init(&dev);
        // MolGPT starts position embeddings at 0: random ones make a wrong offset visible.
        model.pos_emb = Param::from_tensor(Tensor::random(
            [16, 32],
            Distribution::Normal(0.0, 0.5),
            &dev,
        ));
        let ids: Vec<i64> = (0..16).map(|i| 4 + (i * 7 % 16)).collect();
        let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids.clone(), [2, 8]), &dev);
        let mut cache = model.new_cache(2, &dev);
        model
            .forward(tokens.clone().slice([0..2, 0..5]), None, Some(&mut cache))
            .unwrap();
        let past: Vec<_> = cache.layers.iter().map(|l| l.filled()).collect();
        let want: Vec<f32> = model
            .forward(tokens.slice([0..2, 5..8]), None, Some(&mut cache))
            .unwrap()
            .try_into_vec_as()
            .unwrap();
        let new: Vec<i64> = ids.chunks(8).flat_map(|row| row[5..].to_vec()).collect();
        let mut feeds = vec![Feed::i64("input_ids", &[2, 3], new)];
        for (l, (k, v)) in past.into_iter().enumerate() {
            let shape = k.dims();
            feeds.push(Feed::f32(
                &export::smiles_gpt::past_key(l),
                &shape,
                k.try_into_vec_as().unwrap(),
            ));
            feeds.push(Feed::f32(
                &export::smiles_gpt::past_value(l),
                &shape,
                v.try_into_vec_as().unwrap(),
            ));
        }
        let file = path("smiles_gpt_step");
        export::write_model(&export::smiles_gpt_step_to_onnx(&model, &[]), &file).unwrap();
        let got = run_tract(&file, &feeds).unwrap();
        let _ = std::fs::remove_file(&file);
        let (max_abs, _) = max_differences(&got, &want);
        assert!(
            max_abs <= 1e-4,
            "{pattern:?}: tract vs Burn {max_abs} ({} values)",
            got.len()
        );
    }
}
