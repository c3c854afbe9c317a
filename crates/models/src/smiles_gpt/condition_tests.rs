//! Conditioning: MolGPT's own forward (fixtures/molgpt/condition.json, made by
//! fixtures/gen/molgpt_condition.py from devalab/molgpt `train/model.py`) with its
//! weights loaded, cached conditioned decoding against the full forward, and the refusals.

use std::collections::HashMap;

use burn::module::Param;
use burn::prelude::*;
use burn::tensor::{Distribution, Tolerance};
use serde::Deserialize;

use super::{Condition, SmilesGpt, SmilesGptConfig};

#[derive(Deserialize)]
struct Stored {
    shape: Vec<usize>,
    values: Vec<f32>,
}

#[derive(Deserialize)]
struct Case {
    num_props: usize,
    scaffold_max_len: usize,
    tokens: Vec<Vec<i64>>,
    props: Vec<Vec<f32>>,
    scaffold: Option<Vec<Vec<i64>>>,
    logits: Vec<f32>,
    logits_shape: [usize; 3],
    state: HashMap<String, Stored>,
}

#[derive(Deserialize)]
struct Fixture {
    cases: Vec<Case>,
}

fn fixture() -> Fixture {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/molgpt/condition.json"
    );
    let path = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(|d| std::path::PathBuf::from(d).join("../../fixtures/molgpt/condition.json"))
        .unwrap_or_else(|| path.into());
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn ids(rows: &[Vec<i64>], device: &Device) -> Tensor<2, Int> {
    let flat: Vec<i64> = rows.iter().flatten().copied().collect();
    Tensor::from_data(TensorData::new(flat, [rows.len(), rows[0].len()]), device)
}

/// MolGPT's state dict in our layout: PyTorch `[out, in]` linears transposed, the
/// separate query / key / value merged into `qkv` (q, k, v blocks, as `SequenceSelfAttention`).
fn load_molgpt(case: &Case, device: &Device) -> SmilesGpt {
    let t = |name: &str| -> Tensor<2> {
        let s = &case.state[name];
        let shape = match s.shape[..] {
            [n] => [1, n],
            [a, b] => [a, b],
            [1, a, b] => [a, b],
            _ => panic!("{name}: {:?}", s.shape),
        };
        Tensor::from_data(TensorData::new(s.values.clone(), shape), device)
    };
    let v = |name: &str| -> Tensor<1> { t(name).flatten(0, 1) };
    let linear = |lin: &mut burn::nn::Linear, w: Tensor<2>, b: Tensor<1>| {
        lin.weight = Param::from_tensor(w);
        lin.bias = Some(Param::from_tensor(b));
    };
    let norm = |ln: &mut burn::nn::LayerNorm, p: &str| {
        ln.gamma = Param::from_tensor(v(&format!("{p}.weight")));
        ln.beta = Some(Param::from_tensor(v(&format!("{p}.bias"))));
    };
    let [_, _, vocab] = case.logits_shape;
    let mut model = SmilesGptConfig::new(vocab)
        .with_max_len(12)
        .with_d_model(16)
        .with_num_layers(2)
        .with_num_heads(2)
        .with_d_ff(64)
        .with_num_props(Some(case.num_props))
        .with_scaffold_max_len(Some(case.scaffold_max_len))
        .init(device);
    model.tok_emb.weight = Param::from_tensor(t("tok_emb.weight"));
    model.pos_emb = Param::from_tensor(t("pos_emb"));
    model.type_emb.as_mut().unwrap().weight = Param::from_tensor(t("type_emb.weight"));
    if let Some(p) = model.prop_nn.as_mut() {
        linear(p, t("prop_nn.weight").transpose(), v("prop_nn.bias"));
    }
    for (l, block) in model.blocks.iter_mut().enumerate() {
        let p = format!("blocks.{l}");
        norm(&mut block.ln_1, &format!("{p}.ln1"));
        norm(&mut block.ln_2, &format!("{p}.ln2"));
        let qkv = ["query", "key", "value"];
        linear(
            &mut block.attn.qkv,
            Tensor::cat(
                qkv.iter()
                    .map(|m| t(&format!("{p}.attn.{m}.weight")).transpose())
                    .collect(),
                1,
            ),
            Tensor::cat(
                qkv.iter()
                    .map(|m| v(&format!("{p}.attn.{m}.bias")))
                    .collect(),
                0,
            ),
        );
        linear(
            &mut block.attn.out_proj,
            t(&format!("{p}.attn.proj.weight")).transpose(),
            v(&format!("{p}.attn.proj.bias")),
        );
        linear(
            &mut block.fc,
            t(&format!("{p}.mlp.0.weight")).transpose(),
            v(&format!("{p}.mlp.0.bias")),
        );
        linear(
            &mut block.proj,
            t(&format!("{p}.mlp.2.weight")).transpose(),
            v(&format!("{p}.mlp.2.bias")),
        );
    }
    norm(&mut model.ln_f, "ln_f");
    model.head.weight = Param::from_tensor(t("head.weight").transpose());
    model
}

fn condition(case: &Case, device: &Device) -> Condition {
    let b = case.props.len();
    let flat: Vec<f32> = case.props.iter().flatten().copied().collect();
    Condition {
        props: Some(Tensor::from_data(
            TensorData::new(flat, [b, case.num_props]),
            device,
        )),
        scaffold: case.scaffold.as_ref().map(|s| ids(s, device)),
    }
}

/// MolGPT's logits (its `logits[:, num:, :]`) from its own weights and inputs, within
/// 1e-5: properties with a scaffold, and properties alone.
#[test]
fn conditioned_logits_equal_molgpt() {
    let dev = Device::flex();
    for case in fixture().cases {
        let model = load_molgpt(&case, &dev);
        let got = model
            .forward_conditioned(
                ids(&case.tokens, &dev),
                Some(&condition(&case, &dev)),
                None,
                None,
            )
            .unwrap();
        assert_eq!(got.dims(), case.logits_shape);
        let want = Tensor::<3>::from_data(
            TensorData::new(case.logits.clone(), case.logits_shape),
            &dev,
        );
        got.into_data()
            .assert_approx_eq::<f32>(&want.into_data(), Tolerance::absolute(1e-5));
    }
}

/// A conditioned prompt then one token per step through the caches gives the full
/// conditioned forward's logits at every position.
#[test]
fn conditioned_cached_decoding_equals_the_full_forward() {
    let dev = Device::flex();
    for case in fixture().cases {
        let model = load_molgpt(&case, &dev);
        let c = condition(&case, &dev);
        let seq = ids(&case.tokens, &dev);
        let full = model
            .forward_conditioned(seq.clone(), Some(&c), None, None)
            .unwrap();
        let mut cache = model.new_cache_with_prefix(2, c.len(), &dev);
        let mut steps = vec![
            model
                .forward_conditioned(
                    seq.clone().narrow(1, 0, 2),
                    Some(&c),
                    None,
                    Some(&mut cache),
                )
                .unwrap(),
        ];
        assert_eq!((cache.prefix, cache.tokens()), (c.len(), 2));
        for i in 2..6 {
            steps.push(
                model
                    .forward(seq.clone().narrow(1, i, 1), None, Some(&mut cache))
                    .unwrap(),
            );
        }
        Tensor::cat(steps, 1)
            .into_data()
            .assert_approx_eq::<f32>(&full.into_data(), Tolerance::absolute(1e-5));
    }
}

/// The condition matters, and a condition the model was not built for is refused.
#[test]
fn conditions_are_checked() {
    let dev = Device::flex();
    dev.seed(7);
    let case = &fixture().cases[0];
    let model = load_molgpt(case, &dev);
    let seq = ids(&case.tokens, &dev);
    let c = condition(case, &dev);
    let other = Condition {
        props: Some(Tensor::random([2, 2], Distribution::Normal(0.0, 1.0), &dev)),
        ..c.clone()
    };
    let a = model
        .forward_conditioned(seq.clone(), Some(&c), None, None)
        .unwrap();
    let b = model
        .forward_conditioned(seq.clone(), Some(&other), None, None)
        .unwrap();
    let diff = (a - b).abs().max().into_scalar::<f32>();
    // Exactly 0 if the properties were ignored; small with MolGPT-sized init weights.
    assert!(diff > 1e-6, "properties change the logits ({diff})");
    let err = |r: Result<Tensor<3>, String>| r.unwrap_err();
    assert!(err(model.forward(seq.clone(), None, None)).contains("needs its condition"));
    let no_props = Condition {
        props: None,
        ..c.clone()
    };
    assert!(
        err(model.forward_conditioned(seq.clone(), Some(&no_props), None, None))
            .contains("give their values")
    );
    let three = Condition {
        props: Some(Tensor::zeros([2, 3], &dev)),
        ..c.clone()
    };
    assert!(
        err(model.forward_conditioned(seq.clone(), Some(&three), None, None)).contains("takes 2")
    );
    let mut cache = model.new_cache_with_prefix(2, c.len(), &dev);
    model
        .forward_conditioned(
            seq.clone().narrow(1, 0, 1),
            Some(&c),
            None,
            Some(&mut cache),
        )
        .unwrap();
    assert!(
        err(model.forward_conditioned(
            seq.clone().narrow(1, 1, 1),
            Some(&c),
            None,
            Some(&mut cache)
        ))
        .contains("first step")
    );
    let plain = SmilesGptConfig::new(11)
        .with_max_len(12)
        .with_d_model(16)
        .with_num_heads(2)
        .init(&dev);
    assert!(err(plain.forward_conditioned(seq, Some(&c), None, None)).contains("unconditional"));
}
