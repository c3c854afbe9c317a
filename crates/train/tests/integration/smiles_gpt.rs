//! A tiny SMILES generator trained and sampled end to end: the run folder's files, a
//! well-formed sample CSV, and the same rows for the same seed (training included).

use std::path::{Path, PathBuf};

use burn::prelude::*;
use models::SmilesGptConfig;
use models::smiles_gpt::sampling::SamplingSettings;
use mol_featurize::properties::MolProperty;
use train::smiles_gpt::{
    GenerateCondition, GenerateRequest, GeneratedRow, GptCondition, GptRun, GptRunSpec,
    SmilesCorpus, condition_report, generate, train_smiles_gpt,
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
        condition: GptCondition::default(),
        prop_scaling: None,
        init_from: None,
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
            condition: None,
        };
        let rows = generate(&opened, &request, &dev, |_| {}).unwrap();
        assert_eq!(rows.len(), 20);
        // The engine's checkpoint of the best epoch holds the best model's weights: the
        // same samples (`generate --checkpoint`); a checkpoint that was not kept is an
        // error naming its file.
        let best = GptRun::open_checkpoint(&out, summary.best_epoch, &dev).unwrap();
        assert_eq!(generate(&best, &request, &dev, |_| {}).unwrap(), rows);
        let missing = GptRun::open_checkpoint(&out, 99, &dev)
            .unwrap_err()
            .to_string();
        assert!(missing.contains("model-99.bpk"), "{missing}");
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

/// Generators conditioned on logP (started from an unconditional run) and on logP and
/// the scaffold (MolGPT's `--props logp --scaffold`): the runs record the condition,
/// sampling needs it, the report's figures are over the valid samples, a seed repeats.
#[test]
fn conditional_generator_fine_tunes_from_a_run_and_samples_under_its_condition() {
    let _rng = crate::rng_exclusive();
    let dir = scratch("smiles-gpt-condition");
    let control = RunControl {
        progress: train::engine::Progress::Quiet,
        ..Default::default()
    };
    let dev = Device::flex();
    let mut base = spec(corpus(&dir));
    base.train.epochs = 1;
    train_smiles_gpt(&base, &dir.join("base"), &control, &dev).unwrap();
    // A run written before conditioning existed (no `condition`, `init_from`,
    // `num_props`, `scaffold_max_len`) opens as unconditional.
    let spec_path = dir.join("base/run.json");
    let mut old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&spec_path).unwrap()).unwrap();
    let spec_object = old.as_object_mut().unwrap();
    spec_object.remove("condition");
    spec_object.remove("init_from");
    spec_object.remove("prop_scaling");
    let model_object = spec_object["model"].as_object_mut().unwrap();
    assert!(model_object.remove("num_props").is_some());
    assert!(model_object.remove("scaffold_max_len").is_some());
    std::fs::write(&spec_path, serde_json::to_string(&old).unwrap()).unwrap();
    // From the unconditional run: its vocabulary, logP only.
    let from_base = GptRunSpec {
        condition: GptCondition {
            props: vec![MolProperty::Logp],
            scaffold: false,
            standardize: false,
        },
        init_from: Some(dir.join("base")),
        ..base.clone()
    };
    let summary = train_smiles_gpt(&from_base, &dir.join("logp"), &control, &dev).unwrap();
    // The two unusable rows, and none more: every other ESOL SMILES has a logP.
    assert_eq!(summary.n_skipped, 2);
    let base_run = GptRun::open(&dir.join("base"), &dev).unwrap();
    assert!(!base_run.model.is_conditional() && base_run.spec.condition.is_empty());
    let logp_run = GptRun::open(&dir.join("logp"), &dev).unwrap();
    assert_eq!(logp_run.vocab, base_run.vocab);
    assert_eq!(
        (
            logp_run.spec.model.num_props(),
            logp_run.spec.model.scaffold_max_len()
        ),
        (1, 0)
    );
    // From scratch with the scaffold too: the vocabulary takes the scaffolds' tokens
    // (RDKit writes `-` between aromatic rings, which ESOL's SMILES never spell out).
    let conditional = GptRunSpec {
        condition: GptCondition {
            props: vec![MolProperty::Logp],
            scaffold: true,
            standardize: true,
        },
        train: TrainOptions {
            epochs: 4,
            ..base.train.clone()
        },
        ..base.clone()
    };
    let summary = train_smiles_gpt(&conditional, &dir.join("cond"), &control, &dev).unwrap();
    let skipped = std::fs::read_to_string(dir.join("cond/skipped.json")).unwrap();
    assert_eq!(summary.n_skipped, 2, "{skipped}");
    let run = GptRun::open(&dir.join("cond"), &dev).unwrap();
    assert!(run.vocab.encode("c1ccc(-c2ccccc2)cc1").is_ok());
    assert!(base_run.vocab.encode("c1ccc(-c2ccccc2)cc1").is_err());
    assert_eq!(run.spec.model.num_props(), 1);
    // ESOL's longest Bemis-Murcko scaffold in tokens (RDKit's canonical form).
    assert!(
        run.spec.model.scaffold_max_len() > 10,
        "{:?}",
        run.spec.model
    );
    assert!(run.model.is_conditional());
    // Standardised logP (its training mean and standard deviation) in the scaffold run,
    // raw in the one started from the base run.
    assert!(logp_run.spec.prop_scaling.is_none());
    let scaling = run.spec.prop_scaling.as_ref().unwrap();
    assert!(
        scaling.mean[0] > 1.0 && scaling.mean[0] < 4.0,
        "{scaling:?}"
    );
    assert!(scaling.std[0] > 0.5 && scaling.std[0] < 3.0, "{scaling:?}");
    let request = |condition: Option<GenerateCondition>| GenerateRequest {
        n: 24,
        batch_size: 8,
        prefix: "C".into(),
        settings: SamplingSettings {
            temperature: 1.0,
            top_k: Some(5),
        },
        seed: 3,
        condition,
    };
    let wanted = GenerateCondition {
        props: vec![2.0],
        scaffold: Some("c1ccccc1".into()),
    };
    let rows = generate(&run, &request(Some(wanted.clone())), &dev, |_| {}).unwrap();
    assert_eq!(rows.len(), 24);
    let again = generate(&run, &request(Some(wanted.clone())), &dev, |_| {}).unwrap();
    assert_eq!(rows, again);
    let report = condition_report(&run, &wanted, &rows).unwrap();
    let valid = rows.iter().filter(|r| r.valid).count();
    assert_eq!(report.properties.len(), 1);
    let logp = &report.properties[0];
    assert_eq!(
        (logp.property, logp.target, logp.n),
        (MolProperty::Logp, 2.0, valid)
    );
    // The report's figures on known molecules (RDKit 2026.09 `Crippen.MolLogP`, its
    // `MurckoScaffoldSmiles`): ethanol -0.0014 (no scaffold), phenol 1.3922 and toluene
    // 1.99502 (benzene), 2-ethylnaphthalene 3.4022 (naphthalene); an invalid row is
    // left out.
    let known = |smiles: &str| GeneratedRow {
        smiles: smiles.into(),
        valid: true,
        canonical: smiles.into(),
        reason: String::new(),
    };
    let mut made: Vec<GeneratedRow> = ["CCO", "Oc1ccccc1", "Cc1ccccc1", "CCc1ccc2ccccc2c1"]
        .into_iter()
        .map(known)
        .collect();
    made.push(GeneratedRow {
        valid: false,
        canonical: String::new(),
        reason: "cannot parse".into(),
        ..known("C(")
    });
    let report_of_known = condition_report(&run, &wanted, &made).unwrap();
    let dev_of = [2.0014, 0.6078, 0.00498, 1.4022];
    let mad = dev_of.iter().sum::<f64>() / 4.0;
    let sd = (dev_of.iter().map(|d| (d - mad).powi(2)).sum::<f64>() / 3.0).sqrt();
    let logp_known = &report_of_known.properties[0];
    assert_eq!(logp_known.n, 4);
    assert!(
        (logp_known.mad - mad).abs() < 1e-9,
        "{logp_known:?} vs {mad}"
    );
    assert!((logp_known.sd - sd).abs() < 1e-9, "{logp_known:?} vs {sd}");
    assert!(
        (logp_known.mean - 6.7880200 / 4.0).abs() < 1e-9,
        "{logp_known:?}"
    );
    assert_eq!(report_of_known.same_scaffold, Some(0.5));
    assert_eq!(report.scaffold.as_deref(), Some("c1ccccc1"));
    // The refusals name what is missing.
    let err = |c: Option<GenerateCondition>| {
        generate(&run, &request(c), &dev, |_| {})
            .unwrap_err()
            .to_string()
    };
    assert!(
        err(None).contains("conditioned on logp, scaffold"),
        "{}",
        err(None)
    );
    let two = GenerateCondition {
        props: vec![2.0, 60.0],
        ..wanted.clone()
    };
    assert!(err(Some(two)).contains("2 property values"));
    let no_scaffold = GenerateCondition {
        scaffold: None,
        ..wanted.clone()
    };
    assert!(err(Some(no_scaffold)).contains("give one"));
    let unconditional = generate(&base_run, &request(Some(wanted)), &dev, |_| {});
    assert!(
        unconditional
            .unwrap_err()
            .to_string()
            .contains("unconditional")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run validated and checkpointed 3 times per epoch (`checkpoints_per_epoch`, for long
/// MOSES runs): 2 epochs give 6 validations; killed in the middle of the second part, it
/// resumes from the first part's checkpoint and ends with the straight run's learning
/// curve, bit for bit; resuming it with another number of parts is refused.
#[test]
fn checkpoints_within_an_epoch_resume_mid_epoch() {
    use train::TrainError;
    let _rng = crate::rng_exclusive();
    let dir = scratch("smiles-gpt-parts");
    let spec = spec(corpus(&dir));
    let dev = Device::flex();
    let control = RunControl {
        progress: train::engine::Progress::Quiet,
        checkpoints_per_epoch: 3,
        ..Default::default()
    };
    let curve = |run: &str| {
        train::engine::read_history(&dir.join(run), "Loss")
            .iter()
            .map(|h| {
                (
                    h.epoch,
                    h.train_loss.to_bits(),
                    h.valid_loss.to_bits(),
                    h.learning_rate.to_bits(),
                )
            })
            .collect::<Vec<_>>()
    };
    train_smiles_gpt(&spec, &dir.join("straight"), &control, &dev).unwrap();
    let straight = curve("straight");
    assert_eq!(straight.len(), 6, "{straight:?}");
    // 270 training molecules, batch 32: 9 batches per epoch, 3 per part; stopped in the
    // second part.
    let stop = RunControl {
        interrupt_after_batches: Some(5),
        ..control.clone()
    };
    match train_smiles_gpt(&spec, &dir.join("resumed"), &stop, &dev) {
        Err(TrainError::Interrupted { epochs_done: 1 }) => {}
        other => panic!("expected an interruption after one part, got {other:?}"),
    }
    let other_parts = RunControl {
        resume: true,
        checkpoints_per_epoch: 1,
        ..control.clone()
    };
    assert!(train_smiles_gpt(&spec, &dir.join("resumed"), &other_parts, &dev).is_err());
    let resume = RunControl {
        resume: true,
        ..control.clone()
    };
    train_smiles_gpt(&spec, &dir.join("resumed"), &resume, &dev).unwrap();
    assert_eq!(curve("resumed"), straight);
    let _ = std::fs::remove_dir_all(&dir);
}
