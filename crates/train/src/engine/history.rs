//! The learning curve of a run, read back from burn-train's metric logs
//! (`<run>/<split>/epoch-<n>/<name>.log`).

use std::path::{Path, PathBuf};

use crate::report::EpochRecord;

/// burn-train's log file of metric `name` (spaces become `_`) for `split` in `epoch`.
fn log_path(run_dir: &Path, split: &str, epoch: usize, name: &str) -> PathBuf {
    run_dir
        .join(split)
        .join(format!("epoch-{epoch}"))
        .join(format!("{}.log", name.replace(' ', "_")))
}

/// The final value of metric `name` for `split` in `epoch` from burn-train's metric log
/// (`<run>/<split>/epoch-<n>/<name>.log`, last line `value,final`).
pub fn logged_value(run_dir: &Path, split: &str, epoch: usize, name: &str) -> Option<f64> {
    let text = std::fs::read_to_string(log_path(run_dir, split, epoch, name)).ok()?;
    let last = text.lines().rev().find(|l| !l.is_empty())?;
    let (value, tag) = last.split_once(',')?;
    (tag == "final").then(|| value.parse().ok()).flatten()
}

/// The per-batch values of metric `name` for `split` in `epoch` (burn-train's metric
/// log, the lines before the final one), e.g. the loss of every optimiser step.
pub fn logged_batches(run_dir: &Path, split: &str, epoch: usize, name: &str) -> Vec<f64> {
    std::fs::read_to_string(log_path(run_dir, split, epoch, name))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.ends_with(",final"))
        .filter_map(|l| l.split(',').next()?.parse().ok())
        .collect()
}

/// The learning curve of the run in `run_dir` from its metric logs: epochs 1, 2, ...
/// while the validation value of `metric` (a logged name: `RMSE`, `ROC-AUC`, `MAE`,
/// `Loss`) was logged.
pub fn read_history(run_dir: &Path, metric: &str) -> Vec<EpochRecord> {
    (1..)
        .map_while(|epoch| {
            let valid_metric = logged_value(run_dir, "valid", epoch, metric)?;
            Some(EpochRecord {
                epoch,
                train_loss: logged_value(run_dir, "train", epoch, "Loss").unwrap_or(f64::NAN),
                valid_loss: logged_value(run_dir, "valid", epoch, "Loss").unwrap_or(f64::NAN),
                valid_metric,
                learning_rate: logged_value(run_dir, "train", epoch, "Learning Rate")
                    .unwrap_or(f64::NAN),
            })
        })
        .collect()
}

/// The best epoch of `history` (the first of equal values), 0 when empty.
pub fn best_epoch(history: &[EpochRecord], higher_is_better: bool) -> usize {
    let mut best: Option<(usize, f64)> = None;
    for h in history {
        let better = match best {
            None => !h.valid_metric.is_nan(),
            Some((_, b)) if higher_is_better => h.valid_metric > b,
            Some((_, b)) => h.valid_metric < b,
        };
        if better {
            best = Some((h.epoch, h.valid_metric));
        }
    }
    best.map_or(0, |(e, _)| e)
}
