//! Tests of [`super::BiasedMultiHeadAttention`]: the formula in f64, every path against
//! the others, DGL's initialisation.

use super::*;
use burn::tensor::{Distribution, TensorData};

fn device() -> Device {
    Device::flex()
}

/// Reference in f64 loops, straight from the docstring formula.
fn reference(
    m: &BiasedMultiHeadAttention,
    x: &[f32],
    bias: &[f32],
    mask: &[bool],
    [b, n, d]: [usize; 3],
) -> Vec<f64> {
    let h = m.num_heads;
    let dk = m.d_k;
    let w = |l: &Linear| {
        (
            l.weight.val().into_data().try_to_vec::<f32>().unwrap(),
            l.bias
                .as_ref()
                .map(|p| p.val().into_data().try_to_vec::<f32>().unwrap())
                .unwrap_or(vec![0.0; d]),
        )
    };
    let proj = |(wt, bs): &(Vec<f32>, Vec<f32>), rows: &[f64]| -> Vec<f64> {
        let k = rows.len() / d;
        let mut out = vec![0.0; k * d];
        for r in 0..k {
            for o in 0..d {
                out[r * d + o] = bs[o] as f64
                    + (0..d)
                        .map(|i| rows[r * d + i] * wt[i * d + o] as f64)
                        .sum::<f64>();
            }
        }
        out
    };
    let xs: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let (q, k, v) = (
        proj(&w(&m.q_proj), &xs),
        proj(&w(&m.k_proj), &xs),
        proj(&w(&m.v_proj), &xs),
    );
    let mut attn = vec![0.0; b * n * d];
    let mut dead = vec![false; b * n];
    for g in 0..b {
        for i in 0..n {
            dead[g * n + i] = (0..n).all(|j| mask[(g * n + i) * n + j]);
            for hh in 0..h {
                let mut s: Vec<f64> = (0..n)
                    .map(|j| {
                        let dot: f64 = (0..dk)
                            .map(|c| {
                                q[(g * n + i) * d + hh * dk + c] * k[(g * n + j) * d + hh * dk + c]
                            })
                            .sum();
                        let raw = dot / (dk as f64).sqrt();
                        let bb = bias[((g * n + i) * n + j) * h + hh] as f64;
                        if m.multiplicative { raw * bb } else { raw + bb }
                    })
                    .collect();
                for j in 0..n {
                    if mask[(g * n + i) * n + j] {
                        s[j] = f64::NEG_INFINITY;
                    }
                }
                let mx = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = s.iter().map(|&v| (v - mx).exp()).collect();
                let z: f64 = e.iter().sum();
                for c in 0..dk {
                    attn[(g * n + i) * d + hh * dk + c] = (0..n)
                        .map(|j| e[j] / z * v[(g * n + j) * d + hh * dk + c])
                        .sum();
                }
            }
        }
    }
    let mut out = proj(&w(&m.out_proj), &attn);
    for (r, &is_dead) in dead.iter().enumerate() {
        if is_dead {
            out[r * d..(r + 1) * d].fill(0.0);
        }
    }
    out
}

fn case(kind: AttnBiasType) {
    let dev = device();
    dev.seed(7);
    let (b, n, d, h) = (2, 5, 8, 2);
    let mut m = BiasedMultiHeadAttentionConfig::new(d, h)
        .with_attn_bias_type(kind)
        .with_dropout(0.0)
        .init(&dev);
    // Non-zero output bias so that zeroing dead rows is visible.
    m.out_proj.bias = m.out_proj.bias.map(|p| p.map(|t| t.add_scalar(0.3)));
    let x = Tensor::<3>::random([b, n, d], Distribution::Normal(0.0, 1.0), &dev);
    let bias = Tensor::<4>::random([b, n, n, h], Distribution::Normal(1.0, 0.5), &dev);
    // Molecule 1 has 3 atoms: padded keys masked, padded query rows fully masked.
    let lens = [5usize, 3];
    let mask: Vec<bool> = (0..b * n * n)
        .map(|p| {
            let (g, i, j) = (p / (n * n), (p / n) % n, p % n);
            i >= lens[g] || j >= lens[g]
        })
        .collect();
    let out = m.forward(
        x.clone(),
        Some(bias.clone()),
        Some(Tensor::from_data(
            TensorData::new(mask.clone(), [b, n, n]),
            &dev,
        )),
    );
    let got = out.into_data().try_to_vec::<f32>().unwrap();
    let want = reference(
        &m,
        &x.into_data().try_to_vec::<f32>().unwrap(),
        &bias.into_data().try_to_vec::<f32>().unwrap(),
        &mask,
        [b, n, d],
    );
    for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
        assert!((g as f64 - w).abs() < 1e-5, "{kind:?} [{k}]: {g} vs {w}");
    }
    // Padded rows 3, 4 of molecule 1 are exactly zero.
    assert!(got[(n + 3) * d..].iter().all(|&v| v == 0.0));
}

/// Under autodiff on flex, the fused path (ours, training included) gives the explicit
/// path's output and the gradients of x and attn_bias, with a key padding mask that
/// leaves every row a key (as Transformer-M's graph token does).
#[test]
fn fused_path_matches_the_explicit_path_under_autodiff() {
    use burn::tensor::Tolerance;
    let dev = Device::flex().autodiff();
    let m = BiasedMultiHeadAttentionConfig::new(16, 4)
        .with_dropout(0.0)
        .init(&dev);
    let x = Tensor::<3>::random([2, 5, 16], Distribution::Normal(0.0, 1.0), &dev);
    let bias = Tensor::<4>::random([2, 4, 5, 5], Distribution::Normal(0.0, 1.0), &dev);
    let mask = Tensor::<3, Bool>::from_data(
        TensorData::new(
            (0..50).map(|e| e >= 25 && e % 5 >= 3).collect::<Vec<_>>(),
            [2, 5, 5],
        ),
        &dev,
    );
    let run = |fused: bool| {
        let (x, bias) = (
            x.clone().detach().require_grad(),
            bias.clone().detach().require_grad(),
        );
        let path = if fused { Path::Fused } else { Path::Explicit };
        let y = m.forward_on(path, x.clone(), Some(bias.clone()), Some(mask.clone()));
        let grads = (y.clone() * y.clone()).sum().backward();
        [
            y.inner().into_data(),
            x.grad(&grads).unwrap().into_data(),
            bias.grad(&grads).unwrap().into_data(),
        ]
    };
    for (f, e) in run(true).iter().zip(&run(false)) {
        f.assert_approx_eq::<f32>(e, Tolerance::rel_abs(1e-4, 1e-5));
    }
}

/// One semantics on every path: with a fully masked query row (molecule 1's atoms 3
/// and 4 see no key), the fused kernel, Burn's attention op and the explicit ops give
/// the same output, 0 on that row; under autodiff the fused and explicit paths also
/// give the same finite gradients, 0 for the masked atoms' features.
#[test]
fn every_path_zeroes_a_fully_masked_row() {
    use burn::tensor::Tolerance;
    let dev = Device::flex().autodiff();
    dev.seed(11);
    let (b, n, d) = (2, 5, 16);
    let mut m = BiasedMultiHeadAttentionConfig::new(d, 4)
        .with_dropout(0.0)
        .init(&dev);
    // A non-zero output bias (a fresh leaf): an unzeroed masked row would show it.
    m.out_proj.bias = Some(Param::from_tensor(Tensor::full([d], 0.3, &dev)));
    let x = Tensor::<3>::random([b, n, d], Distribution::Normal(0.0, 1.0), &dev);
    let bias = Tensor::<4>::random([b, 4, n, n], Distribution::Normal(0.0, 1.0), &dev);
    let mask: Vec<bool> = (0..b * n * n)
        .map(|p| {
            let (g, i, j) = (p / (n * n), (p / n) % n, p % n);
            g == 1 && (i >= 3 || j >= 3)
        })
        .collect();
    let mask = Tensor::<3, Bool>::from_data(TensorData::new(mask, [b, n, n]), &dev);
    let run = |path: Path| {
        let (x, bias) = (
            x.clone().detach().require_grad(),
            bias.clone().detach().require_grad(),
        );
        let y = m.forward_on(path, x.clone(), Some(bias.clone()), Some(mask.clone()));
        let grads = (y.clone() * y.clone()).sum().backward();
        [y.inner().into_data(), x.grad(&grads).unwrap().into_data()]
    };
    let [fused, fused_grad] = run(Path::Fused);
    let [explicit, explicit_grad] = run(Path::Explicit);
    let inner = m.valid();
    let burn = inner
        .forward_on(
            Path::BurnAttention,
            x.inner(),
            Some(bias.inner()),
            Some(mask.inner()),
        )
        .into_data();
    let tol = Tolerance::rel_abs(1e-4, 1e-5);
    fused.assert_approx_eq::<f32>(&explicit, tol);
    burn.assert_approx_eq::<f32>(&explicit, tol);
    fused_grad.assert_approx_eq::<f32>(&explicit_grad, tol);
    let masked_rows = (n + 3) * d..;
    for out in [&fused, &explicit, &burn] {
        let v = out.try_to_vec::<f32>().unwrap();
        assert!(v[masked_rows.clone()].iter().all(|&e| e == 0.0), "{v:?}");
        assert!(v[..(n + 3) * d].iter().all(|&e| e != 0.0));
    }
    let g = fused_grad.try_to_vec::<f32>().unwrap();
    assert!(g.iter().all(|e| e.is_finite()));
    assert!(g[masked_rows].iter().all(|&e| e == 0.0), "{g:?}");
}

#[test]
fn additive_bias_matches_the_formula_with_padding() {
    case(AttnBiasType::Add);
}

#[test]
fn multiplicative_bias_matches_the_formula_with_padding() {
    case(AttnBiasType::Mul);
}

#[test]
fn fully_masked_rows_have_zero_finite_gradients() {
    let dev = device().autodiff();
    dev.seed(3);
    let (b, n, d) = (1, 3, 4);
    let m = BiasedMultiHeadAttentionConfig::new(d, 2)
        .with_dropout(0.0)
        .init(&dev);
    let x = Tensor::<3>::random([b, n, d], Distribution::Normal(0.0, 1.0), &dev).require_grad();
    let bias = Tensor::<4>::zeros([b, n, n, 2], &dev).require_grad();
    // Atom 2 is padding.
    let mask: Vec<bool> = (0..n * n).map(|p| p / n == 2 || p % n == 2).collect();
    let out = m.forward(
        x.clone(),
        Some(bias.clone()),
        Some(Tensor::from_data(TensorData::new(mask, [b, n, n]), &dev)),
    );
    let grads = out.sum().backward();
    let gx = x
        .grad(&grads)
        .unwrap()
        .into_data()
        .try_to_vec::<f32>()
        .unwrap();
    let gb = bias
        .grad(&grads)
        .unwrap()
        .into_data()
        .try_to_vec::<f32>()
        .unwrap();
    assert!(gx.iter().chain(&gb).all(|v| v.is_finite()));
    // The padded atom's features and every bias entry touching it get no gradient.
    assert!(gx[2 * d..].iter().all(|&v| v == 0.0), "{gx:?}");
    for p in 0..n * n {
        if p / n == 2 || p % n == 2 {
            assert_eq!(gb[p * 2], 0.0);
            assert_eq!(gb[p * 2 + 1], 0.0);
        }
    }
    assert!(gx[..2 * d].iter().any(|&v| v != 0.0));
}

#[test]
fn init_follows_dgl() {
    let dev = device();
    dev.seed(1);
    let d = 64;
    let m = BiasedMultiHeadAttentionConfig::new(d, 8).init(&dev);
    let bound = |gain: f64| gain * (6.0 / (2 * d) as f64).sqrt();
    let max = |l: &Linear| l.weight.val().abs().max().into_scalar::<f32>() as f64;
    let qb = bound(std::f64::consts::FRAC_1_SQRT_2);
    assert!(max(&m.q_proj) <= qb && max(&m.q_proj) > 0.9 * qb);
    assert!(max(&m.out_proj) <= bound(1.0) && max(&m.out_proj) > qb);
    let ob = m.out_proj.bias.as_ref().unwrap().val();
    assert_eq!(ob.abs().sum().into_scalar::<f32>(), 0.0);
}

/// The packed path (real tokens only, `PackedBatch`) gives the padded fused path's real
/// rows, 0 at padding, and under autodiff the same gradients of x and attn_bias (a loss
/// on the real rows; padding pairs get gradient 0 on both).
#[test]
fn packed_path_matches_the_padded_path_under_autodiff() {
    use crate::PackedBatch;
    use burn::tensor::Tolerance;
    let dev = Device::flex().autodiff();
    let m = BiasedMultiHeadAttentionConfig::new(16, 4)
        .with_dropout(0.0)
        .init(&dev);
    let (b, n, d) = (3, 5, 16);
    let x = Tensor::<3>::random([b, n, d], Distribution::Normal(0.0, 1.0), &dev);
    let bias = Tensor::<4>::random([b, 4, n, n], Distribution::Normal(0.0, 1.0), &dev);
    // Molecule 0: 3 real tokens, molecule 1: 5, molecule 2: 1 (a lone graph token).
    let real = [3, 5, 1];
    let padding: Vec<bool> = (0..b * n).map(|e| e % n >= real[e / n]).collect();
    let key_padding = Tensor::<2, Bool>::from_data(TensorData::new(padding.clone(), [b, n]), &dev);
    let mask = key_padding.clone().reshape([b, 1, n]).expand([b, n, n]);
    let rows = key_padding.clone().reshape([b, n, 1]).expand([b, n, d]);
    let run = |packed: bool| {
        let (x, bias) = (
            x.clone().detach().require_grad(),
            bias.clone().detach().require_grad(),
        );
        let y = if packed {
            let batch = PackedBatch::for_fused(&x, &key_padding).expect("flex f32 with padding");
            let y = m.forward_packed(
                batch.pack(x.clone()),
                batch.pack_head_pairs(bias.clone()),
                &batch,
            );
            batch.unpack(y)
        } else {
            m.forward_on(
                Path::Fused,
                x.clone(),
                Some(bias.clone()),
                Some(mask.clone()),
            )
            .mask_fill(rows.clone(), 0.0)
        };
        let weights = Tensor::<3>::from_data(
            TensorData::new(
                (0..b * n * d).map(|e| (e % 7) as f32 - 3.0).collect(),
                [b, n, d],
            ),
            &dev,
        );
        let grads = (y.clone() * y.clone() * weights).sum().backward();
        [
            y.inner().into_data(),
            x.grad(&grads).unwrap().into_data(),
            bias.grad(&grads).unwrap().into_data(),
        ]
    };
    let (packed, padded) = (run(true), run(false));
    for (p, e) in packed.iter().zip(&padded) {
        p.assert_approx_eq::<f32>(e, Tolerance::rel_abs(1e-4, 1e-5));
    }
    // Padded rows are exactly 0, and a real row is not.
    let y = packed[0].try_to_vec::<f32>().unwrap();
    assert!(y[3 * d..5 * d].iter().all(|&v| v == 0.0));
    assert!(y[..d].iter().any(|&v| v.abs() > 1e-3));
    // The padded bias pairs get no gradient.
    let g = packed[2].try_to_vec::<f32>().unwrap();
    assert!(g[3..5].iter().all(|&v| v == 0.0));
    assert!(g[..3].iter().any(|&v| v != 0.0));
}
