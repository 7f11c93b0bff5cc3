//! The state one breaker's handles share, and the two ways to touch its word:
//! a load and a compare-and-swap.

use std::time::Duration;

use crossbeam_utils::CachePadded;

use crate::clock::ClockSource;
use crate::config::Config;
use crate::counters::{Counters, Event};
use crate::metrics::{Metrics, WindowMetrics};
use crate::policy::Policy;
use crate::state::{State, Word};
use crate::sync::{AtomicU64, Mutex, Ordering::*};

/// The shared state of one breaker.
pub(super) struct Inner {
    /// Read by every claim and verdict; written on transitions, failures, and the
    /// success that resets a failure count (never by a success with nothing to reset).
    pub(super) hot: CachePadded<Hot>,
    pub(super) name: &'static str,
    pub(super) config: Config,
    pub(super) clock: ClockSource,
    /// When the current open state ends (clock nanos). Written before the word
    /// that publishes the `Open` state it belongs to.
    pub(super) reopen_at: AtomicU64,
    /// The current open duration; grows by `backoff` after a failed probe.
    pub(super) open_for: AtomicU64,
    /// Until when the probes in flight hold their slots: the latest probe
    /// admission plus `probe_timeout`.
    pub(super) lease_until: AtomicU64,
    /// Serialises the transitions that write more than the word.
    pub(super) transition: Mutex<()>,
    pub(super) counters: Counters,
}

// A panic caught around a breaker leaves it whole, so handles and permits may
// cross `catch_unwind` without `AssertUnwindSafe`: every change of state is one
// compare-and-swap of the word; the deadlines are written before the word that
// publishes them; the locks (parking_lot's, which do not poison) hold no user
// code but a custom clock's read, which comes before anything is written; and a
// permit dropped by the unwind records its failure like any other verdict.
impl std::panic::RefUnwindSafe for Inner {}

pub(super) struct Hot {
    pub(super) word: AtomicU64,
    pub(super) policy: Policy,
}

impl Inner {
    #[inline]
    pub(super) fn word(&self) -> Word {
        Word(self.hot.word.load(Acquire))
    }

    pub(super) fn cas(&self, current: Word, next: Word) -> Result<(), Word> {
        self.hot
            .word
            .compare_exchange(current.0, next.0, AcqRel, Acquire)
            .map(drop)
            .map_err(Word)
    }

    pub(super) fn metrics(&self) -> Metrics {
        let word = self.word();
        let totals = self.counters.totals();
        // The reading refusals compare, so `retry_after` never reads zero while
        // claims are still refused.
        let now = || self.clock.now_coarse();
        let retry_after = match word.state() {
            State::Open => Some(self.reopen_at.load(Acquire).saturating_sub(now())),
            State::HalfOpen if word.probes() >= self.config.half_open_probes() => {
                Some(self.lease_until.load(Acquire).saturating_sub(now()))
            }
            _ => None,
        };
        Metrics {
            group: self.name,
            state: word.state(),
            generation: word.generation(),
            calls: [
                Event::Successes,
                Event::Failures,
                Event::Ignored,
                Event::Abandoned,
                Event::Stale,
            ]
            .iter()
            .fold(0u64, |calls, &event| {
                calls.saturating_add(totals.get(event))
            }),
            successes: totals.get(Event::Successes),
            failures: totals.get(Event::Failures),
            ignored: totals.get(Event::Ignored),
            rejected: totals.get(Event::Rejected),
            abandoned: totals.get(Event::Abandoned),
            stale: totals.get(Event::Stale),
            probes_succeeded: totals.get(Event::ProbesSucceeded),
            probes_failed: totals.get(Event::ProbesFailed),
            probes_reclaimed: totals.get(Event::ProbesReclaimed),
            times_opened: totals.get(Event::Opened),
            probes_in_flight: if word.state() == State::HalfOpen {
                word.probes()
            } else {
                0
            },
            consecutive_failures: word.failures(),
            window: self
                .hot
                .policy
                .window_counts(word.generation(), &self.clock)
                .map(WindowMetrics::from),
            retry_after: retry_after.map(Duration::from_nanos),
        }
    }
}
