//! Evaluation of a MAT run on a split part: metrics in the original units and the test
//! predictions file.

use std::path::Path;

use burn::prelude::*;
use models::MatModel;
use mol_featurize::MatFeatures;

use crate::data::MoleculeTable;
use crate::error::TrainError;
use crate::metrics::{mae, rmse, roc_auc};
use crate::predict::predict_raw;
use crate::report::PartMetrics;
use crate::run_spec::{RunSpec, Task};

/// The featurized molecules of one split part and their (standardised) targets.
pub(crate) struct Part<'a> {
    pub(crate) features: Vec<&'a MatFeatures>,
    pub(crate) targets: Vec<Vec<f32>>,
}

pub(crate) fn spec_metrics(spec: &RunSpec, raw: &[Vec<f32>], targets: &[Vec<f32>]) -> PartMetrics {
    let k = spec.target_columns.len();
    let mut m = PartMetrics {
        n: raw.len(),
        ..Default::default()
    };
    if raw.is_empty() {
        return m;
    }
    let column = |rows: &[Vec<f32>], j: usize| rows.iter().map(|r| r[j]).collect::<Vec<f32>>();
    match spec.task {
        Task::Regression => {
            let preds: Vec<Vec<f32>> = raw.iter().map(|r| spec.unscale(r)).collect();
            let (mut r, mut a) = (0.0, 0.0);
            for j in 0..k {
                r += rmse(&column(&preds, j), &column(targets, j));
                a += mae(&column(&preds, j), &column(targets, j));
            }
            m.rmse = Some(r / k as f64);
            m.mae = Some(a / k as f64);
        }
        Task::Classification => {
            let aucs: Vec<f64> = (0..k)
                .filter_map(|j| roc_auc(&column(raw, j), &column(targets, j)))
                .collect();
            if !aucs.is_empty() {
                m.roc_auc = Some(aucs.iter().sum::<f64>() / aucs.len() as f64);
            }
        }
    }
    m
}

pub(crate) fn metric_of(m: &PartMetrics, task: Task) -> f64 {
    match task {
        Task::Regression => m.rmse.unwrap_or(f64::INFINITY),
        Task::Classification => m.roc_auc.unwrap_or(0.5),
    }
}

pub(crate) fn part_metrics(
    spec: &RunSpec,
    model: &MatModel,
    part: &Part,
    device: &Device,
) -> PartMetrics {
    let raw = predict_raw(model, &part.features, spec.train.batch_size, device);
    spec_metrics(spec, &raw, &part.targets)
}

pub(crate) fn write_test_predictions(
    path: &Path,
    spec: &RunSpec,
    model: &MatModel,
    test: &Part,
    rows: &[usize],
    table: &MoleculeTable,
    device: &Device,
) -> Result<(), TrainError> {
    let raw = predict_raw(model, &test.features, spec.train.batch_size, device);
    let mut w = csv::Writer::from_path(path).map_err(|e| TrainError::Csv {
        path: path.into(),
        reason: e.to_string(),
    })?;
    let mut header = vec!["row".to_string(), "smiles".to_string()];
    for c in &spec.target_columns {
        header.push(c.clone());
        header.push(format!("{c}_pred"));
    }
    w.write_record(&header).map_err(|e| TrainError::Csv {
        path: path.into(),
        reason: e.to_string(),
    })?;
    for ((r, row), target) in raw.iter().zip(rows).zip(&test.targets) {
        let pred = match spec.task {
            Task::Regression => spec.unscale(r),
            Task::Classification => r.iter().map(|x| 1.0 / (1.0 + (-x).exp())).collect(),
        };
        let mut rec = vec![row.to_string(), table.smiles[*row].clone()];
        for (t, p) in target.iter().zip(&pred) {
            rec.push(t.to_string());
            rec.push(p.to_string());
        }
        w.write_record(&rec).map_err(|e| TrainError::Csv {
            path: path.into(),
            reason: e.to_string(),
        })?;
    }
    w.flush().map_err(|e| TrainError::io(path, e))
}
