//! What every window policy shares: the [`Rule`] that says when a window trips and
//! which calls are slow, the [`Outcome`] it records and the [`Counts`] it holds.
//!
//! Both windows count outcomes per generation: a transition starts a new
//! generation, so every window starts empty after it without a sweep, and a late
//! outcome of an older generation is dropped instead of leaking into the new one.

use crate::clock::millis_to_nanos;
use crate::config::RateThresholds;
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
/// slowness is judged at all is fixed: claims time calls only when it is.
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
}

impl Rule {
    pub(crate) fn new(rates: &RateThresholds) -> Self {
        Rule {
            failure_rate: AtomicU64::new(rates.failure_rate.to_bits()),
            min_calls: AtomicU64::new(u64::from(rates.min_calls)),
            slow_nanos: AtomicU64::new(rates.slow_call_ms.map_or(0, millis_to_nanos)),
            slow: rates.slow_call_ms.is_some(),
            slow_call_rate: AtomicU64::new(rates.slow_call_rate.to_bits()),
        }
    }

    /// Takes the numbers of `rates` from the next outcome on. Whether slowness
    /// is judged stays as built (a live reconfiguration refuses to change it).
    pub(crate) fn retune(&self, rates: &RateThresholds) {
        self.failure_rate
            .store(rates.failure_rate.to_bits(), Relaxed);
        self.min_calls.store(u64::from(rates.min_calls), Relaxed);
        if let Some(ms) = rates.slow_call_ms {
            self.slow_nanos.store(millis_to_nanos(ms), Relaxed);
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

    /// The outcome of a call claimed at `started` and settled at `now`. A clock
    /// that stepped back makes the call take zero time.
    #[inline]
    pub(crate) fn outcome(&self, failed: bool, started: u64, now: u64) -> Outcome {
        let slow = self.slow && now.saturating_sub(started) > self.slow_nanos.load(Relaxed);
        Outcome { failed, slow }
    }

    /// Whether a window without failures and slow calls can trip: what
    /// [`trips`](Self::trips) says of rates of zero, true only of a rate of
    /// zero, which the config never validates.
    pub(crate) fn trips_without_failures(&self) -> bool {
        0.0 >= self.failure_rate() || (self.slow && 0.0 >= self.slow_call_rate())
    }

    /// Whether a window holding `counts` trips.
    #[inline]
    pub(crate) fn trips(&self, counts: Counts) -> bool {
        if counts.calls == 0 || counts.calls < self.min_calls.load(Relaxed) {
            return false;
        }
        let calls = counts.calls as f64;
        counts.failures as f64 / calls >= self.failure_rate()
            || (self.slow && counts.slow as f64 / calls >= self.slow_call_rate())
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
