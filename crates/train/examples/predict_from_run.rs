//! The library face: a downstream program that depends on `train` (no `xtask`) opens a
//! run written by `cargo xtask train` (MAT or Transformer-M) and predicts. The run is
//! opened once (`run.json` typed by its kind, older files migrated, the best model
//! loaded; `train::trained_run::TrainedRun`), the SMILES are featurized as the run's
//! molecules were, and each line is the prediction in the run's units (regression) or
//! the probability (classification), or why the molecule was skipped.
//!
//! ```sh
//! cargo xtask demo                       # writes runs/demo
//! cargo run -p train --example predict_from_run -- runs/demo CCO c1ccccc1 C1CC
//! ```

use std::path::PathBuf;

use burn::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let run = PathBuf::from(
        args.next()
            .ok_or("usage: predict_from_run RUN_DIR SMILES...")?,
    );
    let smiles: Vec<String> = args.collect();
    let out = train::predict::predict_smiles(&run, &smiles, &Device::flex(), None)?;
    println!("smiles\t{}", out.target_columns.join("\t"));
    for p in &out.predictions {
        match (&p.values, &p.error) {
            (Some(values), _) => {
                let values: Vec<String> = values.iter().map(|v| format!("{v:.4}")).collect();
                println!("{}\t{}", p.smiles, values.join("\t"));
            }
            (None, error) => println!(
                "{}\tskipped: {}",
                p.smiles,
                error.as_deref().unwrap_or("unknown")
            ),
        }
    }
    Ok(())
}
