//! The fused CPU decoding step against Burn's cached forward: the same logits at every
//! step (dense, windowed and global-token patterns, a conditioned start), the same
//! samples through `sample_batch`, and the refusals.

use attn_core::AttentionPattern;
use burn::module::{Module, ModuleMapper, Param};
use burn::prelude::*;
use burn::tensor::Tolerance;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::sampling::{SamplingSettings, decode_rows};
use super::{Condition, CpuDecoder, CpuWeights, SmilesGpt, SmilesGptConfig};

/// Every parameter drawn uniformly from [-0.85, 0.85] (standard deviation 0.49) by its
/// own seeded generator: logits of order 1, so that a wrong key, position or norm moves
/// them by far more than the tolerance (at MolGPT's init, std 0.02, every logit is near
/// 0). Not the device's generator: the tests running beside these share it, so seeding
/// it would not fix the weights.
struct Scramble(StdRng);

impl ModuleMapper for Scramble {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (id, tensor, mapper) = param.consume();
        let shape = tensor.shape();
        let drawn: Vec<f32> = (0..shape.num_elements())
            .map(|_| self.0.random_range(-0.85f32..0.85))
            .collect();
        let drawn = Tensor::<D>::from_data(TensorData::new(drawn, shape), &tensor.device());
        Param::from_mapped_value(id, drawn, mapper)
    }
}

/// The fused path needs a BLAS. CI sets `MOLATTN_REQUIRE_BLAS=1` (and installs
/// OpenBLAS), so there these tests cannot pass by skipping.
pub(super) fn blas_present() -> bool {
    let present = attn_core::blas::blas().is_some();
    if std::env::var("MOLATTN_REQUIRE_BLAS").is_ok_and(|v| v == "1") {
        assert!(present, "{}", attn_core::blas::blas_summary());
    }
    present
}

fn model(config: SmilesGptConfig, seed: u64, device: &Device) -> SmilesGpt {
    config
        .init(device)
        .map(&mut Scramble(StdRng::seed_from_u64(seed)))
}

fn tiny(pattern: AttentionPattern) -> SmilesGptConfig {
    SmilesGptConfig::new(13)
        .with_max_len(12)
        .with_d_model(24)
        .with_num_layers(2)
        .with_num_heads(3)
        .with_d_ff(40)
        .with_pattern(pattern)
}

fn column(rows: &[Vec<u32>], t: usize) -> Vec<u32> {
    rows.iter().map(|r| r[t]).collect()
}

fn burn_step(model: &SmilesGpt, ids: &[u32], cache: &mut super::DecoderCache) -> Vec<f32> {
    let dev = model.pos_emb.device();
    let ids: Vec<i64> = ids.iter().map(|&i| i as i64).collect();
    let n = ids.len();
    let input = Tensor::<2, Int>::from_data(TensorData::new(ids, [n, 1]), &dev);
    model
        .forward(input, None, Some(cache))
        .unwrap()
        .try_into_vec_as::<f32>()
        .unwrap()
}

/// Equal to float rounding (summation order in the BLAS products and the softmax): the
/// logits are of order 1-10 here; a key at the wrong position, a missed pattern or a
/// norm without its beta is off by 0.1 or more.
fn assert_close(fused: &[f32], burn: &[f32], what: &str) {
    assert_eq!(fused.len(), burn.len(), "{what}");
    TensorData::new(fused.to_vec(), [fused.len()]).assert_approx_eq::<f32>(
        &TensorData::new(burn.to_vec(), [burn.len()]),
        Tolerance::rel_abs(1e-5, 2e-5),
    );
}

/// Three sequences of twelve tokens (the model's whole `max_len`), `(r * a + t * b) % 13`
/// at row `r`, step `t`, fed to `fused` one step at a time: its logits equal Burn's
/// cached forward at every step.
fn assert_steps_equal_the_cached_forward(
    model: &SmilesGpt,
    fused: &mut CpuDecoder,
    [a, b]: [usize; 2],
    what: &str,
) {
    let rows: Vec<Vec<u32>> = (0..3)
        .map(|r| (0..12).map(|t| ((r * a + t * b) % 13) as u32).collect())
        .collect();
    let mut cache = model.new_cache(3, &model.pos_emb.device());
    for t in 0..12 {
        let ids = column(&rows, t);
        let want = burn_step(model, &ids, &mut cache);
        let got = fused.step(&ids).unwrap();
        assert_close(got, &want, &format!("{what}, step {t}"));
    }
}

/// Twelve one-token steps of three sequences (the model's whole `max_len`): the fused
/// step's logits equal Burn's cached forward at every step, for the dense causal
/// pattern, a window of 3 and a window of 2 with one global token.
#[test]
fn fused_steps_equal_the_cached_forward() {
    if !blas_present() {
        return;
    }
    let dev = Device::flex();
    for (seed, pattern) in [
        (1, AttentionPattern::causal()),
        (2, AttentionPattern::local(3, 0)),
        (3, AttentionPattern::local(2, 1)),
    ] {
        let model = model(tiny(pattern), seed, &dev);
        let weights = CpuWeights::from_model(&model).expect("flex with a BLAS");
        let mut fused = CpuDecoder::new(&weights, 3).unwrap();
        assert_steps_equal_the_cached_forward(&model, &mut fused, [5, 3], &format!("{pattern:?}"));
        assert_eq!(fused.tokens(), 12);
        // The model's positions are used up: refused, as Burn's forward refuses.
        let err = fused.step(&[4, 4, 4]).unwrap_err();
        assert!(err.contains("longer than the model's 12"), "{err}");
    }
}

/// The caches come from buffers earlier decoders dropped, not zeroed: a decoder whose
/// buffers hold NaN everywhere gives Burn's logits at every step (only positions already
/// written are read), and a spare buffer comes back at the length asked for.
#[test]
fn fused_steps_on_reused_cache_buffers() {
    if !blas_present() {
        return;
    }
    let dev = Device::flex();
    for (seed, pattern) in [
        (4, AttentionPattern::causal()),
        (5, AttentionPattern::local(2, 1)),
    ] {
        let model = model(tiny(pattern), seed, &dev);
        let weights = CpuWeights::from_model(&model).expect("flex with a BLAS");
        let mut fused = CpuDecoder::on_buffers(&weights, 3, 12, |len| vec![f32::NAN; len]);
        let what = format!("{pattern:?} on NaN buffers");
        assert_steps_equal_the_cached_forward(&model, &mut fused, [7, 2], &what);
    }
    let first = super::cpu_decoder::spare_cache_buffer(1000);
    assert_eq!(first.len(), 1000);
    drop(first);
    assert_eq!(super::cpu_decoder::spare_cache_buffer(10).len(), 10);
}

/// A conditional model (two properties and a 3-token scaffold), causal and with a window
/// of 3 and one global token over the conditioning positions: the first step through
/// Burn's conditioned forward, its cache handed to the fused decoder, then eight steps
/// equal to Burn's; and `decode_rows` under the condition draws the same sequences
/// through either path.
#[test]
fn fused_steps_continue_a_conditioned_start() {
    if !blas_present() {
        return;
    }
    let dev = Device::flex();
    for pattern in [AttentionPattern::causal(), AttentionPattern::local(3, 1)] {
        let config = tiny(pattern)
            .with_num_props(Some(2))
            .with_scaffold_max_len(Some(3));
        let model = model(config, 7, &dev);
        let weights = CpuWeights::from_model(&model).unwrap();
        let condition = Condition {
            props: Some(Tensor::from_data(
                TensorData::new(vec![1.5f32, -0.5, 3.0, 0.25], [2, 2]),
                &dev,
            )),
            scaffold: Some(Tensor::from_data(
                TensorData::new(vec![5i64, 6, 0, 7, 8, 9], [2, 3]),
                &dev,
            )),
        };
        let mut cache = model.new_cache_with_prefix(2, condition.len(), &dev);
        let bos = Tensor::<2, Int>::from_data(TensorData::new(vec![1i64, 1], [2, 1]), &dev);
        model
            .forward_conditioned(bos, Some(&condition), None, Some(&mut cache))
            .unwrap();
        // Without its condition the fused decoder refuses the model, as `forward` does.
        let err = CpuDecoder::new(&weights, 2).unwrap_err();
        assert!(err.contains("needs its condition"), "{err}");
        let mut fused = CpuDecoder::from_cache(&weights, &cache).unwrap();
        assert_eq!((fused.len(), fused.tokens()), (5, 1));
        for t in 0..8u32 {
            let ids = [4 + t % 9, 12 - t];
            let want = burn_step(&model, &ids, &mut cache);
            let got = fused.step(&ids).unwrap();
            assert_close(got, &want, &format!("conditioned, {pattern:?}, step {t}"));
        }
        let prompts = vec![vec![1u32]; 2];
        let settings = SamplingSettings::default();
        let draw = |w: Option<&CpuWeights>| {
            decode_rows(
                &model,
                w,
                &prompts,
                Some(&condition),
                &settings,
                &[3, 4],
                &dev,
            )
            .unwrap()
        };
        assert_eq!(draw(Some(&weights)), draw(None), "{pattern:?}");
    }
}

/// Decoding through the fused step draws the same sequences as through Burn's forward
/// for the same seeds (a 2-token prompt, 9 sequences, a window with a global token), and
/// the step refuses a token outside the vocabulary and a batch of the wrong size.
#[test]
fn fused_sampling_draws_burns_sequences() {
    if !blas_present() {
        return;
    }
    let dev = Device::flex();
    let mut model = model(tiny(AttentionPattern::local(4, 1)), 11, &dev);
    // `<eos>` (2) nearly as likely as token 9, a frequent draw of these weights (0.9 of
    // its logit: no exact ties for rounding to decide), so that the sequences end at
    // several lengths.
    let mut head: Vec<f32> = model.head.weight.val().try_into_vec_as().unwrap();
    for row in head.chunks_mut(13) {
        row[2] = 0.9 * row[9];
    }
    model.head.weight = Param::from_data(TensorData::new(head, [24, 13]), &dev);
    let weights = CpuWeights::from_model(&model).unwrap();
    let prompts = vec![vec![1u32, 6]; 9];
    let seeds: Vec<u64> = (0..9).map(|i| 100 + i).collect();
    let settings = SamplingSettings::default();
    let draw = |weights: Option<&CpuWeights>| {
        decode_rows(&model, weights, &prompts, None, &settings, &seeds, &dev).unwrap()
    };
    let burn = draw(None);
    assert_eq!(draw(Some(&weights)), burn);
    // Samples of several lengths: the finished rows' handling is exercised.
    let lengths: std::collections::BTreeSet<usize> = burn.iter().map(Vec::len).collect();
    assert!(lengths.len() > 1, "{burn:?}");

    let mut fused = CpuDecoder::new(&weights, 2).unwrap();
    let err = fused.step(&[1, 13]).unwrap_err();
    assert!(
        err.contains("token id 13 outside the vocabulary of 13"),
        "{err}"
    );
    let err = fused.step(&[1]).unwrap_err();
    assert!(err.contains("1 tokens for a batch of 2"), "{err}");
    assert!(fused.is_empty());
}

/// On an autodiff device (dropout live) there are no fused weights: decoding stays on
/// Burn's forward.
#[test]
fn no_fused_weights_under_autodiff() {
    let dev = Device::flex().autodiff();
    let model = tiny(AttentionPattern::causal()).init(&dev);
    assert!(CpuWeights::from_model(&model).is_none());
}
