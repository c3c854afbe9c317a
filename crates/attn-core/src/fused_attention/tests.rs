//! Tests of the fused attention core against the Burn ops it replaces.

use super::*;
use burn::tensor::{Distribution, Tolerance};

const B: usize = 3;
const N: usize = 6;
const H: usize = 2;
const D: usize = 8;

/// The unfused ops with Burn alone (the function the kernel replaces).
#[allow(clippy::too_many_arguments)]
fn unfused(
    cfg: FusedAttention,
    q: Tensor<3>,
    k: Tensor<3>,
    v: Tensor<3>,
    bias: Tensor<4>,
    mask: Tensor<3, Bool>,
    p_mix: Tensor<3>,
    keep: Tensor<4>,
) -> Tensor<3> {
    let heads = |t: Tensor<3>| t.reshape([B, N, H, D / H]).swap_dims(1, 2);
    let scores = heads(q)
        .matmul(heads(k).swap_dims(2, 3))
        .mul_scalar(cfg.scale)
        + bias;
    let scores = scores.mask_fill(mask.unsqueeze_dim::<4>(1).expand([B, H, N, N]), -1e12);
    let a = burn::tensor::activation::softmax(scores, 3);
    let p = a.mul_scalar(cfg.softmax_weight) + p_mix.unsqueeze_dim::<4>(1);
    (p * keep)
        .matmul(heads(v))
        .swap_dims(1, 2)
        .reshape([B, N, D])
}

/// Values and the gradients of q, k, v and attn_bias equal the unfused ops', with a
/// key mask (a causal window in molecule 0, key padding in molecule 1), one query row
/// masked entirely (uniform weights), a dropout mask, and with and without a shared
/// p_mix (without it the kernel skips the masked columns at either end of a row); and
/// the plain device gives the same values. A transposed head, a missing scale or a wrong
/// softmax term is off by O(1).
#[test]
fn fused_core_matches_the_unfused_ops() {
    for with_p_mix in [true, false] {
        fused_core_matches_the_unfused_ops_with(with_p_mix);
    }
}

fn fused_core_matches_the_unfused_ops_with(with_p_mix: bool) {
    let dev = Device::flex().autodiff();
    let cfg = FusedAttention {
        num_heads: H,
        scale: 0.5,
        softmax_weight: 0.3,
    };
    let rnd = |dims: [usize; 3]| Tensor::<3>::random(dims, Distribution::Normal(0.0, 1.0), &dev);
    let (q, k, v) = (rnd([B, N, D]), rnd([B, N, D]), rnd([B, N, D]));
    let bias = Tensor::<4>::random([B, H, N, N], Distribution::Normal(0.0, 1.0), &dev);
    let p_mix = if with_p_mix {
        Tensor::<3>::random([B, N, N], Distribution::Default, &dev)
    } else {
        Tensor::<3>::zeros([B, N, N], &dev)
    };
    // Molecule 0: query i sees keys i - 2 ..= i; keys 4 and 5 of molecule 1 masked;
    // molecule 2 row 0 masked entirely.
    let mask: Vec<bool> = (0..B * N * N)
        .map(|e| {
            let (bi, i, j) = (e / (N * N), e / N % N, e % N);
            (bi == 0 && (j > i || j + 2 < i)) || (bi == 1 && j >= 4) || (bi == 2 && i == 0)
        })
        .collect();
    let keep: Vec<f32> = (0..B * H * N * N)
        .map(|e| if e % 7 == 3 { 0.0 } else { 1.25 })
        .collect();
    let mask_t = Tensor::<3, Bool>::from_data(TensorData::new(mask.clone(), [B, N, N]), &dev);
    let keep_t = Tensor::<4>::from_data(TensorData::new(keep.clone(), [B, H, N, N]), &dev);
    let g = rnd([B, N, D]);
    let data = Data {
        shape: Shape {
            n: N,
            d: D,
            h: H,
            scale: cfg.scale,
            weight: cfg.softmax_weight,
        },
        spans: Arc::new(uniform_spans(B, N)),
        out_dims: [B, N, D],
        bias_dims: [B, H, N, N],
        mask: Some(Arc::new(mask.clone())),
        p_mix: with_p_mix
            .then(|| contiguous(p_mix.clone().inner().try_into_primitive::<Flex>().unwrap())),
        keep: Some(Arc::new(keep.clone())),
    };
    let grads_of = |fused: bool| {
        let leaf = |t: &Tensor<3>| t.clone().detach().require_grad();
        let (q, k, v) = (leaf(&q), leaf(&k), leaf(&v));
        let bias = bias.clone().detach().require_grad();
        let out = if fused {
            run(
                q.clone(),
                k.clone(),
                v.clone(),
                Some(bias.clone()),
                data.clone(),
            )
            .expect("on flex")
        } else {
            unfused(
                cfg,
                q.clone(),
                k.clone(),
                v.clone(),
                bias.clone(),
                mask_t.clone(),
                p_mix.clone(),
                keep_t.clone(),
            )
        };
        let grads = (out.clone() * g.clone()).sum().backward();
        [
            out.inner().into_data(),
            q.grad(&grads).expect("dq").into_data(),
            k.grad(&grads).expect("dk").into_data(),
            v.grad(&grads).expect("dv").into_data(),
            bias.grad(&grads).expect("dbias").into_data(),
        ]
    };
    let (fused, reference) = (grads_of(true), grads_of(false));
    for (f, r) in fused.iter().zip(&reference) {
        f.assert_approx_eq::<f32>(r, Tolerance::rel_abs(1e-4, 1e-5));
    }
    // The plain device: the same values.
    let plain = run(
        q.clone().inner(),
        k.clone().inner(),
        v.clone().inner(),
        Some(bias.clone().inner()),
        data,
    )
    .expect("on flex");
    plain
        .into_data()
        .assert_approx_eq::<f32>(&reference[0], Tolerance::rel_abs(1e-4, 1e-5));
}

/// The packed entry equals the padded one with the key padding mask, row for row, values
/// and the gradients of q, k, v (molecules of 6, 0, 4 and 1 atoms padded to 6; `p_mix` 0
/// toward padding, as MAT's is): padded rows get no gradient in the padded call, and the
/// packed call has none. Wrong spans (a molecule reading its neighbour's rows or pair
/// block) are off by O(1).
#[test]
fn packed_molecules_match_the_padded_batch() {
    let dev = Device::flex().autodiff();
    let cfg = FusedAttention {
        num_heads: H,
        scale: 0.5,
        softmax_weight: 0.3,
    };
    let lengths = [6usize, 0, 4, 1];
    let b = lengths.len();
    let real = |bi: usize, i: usize| i < lengths[bi];
    let rnd = |dims: [usize; 3]| Tensor::<3>::random(dims, Distribution::Normal(0.0, 1.0), &dev);
    let (q, k, v, g) = (
        rnd([b, N, D]),
        rnd([b, N, D]),
        rnd([b, N, D]),
        rnd([b, N, D]),
    );
    let mix: Vec<f32> = (0..b * N * N)
        .map(|e| {
            let (bi, i, j) = (e / (N * N), e / N % N, e % N);
            if real(bi, j) {
                ((e * 13 % 17) as f32) / 40.0
            } else if real(bi, i) {
                0.0
            } else {
                0.5
            }
        })
        .collect();
    let mask: Vec<bool> = (0..b * N * N).map(|e| !real(e / (N * N), e % N)).collect();
    let real_rows: Vec<i64> = (0..b * N)
        .filter(|&r| real(r / N, r % N))
        .map(|r| r as i64)
        .collect();
    let index =
        Tensor::<1, Int>::from_data(TensorData::new(real_rows.clone(), [real_rows.len()]), &dev);
    let pack = |t: Tensor<3>| {
        t.reshape([b * N, D])
            .select(0, index.clone())
            .unsqueeze_dim::<3>(0)
    };
    let packed_mix: Vec<f32> = (0..b)
        .flat_map(|bi| {
            let mix = &mix;
            (0..lengths[bi])
                .flat_map(move |i| (0..lengths[bi]).map(move |j| mix[(bi * N + i) * N + j]))
        })
        .collect();
    let leaf = |t: &Tensor<3>| t.clone().detach().require_grad();
    let (pq, pk, pv) = (leaf(&q), leaf(&k), leaf(&v));
    let padded = fused_attention(
        cfg,
        pq.clone(),
        pk.clone(),
        pv.clone(),
        FusedAttentionInputs {
            attn_mask: Some(Tensor::from_data(TensorData::new(mask, [b, N, N]), &dev)),
            p_mix: Some(Tensor::from_data(TensorData::new(mix, [b, N, N]), &dev)),
            ..Default::default()
        },
    )
    .expect("on flex");
    let padded_grads = (pack(padded.clone()) * pack(g.clone())).sum().backward();
    let (kq, kk, kv) = (leaf(&q), leaf(&k), leaf(&v));
    let packed = fused_attention_packed(
        cfg,
        pack(kq.clone()),
        pack(kk.clone()),
        pack(kv.clone()),
        &lengths,
        Some(Tensor::from_data(
            TensorData::new(packed_mix.clone(), [packed_mix.len()]),
            &dev,
        )),
        None,
    )
    .expect("on flex");
    let packed_grads = (packed.clone() * pack(g.clone())).sum().backward();
    let tol = Tolerance::rel_abs(1e-5, 1e-6);
    pack(padded)
        .into_data()
        .assert_approx_eq::<f32>(&packed.into_data(), tol);
    for (a, b) in [(&pq, &kq), (&pk, &kk), (&pv, &kv)] {
        let (ga, gb) = (
            a.grad(&padded_grads).expect("padded grad"),
            b.grad(&packed_grads).expect("packed grad"),
        );
        ga.into_data().assert_approx_eq::<f32>(&gb.into_data(), tol);
    }
}

/// Through the public entry without bias, mask, mix or dropout it is plain softmax
/// attention: checked on one head against a hand computation (two keys, equal scores
/// give the mean of the values).
#[test]
fn plain_attention_averages_equal_keys() {
    let dev = Device::flex();
    let q = Tensor::<3>::from_floats([[[1.0, 0.0], [0.0, 0.0]]], &dev);
    let k = Tensor::<3>::from_floats([[[0.0, 1.0], [0.0, -1.0]]], &dev);
    let v = Tensor::<3>::from_floats([[[2.0, 4.0], [6.0, 8.0]]], &dev);
    let cfg = FusedAttention {
        num_heads: 1,
        scale: 1.0,
        softmax_weight: 1.0,
    };
    let out: Vec<f32> = fused_attention(cfg, q, k, v, FusedAttentionInputs::default())
        .expect("on flex")
        .into_data()
        .try_to_vec()
        .unwrap();
    assert_eq!(out, [4.0, 6.0, 4.0, 6.0]);
}

/// The merged entry equals the three-view call: values, and the gradient of `qkv` (every
/// column block: Q, K and V's gradients in their places), with a key mask, on the autodiff
/// and the plain device. Q's and K's gradient blocks swapped, or the blocks read from the
/// wrong columns, is off by O(1).
#[test]
fn merged_qkv_equals_three_views() {
    let dev = Device::flex().autodiff();
    let cfg = FusedAttention {
        num_heads: H,
        scale: 0.5,
        softmax_weight: 1.0,
    };
    let qkv0 = Tensor::<3>::random([B, N, 3 * D], Distribution::Normal(0.0, 1.0), &dev);
    let g = Tensor::<3>::random([B, N, D], Distribution::Normal(0.0, 1.0), &dev);
    let mask: Vec<bool> = (0..B * N * N).map(|e| e % N > e / N % N).collect();
    let inputs = || FusedAttentionInputs {
        attn_mask: Some(Tensor::<3, Bool>::from_data(
            TensorData::new(mask.clone(), [B, N, N]),
            &dev,
        )),
        ..Default::default()
    };
    let run = |merged: bool| {
        let qkv = qkv0.clone().detach().require_grad();
        let out = if merged {
            fused_attention_qkv(cfg, qkv.clone(), inputs())
        } else {
            let part = |i: usize| qkv.clone().narrow(2, i * D, D);
            fused_attention(cfg, part(0), part(1), part(2), inputs())
        }
        .expect("on flex");
        let grads = (out.clone() * g.clone()).sum().backward();
        [
            out.inner().into_data(),
            qkv.grad(&grads).expect("dqkv").into_data(),
        ]
    };
    let (merged, views) = (run(true), run(false));
    for (m, v) in merged.iter().zip(&views) {
        m.assert_approx_eq::<f32>(v, Tolerance::absolute(1e-6));
    }
    let plain = fused_attention_qkv(cfg, qkv0.clone().inner(), FusedAttentionInputs::default())
        .expect("on flex");
    let part = |i: usize| qkv0.clone().inner().narrow(2, i * D, D);
    let reference = fused_attention(
        cfg,
        part(0),
        part(1),
        part(2),
        FusedAttentionInputs::default(),
    )
    .expect("on flex");
    plain
        .into_data()
        .assert_approx_eq::<f32>(&reference.into_data(), Tolerance::absolute(1e-6));
}
