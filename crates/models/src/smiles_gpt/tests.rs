//! The SMILES GPT: cached decoding equals the full forward, the loss leaves padding out,
//! sampling is seeded and obeys top-k / temperature 0.

use attn_core::AttentionPattern;
use burn::module::Param;
use burn::prelude::*;
use burn::tensor::{Distribution, Tolerance};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::sampling::{SamplingSettings, sample_batch, sample_token};
use super::{Condition, CpuWeights, SmilesGpt, SmilesGptConfig};

fn tiny(pattern: AttentionPattern, device: &Device) -> SmilesGpt {
    let mut model = SmilesGptConfig::new(11)
        .with_max_len(12)
        .with_d_model(16)
        .with_num_layers(2)
        .with_num_heads(2)
        .with_d_ff(32)
        .with_pattern(pattern)
        .init(device);
    // Position embeddings are 0 at init: make them matter, so a wrong cache offset shows.
    model.pos_emb = Param::from_tensor(Tensor::random(
        [12, 16],
        Distribution::Normal(0.0, 1.0),
        device,
    ));
    model
}

fn tokens(rows: &[&[i64]], device: &Device) -> Tensor<2, Int> {
    let t = rows[0].len();
    let flat: Vec<i64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
    Tensor::from_data(TensorData::new(flat, [rows.len(), t]), device)
}

/// Logits of a prompt then one token per step through the caches equal the full
/// forward's at every position (dense and local patterns).
#[test]
fn cached_logits_equal_the_full_forward() {
    let dev = Device::flex();
    dev.seed(3);
    for pattern in [AttentionPattern::causal(), AttentionPattern::local(2, 1)] {
        let model = tiny(pattern, &dev);
        let seq = tokens(
            &[&[1, 4, 5, 6, 7, 8, 9, 10], &[1, 10, 9, 8, 7, 6, 5, 4]],
            &dev,
        );
        let full = model.forward(seq.clone(), None, None).unwrap();
        let mut cache = model.new_cache(2, &dev);
        let mut parts = vec![
            model
                .forward(seq.clone().narrow(1, 0, 3), None, Some(&mut cache))
                .unwrap(),
        ];
        for i in 3..8 {
            parts.push(
                model
                    .forward(seq.clone().narrow(1, i, 1), None, Some(&mut cache))
                    .unwrap(),
            );
        }
        Tensor::cat(parts, 1)
            .into_data()
            .assert_approx_eq::<f32>(&full.into_data(), Tolerance::rel_abs(1e-4, 1e-5));
        assert!(
            model
                .forward(tokens(&[&[1; 13]], &dev), None, None)
                .is_err()
        );
    }
}

/// At initialisation the loss is about ln(vocab); a right-padded sequence has the loss of
/// the same sequence unpadded (padding targets left out), and the count of predicted
/// tokens excludes the padding.
#[test]
fn next_token_loss_leaves_padding_out() {
    let dev = Device::flex();
    dev.seed(5);
    let model = tiny(AttentionPattern::causal(), &dev);
    let (plain, n) = model
        .next_token_loss(tokens(&[&[1, 4, 5, 6, 2]], &dev), None)
        .unwrap();
    let (padded, n_padded) = model
        .next_token_loss(tokens(&[&[1, 4, 5, 6, 2, 0, 0, 0]], &dev), None)
        .unwrap();
    assert_eq!((n, n_padded), (4, 4));
    let plain = plain.into_scalar::<f32>();
    let padded = padded.into_scalar::<f32>();
    assert!((plain - padded).abs() < 1e-5, "{plain} vs {padded}");
    let ln_v = (11f32).ln();
    assert!((plain - ln_v).abs() < 0.5, "{plain} vs ln 11 = {ln_v}");
}

#[test]
fn sample_token_obeys_greedy_and_top_k_and_never_draws_specials() {
    // <pad>, <bos>, <eos>, <unk>, then two SMILES tokens.
    let logits = [9.0, 8.0, 3.0, 7.0, 2.9, -1.0];
    let mut rng = StdRng::seed_from_u64(0);
    let greedy = SamplingSettings {
        temperature: 0.0,
        top_k: None,
    };
    // <pad>, <bos> and <unk> score highest and are still never drawn.
    assert_eq!(sample_token(&logits, &greedy, &mut rng), 2);
    let top2 = SamplingSettings {
        temperature: 1.0,
        top_k: Some(2),
    };
    let mut seen = [0usize; 6];
    for _ in 0..2000 {
        seen[sample_token(&logits, &top2, &mut rng) as usize] += 1;
    }
    assert_eq!(seen[0] + seen[1] + seen[3] + seen[5], 0, "{seen:?}");
    // p(2) / p(4) = e^0.1 = 1.105: about 1050 of 2000.
    assert!((950..1150).contains(&seen[2]), "{seen:?}");
}

/// A seed fixes the sampled sequences; greedy sampling follows the full forward's argmax.
#[test]
fn sampling_is_seeded_and_greedy_follows_the_full_forward() {
    let dev = Device::flex();
    dev.seed(9);
    let model = tiny(AttentionPattern::causal(), &dev);
    let prompts = vec![vec![1u32, 4]; 3];
    let settings = SamplingSettings::default();
    let a = sample_batch(
        &model,
        &prompts,
        None,
        &settings,
        &mut StdRng::seed_from_u64(42),
        &dev,
    )
    .unwrap();
    let b = sample_batch(
        &model,
        &prompts,
        None,
        &settings,
        &mut StdRng::seed_from_u64(42),
        &dev,
    )
    .unwrap();
    let c = sample_batch(
        &model,
        &prompts,
        None,
        &settings,
        &mut StdRng::seed_from_u64(43),
        &dev,
    )
    .unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    let greedy = SamplingSettings {
        temperature: 0.0,
        top_k: None,
    };
    let g = sample_batch(
        &model,
        &prompts[..1],
        None,
        &greedy,
        &mut StdRng::seed_from_u64(0),
        &dev,
    )
    .unwrap();
    let mut seq: Vec<i64> = vec![1, 4];
    for &tok in &g[0] {
        let logits = model.forward(tokens(&[&seq], &dev), None, None).unwrap();
        let t = seq.len();
        let last: Vec<f32> = logits
            .slice([0..1, t - 1..t, 0..11])
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        let best = (2..11)
            .filter(|&i| i != 3)
            .max_by(|&x, &y| last[x].total_cmp(&last[y]).then(y.cmp(&x)))
            .unwrap();
        assert_eq!(tok as usize, best);
        seq.push(tok as i64);
    }
    assert!(g[0].len() + 2 == 12 || g[0].last() == Some(&2));
}

/// Decoding a batch in parts at once, each part in chunks of `decode_chunk_rows`
/// sequences, gives the sequences of the whole batch decoded together, with and without
/// a condition: each row draws from its own generator, so the split does not change the
/// samples. 67 rows are more than one chunk of 8 in every split tried (1 to 8 parts).
#[test]
fn sampling_in_parts_equals_one_part() {
    let dev = Device::flex();
    let fused = super::cpu_decoder_tests::blas_present();
    dev.seed(11);
    let plain = tiny(AttentionPattern::causal(), &dev);
    let conditioned = SmilesGptConfig::new(11)
        .with_max_len(12)
        .with_d_model(16)
        .with_num_layers(2)
        .with_num_heads(2)
        .with_d_ff(32)
        .with_num_props(Some(1))
        .with_scaffold_max_len(Some(2))
        .init(&dev);
    let b = 67;
    let prompts = vec![vec![1u32, 4]; b];
    let props: Vec<f32> = (0..b).map(|i| i as f32 / 10.0 - 3.0).collect();
    let scaffold: Vec<i64> = (0..2 * b as i64).map(|i| 4 + i % 7).collect();
    let condition = Condition {
        props: Some(Tensor::from_data(TensorData::new(props, [b, 1]), &dev)),
        scaffold: Some(Tensor::from_data(TensorData::new(scaffold, [b, 2]), &dev)),
    };
    let settings = SamplingSettings::default();
    for (model, condition) in [(&plain, None), (&conditioned, Some(&condition))] {
        let sample = |parts: usize| {
            super::sampling::sample_batch_in_parts(
                model,
                &prompts,
                condition,
                &settings,
                &mut StdRng::seed_from_u64(5),
                &dev,
                parts,
            )
            .unwrap()
        };
        // The whole batch in one decoder, with the seeds `sample_batch_in_parts` draws.
        let mut rng = StdRng::seed_from_u64(5);
        let seeds: Vec<u64> = (0..b).map(|_| rng.random()).collect();
        let weights = CpuWeights::from_model(model);
        assert_eq!(weights.is_some(), fused);
        if weights.is_some() {
            assert_eq!(super::sampling::decode_chunk_rows(weights.as_ref(), b), 8);
        }
        let whole = super::sampling::decode_rows(
            model,
            weights.as_ref(),
            &prompts,
            condition,
            &settings,
            &seeds,
            &dev,
        )
        .unwrap();
        let one = sample(1);
        assert_eq!(one.len(), b);
        // Rows differ from one another (each its own stream), and splits agree.
        assert!(one.iter().any(|s| s != &one[0]), "{one:?}");
        assert_eq!(one, whole);
        for parts in [2, 3, 5, 8] {
            assert_eq!(sample(parts), one, "{parts} parts");
        }
    }
}
