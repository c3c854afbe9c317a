//! Sequence attention against PyTorch's `scaled_dot_product_attention`
//! (`fixtures/parity/sequence_attention.safetensors`, made by
//! `fixtures/gen/sequence_attention_reference.py`), the blocked local path against the
//! dense one, and cached decoding against the full causal forward.

use burn::prelude::*;
use burn::tensor::{Distribution, Tolerance};
use safetensors::SafeTensors;

use super::*;

/// The fixture, found from the crate's directory at run time (a build directory shared
/// between checkouts can run a test binary built in another one).
fn fixture() -> std::path::PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../../fixtures/parity/sequence_attention.safetensors")
}

fn read(st: &SafeTensors, name: &str) -> (Vec<usize>, Vec<f32>) {
    let view = st.tensor(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let bytes = view.data();
    let values = match view.dtype() {
        safetensors::Dtype::F32 => bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        safetensors::Dtype::U8 => bytes.iter().map(|&b| b as f32).collect(),
        other => panic!("{name}: unexpected dtype {other:?}"),
    };
    (view.shape().to_vec(), values)
}

fn float(st: &SafeTensors, name: &str, device: &Device) -> Tensor<4> {
    let (shape, values) = read(st, name);
    Tensor::from_data(TensorData::new(values, shape), device)
}

fn boolean<const D: usize>(st: &SafeTensors, name: &str, device: &Device) -> Tensor<D, Bool> {
    let (shape, values) = read(st, name);
    let values: Vec<bool> = values.into_iter().map(|v| v != 0.0).collect();
    Tensor::from_bool(TensorData::new(values, shape), device)
}

/// The fixture's patterns, as `fixtures/gen/sequence_attention_reference.py` lists them.
fn cases() -> Vec<(&'static str, AttentionPattern)> {
    vec![
        ("causal", AttentionPattern::causal()),
        ("causal_pad", AttentionPattern::causal()),
        ("window", AttentionPattern::local(3, 0)),
        ("window_global", AttentionPattern::local(2, 1)),
        (
            "bidir_global",
            AttentionPattern {
                causal: false,
                window: Some(2),
                global_tokens: 2,
            },
        ),
        ("all_padded", AttentionPattern::causal()),
    ]
}

/// Values and q/k/v gradients equal torch's SDPA (float64 there) to 1e-5, with the mask
/// built from our pattern and key padding (and checked equal to the fixture's mask); the
/// fully padded sequence of `all_padded` is 0 with gradient 0. The blocked local path
/// gives the same values and gradients on the windowed cases.
#[test]
fn matches_torch_sdpa_values_and_gradients() {
    let bytes = std::fs::read(fixture()).expect("fixture");
    let st = SafeTensors::deserialize(&bytes).expect("safetensors");
    let dev = Device::flex().autodiff();
    let tol = Tolerance::rel_abs(1e-4, 1e-5);
    for (name, pattern) in cases() {
        let leaf = |field: &str| float(&st, &format!("{name}.{field}"), &dev).require_grad();
        let (q, k, v) = (leaf("q"), leaf("k"), leaf("v"));
        let cot = float(&st, &format!("{name}.cotangent"), &dev);
        let padding: Tensor<2, Bool> = boolean(&st, &format!("{name}.key_padding_mask"), &dev);
        let [b, h, n, _] = q.dims();
        let dims = [b, h, n, n];
        let mask = score_mask(&pattern, Some(padding.clone()), dims, 0, &dev).expect("a mask");
        let fixture_mask: Tensor<4, Bool> = boolean(&st, &format!("{name}.mask"), &dev);
        assert_eq!(
            mask.clone().into_data(),
            fixture_mask.into_data(),
            "{name}: mask"
        );
        let mut paths = vec![(
            "dense",
            scaled_dot_product_attention(q.clone(), k.clone(), v.clone(), Some(mask), None),
        )];
        if pattern.window.is_some() {
            paths.push((
                "blocked",
                local_attention(
                    q.clone(),
                    k.clone(),
                    v.clone(),
                    &pattern,
                    Some(padding),
                    None,
                ),
            ));
        }
        for (path, out) in paths {
            let grads = (out.clone() * cot.clone()).sum().backward();
            let expect = |field: &str| float(&st, &format!("{name}.{field}"), &Device::flex());
            let checks = [
                ("output", out.inner()),
                ("grad_q", q.grad(&grads).expect("dq")),
                ("grad_k", k.grad(&grads).expect("dk")),
                ("grad_v", v.grad(&grads).expect("dv")),
            ];
            for (field, got) in checks {
                let data = got.into_data();
                let values: Vec<f32> = data.try_to_vec::<f32>().unwrap();
                assert!(
                    values.iter().all(|x| x.is_finite()),
                    "{name} {path} {field}"
                );
                data.assert_approx_eq::<f32>(&expect(field).into_data(), tol);
            }
        }
    }
}

/// The blocked local path equals the dense masked one on sequences long enough for
/// several blocks (window 5 and 70, with and without global tokens, causal and not, key
/// padding in one sequence), values to 1e-5.
#[test]
fn blocked_local_attention_equals_the_dense_mask() {
    let dev = Device::flex();
    dev.seed(7);
    let (b, h, n, dk, dv) = (2, 2, 300, 8, 6);
    let q = Tensor::<4>::random([b, h, n, dk], Distribution::Normal(0.0, 1.0), &dev);
    let k = Tensor::<4>::random([b, h, n, dk], Distribution::Normal(0.0, 1.0), &dev);
    let v = Tensor::<4>::random([b, h, n, dv], Distribution::Normal(0.0, 1.0), &dev);
    let lengths = [n, 201];
    let padding: Vec<bool> = lengths
        .iter()
        .flat_map(|&len| (0..n).map(move |j| j >= len))
        .collect();
    let padding = Tensor::<2, Bool>::from_bool(TensorData::new(padding, [b, n]), &dev);
    for (causal, window, global_tokens) in
        [(true, 5, 0), (true, 70, 3), (false, 5, 2), (false, 70, 0)]
    {
        let pattern = AttentionPattern {
            causal,
            window: Some(window),
            global_tokens,
        };
        let mask = score_mask(&pattern, Some(padding.clone()), [b, h, n, n], 0, &dev);
        let dense = scaled_dot_product_attention(q.clone(), k.clone(), v.clone(), mask, None);
        let blocked = local_attention(
            q.clone(),
            k.clone(),
            v.clone(),
            &pattern,
            Some(padding.clone()),
            None,
        );
        blocked
            .into_data()
            .assert_approx_eq::<f32>(&dense.into_data(), Tolerance::rel_abs(1e-4, 1e-5));
    }
}

/// Feeding a sequence one token at a time through the KV cache gives, at every position,
/// the full causal forward's output (dense and windowed layers, d_k != d_v), and a full
/// cache is an error, not a panic.
#[test]
fn cached_decoding_equals_the_full_causal_forward() {
    let dev = Device::flex();
    dev.seed(11);
    for pattern in [AttentionPattern::causal(), AttentionPattern::local(3, 1)] {
        let layer = SequenceAttentionConfig::new(16, 4)
            .with_d_k(Some(3))
            .with_d_v(Some(5))
            .with_pattern(pattern)
            .init(&dev);
        let (b, t) = (2, 9);
        let x = Tensor::<3>::random([b, t, 16], Distribution::Normal(0.0, 1.0), &dev);
        let full = layer.forward(x.clone(), None, None).expect("full");
        let mut cache = layer.new_cache(b, t, &dev);
        // A prompt of 4 tokens at once, then one token per step.
        let mut steps = vec![
            layer
                .forward(x.clone().narrow(1, 0, 4), None, Some(&mut cache))
                .expect("prompt"),
        ];
        for i in 4..t {
            steps.push(
                layer
                    .forward(x.clone().narrow(1, i, 1), None, Some(&mut cache))
                    .expect("step"),
            );
        }
        Tensor::cat(steps, 1)
            .into_data()
            .assert_approx_eq::<f32>(&full.into_data(), Tolerance::rel_abs(1e-4, 1e-5));
        let more = layer.forward(x.narrow(1, 0, 1), None, Some(&mut cache));
        assert!(more.unwrap_err().contains("KV cache full"));
    }
}

/// One query over a cache on raw buffers equals its row of the masked dense attention,
/// at every position of a 9-token sequence with d_k 5 and d_v 3 in a cache of 11:
/// causal, a window of 3, and a window of 2 with 2 global tokens (cache columns past the
/// query hold garbage); and the visible keys are exactly those the pattern allows.
#[test]
fn attend_cached_equals_the_masked_dense_row() {
    let dev = Device::flex();
    let (n, cap, d_k, d_v) = (9, 11, 5, 3);
    let q = Tensor::<4>::random([1, 1, n, d_k], Distribution::Normal(0.0, 1.5), &dev);
    let k = Tensor::<4>::random([1, 1, n, d_k], Distribution::Normal(0.0, 1.5), &dev);
    let v = Tensor::<4>::random([1, 1, n, d_v], Distribution::Normal(0.0, 1.0), &dev);
    let flat = |t: &Tensor<4>| t.clone().try_into_vec_as::<f32>().unwrap();
    let (qs, ks, vs) = (flat(&q), flat(&k), flat(&v));
    for pattern in [
        AttentionPattern::causal(),
        AttentionPattern::local(3, 0),
        AttentionPattern::local(2, 2),
    ] {
        let mask = score_mask(&pattern, None, [1, 1, n, n], 0, &dev);
        let dense = flat(&scaled_dot_product_attention(
            q.clone(),
            k.clone(),
            v.clone(),
            mask,
            None,
        ));
        let mut scratch = Vec::new();
        for pos in 0..n {
            let seen: Vec<usize> = visible_keys(&pattern, pos).into_iter().flatten().collect();
            let allowed: Vec<usize> = (0..=pos).filter(|&j| pattern.allows(pos, j)).collect();
            assert_eq!(seen, allowed, "{pattern:?}, position {pos}");
            // The cache as a decoder holds it: filled up to `pos`, garbage after.
            let mut keys_t = vec![1e3f32; d_k * cap];
            let mut values = vec![-1e3f32; cap * d_v];
            for j in 0..=pos {
                for c in 0..d_k {
                    keys_t[c * cap + j] = ks[j * d_k + c];
                }
            }
            values[..(pos + 1) * d_v].copy_from_slice(&vs[..(pos + 1) * d_v]);
            let mut out = vec![f32::NAN; d_v];
            let cache = HeadCache {
                keys_t: &keys_t,
                values: &values,
                capacity: cap,
            };
            let query = &qs[pos * d_k..(pos + 1) * d_k];
            attend_cached(query, cache, pos, &pattern, &mut out, &mut scratch);
            TensorData::new(out, [d_v]).assert_approx_eq::<f32>(
                &TensorData::new(dense[pos * d_v..(pos + 1) * d_v].to_vec(), [d_v]),
                Tolerance::absolute(1e-5),
            );
        }
    }
}

/// A whole sequence without key padding runs the fused attention core: its output and
/// the gradients of `x` and of both projections' weights equal the unfused ops' (an
/// all-false `key_padding_mask` takes the unfused path, the same function), and
/// `forward` without a mask gives the core's output exactly; for the causal pattern, a
/// window of 3 with and without one global token and dense attention, over 20 tokens (so
/// the kernel's visible columns start and end inside its 8-wide vectors, not at 0 and 8).
#[test]
fn fused_whole_sequence_equals_the_unfused_ops() {
    let dev = Device::flex().autodiff();
    let dense = AttentionPattern {
        causal: false,
        window: None,
        global_tokens: 0,
    };
    for pattern in [
        AttentionPattern::causal(),
        AttentionPattern::local(3, 1),
        AttentionPattern::local(3, 0),
        dense,
    ] {
        let layer = SequenceAttentionConfig::new(16, 4)
            .with_dropout(0.0)
            .with_pattern(pattern)
            .init(&dev);
        let (b, t) = (2, 20);
        let x0 = Tensor::<3>::random([b, t, 16], Distribution::Normal(0.0, 1.0), &dev);
        let g = Tensor::<3>::random([b, t, 16], Distribution::Normal(0.0, 1.0), &dev);
        // `None`: the fused core itself; `Some(all false)`: `forward`'s unfused ops.
        let run = |mask: Option<Tensor<2, Bool>>| {
            let x = x0.clone().detach().require_grad();
            let out = match mask {
                None => layer.fused_forward(x.clone(), &pattern),
                Some(mask) => layer.forward(x.clone(), Some(mask), None).unwrap(),
            };
            let grads = (out.clone() * g.clone()).sum().backward();
            [
                out.inner().into_data(),
                x.grad(&grads).unwrap().into_data(),
                layer.qkv.weight.val().grad(&grads).unwrap().into_data(),
                layer
                    .out_proj
                    .weight
                    .val()
                    .grad(&grads)
                    .unwrap()
                    .into_data(),
            ]
        };
        let fused = run(None);
        let no_padding = TensorData::new(vec![false; b * t], [b, t]);
        let unfused = run(Some(Tensor::from_bool(no_padding, &dev)));
        for (f, u) in fused.iter().zip(&unfused) {
            f.assert_approx_eq::<f32>(u, Tolerance::rel_abs(1e-4, 1e-5));
        }
        // `forward` without a mask takes the fused core: bit for bit its output.
        let plain = layer.forward(x0.clone(), None, None).unwrap();
        plain
            .inner()
            .into_data()
            .assert_approx_eq::<f32>(&fused[0], Tolerance::absolute(0.0));
    }
}
