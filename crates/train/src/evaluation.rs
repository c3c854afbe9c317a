//! Evaluation of a MAT run on a split part: metrics in the original units and the test
//! predictions file.

use std::path::Path;

use burn::prelude::*;
use models::MatModel;
use mol_featurize::MatFeatures;

use crate::data::MoleculeTable;
use crate::engine::MetricKind;
use crate::engine::metrics::{per_task, task_mean};
use crate::error::TrainError;
use crate::predict::predict_raw;
use crate::report::{PartMetrics, TaskMetrics};
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
    let outputs: Vec<Vec<f32>> = match spec.task {
        Task::Regression => {
            let preds: Vec<Vec<f32>> = raw.iter().map(|r| spec.unscale(r)).collect();
            (0..k).map(|j| column(&preds, j)).collect()
        }
        Task::Classification => (0..k).map(|j| column(raw, j)).collect(),
    };
    let labels: Vec<Vec<f32>> = (0..k).map(|j| column(targets, j)).collect();
    let kinds: &[MetricKind] = match spec.task {
        Task::Regression => &[MetricKind::Rmse, MetricKind::Mae],
        Task::Classification => &[MetricKind::RocAuc],
    };
    m.per_task = (0..k)
        .map(|j| TaskMetrics {
            target: spec.target_columns[j].clone(),
            n: labels[j].iter().filter(|v| v.is_finite()).count(),
            ..Default::default()
        })
        .collect();
    for &kind in kinds {
        let per = per_task(kind, &outputs, &labels);
        let mean = task_mean(kind, &outputs, &labels);
        let mean = (!mean.is_nan()).then_some(mean);
        for (t, v) in m.per_task.iter_mut().zip(per) {
            match kind {
                MetricKind::Rmse => t.rmse = v,
                MetricKind::Mae => t.mae = v,
                MetricKind::RocAuc => t.roc_auc = v,
            }
        }
        match kind {
            MetricKind::Rmse => m.rmse = mean,
            MetricKind::Mae => m.mae = mean,
            MetricKind::RocAuc => m.roc_auc = mean,
        }
    }
    m
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
            rec.push(if t.is_finite() {
                t.to_string()
            } else {
                String::new()
            });
            rec.push(p.to_string());
        }
        w.write_record(&rec).map_err(|e| TrainError::Csv {
            path: path.into(),
            reason: e.to_string(),
        })?;
    }
    w.flush().map_err(|e| TrainError::io(path, e))
}
