//! What every window policy shares: the [`Rule`] that says when a window trips,
//! which calls are slow and which rule tripped, the [`Outcome`] it records and
//! the [`Counts`] it holds.
//!
//! Both windows count outcomes per generation: a transition starts a new
//! generation, so every window starts empty after it without a sweep, and a late
//! outcome of an older generation is dropped instead of leaking into the new one.

use std::time::Duration;

use crate::clock::{duration_to_nanos, millis_to_nanos};
use crate::config::{Config, RateThresholds};
use crate::events::TripCause;
use crate::state::GEN_MASK;
use crate::sync::{AtomicU64, Ordering::Relaxed};

/// What a window holds: outcomes recorded, failures and slow calls among them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) calls: u64,
    pub(crate) failures: u64,
    pub(crate) slow: u64,
}

/// One outcome as a window records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub(crate) failed: bool,
    pub(crate) slow: bool,
}

/// When a window trips, and which calls are slow.
///
/// The numbers are tunable while the window runs ([`retune`](Self::retune)):
/// each is its own relaxed atomic, read where a verdict needs it, so a change
/// judges from the next outcome and what the window counted stays. Whether
/// slowness is judged at all, and by which rule, is fixed: claims time calls
/// only when it is.
///
/// The slow-call rule comes from `slow_call_ms` and `slow_call_rate` (trips
/// when at least that share of the calls is slow), or from `latency_p99_ms`
/// (the config refuses both): a window's p99 latency by nearest rank is above
/// `X` exactly when more than 1% of its calls are slower than `X`, so
/// `latency_p99_ms = X` is the slow-call rule at `X` tripping on a share
/// above 0.01, and its trips are [`TripCause::LatencyP99`].
#[derive(Debug)]
pub(crate) struct Rule {
    /// `f64` bits.
    failure_rate: AtomicU64,
    min_calls: AtomicU64,
    /// Calls longer than this many nanos are slow (read only when `slow`).
    slow_nanos: AtomicU64,
    /// Whether slowness is judged.
    slow: bool,
    /// `f64` bits.
    slow_call_rate: AtomicU64,
    /// Whether the slow-call rule is the p99 rule (`latency_p99_ms`): more
    /// than 1% of the calls slow, whatever `slow_call_rate` holds.
    p99: bool,
}

impl Rule {
    /// The rule of `rates`, with the p99 rule at `latency_p99` if that is set.
    pub(crate) fn new(rates: &RateThresholds, latency_p99: Option<Duration>) -> Self {
        let slow_nanos = match latency_p99 {
            Some(bound) => duration_to_nanos(bound),
            None => rates.slow_call_ms.map_or(0, millis_to_nanos),
        };
        Rule {
            failure_rate: AtomicU64::new(rates.failure_rate.to_bits()),
            min_calls: AtomicU64::new(u64::from(rates.min_calls)),
            slow_nanos: AtomicU64::new(slow_nanos),
            slow: rates.slow_call_ms.is_some() || latency_p99.is_some(),
            slow_call_rate: AtomicU64::new(rates.slow_call_rate.to_bits()),
            p99: latency_p99.is_some(),
        }
    }

    /// A rule that never trips: a window kept only to be read (the adaptive
    /// throttle's requests and accepts). No failure rate reaches 2.0, and no
    /// window holds `u64::MAX` outcomes.
    pub(crate) fn never_trips() -> Self {
        Rule {
            failure_rate: AtomicU64::new(2.0f64.to_bits()),
            min_calls: AtomicU64::new(u64::MAX),
            slow_nanos: AtomicU64::new(0),
            slow: false,
            slow_call_rate: AtomicU64::new(2.0f64.to_bits()),
            p99: false,
        }
    }

    /// Takes the numbers of `config` from the next outcome on. Whether
    /// slowness is judged, and by which rule, stays as built (a live
    /// reconfiguration refuses to change it).
    pub(crate) fn retune(&self, config: &Config) {
        let Some(rates) = config.rates() else {
            return;
        };
        self.failure_rate
            .store(rates.failure_rate.to_bits(), Relaxed);
        self.min_calls.store(u64::from(rates.min_calls), Relaxed);
        let slow_nanos = match config.latency_p99() {
            Some(bound) => Some(duration_to_nanos(bound)),
            None => rates.slow_call_ms.map(millis_to_nanos),
        };
        if let Some(nanos) = slow_nanos {
            self.slow_nanos.store(nanos, Relaxed);
        }
        self.slow_call_rate
            .store(rates.slow_call_rate.to_bits(), Relaxed);
    }

    fn failure_rate(&self) -> f64 {
        f64::from_bits(self.failure_rate.load(Relaxed))
    }

    fn slow_call_rate(&self) -> f64 {
        f64::from_bits(self.slow_call_rate.load(Relaxed))
    }

    /// Whether verdicts need the call's duration.
    pub(crate) fn judges_slowness(&self) -> bool {
        self.slow
    }

    /// The outcome of a call that `lasted` nanos: slow when longer than the
    /// slow-call bound (a call of exactly the bound is not).
    #[inline]
    pub(crate) fn outcome(&self, failed: bool, lasted: u64) -> Outcome {
        let slow = self.slow && lasted > self.slow_nanos.load(Relaxed);
        Outcome { failed, slow }
    }

    /// Whether a window without failures and slow calls can trip: what
    /// [`trips`](Self::trips) says of rates of zero, true only of a rate of
    /// zero, which the config never validates.
    pub(crate) fn trips_without_failures(&self) -> bool {
        0.0 >= self.failure_rate() || (self.slow && !self.p99 && 0.0 >= self.slow_call_rate())
    }

    /// Whether a window holding `counts` trips.
    #[inline]
    pub(crate) fn trips(&self, counts: Counts) -> bool {
        if counts.calls == 0 || counts.calls < self.min_calls.load(Relaxed) {
            return false;
        }
        let calls = counts.calls as f64;
        counts.failures as f64 / calls >= self.failure_rate()
            || (self.slow && self.slow_trips(counts))
    }

    /// Whether the slow calls of `counts` (at least one call) trip the
    /// slow-call rule.
    fn slow_trips(&self, counts: Counts) -> bool {
        if self.p99 {
            // The p99 by nearest rank (the `ceil(0.99 n)`-th smallest) is
            // above the bound exactly when more than `n / 100` calls are.
            counts.slow.saturating_mul(100) > counts.calls
        } else {
            counts.slow as f64 / counts.calls as f64 >= self.slow_call_rate()
        }
    }

    /// Which rule tripped a window that tripped, holding what `counts` reads:
    /// the failure rate when it is at its threshold (or the window has no
    /// other rule; then nothing is read), else the slow-call rule. Read before
    /// the trip empties the window.
    #[cold]
    pub(crate) fn cause(&self, counts: impl FnOnce() -> Counts) -> TripCause {
        if !self.slow {
            return TripCause::FailureRate;
        }
        let c = counts();
        if c.calls == 0 || c.failures as f64 >= self.failure_rate() * c.calls as f64 {
            TripCause::FailureRate
        } else if self.p99 {
            TripCause::LatencyP99
        } else {
            TripCause::SlowCallRate
        }
    }
}

/// Whether generation `a` is later than `b`, modulo the generation's width.
pub(crate) fn is_later_generation(a: u64, b: u64) -> bool {
    let distance = a.wrapping_sub(b) & GEN_MASK;
    distance != 0 && distance <= GEN_MASK / 2
}

/// Rules and outcomes the window unit tests share.
#[cfg(test)]
pub(super) mod fixtures {
    use super::*;

    pub(crate) fn rule(rate: f64, min_calls: u32, slow_ms: Option<u64>, slow_rate: f64) -> Rule {
        // Built field by field: a test may hold a rule no config allows (a
        // rate above 1.0 never trips).
        Rule {
            failure_rate: AtomicU64::new(rate.to_bits()),
            min_calls: AtomicU64::new(u64::from(min_calls)),
            slow_nanos: AtomicU64::new(slow_ms.map_or(0, millis_to_nanos)),
            slow: slow_ms.is_some(),
            slow_call_rate: AtomicU64::new(slow_rate.to_bits()),
            p99: false,
        }
    }

    pub(crate) const FAIL: Outcome = Outcome {
        failed: true,
        slow: false,
    };
    pub(crate) const OK: Outcome = Outcome {
        failed: false,
        slow: false,
    };
}
