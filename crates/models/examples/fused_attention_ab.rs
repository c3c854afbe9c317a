//! A/B of Transformer-M small's encoder on the CPU (issues #12, #42): the inference path
//! (`TransformerM::encode`: packed, our fused attention kernel), the same layers on the
//! padded batch (`TransformerM::encode_padded`), and the explicit path
//! (`TransformerM::encode_embedded`, scores, mask, softmax and weights as separate ops),
//! same model, same padded batch of 32 molecules, alternating, median of 15 each.
//!
//! `cargo run --release -p models --example fused_attention_ab` (or the dev profile).

use std::time::Instant;

use burn::prelude::*;
use models::transformer_m::{Mode, TransformerMBatch, TransformerMConfig};
use mol_featurize::graphormer::featurize;
use mol_featurize::{Molecule, pad_graphormer_batch};

fn main() {
    let device = Device::flex();
    device.seed(0);
    let config = TransformerMConfig::small();
    let model = config.init(&device);
    // 32 molecules of about 20-30 heavy atoms, coordinates on a helix (the work does not
    // depend on them).
    let smiles = [
        "CC(=O)Nc1ccc(O)cc1CCCCCCCC",
        "c1ccc2ccccc2c1CC(=O)OCC",
        "CN1CCN(CC1)c1ccc(cc1)C(=O)N",
        "COc1ccc(cc1OC)CCN(C)C(=O)c1ccccc1",
        "CC(C)Cc1ccc(cc1)C(C)C(=O)OCCCC",
        "O=C(O)c1ccccc1Oc1ccccc1CCCl",
        "Clc1ccc(cc1)C(c1ccc(Cl)cc1)C(Cl)(Cl)Cl",
        "CCOC(=O)c1ccc(N)cc1CCCCCC",
    ];
    let feats: Vec<_> = (0..32)
        .map(|k| {
            let mol = Molecule::from_smiles(smiles[k % smiles.len()]).unwrap();
            let xyz = (0..mol.num_atoms())
                .map(|i| {
                    let t = i as f32 * 0.9;
                    [1.5 * t.cos(), 1.5 * t.sin(), 0.4 * t]
                })
                .collect();
            featurize(&mol, config.limits.max_hops, Some(xyz)).unwrap()
        })
        .collect();
    let refs: Vec<_> = feats.iter().collect();
    let data = pad_graphormer_batch(&refs, &config.limits).unwrap();
    let batch = TransformerMBatch::from_data(&data, &[Mode::Both; 32], &device);
    let sync = |t: Tensor<3>| {
        t.into_data();
    };
    sync(model.encode(&batch).states);
    sync(model.encode_embedded(model.embed(&batch)).0.states);
    let (mut fused, mut explicit, mut padded) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..15 {
        let t0 = Instant::now();
        sync(model.encode(&batch).states);
        fused.push(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        sync(model.encode_padded(&batch).states);
        padded.push(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        sync(model.encode_embedded(model.embed(&batch)).0.states);
        explicit.push(t0.elapsed().as_secs_f64());
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (f, e, p) = (median(fused), median(explicit), median(padded));
    println!(
        "batch 32 x {} atoms, {} threads: fused packed {:.1} ms, fused padded {:.1} ms, \
         explicit {:.1} ms; packed {:.2}x padded, {:.2}x explicit",
        data.n_atoms,
        rayon::current_num_threads(),
        f * 1e3,
        p * 1e3,
        e * 1e3,
        p / f,
        e / f
    );
}
