//! A MAT with bond features in place of the adjacency (`use_edge_features`, issue #40
//! item 4) end to end: the run refuses a featurizer without them, trains, records both
//! settings, and its predictions read the bonds' features (E and Z isomers, whose atoms,
//! adjacency and topological distances are the same, get different predictions).

use burn::module::Module;
use burn::tensor::Device;
use mol_featurize::conformer::CoordinateMethod;
use train::predict::predict_smiles;
use train::{RunControl, RunSpec, SplitSpec, Task, train_run};

use crate::pipeline::{scratch, spec, subset_csv};

#[test]
fn a_mat_with_edge_features_trains_and_reads_the_bonds() {
    let _rng = crate::rng_exclusive();
    let dir = scratch("mat-edges");
    let data = subset_csv("esol", 120, &[], &dir);
    let mut edges = spec(data, Task::Regression, SplitSpec::Random { seed: 0 }, 3);
    edges.featurizer.conformer.method = CoordinateMethod::Topological;
    edges.model = edges
        .model
        .with_use_edge_features(true)
        .with_integrated_distances(true);
    let quiet = RunControl::default();

    let err = train_run(&edges, &dir.join("refused"), &quiet, &Device::flex()).unwrap_err();
    assert!(
        err.to_string()
            .contains("use_edge_features true but the featurizer's edge_features is false"),
        "{err}"
    );

    edges.featurizer.edge_features = true;
    let run = dir.join("edges");
    let summary = train_run(&edges, &run, &quiet, &Device::flex()).unwrap();
    assert_eq!(summary.n_skipped, 0);
    let stored = RunSpec::load(&run).unwrap();
    assert!(stored.featurizer.edge_features && stored.model.use_edge_features);
    assert!(stored.model.integrated_distances);
    // 12 weights per layer (11 bond features + g(D)) on top of the plain model.
    let plain = spec(
        edges.data.clone(),
        Task::Regression,
        SplitSpec::Random { seed: 0 },
        3,
    );
    let dev = Device::flex();
    let n = |config: &models::MatConfig| config.clone().with_d_atom(28).init(&dev).num_params();
    assert_eq!(n(&stored.model) - n(&plain.model), 2 * 12);

    let isomers = ["C/C=C/C(=O)O".to_string(), "C/C=C\\C(=O)O".to_string()];
    let out = predict_smiles(&run, &isomers, &dev, None).unwrap();
    let v: Vec<f32> = out
        .predictions
        .iter()
        .map(|p| p.values.as_ref().unwrap()[0])
        .collect();
    assert!(v.iter().all(|x| x.is_finite()), "{v:?}");
    // Only the stereo columns (E vs Z) differ between the two inputs.
    assert!((v[0] - v[1]).abs() > 1e-6, "E and Z predicted alike: {v:?}");
}
