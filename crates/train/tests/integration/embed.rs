//! Embeddings of trained runs (issue #38 item 2): the run's head applied to a molecule
//! embedding gives the run's prediction; per-atom embeddings have one row per heavy atom;
//! a molecule that fails keeps its place (a NaN row in the `.npy`, its reason in the CSV).

use burn::tensor::Device;
use mol_featurize::conformer::CoordinateMethod;
use train::embed::embed_table;
use train::masked_loss::LossKind;
use train::predict::predict_smiles;
use train::table_data::TableData;
use train::trained_run::{Readout, TrainedRun};
use train::{RunControl, SplitSpec, Task, train_run};

const SMILES: [&str; 4] = ["CCO", "not a smiles", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1"];
const HEAVY_ATOMS: [usize; 4] = [3, 0, 7, 11];

fn smiles_table() -> TableData {
    let smiles: Vec<String> = SMILES.iter().map(|s| s.to_string()).collect();
    TableData {
        table: train::data::MoleculeTable {
            targets: vec![Vec::new(); smiles.len()],
            smiles,
            target_columns: Vec::new(),
            ids: Vec::new(),
            label_problems: Vec::new(),
        },
        structures: None,
    }
}

/// Embeds [`SMILES`] under the run in `run_dir` and checks the head on the molecule
/// embeddings against `predict`, the per-atom rows, and the files written.
fn check_run(run_dir: &std::path::Path, d_model: usize) {
    let device = Device::flex();
    let run = TrainedRun::open(run_dir, &device, "embedded").unwrap();
    assert_eq!(run.embedding_dim(), d_model);
    let data = smiles_table();
    let molecules = embed_table(&run, &data, false, (None, 1000), &device).unwrap();
    assert_eq!(molecules.rows.len(), 4);
    assert_eq!(molecules.n_skipped(), 1);
    let bad = &molecules.rows[1];
    assert!(bad.values.is_none() && bad.error.as_deref().is_some_and(|e| !e.is_empty()));
    let present: Vec<Vec<f32>> = molecules
        .rows
        .iter()
        .filter_map(|r| r.values.clone())
        .collect();
    assert!(present.iter().all(|v| v.len() == d_model));
    let from_head = run.head(&present, &device).unwrap();
    let owned: Vec<String> = SMILES.iter().map(|s| s.to_string()).collect();
    let predicted = predict_smiles(run_dir, &owned, &device, None).unwrap();
    let expected: Vec<Vec<f32>> = predicted
        .predictions
        .iter()
        .filter_map(|p| p.values.clone())
        .collect();
    assert_eq!(from_head.len(), 3);
    for (h, p) in from_head.iter().zip(&expected) {
        for (a, b) in h.iter().zip(p) {
            // The same math in another grouping of the batch: float rounding only.
            assert!(
                (a - b).abs() <= 1e-4 * b.abs().max(1.0),
                "head {a} vs predict {b}"
            );
        }
    }
    // Embeddings differ between molecules (a head on a constant would pass the above).
    assert!(present[0] != present[1]);

    // Per-atom vectors: heavy atoms x d_model; the molecule vector of a mean-pooling
    // MAT is not their plain mean (the dummy node is pooled too), so only shapes here.
    let atoms = run
        .infer(&data, Readout::Atoms, (None, 1000, false), &device)
        .unwrap();
    for (k, row) in atoms.rows.iter().enumerate() {
        assert_eq!(
            row.as_ref().map_or(0, Vec::len),
            HEAVY_ATOMS[k] * d_model,
            "row {k}"
        );
        assert_eq!(atoms.n_atoms[k], HEAVY_ATOMS[k]);
    }

    // Files: .npy [4, d] with a NaN row in place; per-atom .npy + index CSV; CSV.
    let dir = run_dir.join("embeddings");
    std::fs::create_dir_all(&dir).unwrap();
    molecules.write(&dir.join("m.npy")).unwrap();
    let m: ndarray::Array2<f32> = ndarray_npy::read_npy(dir.join("m.npy")).unwrap();
    assert_eq!(m.dim(), (4, d_model));
    assert!(m.row(1).iter().all(|x| x.is_nan()));
    assert_eq!(m.row(2).to_vec(), present[1]);
    let per_atom = embed_table(&run, &data, true, (None, 1000), &device).unwrap();
    let written = per_atom.write(&dir.join("a.npy")).unwrap();
    assert_eq!(written[1], dir.join("a.index.csv"));
    let a: ndarray::Array2<f32> = ndarray_npy::read_npy(dir.join("a.npy")).unwrap();
    assert_eq!(a.dim(), (3 + 1 + 7 + 11, d_model));
    let index = std::fs::read_to_string(&written[1]).unwrap();
    let lines: Vec<&str> = index.lines().collect();
    assert_eq!(lines[0], "row,smiles,atom_index,error");
    assert_eq!(lines[3], "0,CCO,2,");
    assert!(lines[4].starts_with("1,not a smiles,,"), "{index}");
    assert_eq!(lines[5], "2,c1ccccc1O,0,");
    molecules.write(&dir.join("m.csv")).unwrap();
    let csv = std::fs::read_to_string(dir.join("m.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header.starts_with("row,smiles,e0,e1,") && header.ends_with(",error"));
    assert_eq!(csv.lines().count(), 5);
    assert!(molecules.write(&dir.join("m.txt")).is_err());
}

#[test]
fn mat_embedding_through_the_head_is_the_prediction() {
    let _rng = crate::rng_shared();
    let dir = crate::pipeline::scratch("embed-mat");
    let data = crate::pipeline::subset_csv("esol", 40, &[], &dir);
    let split = SplitSpec::Random { seed: 0 };
    let spec = crate::pipeline::spec(data, Task::Regression, split, 1);
    let run_dir = dir.join("run");
    train_run(&spec, &run_dir, &RunControl::default(), &Device::flex()).unwrap();
    check_run(&run_dir, 32);
}

#[test]
fn transformer_m_embedding_through_the_head_is_the_prediction() {
    let _rng = crate::rng_shared();
    let dir = crate::transformer_m_table::scratch("embed-tm");
    let data = crate::transformer_m_table::subset_csv("esol", 40, &dir);
    let mut spec = crate::transformer_m_table::spec(
        data,
        CoordinateMethod::Layout2d,
        Task::Regression,
        LossKind::L1,
        models::transformer_m::Mode::TwoD,
    );
    spec.train.epochs = 1;
    let run_dir = dir.join("run");
    train::transformer_m::train_transformer_m(
        &spec,
        &run_dir,
        &RunControl::default(),
        &Device::flex(),
    )
    .unwrap();
    check_run(&run_dir, 32);
}
