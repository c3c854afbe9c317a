//! Parity rows of the MOSES metrics against the `moses` package (molsets 0.3.1, RDKit
//! 2026.09) on `fixtures/moses_metrics/` (`fixtures/gen/moses_metrics_reference.py`): one
//! row per metric, counts exact, similarities within 1e-3, FCD within 1% (issue #36). The
//! FCD rows need ChemNet's weights (`cargo xtask data chemnet`).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use anyhow::{Context, Result};
use burn::tensor::Device;
use models::chemnet::ChemNet;
use train::moses_metrics::{ChemNetStats, Reference, SetStats, moses_metrics};

use mol_featurize::cache::cache_root;
use train::datasets::chemnet_weights;

use super::Row;

fn lines(dir: &Path, name: &str) -> Result<Vec<String>> {
    let path = dir.join(name);
    Ok(std::fs::read_to_string(&path)
        .with_context(|| path.display().to_string())?
        .lines()
        .map(str::to_string)
        .collect())
}

/// One row per MOSES metric of the fixture's generated set.
pub fn rows(fixtures: &Path) -> Result<Vec<Row>> {
    let dir = fixtures.join("moses_metrics");
    let generated = lines(&dir, "gen.smi")?;
    let (test_smiles, test_sf_smiles) =
        (lines(&dir, "test.smi")?, lines(&dir, "test_scaffolds.smi")?);
    let test = SetStats::compute(&test_smiles, false, |_| {});
    let test_sf = SetStats::compute(&test_sf_smiles, false, |_| {});
    let device = Device::flex();
    let weights = chemnet_weights(&cache_root(None));
    let chemnet = if weights.exists() {
        Some(ChemNet::new(&device).load_fcd_torch(&weights)?)
    } else if std::env::var_os("CI").is_some() {
        anyhow::bail!(
            "no ChemNet weights at {} for the MOSES FCD rows (cargo xtask data chemnet)",
            weights.display()
        );
    } else {
        println!(
            "MOSES FCD rows not run: no ChemNet weights at {} (cargo xtask data chemnet)",
            weights.display()
        );
        None
    };
    let fcd = |smiles: &[String]| {
        chemnet
            .as_ref()
            .map(|m| ChemNetStats::compute(m, smiles, &device, |_| {}))
    };
    let (test_fcd, test_sf_fcd) = (fcd(&test_smiles), fcd(&test_sf_smiles));
    let train: HashSet<String> = lines(&dir, "train.smi")?.into_iter().collect();
    let refs = [
        Reference {
            name: "Test",
            stats: &test,
            chemnet: test_fcd.as_ref(),
        },
        Reference {
            name: "TestSF",
            stats: &test_sf,
            chemnet: test_sf_fcd.as_ref(),
        },
    ];
    let got = moses_metrics(
        &generated,
        &refs,
        Some(&train),
        &[100, 1000],
        chemnet.as_ref().map(|m| (m, &device)),
        |_| {},
    );
    let want: HashMap<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json"))?)?;
    let left_out = got.failures.len() + test.failures.len() + test_sf.failures.len();
    let mut rows = Vec::new();
    for (key, _) in &got.values {
        let Some(w) = want.get(key).and_then(|v| v.as_f64()) else {
            continue;
        };
        let g = got.get(key).unwrap_or(f64::NAN);
        let exact =
            ["valid", "unique@100", "unique@1000", "Novelty", "Filters"].contains(&key.as_str());
        let fcd = key.starts_with("FCD/");
        let tolerance = if exact {
            1e-12
        } else if fcd {
            0.01 * w
        } else {
            1e-3
        };
        let diff = if g.is_nan() {
            f64::INFINITY
        } else {
            (g - w).abs()
        };
        rows.push(Row {
            component: format!("MOSES {key} (molsets 0.3.1)"),
            fixture: "moses_metrics/expected.json".into(),
            max_abs: diff,
            max_rel: if w.abs() > 1e-3 { diff / w.abs() } else { 0.0 },
            tolerance,
            pass: diff <= tolerance && left_out == 0,
            note: format!(
                "ours {g:.6}, moses {w:.6}; {} samples ({} valid) vs 1,000 test / 1,000 \
                 test-scaffolds / 3,000 train SMILES{}",
                got.n,
                got.n_valid,
                if left_out > 0 {
                    format!("; {left_out} molecules left out")
                } else {
                    String::new()
                }
            ),
        });
    }
    Ok(rows)
}
