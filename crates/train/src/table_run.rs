//! A training run on a molecule table, for any model family: read the table, featurize
//! (conformer cache, skip report), drop unlabelled rows, split, standardise regression
//! targets, train on the engine, evaluate every part, write `metrics.json`,
//! `test_predictions.csv` and `curves.png`. MAT ([`crate::mat`]) and Transformer-M
//! ([`crate::transformer_m::train_transformer_m`]) bring only what differs: their
//! featurizer, their engine fit and their batched inference ([`TableFamily`]). The table
//! is any [`crate::table_data::MoleculeSource`]: a delimited file, an SDF, XYZ files, or a
//! QM9 subset.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use burn::prelude::*;
use mol_featurize::FeaturizeReport;
use mol_featurize::conformer::CoordinateMethod;

use crate::checkpoint::write_json;
use crate::data::MoleculeTable;
use crate::engine::FitOutcome;
use crate::error::TrainError;
use crate::evaluation::{Part, part_metrics, write_test_predictions};
use crate::example::Example;
use crate::labels::Labels;
use crate::report::TrainSummary;
use crate::run_control::RunControl;
use crate::run_folder::RunFolder;
use crate::splits::SplitSpec;
use crate::splits::split_rows;
use crate::table_data::{Featurized, MoleculeSource, TableData};
use crate::target_scaling::TargetScaling;
use crate::task::Task;

/// Where a table run's molecules and labels come from.
#[derive(Debug, Clone)]
pub(crate) struct TableInput {
    /// The molecule file and how it is read.
    pub(crate) source: MoleculeSource,
    /// Split.
    pub(crate) split: SplitSpec,
    /// Task and target columns (the scaling is computed by the run).
    pub(crate) task: Task,
    /// Target columns.
    pub(crate) target_columns: Vec<String>,
    /// Units of the targets.
    pub(crate) units: Option<String>,
}

/// What a model family brings to a table run.
pub(crate) trait TableFamily {
    /// The family's name in reports and plot captions (`MAT`, `Transformer-M`).
    const NAME: &'static str;
    /// One molecule's inputs.
    type Features: Clone + Send + Sync + 'static;
    /// The trained model (plain device).
    type Model;

    /// Features of every row (`None` where skipped) and the featurization report
    /// ([`crate::table_data::featurize_table`] with the family's featurizer).
    ///
    /// # Errors
    /// `--coords file` on a table without coordinates.
    fn featurize(
        &self,
        data: &TableData,
        control: &RunControl,
    ) -> Result<Featurized<Self::Features>, TrainError>;

    /// Where a molecule's coordinates came from (the report counts them).
    fn coordinate_source(features: &Self::Features) -> CoordinateMethod;

    /// The run's spec (`run.json`) with the labels' scaling recorded in it.
    ///
    /// # Errors
    /// A spec that cannot be serialised.
    fn spec_with(&mut self, labels: &Labels) -> Result<serde_json::Value, TrainError>;

    /// Trains on the engine and returns its outcome and the best epoch's model.
    ///
    /// # Errors
    /// Engine, model-file or I/O errors.
    fn fit(
        &self,
        labels: &Labels,
        run_dir: &Path,
        control: &RunControl,
        device: &Device,
        train: Arc<Vec<Example<Self::Features>>>,
        valid: Arc<Vec<Example<Self::Features>>>,
    ) -> Result<(FitOutcome, Self::Model), TrainError>;

    /// Raw outputs `[n][tasks]` of `model` (standardised values or logits).
    ///
    /// # Errors
    /// A molecule the model cannot take (naming it).
    fn predict_raw(
        &self,
        model: &Self::Model,
        features: &[&Self::Features],
        device: &Device,
    ) -> Result<Vec<Vec<f32>>, TrainError>;

    /// Trainable parameters of `model`.
    fn num_params(model: &Self::Model) -> usize;

    /// The training loss's name for the learning-curve plot.
    fn loss_name(&self, task: Task) -> &'static str;
}

impl TableInput {
    /// The files the run reads (molecules, XYZ labels, split file), whose hashes a
    /// resume must match.
    fn data_files(&self) -> Vec<&Path> {
        let mut files = self.source.data_files();
        if let SplitSpec::File { path, .. } = &self.split {
            files.push(path);
        }
        files
    }
}

/// Trains `family` on `input` into `run_dir` (see the module documentation).
///
/// # Errors
/// Dataset, split, checkpoint or I/O errors ([`TrainError`]), each naming the file; a
/// split without training or validation molecules; a target without a training label.
pub(crate) fn train_table<M: TableFamily>(
    family: &mut M,
    input: &TableInput,
    run_dir: &Path,
    control: &RunControl,
    device: &Device,
) -> Result<TrainSummary, TrainError> {
    let folder = RunFolder::claim(run_dir, control.resume, control.force, &input.data_files())?;
    let data = input.source.read(&input.target_columns)?;
    let table = &data.table;
    if table.is_empty() {
        return Err(TrainError::Invalid(format!(
            "{}: no rows",
            input.source.path.display()
        )));
    }
    if input.task == Task::Classification {
        check_binary(table, &input.target_columns, &input.source.path)?;
    }

    let t0 = Instant::now();
    let (features, report) = family.featurize(&data, control)?;
    crate::print_cache_report(&report);
    let featurize_seconds = t0.elapsed().as_secs_f64();
    let (mut features, report) = drop_unlabelled(table, features, report, M::coordinate_source);
    if report.n_skipped > 0 {
        eprintln!(
            "featurize: skipped {} of {} rows (see {}):",
            report.n_skipped,
            report.n_total,
            run_dir.join("featurize_report.json").display()
        );
        for s in report.skipped.iter().take(10) {
            eprintln!("  row {}: {}", s.row, s.reason);
        }
    }

    if let Some(first) = report.fallbacks.first() {
        eprintln!(
            "featurize: {} molecules have fallback coordinates (featurize_report.json says \
             why); first: row {}: {}",
            report.fallbacks.len(),
            first.row,
            first.reason
        );
    }

    let split = split_rows(&input.split, table, &features)?;
    let keep = |rows: &[usize]| -> (Vec<usize>, usize) {
        let kept: Vec<usize> = rows
            .iter()
            .copied()
            .filter(|&r| features[r].is_some())
            .collect();
        let dropped = rows.len() - kept.len();
        (kept, dropped)
    };
    let (train_rows, d0) = keep(&split.train);
    let (valid_rows, d1) = keep(&split.valid);
    let (test_rows, d2) = keep(&split.test);
    if train_rows.is_empty() || valid_rows.is_empty() {
        return Err(TrainError::Invalid(
            "the split leaves no training or validation molecule".into(),
        ));
    }

    check_targets_define_tasks(table, &train_rows, &input.target_columns, input.task)?;
    let labels = Labels {
        task: input.task,
        columns: input.target_columns.clone(),
        scaling: match input.task {
            Task::Regression => standardisation(table, &train_rows, &input.target_columns)?,
            Task::Classification => TargetScaling::default(),
        },
    };
    // A refused resume leaves the folder as it was: run.json first, then the rest.
    folder.write_spec(&family.spec_with(&labels)?)?;
    write_json(&run_dir.join("featurize_report.json"), &report)?;

    // The training and validation molecules move into the engine's examples (no copy);
    // evaluation reads them from there.
    let mut examples = |rows: &[usize]| -> Arc<Vec<Example<M::Features>>> {
        Arc::new(
            rows.iter()
                .map(|&r| Example {
                    row: r,
                    features: features[r].take().expect("kept rows are featurized"),
                    targets: table.targets[r].clone(),
                })
                .collect(),
        )
    };
    let (train_examples, valid_examples) = (examples(&train_rows), examples(&valid_rows));
    let (train, valid) = (part_of(&train_examples), part_of(&valid_examples));
    let test = Part {
        features: test_rows
            .iter()
            .map(|&r| features[r].as_ref().expect("kept rows are featurized"))
            .collect(),
        targets: test_rows
            .iter()
            .map(|&r| table.targets[r].clone())
            .collect(),
    };

    let (state, best) = family.fit(
        &labels,
        run_dir,
        control,
        device,
        train_examples.clone(),
        valid_examples.clone(),
    )?;

    let raw = |p: &Part<M::Features>| family.predict_raw(&best, &p.features, device);
    let (raw_train, raw_valid, raw_test) = (raw(&train)?, raw(&valid)?, raw(&test)?);
    let m_train = part_metrics(&labels, &raw_train, &train.targets);
    let m_valid = part_metrics(&labels, &raw_valid, &valid.targets);
    let m_test = part_metrics(&labels, &raw_test, &test.targets);
    write_test_predictions(
        &run_dir.join("test_predictions.csv"),
        &labels,
        &raw_test,
        &test_rows,
        &test.targets,
        table,
    )?;

    let summary = TrainSummary {
        task: input.task,
        units: input.units.clone().unwrap_or_else(|| "target units".into()),
        test_rmse: m_test.rmse,
        test_mae: m_test.mae,
        test_roc_auc: m_test.roc_auc,
        valid_rmse: m_valid.rmse,
        valid_mae: m_valid.mae,
        valid_roc_auc: m_valid.roc_auc,
        train: m_train,
        valid: m_valid,
        test: m_test,
        epochs: state.history.len(),
        n_missing_labels: [&train_rows, &valid_rows, &test_rows]
            .iter()
            .flat_map(|rows| rows.iter())
            .map(|&r| table.targets[r].iter().filter(|v| v.is_nan()).count())
            .sum(),
        best_epoch: state.best_epoch,
        train_seconds: state.train_seconds,
        featurize_seconds,
        n_skipped: report.n_skipped,
        n_unlabelled: table.label_problems.len(),
        n_dropped_from_split: [d0, d1, d2],
        n_params: M::num_params(&best),
    };
    write_json(&run_dir.join("metrics.json"), &summary)?;
    let tl: Vec<f64> = state.history.iter().map(|h| h.train_loss).collect();
    let vl: Vec<f64> = state.history.iter().map(|h| h.valid_loss).collect();
    crate::plot::loss_curves(
        &run_dir.join("curves.png"),
        &tl,
        &vl,
        (M::NAME, family.loss_name(input.task)),
    )?;
    Ok(summary)
}

/// Binary classification takes labels 0 and 1 (or missing).
///
/// # Errors
/// [`TrainError::Invalid`] naming the first other label's row, SMILES, column and value.
fn check_binary(table: &MoleculeTable, columns: &[String], path: &Path) -> Result<(), TrainError> {
    for (row, labels) in table.targets.iter().enumerate() {
        let id = table.ids.get(row).map_or_else(
            || table.smiles[row].clone(),
            |id| format!("{id}, {}", table.smiles[row]),
        );
        if let Some((j, v)) = labels
            .iter()
            .enumerate()
            .find(|(_, v)| v.is_finite() && **v != 0.0 && **v != 1.0)
        {
            return Err(TrainError::Invalid(format!(
                "{}: row {row} ({id}): label {v} in column {:?} is not 0 or 1; a classification \
                 task takes binary labels (use --task regression for real values)",
                path.display(),
                columns[j]
            )));
        }
    }
    Ok(())
}

/// Every target column defines a task on the training molecules: at least two distinct
/// labels (both classes for classification). A column of one value (all 0, inferred as
/// classification with one class) trained to the end before failing with "no epoch has a
/// finite validation metric".
///
/// # Errors
/// [`TrainError::Invalid`] naming the column, its one value and the row count.
fn check_targets_define_tasks(
    table: &MoleculeTable,
    train_rows: &[usize],
    columns: &[String],
    task: Task,
) -> Result<(), TrainError> {
    for (j, column) in columns.iter().enumerate() {
        let present = present_labels(table, train_rows, j);
        let Some(&first) = present.first() else {
            continue; // no label at all: standardisation / the metrics name it
        };
        if present.iter().all(|&v| v == first) {
            let what = match task {
                Task::Classification => "a classification task needs both classes (0 and 1)",
                Task::Regression => "a regression task needs labels that vary",
            };
            return Err(TrainError::Invalid(format!(
                "target column {column:?}: every one of its {} labels among the training \
                 molecules is {first}: {what}",
                present.len()
            )));
        }
    }
    Ok(())
}

/// Target `j`'s present (finite) labels among `train_rows`.
fn present_labels(table: &MoleculeTable, train_rows: &[usize], j: usize) -> Vec<f32> {
    train_rows
        .iter()
        .map(|&r| table.targets[r][j])
        .filter(|v| v.is_finite())
        .collect()
}

/// The evaluation view of a split part's examples.
fn part_of<F>(examples: &[Example<F>]) -> Part<'_, F> {
    Part {
        features: examples.iter().map(|e| &e.features).collect(),
        targets: examples.iter().map(|e| e.targets.clone()).collect(),
    }
}

/// The scaling of each target over its present training labels
/// ([`TargetScaling::fit`]).
///
/// # Errors
/// A target without any label among the training rows.
fn standardisation(
    table: &MoleculeTable,
    train_rows: &[usize],
    columns: &[String],
) -> Result<TargetScaling, TrainError> {
    let present: Vec<Vec<f32>> = (0..columns.len())
        .map(|j| present_labels(table, train_rows, j))
        .collect();
    if let Some(j) = present.iter().position(Vec::is_empty) {
        return Err(TrainError::Invalid(format!(
            "target {:?} has no label among the training molecules of this split",
            columns[j]
        )));
    }
    Ok(TargetScaling::fit(&present))
}

/// Removes rows without a usable label from `features` and lists them in `report` (a
/// row that also failed featurization keeps its featurization reason).
fn drop_unlabelled<F>(
    table: &MoleculeTable,
    mut features: Vec<Option<F>>,
    mut report: FeaturizeReport,
    source: fn(&F) -> CoordinateMethod,
) -> (Vec<Option<F>>, FeaturizeReport) {
    for problem in &table.label_problems {
        if let Some(f) = features[problem.row].take() {
            if let Some(count) = report.coordinate_sources.get_mut(&source(&f)) {
                *count -= 1;
            }
            report.n_ok -= 1;
            report.skipped.push(problem.clone());
        } else if let Some(entry) = report.skipped.iter_mut().find(|s| s.row == problem.row) {
            // Already skipped by featurization: keep that reason, and say the label is
            // missing too, so every unlabelled row shows in the report.
            entry.reason.push_str(&format!("; also {}", problem.reason));
        }
    }
    report.coordinate_sources.retain(|_, n| *n > 0);
    report.skipped.sort_by_key(|s| s.row);
    report.n_skipped = report.skipped.len();
    if !table.label_problems.is_empty() {
        eprintln!(
            "data: {} of {} rows have no usable label and are not trained on",
            table.label_problems.len(),
            table.len()
        );
    }
    (features, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A classification table with a label other than 0 or 1 is refused, naming the row,
    /// SMILES, column and value; 0, 1 and missing labels pass.
    #[test]
    fn classification_labels_must_be_binary() {
        let dir = std::env::temp_dir().join(format!("molattn-binary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        let columns = vec!["a".to_string(), "b".to_string()];
        let read = |text: &str| {
            std::fs::write(&path, text).unwrap();
            MoleculeTable::read_delimited(&path, "smiles", &columns, b',').unwrap()
        };
        let ok = read("smiles,a,b\nCCO,1,0\nCCN,0,\nCCC,,1\n");
        assert!(check_binary(&ok, &columns, &path).is_ok());
        let bad = read("smiles,a,b\nCCO,1,0\nCCN,0,0.5\n");
        let e = check_binary(&bad, &columns, &path).unwrap_err().to_string();
        assert!(
            e.contains("row 1 (CCN)") && e.contains("label 0.5") && e.contains("\"b\""),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Issue #37 item 7: a target column with one value among the training molecules
    /// (an all-zero column, inferred as one-class classification; a constant real
    /// value) is refused before training, naming the column.
    #[test]
    fn a_constant_label_column_defines_no_task() {
        let dir = std::env::temp_dir().join(format!("molattn-const-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        std::fs::write(
            &path,
            "smiles,a,b,c\nCCO,0,1.5,0\nCCN,0,1.5,1\nCCC,0,1.5,\n",
        )
        .unwrap();
        let check = |column: &str, task: Task| {
            let columns = vec![column.to_string()];
            let table = MoleculeTable::read_csv(&path, "smiles", &columns).unwrap();
            check_targets_define_tasks(&table, &[0, 1, 2], &columns, task)
        };
        let e = check("a", Task::Classification).unwrap_err().to_string();
        assert!(
            e.contains("\"a\"") && e.contains("3 labels") && e.contains("is 0"),
            "{e}"
        );
        let e = check("b", Task::Regression).unwrap_err().to_string();
        assert!(e.contains("\"b\"") && e.contains("is 1.5"), "{e}");
        assert!(check("c", Task::Classification).is_ok());
        std::fs::remove_dir_all(&dir).ok();
    }
}
