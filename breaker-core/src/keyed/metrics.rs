//! What a keyed group reports: [`KeyedMetrics`], its keys' counts summed with
//! those of the keys it evicted (`Folded`).

use std::hash::Hash;
use std::sync::atomic::Ordering::Relaxed;

use super::Shared;
use crate::metrics::Metrics;
use crate::state::State;

/// Counts of evicted breakers, kept so the group's sums never go down.
#[derive(Clone, Copy, Default)]
pub(super) struct Folded {
    calls: u64,
    successes: u64,
    failures: u64,
    ignored: u64,
    rejected: u64,
    abandoned: u64,
    stale: u64,
    times_opened: u64,
}

impl Folded {
    pub(super) fn add(&mut self, m: &Metrics) {
        self.merge(&Folded {
            calls: m.calls,
            successes: m.successes,
            failures: m.failures,
            ignored: m.ignored,
            rejected: m.rejected,
            abandoned: m.abandoned,
            stale: m.stale,
            times_opened: m.times_opened,
        });
    }

    pub(super) fn merge(&mut self, f: &Folded) {
        for (sum, n) in [
            (&mut self.calls, f.calls),
            (&mut self.successes, f.successes),
            (&mut self.failures, f.failures),
            (&mut self.ignored, f.ignored),
            (&mut self.rejected, f.rejected),
            (&mut self.abandoned, f.abandoned),
            (&mut self.stale, f.stale),
            (&mut self.times_opened, f.times_opened),
        ] {
            *sum = sum.saturating_add(n);
        }
    }
}

/// What a keyed group did: its keys' counts summed (evicted keys included) and
/// how many keys it holds in each state. Taking it changes nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeyedMetrics {
    /// The group.
    pub group: &'static str,
    /// Keys held now.
    pub keys: usize,
    /// The most idle keys the group holds (see [`KeyedGroup`](crate::KeyedGroup)).
    pub max_keys: usize,
    /// Keys held now that are open (forced open included).
    pub open: usize,
    /// Keys held now that are half-open.
    pub half_open: usize,
    /// Breakers evicted so far.
    pub evictions: u64,
    /// As [`Metrics::calls`], summed over every key the group ever held.
    pub calls: u64,
    /// As [`Metrics::successes`], summed likewise.
    pub successes: u64,
    /// As [`Metrics::failures`], summed likewise.
    pub failures: u64,
    /// As [`Metrics::ignored`], summed likewise.
    pub ignored: u64,
    /// As [`Metrics::rejected`], summed likewise.
    pub rejected: u64,
    /// As [`Metrics::abandoned`], summed likewise.
    pub abandoned: u64,
    /// As [`Metrics::stale`], summed likewise.
    pub stale: u64,
    /// As [`Metrics::times_opened`], summed likewise.
    pub times_opened: u64,
}

impl<K: Hash + Eq> Shared<K> {
    /// See [`KeyedGroup::metrics`](crate::KeyedGroup::metrics).
    pub(super) fn metrics(&self) -> KeyedMetrics {
        let shared = self;
        // Held across the scan (see `sweep`): an eviction is seen either in the
        // map or in the sums, never in neither. Calls take no part in it.
        let evicted = shared.evicted.lock();
        let mut sums = *evicted;
        let (mut keys, mut open, mut half_open) = (0, 0, 0);
        for (_, entry) in shared.map.pin().iter() {
            let m = entry.breaker.metrics();
            keys += 1;
            match m.state {
                State::Open | State::ForcedOpen => open += 1,
                State::HalfOpen => half_open += 1,
                State::Closed | State::ForcedClosed => {}
            }
            sums.add(&m);
        }
        drop(evicted);
        KeyedMetrics {
            group: shared.group,
            keys,
            max_keys: shared.max_keys,
            open,
            half_open,
            evictions: shared.evictions.load(Relaxed),
            calls: sums.calls,
            successes: sums.successes,
            failures: sums.failures,
            ignored: sums.ignored,
            rejected: sums.rejected,
            abandoned: sums.abandoned,
            stale: sums.stale,
            times_opened: sums.times_opened,
        }
    }
}
