//! The held-out inputs a trained property run's graph is verified on, and the metadata
//! it carries: MAT from its test predictions' molecules, Transformer-M from its test
//! predictions (a table run) or the QM9 molecules after its subset (a QM9 run).

use std::path::Path;

use burn::prelude::*;
use models::MatBatch;
use mol_featurize::{featurize_all, pad_batch};
use train::RunSpec;
use train::transformer_m::TmRunSpec;

use super::{Export, invalid, json, run_metadata};
use crate::{Case, ExportError};

/// A run's best MAT, with held-out molecules from its test predictions as inputs.
pub(super) fn mat_from_run(
    run: &Path,
    spec: &RunSpec,
    device: &Device,
) -> Result<Export, ExportError> {
    if spec.model.use_edge_features {
        return Err(invalid(
            "a MAT with use_edge_features cannot be exported to ONNX yet (its graph takes \
             no bond-feature input); train it without edge features to export"
                .to_string(),
        ));
    }
    let model = spec.load_best_model(run, device)?;
    let held_out = run.join("test_predictions.csv");
    let smiles = train::data::read_smiles_csv(&held_out, "smiles").map_err(|e| {
        invalid(format!(
            "held-out molecules from {}: {e}",
            held_out.display()
        ))
    })?;
    // SMILES carry no coordinates: a run trained on a file's gets the closest
    // pipeline (ETKDG conformers, or 2D layouts after 2D depictions); the metadata
    // records that featurizer, the one a user of the graph must apply.
    let featurizer = mol_featurize::MatFeaturizer {
        conformer: train::predict::conformer_for_smiles(&spec.featurizer.conformer, run),
        ..spec.featurizer.clone()
    };
    let (features, report) = featurize_all(&smiles, &featurizer, false);
    let ok: Vec<_> = features.iter().flatten().collect();
    if ok.len() < 4 {
        return Err(invalid(format!(
            "{}: only {} featurizable held-out molecules ({} skipped)",
            held_out.display(),
            ok.len(),
            report.skipped.len()
        )));
    }
    // Two batches of different sizes and atom counts: 8 molecules, then 3 others.
    let batches = [&ok[..8.min(ok.len() - 3)], &ok[ok.len() - 3..]];
    let mut cases = Vec::new();
    for chunk in batches {
        let data = pad_batch(chunk).map_err(invalid)?;
        let want: Vec<f32> = model
            .forward(&MatBatch::from_data(&data, device))
            .try_into_vec_as()
            .map_err(invalid)?;
        cases.push(Case {
            label: format!("{} x {} atoms", data.batch_size, data.n_atoms),
            feeds: crate::mat_feeds(&data),
            want,
        });
    }
    let mut metadata = run_metadata("mat", json(&spec.model)?, run);
    metadata.extend([
        ("molattn.featurizer".to_string(), json(&featurizer)?),
        (
            "molattn.featurizer_version".into(),
            format!("mol-featurize {}", mol_featurize::VERSION),
        ),
        ("molattn.task".into(), json(&spec.task)?),
        ("molattn.targets".into(), json(&spec.target_columns)?),
        ("molattn.target_mean".into(), json(&spec.target_mean)?),
        ("molattn.target_std".into(), json(&spec.target_std)?),
    ]);
    Ok((crate::mat_to_onnx(&model, &metadata), "prediction", cases))
}

/// A Transformer-M run's best model; inputs: held-out molecules in the run's
/// evaluation mode, as batches of 8 and 3 (a QM9 run: the QM9 molecules right after
/// its subset, never trained on, with their DFT geometries; a table run: molecules of
/// its test predictions, then of its table if those are too few, featurized as in
/// training).
pub(super) fn transformer_m_from_run(
    run: &Path,
    spec: &TmRunSpec,
    device: &Device,
) -> Result<Export, ExportError> {
    use models::transformer_m::TransformerMBatch;
    use train::transformer_m::TmData;
    if spec.model.readout != models::transformer_m::TmReadout::Cls {
        return Err(super::invalid(format!(
            "{}: trained with --readout {}; the ONNX graph reads the graph token \
             (--readout cls) only",
            run.display(),
            spec.model.readout.flag()
        )));
    }
    let model = spec.load_best_model(run, device)?;
    let feats = match &spec.data {
        TmData::Qm9(subset) => held_out_qm9(run, subset, spec.model.limits.max_hops)?,
        TmData::Table(source) => {
            // The test molecules first; a small run tops them up from its table
            // (the numbers are compared, so seen molecules serve as well).
            let held_out = run.join("test_predictions.csv");
            let mut smiles = train::data::read_smiles_csv(&held_out, "smiles").map_err(|e| {
                invalid(format!(
                    "held-out molecules from {}: {e}",
                    held_out.display()
                ))
            })?;
            smiles.truncate(20);
            if smiles.len() < 20 {
                let more = source.molecules.read_smiles()?;
                smiles.extend(more.into_iter().take(20 - smiles.len()));
            }
            let featurizer = spec.featurizer();
            let featurizer = mol_featurize::GraphormerFeaturizer {
                conformer: train::predict::conformer_for_smiles(&featurizer.conformer, run),
                ..featurizer
            };
            let (features, _) = featurize_all(&smiles, &featurizer, false);
            features.into_iter().flatten().take(11).collect()
        }
    };
    if feats.len() < 11 {
        return Err(invalid(format!(
            "{}: {} featurizable held-out molecules, 11 needed",
            run.display(),
            feats.len()
        )));
    }
    let mut cases = Vec::new();
    for chunk in [&feats[..8], &feats[8..]] {
        let refs: Vec<&mol_featurize::GraphormerFeatures> = chunk.iter().collect();
        let data =
            mol_featurize::pad_graphormer_batch(&refs, &spec.model.limits).map_err(invalid)?;
        let modes = vec![spec.eval_mode; data.batch_size];
        let want: Vec<f32> = model
            .forward(&TransformerMBatch::from_data(&data, &modes, device))
            .try_into_vec_as()
            .map_err(invalid)?;
        cases.push(Case {
            label: format!("{} x {} atoms", data.batch_size, data.n_atoms),
            feeds: crate::transformer_m::transformer_m_feeds(&data, &modes),
            want,
        });
    }
    let mut metadata = run_metadata("transformer-m", json(&spec.model)?, run);
    metadata.extend([
        (
            "molattn.featurizer_version".to_string(),
            format!("mol-featurize {} (graphormer)", mol_featurize::VERSION),
        ),
        ("molattn.task".into(), json(&spec.task)?),
        ("molattn.targets".into(), json(&spec.target_columns)?),
        ("molattn.eval_mode".into(), json(&spec.eval_mode)?),
        (
            "molattn.conformer".into(),
            json(&spec.featurizer().conformer)?,
        ),
        ("molattn.target_mean".into(), json(&spec.target_mean)?),
        ("molattn.target_std".into(), json(&spec.target_std)?),
    ]);
    Ok((
        crate::transformer_m_to_onnx(&model, &metadata),
        "prediction",
        cases,
    ))
}

/// The 11 QM9 molecules right after a run's subset, with their DFT geometries.
fn held_out_qm9(
    run: &Path,
    subset: &train::transformer_m::Qm9Subset,
    max_hops: usize,
) -> Result<Vec<mol_featurize::GraphormerFeatures>, ExportError> {
    let qm9 = train::qm9::Qm9::load(&subset.dataset)?;
    let Some(limit) = subset.limit else {
        return Err(invalid(format!(
            "{}: the run used all of QM9 (no --limit), so no molecule is held out to verify on",
            run.display()
        )));
    };
    let held_out = train::transformer_m::Qm9Subset {
        offset: subset.offset + limit,
        limit: Some(11),
        ..subset.clone()
    };
    let mut feats = Vec::new();
    for r in held_out.rows(qm9.len()) {
        let mol = mol_featurize::Molecule::from_smiles(&qm9.index.smiles[r]).map_err(invalid)?;
        feats.push(
            mol_featurize::graphormer::featurize(
                &mol,
                max_hops,
                Some(qm9.coordinates_of(r).to_vec()),
            )
            .map_err(invalid)?,
        );
    }
    Ok(feats)
}
