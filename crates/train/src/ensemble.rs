//! Ensembles (issue #38 item 3; chemprop's `--ensemble_size`): N members trained with
//! different seeds on the same split into one run folder (`member-0`, `member-1`, ...,
//! listed in `ensemble.json`). Predictions are the members' mean per task with their
//! standard deviation as the uncertainty (population, ddof 0, as chemprop's ensemble
//! variance); the test part's uncertainty metrics go to `ensemble_metrics.json`: each
//! member's RMSE, the ensemble's, the Spearman correlation between |error| and std, and
//! the miscalibration area (chemprop's `MiscalibrationAreaEvaluator`, regression).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::TrainError;
use crate::report::TrainSummary;
use crate::task::Task;

/// The file that makes a run folder an ensemble.
pub const ENSEMBLE_FILE: &str = "ensemble.json";
/// The test metrics of an ensemble ([`EnsembleMetrics`]).
pub const ENSEMBLE_METRICS_FILE: &str = "ensemble_metrics.json";

/// `ensemble.json`: the members' folders (relative to the run folder) and seeds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnsembleSpec {
    /// Always `"ensemble"`.
    pub kind: String,
    /// Member folders, relative to the run folder.
    pub members: Vec<String>,
    /// Each member's training seed.
    pub seeds: Vec<u64>,
}

impl EnsembleSpec {
    /// `n` members `member-0` ... with seeds `seed`, `seed + 1`, ...
    pub fn new(n: usize, seed: u64) -> Self {
        Self {
            kind: "ensemble".into(),
            members: (0..n).map(|k| format!("member-{k}")).collect(),
            seeds: (0..n as u64).map(|k| seed + k).collect(),
        }
    }

    /// The members' folders under `run_dir`.
    pub fn member_dirs(&self, run_dir: &Path) -> Vec<PathBuf> {
        self.members.iter().map(|m| run_dir.join(m)).collect()
    }

    /// Reads `run_dir/ensemble.json`; `None` when the folder is a single run.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] for an unreadable or malformed file.
    pub fn load(run_dir: &Path) -> Result<Option<Self>, TrainError> {
        let path = run_dir.join(ENSEMBLE_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let bad = |reason: String| TrainError::Checkpoint {
            path: path.clone(),
            reason,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
        let spec: Self = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        if spec.members.is_empty() || spec.members.len() != spec.seeds.len() {
            return Err(bad("members and seeds must be non-empty and as many".into()));
        }
        Ok(Some(spec))
    }

    /// Writes `run_dir/ensemble.json`.
    ///
    /// # Errors
    /// [`TrainError::Io`].
    pub fn save(&self, run_dir: &Path) -> Result<(), TrainError> {
        std::fs::create_dir_all(run_dir).map_err(|e| TrainError::io(run_dir, e))?;
        let path = run_dir.join(ENSEMBLE_FILE);
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        std::fs::write(&path, text).map_err(|e| TrainError::io(&path, e))
    }
}

/// The members' mean and population standard deviation (ddof 0) of one value.
pub fn mean_std(values: &[f32]) -> (f32, f32) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let var = values
        .iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / n;
    (mean as f32, var.sqrt() as f32)
}

/// Spearman's rank correlation (average ranks for ties); `None` with fewer than two
/// values or a constant input.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    let (ra, rb) = (ranks(a), ranks(b));
    let n = a.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb).powi(2)).sum();
    (va > 0.0 && vb > 0.0).then(|| cov / (va * vb).sqrt())
}

/// 1-based ranks, ties sharing their average rank.
fn ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]] == x[order[i]] {
            j += 1;
        }
        let average = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            r[k] = average;
        }
        i = j + 1;
    }
    r
}

/// The standard normal's central-interval half width for coverage `p` (`sqrt(2)
/// erfinv(p)`), by bisection on `libm::erf` (no inverse in the standard library).
fn normal_half_width(p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 10.0_f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if libm::erf(mid / std::f64::consts::SQRT_2) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Miscalibration area of Gaussian uncertainties (chemprop v1's
/// `MiscalibrationAreaEvaluator`, `chemprop/uncertainty/uncertainty_evaluator.py`): for
/// expected coverages p = 0, 0.01, ..., 1, the observed share of |error| within the
/// central p-interval of N(0, std^2), and the trapezoid area between observed and
/// expected coverage. 0 is perfectly calibrated, 0.5 the worst.
pub fn miscalibration_area(abs_error: &[f64], std: &[f64]) -> f64 {
    let n = abs_error.len().max(1) as f64;
    let observed: Vec<f64> = (0..=100)
        .map(|i| match i {
            0 => 0.0,
            100 => 1.0,
            i => {
                let z = normal_half_width(i as f64 / 100.0);
                let inside = abs_error.iter().zip(std).filter(|(e, s)| z * **s >= **e);
                inside.count() as f64 / n
            }
        })
        .collect();
    let gap: Vec<f64> = observed
        .iter()
        .enumerate()
        .map(|(i, o)| (o - i as f64 / 100.0).abs())
        .collect();
    gap.windows(2).map(|w| 0.5 * (w[0] + w[1]) * 0.01).sum()
}

/// One task's test metrics of an ensemble.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskUncertainty {
    /// The target column.
    pub task: String,
    /// Test molecules with a label.
    pub n: usize,
    /// Each member's test RMSE.
    pub member_rmse: Vec<f64>,
    /// The mean of the members' RMSEs.
    pub mean_member_rmse: f64,
    /// The test RMSE of the members' mean.
    pub ensemble_rmse: f64,
    /// Spearman correlation between |error| of the mean and the members' std.
    pub spearman_abs_error_std: Option<f64>,
    /// [`miscalibration_area`] of the mean's errors under N(0, std^2).
    pub miscalibration_area: f64,
}

/// `ensemble_metrics.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnsembleMetrics {
    /// Members.
    pub n_members: usize,
    /// One entry per regression task.
    pub tasks: Vec<TaskUncertainty>,
}

/// Trains an ensemble of `n` members into `run_dir` (see the module documentation):
/// `train_member(folder, seed)` trains one member with seed `seed + k` (the caller keeps
/// the split fixed); with `resume`, members that finished (their `metrics.json` exists)
/// are kept and the others trained or resumed. Writes `ensemble.json` first and
/// `ensemble_metrics.json` (regression tasks; none for classification) last.
///
/// # Errors
/// A folder holding a single run, or another ensemble when resuming; the first member
/// error; [`ensemble_test_metrics`]'s errors.
pub fn train_ensemble(
    run_dir: &Path,
    n: usize,
    seed: u64,
    (task, resume): (Task, bool),
    mut train_member: impl FnMut(&Path, u64) -> Result<TrainSummary, TrainError>,
) -> Result<EnsembleMetrics, TrainError> {
    let spec = EnsembleSpec::new(n, seed);
    let refuse = |reason: String| TrainError::Checkpoint {
        path: run_dir.to_path_buf(),
        reason,
    };
    if run_dir.join("run.json").exists() {
        return Err(refuse(
            "holds a single run; give an ensemble another --out".into(),
        ));
    }
    match EnsembleSpec::load(run_dir)? {
        Some(old) if old != spec => {
            return Err(refuse(format!(
                "holds an ensemble of {} members with seeds {:?}; this one has {n} with \
                 seeds {:?}",
                old.members.len(),
                old.seeds,
                spec.seeds
            )));
        }
        _ => spec.save(run_dir)?,
    }
    for (k, (dir, &member_seed)) in spec
        .member_dirs(run_dir)
        .iter()
        .zip(&spec.seeds)
        .enumerate()
    {
        if resume && dir.join("metrics.json").exists() {
            eprintln!(
                "member {k} of {n}: finished before, kept ({})",
                dir.display()
            );
            continue;
        }
        eprintln!("member {k} of {n}: seed {member_seed} -> {}", dir.display());
        train_member(dir, member_seed)?;
    }
    let metrics = match task {
        Task::Regression => ensemble_test_metrics(&spec.member_dirs(run_dir))?,
        Task::Classification => EnsembleMetrics {
            n_members: n,
            tasks: Vec::new(),
        },
    };
    let path = run_dir.join(ENSEMBLE_METRICS_FILE);
    let text = serde_json::to_string_pretty(&metrics).unwrap_or_default();
    std::fs::write(&path, text).map_err(|e| TrainError::io(&path, e))?;
    Ok(metrics)
}

/// The ensemble's test metrics from its members' `test_predictions.csv` (columns `row`,
/// `smiles`, [`id`,] `<task>`, `<task>_pred` per task; the same test rows in each, as the
/// members share the split), regression tasks only.
///
/// # Errors
/// [`TrainError::Csv`] for a missing or malformed file, or members whose test rows differ.
pub fn ensemble_test_metrics(member_dirs: &[PathBuf]) -> Result<EnsembleMetrics, TrainError> {
    // Per member: test rows, and per task (name, labels, predictions).
    type Table = (Vec<String>, Vec<(String, Vec<f64>, Vec<f64>)>);
    let read = |dir: &PathBuf| -> Result<Table, TrainError> {
        let path = dir.join("test_predictions.csv");
        let bad = |reason: String| TrainError::Csv {
            path: path.clone(),
            reason,
        };
        let mut reader = csv::Reader::from_path(&path).map_err(|e| bad(e.to_string()))?;
        let headers = reader.headers().map_err(|e| bad(e.to_string()))?.clone();
        let tasks: Vec<(usize, usize, String)> = headers
            .iter()
            .enumerate()
            .filter_map(|(j, h)| {
                let pred = headers.iter().position(|g| g == format!("{h}_pred"))?;
                Some((j, pred, h.to_string()))
            })
            .collect();
        let mut rows = Vec::new();
        let mut columns: Vec<(String, Vec<f64>, Vec<f64>)> = tasks
            .iter()
            .map(|(_, _, name)| (name.clone(), Vec::new(), Vec::new()))
            .collect();
        for record in reader.records() {
            let record = record.map_err(|e| bad(e.to_string()))?;
            rows.push(record.get(0).unwrap_or_default().to_string());
            for ((label_at, pred_at, _), (_, labels, preds)) in tasks.iter().zip(&mut columns) {
                let value = |at: usize| record.get(at).and_then(|c| c.parse().ok());
                labels.push(value(*label_at).unwrap_or(f64::NAN));
                preds.push(value(*pred_at).unwrap_or(f64::NAN));
            }
        }
        Ok((rows, columns))
    };
    let tables: Vec<Table> = member_dirs.iter().map(read).collect::<Result<_, _>>()?;
    let Some((rows, first)) = tables.first() else {
        return Ok(EnsembleMetrics {
            n_members: 0,
            tasks: Vec::new(),
        });
    };
    if let Some(k) = tables.iter().position(|(r, _)| r != rows) {
        return Err(TrainError::Csv {
            path: member_dirs[k].join("test_predictions.csv"),
            reason: "its test rows differ from member 0's: members must share the split".into(),
        });
    }
    let mut tasks = Vec::new();
    for (t, (name, labels, _)) in first.iter().enumerate() {
        let labelled: Vec<usize> = (0..labels.len())
            .filter(|&i| labels[i].is_finite())
            .collect();
        let rmse = |pred: &dyn Fn(usize) -> f64| {
            let se: f64 = labelled
                .iter()
                .map(|&i| (pred(i) - labels[i]).powi(2))
                .sum();
            (se / labelled.len().max(1) as f64).sqrt()
        };
        let member_rmse: Vec<f64> = tables.iter().map(|(_, c)| rmse(&|i| c[t].2[i])).collect();
        let stats: Vec<(f32, f32)> = (0..labels.len())
            .map(|i| {
                let values: Vec<f32> = tables.iter().map(|(_, c)| c[t].2[i] as f32).collect();
                mean_std(&values)
            })
            .collect();
        let abs_error: Vec<f64> = labelled
            .iter()
            .map(|&i| (f64::from(stats[i].0) - labels[i]).abs())
            .collect();
        let std: Vec<f64> = labelled.iter().map(|&i| f64::from(stats[i].1)).collect();
        tasks.push(TaskUncertainty {
            task: name.clone(),
            n: labelled.len(),
            mean_member_rmse: member_rmse.iter().sum::<f64>() / member_rmse.len() as f64,
            member_rmse,
            ensemble_rmse: rmse(&|i| f64::from(stats[i].0)),
            spearman_abs_error_std: spearman(&abs_error, &std),
            miscalibration_area: miscalibration_area(&abs_error, &std),
        });
    }
    Ok(EnsembleMetrics {
        n_members: member_dirs.len(),
        tasks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values checked by hand (numpy: np.mean, np.std; scipy.stats.spearmanr).
    #[test]
    fn mean_std_spearman_and_calibration_by_hand() {
        let (m, s) = mean_std(&[1.0, 2.0, 4.0]);
        assert!((m - 7.0 / 3.0).abs() < 1e-6);
        // np.std([1, 2, 4]) = sqrt(14/9) = 1.247219...
        assert!((s - 1.247_219_1).abs() < 1e-6, "{s}");
        // Ties share ranks: spearmanr([1, 2, 2, 3], [1, 3, 2, 4]) = 0.9486833
        let r = spearman(&[1.0, 2.0, 2.0, 3.0], &[1.0, 3.0, 2.0, 4.0]).unwrap();
        assert!((r - 0.948_683_3).abs() < 1e-6, "{r}");
        assert_eq!(spearman(&[1.0, 1.0], &[1.0, 2.0]), None);
        assert!((normal_half_width(0.95) - 1.959_964).abs() < 1e-5);
        // Errors far inside their std (over-cautious): observed coverage 1 from the
        // first level on, area = integral of (1 - p) = 0.5 (minus the trapezoid's first
        // step: 0.5 - 0.005 * 1 = 0.495).
        let area = miscalibration_area(&[0.0, 0.0], &[1.0, 1.0]);
        assert!((area - 0.495).abs() < 1e-9, "{area}");
        // Errors far outside (over-confident): observed 0 until p = 1.
        let area = miscalibration_area(&[100.0; 4], &[1.0; 4]);
        assert!((area - 0.495).abs() < 1e-9, "{area}");
    }
}
