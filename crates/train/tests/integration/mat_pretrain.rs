//! MAT's atom-masking pretraining (issue #40): a short run learns atom types above the
//! majority class, and a fine-tuning run starts from its embedding and encoder.

use burn::module::Module;
use burn::tensor::Device;
use models::MatConfig;
use mol_featurize::conformer::CoordinateMethod;
use mol_featurize::{ConformerOptions, MatFeaturizer};
use train::engine::Progress;
use train::mat::{MatPretrainSpec, pretrain_mat};
use train::{RunControl, SplitSpec, Task, train_run};

use crate::pipeline::{scratch, spec, subset_csv};

fn params(m: &impl Module) -> Vec<f32> {
    let mut all = Vec::new();
    struct Collect<'a>(&'a mut Vec<f32>);
    impl burn::module::ModuleVisitor for Collect<'_> {
        fn visit_float<const D: usize>(
            &mut self,
            param: &burn::module::Param<burn::tensor::Tensor<D>>,
        ) {
            self.0.extend(param.val().try_into_vec_as::<f32>().unwrap());
        }
    }
    m.visit(&mut Collect(&mut all));
    all
}

#[test]
fn pretraining_learns_atom_types_and_fine_tuning_starts_from_its_encoder() {
    let _rng = crate::rng_exclusive();
    let dir = scratch("mat-pretrain");
    let data = subset_csv("esol", 1000, &[], &dir);
    let model = MatConfig::small()
        .with_d_model(32)
        .with_num_heads(4)
        .with_num_layers(2);
    let pre = MatPretrainSpec {
        kind: "mat".into(),
        data: data.clone(),
        smiles_column: "smiles".into(),
        delimiter: ',',
        featurizer: MatFeaturizer {
            conformer: ConformerOptions {
                method: CoordinateMethod::Layout2d,
                ..Default::default()
            },
            ..Default::default()
        },
        model: model.clone(),
        mask_rate: 0.15,
        epochs: 30,
        batch_size: 32,
        learning_rate: 1e-3,
        warmup_fraction: 0.2,
        seed: 1,
    };
    let control = RunControl {
        progress: Progress::Quiet,
        ..Default::default()
    };
    let run = dir.join("pretrain");
    let summary = pretrain_mat(&pre, &run, &control, &Device::flex()).unwrap();
    assert_eq!(
        (summary.n_train, summary.n_valid, summary.n_skipped),
        (950, 50, 0)
    );
    assert_eq!(summary.valid_loss.len(), 30);
    // ln(11) = 2.40 nats for a uniform guess; the masked atoms' types are learned (seed 1:
    // accuracy 0.83 on 117 held-out masked atoms against 0.74 for always carbon; 6 s).
    assert!(summary.valid_loss[29] < 1.2, "{:?}", summary.valid_loss);
    assert!(
        summary.valid_loss[29] < summary.valid_loss[0],
        "{:?}",
        summary.valid_loss
    );
    assert!(
        summary.valid_masked_atoms > 40,
        "{}",
        summary.valid_masked_atoms
    );
    assert!(
        summary.valid_accuracy > summary.majority_accuracy + 0.05,
        "{} vs majority {}",
        summary.valid_accuracy,
        summary.majority_accuracy
    );
    for f in [
        "pretrain.json",
        "pretrained_model.bpk",
        "pretrain_metrics.json",
        "pretrain_loss.png",
    ] {
        assert!(run.join(f).is_file(), "{f}");
    }

    // Fine-tuning from the run: the model it starts from has the pretrained embedding and
    // encoder (bit for bit) and a generator of its own.
    let (file, config, _) = train::mat::resolve_mat_init_from(&run, 1).unwrap();
    let device = Device::flex();
    let pretrained: models::MatModel = pre.model.init(&device).try_load_file(&file).unwrap();
    let start =
        train::mat::load_pretrained_encoder(config.init(&device), &config, &run, &device).unwrap();
    assert_eq!(params(&start.encoder), params(&pretrained.encoder));
    assert_eq!(params(&start.src_embed), params(&pretrained.src_embed));
    // A run with another architecture is refused.
    let other = config.clone().with_num_layers(3);
    let err = train::mat::load_pretrained_encoder(other.init(&device), &other, &run, &device)
        .unwrap_err();
    assert!(err.to_string().contains("architecture"), "{err}");

    // A fine-tuning run from it starts there: one epoch at a learning rate of 1e-9 leaves
    // its best model's encoder at the pretrained weights (within 1e-6) and its generator
    // its own (not the pretraining run's untrained one).
    let mut fine = spec(data, Task::Regression, SplitSpec::Random { seed: 0 }, 1);
    fine.model = config.clone();
    fine.train.learning_rate = 1e-9;
    fine.init_from = Some(run.clone());
    let out = dir.join("fine");
    let s = train_run(&fine, &out, &control, &Device::flex()).unwrap();
    assert!(s.test_rmse.unwrap().is_finite());
    let best = fine.load_best_model(&out, &device).unwrap();
    let (got, want) = (params(&best.encoder), params(&pretrained.encoder));
    assert_eq!(got.len(), want.len());
    let far = got
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(
        far < 1e-6,
        "encoder moved {far} from the pretrained weights"
    );
    assert_ne!(params(&best.generator), params(&pretrained.generator));
    // Not a pretraining run: named.
    let err = train::mat::resolve_mat_init_from(&out, 1).unwrap_err();
    assert!(
        err.to_string().contains("not a MAT pretraining run"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fine_tuning_starts_from_the_shipped_pretrained_model() {
    let _rng = crate::rng_exclusive();
    let dir = scratch("mat-shipped");
    let data = subset_csv("esol", 60, &[], &dir);
    // Written to a scratch cache, not the user's.
    let cache = dir.join("cache");
    let shipped = &train::mat::locate_pretraining_run(
        std::path::Path::new("pretrained:mat-small"),
        Some(&cache),
    )
    .unwrap();
    assert!(shipped.starts_with(&cache), "{}", shipped.display());
    let (file, config, featurizer) = train::mat::resolve_mat_init_from(shipped, 1).unwrap();
    // MAT small (d_model 128, 2 layers, 8 heads) on the default featurizer's 28 atom
    // features with embedded conformers, as `crates/train/pretrained/mat-small/README.md`
    // says it was made.
    assert_eq!(
        (
            config.d_model,
            config.num_layers,
            config.num_heads,
            config.d_atom
        ),
        (128, 2, 8, 28)
    );
    assert_eq!(featurizer.conformer.method, CoordinateMethod::Embed3d);
    let pre = train::mat::read_mat_pretrain_spec(shipped).unwrap();
    let metrics: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(file.with_file_name("pretrain_metrics.json")).unwrap(),
    )
    .unwrap();
    // The shipped run: 190,000 of the first 200,000 MOSES training molecules (10,000
    // held out for the masked-atom accuracy; issue #40 asks for at least 200,000).
    assert_eq!(metrics["n_train"].as_u64(), Some(190_000), "{metrics}");
    assert_eq!(metrics["n_valid"].as_u64(), Some(10_000), "{metrics}");
    assert!(
        metrics["valid_accuracy"].as_f64().unwrap() > 0.85,
        "{metrics}"
    );

    let device = Device::flex();
    let pretrained: models::MatModel = pre.model.init(&device).try_load_file(&file).unwrap();
    let mut fine = spec(data, Task::Regression, SplitSpec::Random { seed: 0 }, 1);
    fine.model = config;
    fine.train.learning_rate = 1e-9;
    fine.init_from = Some(shipped.to_path_buf());
    let out = dir.join("fine");
    let s = train_run(&fine, &out, &RunControl::default(), &device).unwrap();
    assert!(s.test_rmse.unwrap().is_finite());
    let best = fine.load_best_model(&out, &device).unwrap();
    let (got, want) = (params(&best.encoder), params(&pretrained.encoder));
    assert_eq!(got.len(), want.len());
    let far = got
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(far < 1e-6, "encoder moved {far} from the shipped weights");
    // The run records the folder it started from, named by the shipped model's hash.
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["init_from"], shipped.to_str().unwrap());
    let folder = shipped.file_name().unwrap().to_str().unwrap();
    assert!(
        folder.starts_with("mat-small-") && folder.len() == "mat-small-".len() + 12,
        "{folder}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
