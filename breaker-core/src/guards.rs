//! What a breaker keeps for the keys around it: the bulkhead, the latency
//! window and the call-duration histogram (their counts are per-thread
//! counters, with the others). A group without these keys has a `Guards` that
//! no call touches.

use std::sync::Arc;

use crate::bulkhead::Bulkhead;
use crate::config::Config;
use crate::histogram::CallHistogram;
use crate::policy::latency::LatencyWindow;

#[derive(Debug)]
pub(crate) struct Guards {
    pub(crate) bulkhead: Option<Bulkhead>,
    /// `None` unless the group sets `latency_p99_ms` or `histogram_ms`: one
    /// box for both keeps the breaker's layout.
    timing: Option<Box<Timing>>,
}

/// What times a group's calls besides its failure policy.
#[derive(Debug)]
struct Timing {
    latency: Option<LatencyWindow>,
    /// Shared by a keyed group's keys.
    histogram: Option<Arc<CallHistogram>>,
}

impl Guards {
    /// The guards `config` asks for; the histogram is `histogram` when given
    /// (a keyed group's, for one of its keys).
    pub(crate) fn new(config: &Config, histogram: Option<Arc<CallHistogram>>) -> Self {
        let latency = LatencyWindow::new(config);
        let histogram = histogram.or_else(|| CallHistogram::new(config, false).map(Arc::new));
        Guards {
            bulkhead: config.max_concurrent().map(Bulkhead::new),
            timing: (latency.is_some() || histogram.is_some())
                .then(|| Box::new(Timing { latency, histogram })),
        }
    }

    /// Whether the group has neither a latency window nor a histogram.
    #[inline(always)]
    pub(crate) fn untimed(&self) -> bool {
        self.timing.is_none()
    }

    /// The latency window (`latency_p99_ms`).
    #[inline(always)]
    pub(crate) fn latency(&self) -> Option<&LatencyWindow> {
        self.timing.as_deref()?.latency.as_ref()
    }

    /// The call-duration histogram (`histogram_ms`).
    #[inline(always)]
    pub(crate) fn histogram(&self) -> Option<&CallHistogram> {
        self.timing.as_deref()?.histogram.as_deref()
    }
}
