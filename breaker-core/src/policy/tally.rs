//! [`Tally`]: requests and accepts over a time window, for the adaptive
//! throttle, kept in a [`TimeWindow`] whose rule never trips.

use super::rule::{Outcome, Rule};
use super::time_window::TimeWindow;
use crate::clock::ClockSource;

/// The generation every tally records in: a throttle's counts outlive the
/// breaker's transitions (a trip says nothing of what the dependency accepts).
const GENERATION: u64 = 0;

/// Requests and accepts of the last `window_ms`: a [`TimeWindow`] in which a
/// request is an outcome and a request the dependency did not accept is a
/// failure. So the window's buckets, their expiry and their lock-free adds
/// are the time window's, and `accepts = calls - failures`.
#[derive(Debug)]
pub(crate) struct Tally {
    window: TimeWindow,
}

impl Tally {
    /// An empty tally of the last `window_ms` (at least ten, validated), on a
    /// breaker whose clock is the default monotonic one when `monotonic`.
    pub(crate) fn new(window_ms: u64, monotonic: bool) -> Self {
        Tally {
            window: TimeWindow::new(window_ms, Rule::never_trips(), monotonic),
        }
    }

    /// The time to count at, on `clock`: see [`TimeWindow::now`].
    #[inline]
    pub(crate) fn now(&self, clock: &ClockSource) -> u64 {
        self.window.now(clock)
    }

    /// Counts one request at `now`, `accepted` by the dependency or not.
    pub(crate) fn record(&self, now: u64, accepted: bool) {
        let outcome = Outcome {
            failed: !accepted,
            slow: false,
        };
        // The rule never trips: what `record` says is always `false`.
        self.window.record(GENERATION, now, outcome);
    }

    /// Whether every request in the window at `now` was accepted (none, too):
    /// one load, no bucket read. Pure.
    #[inline]
    pub(crate) fn all_accepted(&self, now: u64) -> bool {
        self.window.holds_no_failure(now)
    }

    /// Requests and accepts in the window at `now`. Pure.
    pub(crate) fn counts(&self, now: u64) -> (u64, u64) {
        let counts = self.window.counts(GENERATION, now);
        (counts.calls, counts.calls.saturating_sub(counts.failures))
    }

    /// How long one bucket is (nanos): the window drops its oldest requests
    /// a bucket at a time.
    pub(crate) fn bucket_nanos(&self) -> u64 {
        self.window.bucket_nanos()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn requests_and_accepts_leave_the_tally_a_bucket_at_a_time() {
        let tally = Tally::new(1_000, false);
        let ms = 1_000_000;
        for i in 0..10u64 {
            tally.record(i * 100 * ms, i % 2 == 0);
        }
        assert_eq!(tally.counts(999 * ms), (10, 5));
        // At 1 s the first bucket (0 to 100 ms) is a window old.
        assert_eq!(tally.counts(1_000 * ms), (9, 4));
        assert_eq!(tally.counts(1_950 * ms), (0, 0));
        assert_eq!(tally.bucket_nanos(), 100 * ms);
    }
}
