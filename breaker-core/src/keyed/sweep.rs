//! The eviction sweep: which keys go when a new key would pass `key_capacity`
//! (see the module docs of `keyed` for the rule), and when a sweep runs.

use crate::sync::Ordering::*;
use std::hash::Hash;

use papaya::Guard;

use super::{Key, KeyedGroup, Shared};
use crate::state::State;

impl<K: Hash + Eq + Send + Sync + 'static> KeyedGroup<K> {
    /// Evicts idle, closed keys until the group is a sixteenth below `key_capacity`,
    /// or every key was passed twice (once to take back its second chance). The
    /// writer lock is held.
    pub(super) fn sweep(&self, guard: &impl Guard) {
        let shared = &*self.shared;
        let target = shared.key_capacity - shared.key_capacity / 16 - 1;
        let map = &shared.map;
        // Held across the sweep, as in `metrics`: a reader never sees a key gone
        // from the map and not yet in the sums, so the group's counts never go
        // down.
        let mut evicted_sums = shared.evicted.lock();
        let mut freed = 0;
        let len = map.len();
        let start = shared.hand.load(Relaxed) % len.max(1);
        // From the hand round to it, twice: the first pass takes back second
        // chances the second may then use.
        let passes = map
            .iter(guard)
            .skip(start)
            .chain(map.iter(guard))
            .chain(map.iter(guard).take(start));
        let mut passed = 0;
        for (key, entry) in passes {
            if shared.keys.load(Relaxed) <= target {
                break;
            }
            passed += 1;
            if entry.mark.spare() || entry.breaker.handles() != 1 {
                continue;
            }
            let Some(evicting) = entry
                .mark
                .evict(|| entry.breaker.handles(), || entry.state_evictable())
            else {
                continue;
            };
            // Each eviction is booked whole before the next: the user's clock,
            // `Hash` or `Eq` may panic in the fold or the removal, and then
            // the entry stays (see `Evicting`) and nothing is counted twice
            // or lost.
            let counts = entry.breaker.metrics();
            map.remove(key, guard);
            evicting.done();
            if let Some(judge) = &shared.judge {
                judge.key_evicted(counts.state);
            }
            evicted_sums.add(&counts);
            shared.keys.fetch_sub(1, Relaxed);
            shared.evictions.fetch_add(1, Relaxed);
            freed += 1;
        }
        shared.hand.store((start + passed) % len.max(1), Relaxed);
        drop(evicted_sums);
        if freed == 0 {
            shared.futile_at.store(shared.clock.now(), Relaxed);
            shared
                .futile
                .store(shared.keys.load(Relaxed).max(1), Relaxed);
        } else {
            shared.futile.store(0, Relaxed);
        }
    }
}

impl<K> Shared<K> {
    /// Whether a new key, the group holding `keys`, sweeps: always, unless the
    /// last sweep freed nothing; then once the group has grown a sixteenth past
    /// what it left (so sweeps that find nothing cost each new key a sixteenth
    /// of a sweep at most), or an open duration later.
    pub(super) fn may_sweep(&self, keys: usize) -> bool {
        match self.futile.load(Relaxed) {
            0 => true,
            left => {
                keys >= left.saturating_add((left / 16).max(1))
                    || self.clock.reached(
                        (self.futile_at.load(Relaxed))
                            .saturating_add(self.config.lock().open_nanos()),
                    )
            }
        }
    }
}

impl Key {
    /// Closed and not ramping; or open or half-open with nothing to guard for a while (see
    /// `Breaker::idle_past_open`). Read by a sweep once it knows no handle but
    /// the map's exists and none can be taken (see `handshake`).
    ///
    /// An open key is kept while its open time runs, so a host that is down
    /// stays refused; a half-open key while a probe holds its slot. Past
    /// that, its next call would only be a probe; a key that no call has come
    /// for during another open duration (a crawler's dead host, say, or one
    /// whose probe was cancelled) may go, or the keys that once failed would
    /// pin the group's memory for ever.
    ///
    /// A held key is kept while its hold runs: its next call must be refused.
    pub(super) fn state_evictable(&self) -> bool {
        if self.breaker.held().is_some() {
            return false;
        }
        match self.breaker.state() {
            State::Closed => !self.breaker.ramp_running(),
            State::Open | State::HalfOpen => self.breaker.idle_past_open(),
            State::ForcedOpen | State::ForcedClosed => false,
        }
    }
}
