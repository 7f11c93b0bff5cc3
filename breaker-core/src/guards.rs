//! What a breaker keeps for the keys around it: the bulkhead and the latency
//! window (their counts are per-thread counters, with the others). A group
//! without these keys has a `Guards` that no call touches.

use crate::bulkhead::Bulkhead;
use crate::config::Config;
use crate::policy::latency::LatencyWindow;

#[derive(Debug)]
pub(crate) struct Guards {
    pub(crate) bulkhead: Option<Bulkhead>,
    pub(crate) latency: Option<Box<LatencyWindow>>,
}

impl Guards {
    pub(crate) fn new(config: &Config) -> Self {
        Guards {
            bulkhead: config.max_concurrent().map(Bulkhead::new),
            latency: LatencyWindow::new(config),
        }
    }
}
