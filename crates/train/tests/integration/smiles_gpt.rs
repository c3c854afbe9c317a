//! A tiny SMILES generator trained and sampled end to end: the run folder's files, a
//! well-formed sample CSV, and the same rows for the same seed (training included).

use std::path::{Path, PathBuf};

use burn::prelude::*;
use models::SmilesGptConfig;
use models::smiles_gpt::sampling::SamplingSettings;
use train::smiles_gpt::{
    GenerateRequest, GptRun, GptRunSpec, SmilesCorpus, generate, train_smiles_gpt,
};
use train::{RunControl, RunKind, TrainOptions};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("molattn-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// 300 SMILES of MAT's ESOL and one unusable row each way (a character no token covers;
/// a SMILES longer than the model's positions).
fn corpus(dir: &Path) -> PathBuf {
    let esol = mol_featurize::mat_datasets::dir()
        .unwrap()
        .join("esol/esol.csv");
    let text = std::fs::read_to_string(&esol).unwrap();
    let mut out = String::from("id,smiles\n");
    for (i, line) in text.lines().skip(1).take(300).enumerate() {
        let smiles = line.rsplit_once(',').unwrap().0.trim();
        out.push_str(&format!("{i},{smiles}\n"));
    }
    out.push_str("300,CC X\n");
    out.push_str(&format!("301,{}\n", "C".repeat(150)));
    let path = dir.join("corpus.csv");
    std::fs::write(&path, out).unwrap();
    path
}

fn spec(path: PathBuf) -> GptRunSpec {
    GptRunSpec {
        kind: RunKind::SmilesGpt,
        corpus: SmilesCorpus {
            path,
            smiles_column: "smiles".into(),
            delimiter: ',',
            limit: None,
        },
        model: SmilesGptConfig::new(0)
            .with_max_len(128)
            .with_d_model(32)
            .with_num_layers(1)
            .with_num_heads(2)
            .with_d_ff(64),
        train: TrainOptions {
            epochs: 2,
            batch_size: 32,
            learning_rate: 3e-3,
            warmup_fraction: 0.1,
            patience: 5,
            seed: 4,
        },
        valid_fraction: 0.1,
    }
}

fn moses_of(rows: &[train::smiles_gpt::GeneratedRow]) -> train::moses_metrics::MosesMetrics {
    use train::moses_metrics::{Reference, SetStats, moses_metrics};
    let test: Vec<String> = std::fs::read_to_string(
        crate::manifest_dir().join("../../fixtures/moses_metrics/test.smi"),
    )
    .unwrap()
    .lines()
    .take(200)
    .map(str::to_string)
    .collect();
    let stats = SetStats::compute(&test, false, |_| {});
    let reference = Reference {
        name: "Test",
        stats: &stats,
        chemnet: None,
    };
    let generated: Vec<String> = rows.iter().map(|r| r.smiles.clone()).collect();
    let train = test.iter().cloned().collect();
    moses_metrics(&generated, &[reference], Some(&train), &[10], None, |_| {})
}

#[test]
fn tiny_generator_trains_samples_and_is_reproducible() {
    let _rng = crate::rng_exclusive();
    let dir = scratch("smiles-gpt");
    let spec = spec(corpus(&dir));
    let control = RunControl {
        progress: train::engine::Progress::Quiet,
        ..Default::default()
    };
    let dev = Device::flex();
    let mut samples = Vec::new();
    for run in ["a", "b"] {
        let out = dir.join(run);
        let summary = train_smiles_gpt(&spec, &out, &control, &dev).unwrap();
        assert_eq!(
            (summary.n_train + summary.n_valid, summary.n_skipped),
            (300, 2)
        );
        for file in [
            "run.json",
            "vocab.json",
            "skipped.json",
            "metrics.json",
            "best_model.bpk",
        ] {
            assert!(out.join(file).is_file(), "{file}");
        }
        let skipped = std::fs::read_to_string(out.join("skipped.json")).unwrap();
        assert!(
            skipped.contains("\"row\": 300") && skipped.contains("' ' at position 2"),
            "{skipped}"
        );
        assert!(
            skipped.contains("more than the model's 128 positions"),
            "{skipped}"
        );
        // Two epochs from ln(vocab) ~ 3.7 nats per token.
        assert!(summary.best_valid_loss < 3.0, "{}", summary.best_valid_loss);
        let opened = GptRun::open(&out, &dev).unwrap();
        let settings = SamplingSettings {
            temperature: 1.0,
            top_k: Some(10),
        };
        let request = GenerateRequest {
            n: 20,
            batch_size: 8,
            prefix: "C".into(),
            settings,
            seed: 7,
        };
        let rows = generate(&opened, &request, &dev, |_| {}).unwrap();
        assert_eq!(rows.len(), 20);
        for row in &rows {
            assert!(row.smiles.starts_with('C'), "{row:?}");
            assert_eq!(row.valid, row.reason.is_empty(), "{row:?}");
            assert_eq!(row.valid, !row.canonical.is_empty(), "{row:?}");
        }
        // The MOSES metrics of the samples against 200 MOSES test SMILES: every key, the
        // valid share of the rows.
        let metrics = moses_of(&rows);
        let keys: Vec<&str> = metrics.values.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "valid",
                "unique@10",
                "SNN/Test",
                "Frag/Test",
                "Scaf/Test",
                "IntDiv",
                "IntDiv2",
                "Filters",
                "Novelty"
            ]
        );
        let valid = rows.iter().filter(|r| r.valid).count();
        assert_eq!(metrics.get("valid"), Some(valid as f64 / 20.0));
        assert_eq!(metrics.n_valid, valid);
        samples.push((rows, format!("{:?}", metrics.values)));
    }
    assert_eq!(samples[0], samples[1]);
    let _ = std::fs::remove_dir_all(&dir);
}
