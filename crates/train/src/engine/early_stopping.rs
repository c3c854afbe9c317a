//! Early stopping with patience on the validation metric, decided from the metric
//! history of all epochs (burn-train's event store reads the logs back from disk), so a
//! resumed run stops where the uninterrupted one would. burn-train's
//! `MetricEarlyStoppingStrategy` keeps its best epoch in memory and restarts it on resume.

use burn::train::EarlyStoppingStrategy;
use burn::train::metric::MetricName;
use burn::train::metric::store::{Aggregate, Direction, EventStoreClient, Split};

/// Stop when the best validation epoch is `patience` or more epochs back.
#[derive(Clone)]
pub struct Patience {
    name: MetricName,
    direction: Direction,
    patience: usize,
}

impl Patience {
    /// Patience on the validation value of metric `name` (`direction`: which way is
    /// better).
    pub fn new(name: &str, direction: Direction, patience: usize) -> Self {
        Self {
            name: MetricName::new(name.to_string()),
            direction,
            patience,
        }
    }
}

impl EarlyStoppingStrategy for Patience {
    fn should_stop(&mut self, epoch: usize, store: &EventStoreClient) -> bool {
        store
            .find_epoch(&self.name, Aggregate::Mean, self.direction, &Split::Valid)
            .is_some_and(|best| epoch.saturating_sub(best) >= self.patience)
    }
}
