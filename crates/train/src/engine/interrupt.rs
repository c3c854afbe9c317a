//! Stopping a run from inside, as a killed process would stop: after a given number of
//! training batches the run's [`Interrupter`] is told to stop, and burn-train ends the
//! epoch there without validating or checkpointing it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use burn::train::Interrupter;

/// Training batches left before the run is interrupted (shared by every slice of the
/// training loader).
#[derive(Clone)]
pub struct BatchBudget {
    remaining: Arc<AtomicUsize>,
    interrupter: Interrupter,
}

impl BatchBudget {
    /// Interrupts `interrupter` once `batches` batches have been handed out.
    pub fn new(batches: usize, interrupter: Interrupter) -> Self {
        Self {
            remaining: Arc::new(AtomicUsize::new(batches)),
            interrupter,
        }
    }

    /// Counts one batch; the one that exhausts the budget asks the run to stop after it.
    pub fn spend_one(&self) {
        let before = self
            .remaining
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |r| {
                Some(r.saturating_sub(1))
            })
            .unwrap_or(0);
        if before <= 1 {
            self.interrupter
                .stop(Some("batch budget of this invocation spent"));
        }
    }
}
