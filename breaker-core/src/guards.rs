//! What a breaker keeps for the keys around it: the bulkhead, the latency
//! window, and the counters that tell timeouts, bulkhead refusals and latency
//! trips apart. A group without these keys has a `Guards` that no call touches.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::bulkhead::Bulkhead;
use crate::config::Config;
use crate::policy::latency::LatencyWindow;

#[derive(Debug)]
pub(crate) struct Guards {
    pub(crate) bulkhead: Option<Bulkhead>,
    pub(crate) latency: Option<Box<LatencyWindow>>,
    pub(crate) timeouts: AtomicU64,
    pub(crate) bulkhead_rejected: AtomicU64,
    pub(crate) latency_trips: AtomicU64,
}

impl Guards {
    pub(crate) fn new(config: &Config) -> Self {
        Guards {
            bulkhead: config.max_concurrent().map(Bulkhead::new),
            latency: LatencyWindow::new(config),
            timeouts: AtomicU64::new(0),
            bulkhead_rejected: AtomicU64::new(0),
            latency_trips: AtomicU64::new(0),
        }
    }

    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }

    pub(crate) fn read(counter: &AtomicU64) -> u64 {
        counter.load(Relaxed)
    }
}
