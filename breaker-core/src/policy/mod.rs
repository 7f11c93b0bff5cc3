//! The failure policies that decide, in the closed state, when to trip: the
//! [`consecutive`] count (kept in the state word itself) and the rate windows,
//! [`time_window`] and [`count_window`], judged by one [`rule`].

pub(crate) mod consecutive;
mod count_window;
pub(crate) mod latency;
mod rule;
mod time_window;

pub(crate) use self::rule::Counts;

use self::count_window::CountWindow;
pub(crate) use self::count_window::Recorded;
use self::rule::Rule;
pub(crate) use self::time_window::TimeWindow;
use crate::clock::ClockSource;
use crate::config::{Config, FailurePolicy};

#[derive(Debug)]
pub(crate) enum Policy {
    /// Trips on the config's `threshold`-th consecutive failure. The count lives
    /// in the state word (the state machine in `breaker::transition` counts
    /// it), so a success that finds nothing to reset reads one word.
    Consecutive,
    /// Failure and slow-call rates over the last `window_ms`. Boxed: its buckets
    /// are written on every outcome and must not share a line with the state word.
    TimeWindow(Box<TimeWindow>),
    /// Failure and slow-call rates over the last `window_calls` outcomes.
    CountWindow(Box<CountWindow>),
}

impl Policy {
    /// The policy `config` asks for, on a breaker reading `clock`.
    pub(crate) fn new(config: &Config, clock: &ClockSource) -> Self {
        match config.policy() {
            FailurePolicy::Consecutive { .. } => Policy::Consecutive,
            FailurePolicy::TimeWindow { window_ms, rates } => Policy::TimeWindow(Box::new(
                TimeWindow::new(window_ms, Rule::new(&rates), clock.is_monotonic()),
            )),
            FailurePolicy::CountWindow {
                window_calls,
                rates,
            } => Policy::CountWindow(Box::new(CountWindow::new(window_calls, Rule::new(&rates)))),
            // `FailurePolicy` is non-exhaustive for users; `breaker-rules` is
            // pinned to this crate's version, whose rules make no other policy.
            _ => unreachable!("breaker_rules::check makes only these policies"),
        }
    }

    /// Takes the rates of `config` (a policy of this kind and size, which a
    /// live reconfiguration checks) from the next outcome on, keeping what the
    /// window counted.
    pub(crate) fn retune(&self, config: &Config) {
        let Some(rates) = config.rates() else {
            return;
        };
        match self {
            Policy::Consecutive => {}
            Policy::TimeWindow(window) => window.rule().retune(&rates),
            Policy::CountWindow(window) => window.rule().retune(&rates),
        }
    }

    /// Whether claims must read the clock: only to time calls for slow-call
    /// judging. (A time window reads the clock at the verdict, and only then.)
    pub(crate) fn needs_clock(&self) -> bool {
        match self {
            Policy::Consecutive => false,
            Policy::TimeWindow(window) => window.rule().judges_slowness(),
            Policy::CountWindow(window) => window.rule().judges_slowness(),
        }
    }

    /// Whether outcomes feed a window (every policy but the consecutive count).
    pub(crate) fn is_window(&self) -> bool {
        !matches!(self, Policy::Consecutive)
    }

    /// An outcome in generation `generation` of a call claimed at `started`, fed
    /// to a window policy; returns whether the window trips. The consecutive
    /// policy counts in the state word instead, and never gets here.
    #[inline(never)]
    pub(crate) fn on_outcome(
        &self,
        generation: u64,
        failed: bool,
        started: u64,
        clock: &ClockSource,
    ) -> bool {
        match self {
            Policy::Consecutive => false,
            Policy::TimeWindow(window) => {
                let now = window.now(clock);
                let outcome = window.rule().outcome(failed, started, now);
                window.record(generation, now, outcome)
            }
            Policy::CountWindow(window) => {
                let outcome = if window.rule().judges_slowness() {
                    window.rule().outcome(failed, started, clock.now())
                } else {
                    window.rule().outcome(failed, 0, 0)
                };
                window.record(generation, outcome)
            }
        }
    }

    /// [`on_outcome`](Self::on_outcome) for a count window, inlined into its
    /// caller; `false` under any other policy.
    #[inline]
    pub(crate) fn on_count_window(
        &self,
        generation: u64,
        failed: bool,
        started: u64,
        clock: &ClockSource,
    ) -> bool {
        let Policy::CountWindow(window) = self else {
            return false;
        };
        let outcome = if window.rule().judges_slowness() {
            window.rule().outcome(failed, started, clock.now())
        } else {
            window.rule().outcome(failed, 0, 0)
        };
        window.record(generation, outcome)
    }

    /// What a window policy's window holds for `generation` now; `None` under
    /// the consecutive policy. Pure; only time windows read `clock`.
    pub(crate) fn window_counts(&self, generation: u64, clock: &ClockSource) -> Option<Counts> {
        match self {
            Policy::Consecutive => None,
            Policy::TimeWindow(window) => Some(window.counts(generation, window.now(clock))),
            Policy::CountWindow(window) => Some(window.counts(generation)),
        }
    }
}
