//! The state one breaker's handles share, and the two ways to touch its word:
//! a load and a compare-and-swap.

use std::sync::atomic::AtomicPtr;
use std::time::Duration;

use crossbeam_utils::CachePadded;

use crate::clock::ClockSource;
use crate::config::Config;
use crate::counters::{Counters, Event};
use crate::events::Hub;
use crate::guards::Guards;
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
    /// Read on the slow paths only (trips, probes, half-open claims): the
    /// closed path never touches it, so a live reconfiguration costs it nothing.
    pub(super) config: LiveConfig,
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
    /// Subscribers, transition counts and the order of delivery.
    pub(super) events: Hub,
    /// The bulkhead, latency window and their counters; touched only by groups
    /// that set `max_concurrent`, `timeout_ms` or `latency_p99_ms`.
    pub(super) guards: Guards,
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

/// The config a breaker runs with, replaceable while it runs.
///
/// Every config the breaker has had stays allocated until the breaker drops, so
/// a reference read from `current` stays valid for as long as `&self` is: a
/// reader never waits and never sees a config freed under it. A live
/// reconfiguration is an operator's action, so the configs kept are few.
pub(super) struct LiveConfig {
    current: AtomicPtr<Config>,
    /// Every config published, from `Box::into_raw`; freed on drop.
    all: parking_lot::Mutex<Vec<AtomicPtr<Config>>>,
}

impl LiveConfig {
    pub(super) fn new(config: Config) -> Self {
        let first = Box::into_raw(Box::new(config));
        LiveConfig {
            current: AtomicPtr::new(first),
            all: parking_lot::Mutex::new(vec![AtomicPtr::new(first)]),
        }
    }

    #[inline]
    pub(super) fn get(&self) -> &Config {
        // SAFETY: `current` always holds a pointer of `all`, from
        // `Box::into_raw`, only read through shared references, and freed
        // only when `self` drops, which `&self` outlives.
        unsafe { &*self.current.load(Acquire) }
    }

    /// Publishes `config`; readers see it from their next read. Each config
    /// published is kept until the breaker drops, so one that runs the breaker
    /// the same way and spells out the same keys (which the config file reads
    /// back, and `==` leaves out) is not published again: a reload that
    /// changes nothing costs nothing.
    pub(super) fn set(&self, config: Config) {
        let mut all = self.all.lock();
        // Under the lock: no other `set` moves `current` meanwhile.
        let current = self.get();
        if *current == config && current.explicit_keys().eq(config.explicit_keys()) {
            return;
        }
        let next = Box::into_raw(Box::new(config));
        all.push(AtomicPtr::new(next));
        self.current.store(next, Release);
    }

    /// How many configs this breaker holds until it drops.
    #[cfg(test)]
    pub(super) fn published(&self) -> usize {
        self.all.lock().len()
    }
}

impl Drop for LiveConfig {
    fn drop(&mut self) {
        for config in self.all.get_mut().drain(..) {
            // SAFETY: each pointer came from `Box::into_raw`, is freed once,
            // here, and no reference to it outlives `self`.
            drop(unsafe { Box::from_raw(config.into_inner()) });
        }
    }
}

impl Inner {
    /// [`Breaker::would_admit`](super::Breaker::would_admit) for a word that is
    /// not closed.
    #[inline(never)]
    pub(super) fn would_admit(&self, word: Word) -> bool {
        match word.state() {
            State::Closed | State::ForcedClosed => true,
            State::ForcedOpen => false,
            // The reading a claim compares: see the crate docs, "The coarse reading".
            State::Open => self.clock.reached(self.reopen_at.load(Acquire)),
            State::HalfOpen => {
                word.probes() < self.config().half_open_probes()
                    || self.clock.reached(self.lease_until.load(Acquire))
            }
        }
    }

    /// The config in force now.
    #[inline]
    pub(super) fn config(&self) -> &Config {
        self.config.get()
    }

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
            State::HalfOpen if word.probes() >= self.config().half_open_probes() => {
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
            transitions: self.events.counts(),
            open_for: matches!(word.state(), State::Open | State::HalfOpen)
                .then(|| Duration::from_nanos(self.open_for.load(Relaxed))),
            timeouts: Guards::read(&self.guards.timeouts),
            bulkhead_rejected: Guards::read(&self.guards.bulkhead_rejected),
            bulkhead_in_flight: self.guards.bulkhead.as_ref().map(|b| b.in_flight()),
            latency_trips: Guards::read(&self.guards.latency_trips),
            latency_p99: self
                .guards
                .latency
                .as_ref()
                .and_then(|window| window.counts(word.generation(), self.clock.now()).p99),
        }
    }
}
