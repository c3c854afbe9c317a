//! The conformers a trained run's molecules get when they are given as SMILES (no
//! coordinates of their own): the run's training settings, adjusted to where its training
//! molecules' coordinates came from.

use std::path::Path;

use mol_featurize::{ConformerOptions, FeaturizeReport};

/// The conformer settings for molecules given as SMILES to the run in `run_dir`:
/// [`ConformerOptions::for_smiles`] with the coordinate sources of its training
/// molecules (`featurize_report.json`): a run trained on a file's 3D coordinates gets
/// ETKDG + UFF conformers, one trained on 2D depictions gets 2D layouts.
pub fn conformer_for_smiles(trained: &ConformerOptions, run_dir: &Path) -> ConformerOptions {
    let sources = std::fs::read_to_string(run_dir.join("featurize_report.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<FeaturizeReport>(&text).ok())
        .map(|r| r.coordinate_sources)
        .unwrap_or_default();
    trained.for_smiles(&sources)
}
