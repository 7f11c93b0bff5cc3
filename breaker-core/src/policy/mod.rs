//! The failure policies that decide, in the closed state, when to trip. Each
//! is one type behind one call, [`Policy::record`]: the [`consecutive`] count
//! (kept in the state word itself) and the rate windows, [`time_window`] and
//! [`count_window`], judged by one [`rule`] (whose slow-call rule is also the
//! `latency_p99_ms` rule). A time window also keeps the adaptive throttle's
//! requests and accepts ([`Tally`]).

mod consecutive;
mod count_window;
mod rule;
mod tally;
mod time_window;

pub(crate) use self::rule::Counts;
pub(crate) use self::tally::Tally;

use self::consecutive::Consecutive;
use self::count_window::CountWindow;
use self::rule::Rule;
use self::time_window::TimeWindow;
use crate::clock::ClockSource;
use crate::config::{Config, FailurePolicy};
use crate::events::TripCause;
use crate::sync::AtomicU64;

/// A closed call's outcome, as a policy is told it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// The call failed (a timeout or a panic included).
    pub(crate) failed: bool,
    /// Nanos from claim to verdict on the breaker's clock; 0 when the
    /// breaker does not time its calls (no rule reads it then).
    pub(crate) lasted: u64,
    /// The clock's reading at the verdict, when it was read to time the call.
    pub(crate) ended: Option<u64>,
}

/// Whether a breaker running policy `from` can take `to` live
/// ([`Policy::retune`]): the kind and size of the window are laid out in the
/// breaker, and so is whether calls are timed for slowness; the numbers judge
/// from the next outcome.
pub(crate) fn retunable(from: FailurePolicy, to: FailurePolicy) -> bool {
    match (from, to) {
        (FailurePolicy::Consecutive { .. }, FailurePolicy::Consecutive { .. }) => true,
        (
            FailurePolicy::TimeWindow {
                window_ms: a,
                rates: r,
            },
            FailurePolicy::TimeWindow {
                window_ms: b,
                rates: s,
            },
        ) => a == b && r.slow_call_ms.is_some() == s.slow_call_ms.is_some(),
        (
            FailurePolicy::CountWindow {
                window_calls: a,
                rates: r,
            },
            FailurePolicy::CountWindow {
                window_calls: b,
                rates: s,
            },
        ) => a == b && r.slow_call_ms.is_some() == s.slow_call_ms.is_some(),
        _ => false,
    }
}

/// The failure policy of one breaker.
#[derive(Debug)]
pub(crate) enum Policy {
    /// Trips on the `threshold`-th consecutive failure, counted in the state word.
    Consecutive(Consecutive),
    /// Failure and slow-call rates over the last `window_ms`. Boxed: its buckets
    /// are written on every outcome and must not share a line with the state word.
    TimeWindow(Box<TimeWindow>),
    /// Failure and slow-call rates over the last `window_calls` outcomes.
    CountWindow(Box<CountWindow>),
}

impl Policy {
    /// The policy `config` asks for, on a breaker reading `clock`.
    pub(crate) fn new(config: &Config, clock: &ClockSource) -> Self {
        let rule = |rates| Rule::new(&rates, config.latency_p99());
        match config.policy() {
            FailurePolicy::Consecutive { threshold } => {
                Policy::Consecutive(Consecutive::new(threshold))
            }
            FailurePolicy::TimeWindow { window_ms, rates } => Policy::TimeWindow(Box::new(
                TimeWindow::new(window_ms, rule(rates), clock.is_monotonic()),
            )),
            FailurePolicy::CountWindow {
                window_calls,
                rates,
            } => Policy::CountWindow(Box::new(CountWindow::new(window_calls, rule(rates)))),
            // `FailurePolicy` is non-exhaustive for users; `breaker-rules` is
            // pinned to this crate's version, whose rules make no other policy.
            _ => unreachable!("breaker_rules::check makes only these policies"),
        }
    }

    /// Takes the numbers of `config` (a policy of this kind and size, which a
    /// live reconfiguration checks) from the next outcome on, keeping what the
    /// policy counted.
    pub(crate) fn retune(&self, config: &Config) {
        match self {
            Policy::Consecutive(consecutive) => consecutive.retune(config.threshold()),
            Policy::TimeWindow(window) => window.rule().retune(config),
            Policy::CountWindow(window) => window.rule().retune(config),
        }
    }

    /// Whether claims must read the clock: only to time calls for slow-call
    /// judging. (A time window reads the clock at the verdict, and only then.)
    pub(crate) fn needs_clock(&self) -> bool {
        self.rule().is_some_and(Rule::judges_slowness)
    }

    /// Whether outcomes feed a window (every policy but the consecutive count).
    pub(crate) fn is_window(&self) -> bool {
        self.rule().is_some()
    }

    fn rule(&self) -> Option<&Rule> {
        match self {
            Policy::Consecutive(_) => None,
            Policy::TimeWindow(window) => Some(window.rule()),
            Policy::CountWindow(window) => Some(window.rule()),
        }
    }

    /// Records the outcome of a call claimed closed (or forced closed) in
    /// `generation` that settled in it; returns the rule that trips, if one
    /// does (the caller trips only a closed breaker). `word` is the breaker's
    /// state word, where the consecutive count lives (counted only while
    /// closed); a time window reads `clock` to place the outcome.
    ///
    /// Always inlined: a verdict's path (`settle`) and a keyed group's own
    /// breaker taking a key's report both call it, and a call that is not
    /// inlined costs each verdict more than the copy costs in code.
    #[inline(always)]
    pub(crate) fn record(
        &self,
        word: &AtomicU64,
        generation: u64,
        outcome: Outcome,
        clock: &ClockSource,
    ) -> Option<TripCause> {
        match self {
            Policy::Consecutive(consecutive) => {
                consecutive.record(word, generation, outcome.failed)
            }
            Policy::TimeWindow(window) => {
                let now = outcome.ended.unwrap_or_else(|| window.now(clock));
                let judged = window.rule().outcome(outcome.failed, outcome.lasted);
                window
                    .record(generation, now, judged)
                    .then(|| window.rule().cause(|| window.counts(generation, now)))
            }
            Policy::CountWindow(window) => {
                let judged = window.rule().outcome(outcome.failed, outcome.lasted);
                window
                    .record(generation, judged)
                    .then(|| window.rule().cause(|| window.counts(generation)))
            }
        }
    }

    /// What a window policy's window holds for `generation` now; `None` under
    /// the consecutive policy. Pure; only time windows read `clock`.
    pub(crate) fn window_counts(&self, generation: u64, clock: &ClockSource) -> Option<Counts> {
        match self {
            Policy::Consecutive(_) => None,
            Policy::TimeWindow(window) => Some(window.counts(generation, window.now(clock))),
            Policy::CountWindow(window) => Some(window.counts(generation)),
        }
    }
}
