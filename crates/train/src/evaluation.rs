//! Evaluation of a run on a molecule table, for any model family: metrics of a split
//! part in the targets' units and the test predictions file.

use std::path::Path;

use crate::data::MoleculeTable;
use crate::engine::MetricKind;
use crate::engine::metrics::{per_task, task_mean};
use crate::error::TrainError;
use crate::labels::Labels;
use crate::report::{PartMetrics, TaskMetrics};
use crate::task::Task;

/// The featurized molecules of one split part and their labels (target units).
pub(crate) struct Part<'a, F> {
    pub(crate) features: Vec<&'a F>,
    pub(crate) targets: Vec<Vec<f32>>,
}

/// Metrics of raw model outputs `raw[molecule][task]` against `targets` (target units,
/// NaN = missing): RMSE and MAE per task and averaged (regression), or ROC-AUC.
pub(crate) fn part_metrics(labels: &Labels, raw: &[Vec<f32>], targets: &[Vec<f32>]) -> PartMetrics {
    let k = labels.columns.len();
    let mut m = PartMetrics {
        n: raw.len(),
        ..Default::default()
    };
    if raw.is_empty() {
        return m;
    }
    let column = |rows: &[Vec<f32>], j: usize| rows.iter().map(|r| r[j]).collect::<Vec<f32>>();
    let outputs: Vec<Vec<f32>> = match labels.task {
        Task::Regression => {
            let preds: Vec<Vec<f32>> = raw.iter().map(|r| labels.unscale(r)).collect();
            (0..k).map(|j| column(&preds, j)).collect()
        }
        Task::Classification => (0..k).map(|j| column(raw, j)).collect(),
    };
    let truth: Vec<Vec<f32>> = (0..k).map(|j| column(targets, j)).collect();
    let kinds: &[MetricKind] = match labels.task {
        Task::Regression => &[MetricKind::Rmse, MetricKind::Mae],
        Task::Classification => &[MetricKind::RocAuc],
    };
    m.per_task = (0..k)
        .map(|j| TaskMetrics {
            target: labels.columns[j].clone(),
            n: truth[j].iter().filter(|v| v.is_finite()).count(),
            ..Default::default()
        })
        .collect();
    for &kind in kinds {
        let per = per_task(kind, &outputs, &truth);
        let mean = task_mean(kind, &outputs, &truth);
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

/// Writes `test_predictions.csv`: row, SMILES, then per target its label and prediction
/// (target units, or the positive-class probability).
pub(crate) fn write_test_predictions(
    path: &Path,
    labels: &Labels,
    raw: &[Vec<f32>],
    rows: &[usize],
    targets: &[Vec<f32>],
    table: &MoleculeTable,
) -> Result<(), TrainError> {
    let csv_error = |e: csv::Error| TrainError::Csv {
        path: path.into(),
        reason: e.to_string(),
    };
    let mut w = csv::Writer::from_path(path).map_err(csv_error)?;
    // Rows with an identity (an SDF record's title, an XYZ file) name it.
    let with_ids = !table.ids.is_empty();
    let mut header = vec!["row".to_string()];
    if with_ids {
        header.push("id".into());
    }
    header.push("smiles".into());
    for c in &labels.columns {
        header.push(c.clone());
        header.push(format!("{c}_pred"));
    }
    w.write_record(&header).map_err(csv_error)?;
    for ((r, row), target) in raw.iter().zip(rows).zip(targets) {
        let mut rec = vec![row.to_string()];
        if with_ids {
            rec.push(table.ids[*row].clone());
        }
        rec.push(table.smiles[*row].clone());
        for (t, p) in target.iter().zip(labels.output(r)) {
            rec.push(if t.is_finite() {
                t.to_string()
            } else {
                String::new()
            });
            rec.push(p.to_string());
        }
        w.write_record(&rec).map_err(csv_error)?;
    }
    w.flush().map_err(|e| TrainError::io(path, e))
}
