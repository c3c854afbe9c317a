//! How a run shows its progress: burn-train's terminal dashboard when standard output is
//! a terminal (and the build has it), one plain line per epoch otherwise (CI, pipes,
//! log files), nothing with `--quiet`.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::time::Instant;

use burn::train::Interrupter;
use burn::train::LearnerSummary;
use burn::train::logger::{EvaluationProgressLogger, TrainingProgressLogger};
use burn::train::metric::{MetricDefinition, MetricId, NumericEntry};
use burn::train::renderer::{
    EvaluationName, MetricState, MetricsRenderer, MetricsRendererEvaluation,
    MetricsRendererTraining,
};

/// What a run prints while it trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Progress {
    /// The dashboard on a terminal, epoch lines otherwise (what the commands use).
    Auto,
    /// One line per epoch (epoch, losses, metrics, learning rate, time, ETA).
    Lines,
    /// Nothing (the library default).
    #[default]
    Quiet,
}

/// The renderer for `progress`; `resumed_from` is the checkpoint epoch of a resumed run.
pub fn renderer(
    progress: Progress,
    interrupter: &Interrupter,
    resumed_from: Option<usize>,
) -> Box<dyn MetricsRenderer> {
    match progress {
        Progress::Quiet => Box::new(EpochLines::new(false)),
        Progress::Lines => Box::new(EpochLines::new(true)),
        Progress::Auto if std::io::stdout().is_terminal() => {
            dashboard(interrupter, resumed_from).unwrap_or_else(|| Box::new(EpochLines::new(true)))
        }
        Progress::Auto => Box::new(EpochLines::new(true)),
    }
}

#[cfg(feature = "tui")]
fn dashboard(
    interrupter: &Interrupter,
    resumed_from: Option<usize>,
) -> Option<Box<dyn MetricsRenderer>> {
    // Not `persistent()`: the dashboard closes when training ends, so a command run in a
    // terminal returns on its own.
    Some(Box::new(
        burn::train::renderer::tui::TuiMetricsRendererWrapper::new(
            interrupter.clone(),
            resumed_from,
        ),
    ))
}

#[cfg(not(feature = "tui"))]
fn dashboard(_: &Interrupter, _: Option<usize>) -> Option<Box<dyn MetricsRenderer>> {
    None
}

/// One line per epoch on standard error: the final (whole-epoch) value of every metric,
/// train then valid, the epoch's time and the estimated time left.
struct EpochLines {
    print: bool,
    names: HashMap<MetricId, String>,
    values: Vec<(String, f64)>,
    total_epochs: usize,
    first_epoch: usize,
    started: Instant,
    epoch_started: Instant,
}

impl EpochLines {
    fn new(print: bool) -> Self {
        Self {
            print,
            names: HashMap::new(),
            values: Vec::new(),
            total_epochs: 0,
            first_epoch: 1,
            started: Instant::now(),
            epoch_started: Instant::now(),
        }
    }

    fn record(&mut self, split: &str, state: MetricState) {
        if let MetricState::Numeric(entry, Some(NumericEntry::Final(v))) = state {
            let name = self
                .names
                .get(&entry.metric_id)
                .cloned()
                .unwrap_or_default();
            self.values.push((format!("{split} {name}"), v));
        }
    }
}

impl MetricsRendererTraining for EpochLines {
    fn update_train(&mut self, state: MetricState) {
        self.record("train", state);
    }

    fn update_valid(&mut self, state: MetricState) {
        self.record("valid", state);
    }

    fn on_train_end(
        &mut self,
        _summary: Option<LearnerSummary>,
    ) -> Result<(), Box<dyn core::error::Error>> {
        Ok(())
    }
}

impl MetricsRendererEvaluation for EpochLines {
    fn update_test(&mut self, _name: EvaluationName, _state: MetricState) {}

    fn on_test_end(
        &mut self,
        _summary: Option<LearnerSummary>,
    ) -> Result<(), Box<dyn core::error::Error>> {
        Ok(())
    }
}

impl TrainingProgressLogger for EpochLines {
    fn start(
        &mut self,
        total_epochs: usize,
        starting_epoch: usize,
        _: Option<usize>,
        _: Option<&str>,
    ) {
        self.total_epochs = total_epochs;
        self.first_epoch = starting_epoch;
        self.started = Instant::now();
        self.epoch_started = Instant::now();
    }

    fn update_epoch(&mut self, epoch: usize) {
        let values = std::mem::take(&mut self.values);
        if self.print {
            let seconds = self.epoch_started.elapsed().as_secs_f64();
            let done = epoch + 1 - self.first_epoch.min(epoch + 1);
            let per_epoch = self.started.elapsed().as_secs_f64() / done.max(1) as f64;
            let left = per_epoch * self.total_epochs.saturating_sub(epoch) as f64;
            let metrics: Vec<String> = values
                .iter()
                .map(|(name, v)| {
                    if name.ends_with("LearningRate") || name.ends_with("Learning Rate") {
                        format!("lr {v:.2e}")
                    } else {
                        format!("{name} {v:.4}")
                    }
                })
                .collect();
            eprintln!(
                "epoch {epoch:>3}/{}  {}  {seconds:.1}s  ETA {:.0}s (at most)",
                self.total_epochs,
                metrics.join("  "),
                left
            );
        }
        self.epoch_started = Instant::now();
    }

    fn start_split(&mut self, _: &str, _: usize) {}
    fn update_split(&mut self, _: usize) {}
    fn end_split(&mut self) {}
    fn end(&mut self) {}
    fn log_event_training(&mut self, _: String) {}
}

impl EvaluationProgressLogger for EpochLines {
    fn start_global_progress(&mut self, _: usize) {}
    fn start_test(&mut self, _: &str, _: usize) {}
    fn update_test_progress(&mut self, _: usize) {}
    fn end_test(&mut self) {}
    fn end_global_progress(&mut self) {}
    fn log_event_evaluation(&mut self, _: String) {}
}

impl MetricsRenderer for EpochLines {
    fn manual_close(&mut self) {}

    fn register_metric(&mut self, definition: MetricDefinition) {
        self.names
            .insert(definition.metric_id, definition.name.to_string());
    }
}
