//! Tests of [`super`]: the masked atoms and their count.

use super::*;
use mol_featurize::Molecule;
use mol_featurize::conformer::{ConformerOptions, CoordinateMethod};

#[test]
fn hu_et_al_count_without_the_dummy_node() {
    let mut rng = StdRng::seed_from_u64(7);
    // floor(n * 0.15 + 1): 1 atom up to n = 6, 2 from 7 to 13, 4 at 20.
    for (n, want) in [(1, 1), (6, 1), (7, 2), (13, 2), (14, 3), (20, 4)] {
        let nodes = masked_nodes(n, 0.15, &mut rng);
        assert_eq!(nodes.len(), want, "n {n}: {nodes:?}");
        assert!(nodes.iter().all(|&i| (1..=n).contains(&i)), "{nodes:?}");
        assert!(nodes.windows(2).all(|w| w[0] < w[1]), "{nodes:?}");
    }
    assert!(masked_nodes(0, 0.15, &mut rng).is_empty());
    // Every atom is drawn: over many draws each node of 5 appears.
    let mut seen = [false; 6];
    for _ in 0..200 {
        for i in masked_nodes(5, 0.15, &mut rng) {
            seen[i] = true;
        }
    }
    assert_eq!(seen, [false, true, true, true, true, true]);
}

#[test]
fn masked_atoms_are_zeroed_but_stay_real_nodes_with_their_types() {
    let featurizer = MatFeaturizer {
        conformer: ConformerOptions {
            method: CoordinateMethod::Layout2d,
            ..Default::default()
        },
        ..Default::default()
    };
    // Chloroacetic acid (C, C, O, O, Cl) and pyridine (5 C, 1 N).
    let examples: Vec<Example<MatFeatures>> = ["OC(=O)CCl", "c1ccncc1"]
        .iter()
        .enumerate()
        .map(|(row, s)| Example {
            row,
            features: featurizer
                .featurize(&Molecule::from_smiles(s).unwrap())
                .unwrap(),
            targets: Vec::new(),
        })
        .collect();
    let items: Vec<&Example<MatFeatures>> = examples.iter().collect();
    let batcher = MaskingBatcher { mask_rate: 0.5 };
    let device = Device::flex();
    let mut rng = StdRng::seed_from_u64(3);
    let masked = batcher.batch(&items, &mut rng, &device).unwrap();
    let positions: Vec<i64> = masked.positions.try_into_vec_as::<i64>().unwrap();
    let types: Vec<i64> = masked.types.try_into_vec_as::<i64>().unwrap();
    // floor(5 * 0.5 + 1) = 3 and floor(6 * 0.5 + 1) = 4 atoms.
    assert_eq!(positions.len(), 7);
    let n = 7; // pyridine's 6 atoms + the dummy node
    let features: Vec<f32> = masked.batch.node_features.try_into_vec_as::<f32>().unwrap();
    let padding: Vec<bool> = masked
        .batch
        .key_padding_mask
        .into_data()
        .try_into_vec::<bool>()
        .unwrap();
    let d = 28;
    for (&p, &t) in positions.iter().zip(&types) {
        let (b, node) = (p as usize / n, p as usize % n);
        assert!(node >= 1, "the dummy node is never masked");
        assert!(
            features[p as usize * d..(p as usize + 1) * d]
                .iter()
                .all(|&v| v == 0.0)
        );
        assert!(!padding[p as usize], "a masked atom is still a real node");
        let original = &examples[b].features.node_features[node * d..(node + 1) * d];
        assert_eq!(atom_type(original), Some(t as usize));
    }
    // Types: C = 1, N = 2, O = 3, Cl = 7 (B C N O F P S Cl Br I other).
    assert!(types.iter().all(|t| [1, 2, 3, 7].contains(t)), "{types:?}");
    // Unmasked real atoms keep their features.
    let untouched = (0..2 * n)
        .filter(|i| !positions.contains(&(*i as i64)) && !padding[*i])
        .all(|i| features[i * d..(i + 1) * d].iter().any(|&v| v != 0.0));
    assert!(untouched);
}
