//! The failure policies that decide, in the closed state, when to trip: the
//! consecutive count here, the rate windows in [`crate::window`].
//!
//! A policy's memory is tagged with the generation it counts for, so a transition
//! resets it without a write and a late outcome from an earlier generation can
//! never leak into the count of a newer one.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::clock::ClockSource;
use crate::config::{Config, FailurePolicy};
use crate::state::GEN_MASK;
use crate::window::{CountWindow, Counts, Rule, TimeWindow};

const COUNT_BITS: u32 = 24;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const TAG_MASK: u64 = GEN_MASK & (u64::MAX >> COUNT_BITS);

#[derive(Debug)]
pub(crate) enum Policy {
    /// Consecutive failures in the low 24 bits, the generation they count for above.
    Consecutive { threshold: u32, word: AtomicU64 },
    /// Failure and slow-call rates over the last `window_ms`. Boxed: its buckets
    /// are written on every outcome and must not share a line with the state word.
    TimeWindow(Box<TimeWindow>),
    /// Failure and slow-call rates over the last `window_calls` outcomes.
    CountWindow(Box<CountWindow>),
}

impl Policy {
    pub(crate) fn new(config: &Config) -> Self {
        match config.policy() {
            FailurePolicy::Consecutive { threshold } => Policy::Consecutive {
                threshold,
                word: AtomicU64::new(0),
            },
            FailurePolicy::TimeWindow { window_ms, rates } => {
                Policy::TimeWindow(Box::new(TimeWindow::new(window_ms, Rule::new(&rates))))
            }
            FailurePolicy::CountWindow {
                window_calls,
                rates,
            } => Policy::CountWindow(Box::new(CountWindow::new(window_calls, Rule::new(&rates)))),
            // `FailurePolicy` is non-exhaustive only for users of the crate.
        }
    }

    /// Whether claims must read the clock: only to time calls for slow-call
    /// judging. (A time window reads the clock at the verdict, and only then.)
    #[inline]
    pub(crate) fn needs_clock(&self) -> bool {
        match self {
            Policy::Consecutive { .. } => false,
            Policy::TimeWindow(window) => window.rule().judges_slowness(),
            Policy::CountWindow(window) => window.rule().judges_slowness(),
        }
    }

    /// A success in generation `generation`, of a call claimed at `started`;
    /// returns whether the policy trips. Only window policies read `clock`.
    #[inline]
    pub(crate) fn on_success(&self, generation: u64, started: u64, clock: &ClockSource) -> bool {
        match self {
            Policy::Consecutive { word, .. } => {
                let current = word.load(Relaxed);
                // Reading is free for every thread; write only when there is a
                // count to clear, so successes never contend on this line.
                if current & COUNT_MASK != 0 && tag(current) == tag_of(generation) {
                    clear_count(word, current, generation);
                }
                false
            }
            _ => self.on_outcome(generation, false, started, clock),
        }
    }

    /// A failure in generation `generation`, of a call claimed at `started`;
    /// returns whether the policy trips.
    pub(crate) fn on_failure(&self, generation: u64, started: u64, clock: &ClockSource) -> bool {
        match self {
            Policy::Consecutive { threshold, word } => {
                let mine = tag_of(generation);
                let mut current = word.load(Relaxed);
                loop {
                    let count = match tag(current) {
                        t if t == mine => current & COUNT_MASK,
                        t if is_newer(t, mine) => return false,
                        _ => 0,
                    };
                    let next = (count + 1).min(COUNT_MASK);
                    match word.compare_exchange_weak(
                        current,
                        pack(generation, next),
                        Relaxed,
                        Relaxed,
                    ) {
                        Ok(_) => return next >= u64::from(*threshold),
                        Err(seen) => current = seen,
                    }
                }
            }
            _ => self.on_outcome(generation, true, started, clock),
        }
    }

    /// An outcome fed to a window policy.
    #[inline(never)]
    fn on_outcome(&self, generation: u64, failed: bool, started: u64, clock: &ClockSource) -> bool {
        match self {
            Policy::Consecutive { .. } => false,
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

    /// What a window policy's window holds for `generation` now; `None` under
    /// the consecutive policy. Pure; only time windows read `clock`.
    pub(crate) fn window_counts(&self, generation: u64, clock: &ClockSource) -> Option<Counts> {
        match self {
            Policy::Consecutive { .. } => None,
            Policy::TimeWindow(window) => Some(window.counts(generation, window.now(clock))),
            Policy::CountWindow(window) => Some(window.counts(generation)),
        }
    }

    /// Consecutive failures counted in `generation` so far.
    pub(crate) fn consecutive_failures(&self, generation: u64) -> u32 {
        match self {
            Policy::Consecutive { word, .. } => {
                let current = word.load(Relaxed);
                if tag(current) == tag_of(generation) {
                    (current & COUNT_MASK) as u32
                } else {
                    0
                }
            }
            Policy::TimeWindow(_) | Policy::CountWindow(_) => 0,
        }
    }
}

/// Resets a consecutive count of `generation` to zero. A failure racing in is
/// either cleared too (it came first) or counted after this reset: never left
/// over from before it. Out of line: the common success finds nothing to clear.
#[cold]
#[inline(never)]
fn clear_count(word: &AtomicU64, mut current: u64, generation: u64) {
    while current & COUNT_MASK != 0 && tag(current) == tag_of(generation) {
        match word.compare_exchange_weak(current, pack(generation, 0), Relaxed, Relaxed) {
            Ok(_) => return,
            Err(seen) => current = seen,
        }
    }
}

fn tag_of(generation: u64) -> u64 {
    generation & TAG_MASK
}

fn tag(word: u64) -> u64 {
    word >> COUNT_BITS
}

fn pack(generation: u64, count: u64) -> u64 {
    (tag_of(generation) << COUNT_BITS) | count
}

/// Whether tag `a` is a later generation than `b`, modulo the tag's width.
fn is_newer(a: u64, b: u64) -> bool {
    let distance = a.wrapping_sub(b) & TAG_MASK;
    distance != 0 && distance <= TAG_MASK / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(p: &Policy, generation: u64) -> bool {
        p.on_failure(generation, 0, &ClockSource::Monotonic)
    }

    fn consecutive(threshold: u32) -> Policy {
        Policy::new(&Config::builder().threshold(threshold).build().unwrap())
    }

    #[test]
    fn the_nth_consecutive_failure_trips_and_a_success_resets() {
        let p = consecutive(3);
        assert!(!fail(&p, 0));
        assert!(!fail(&p, 0));
        assert!(!p.on_success(0, 0, &ClockSource::Monotonic));
        assert_eq!(p.consecutive_failures(0), 0);
        assert!(!fail(&p, 0));
        assert!(!fail(&p, 0));
        assert!(fail(&p, 0));
    }

    #[test]
    fn a_new_generation_starts_from_zero_and_ignores_older_failures() {
        let p = consecutive(2);
        assert!(!fail(&p, 4));
        assert_eq!(p.consecutive_failures(5), 0);
        assert!(!fail(&p, 5));
        // A late failure of generation 4 neither counts nor trips.
        assert!(!fail(&p, 4));
        assert_eq!(p.consecutive_failures(5), 1);
    }

    #[test]
    fn the_count_saturates_at_its_width() {
        let p = consecutive(crate::config::MAX_THRESHOLD);
        if let Policy::Consecutive { word, .. } = &p {
            word.store(pack(1, COUNT_MASK), Relaxed);
        }
        assert!(fail(&p, 1));
        assert_eq!(p.consecutive_failures(1), COUNT_MASK as u32);
    }
}
