//! The level above the keys of a keyed group that sets `systemic_share` or
//! `max_open_keys`: a [`Judge`] with the group's own breaker, which every key
//! reports to on its slow path and which opens the whole group as one.
//!
//! The group's breaker runs the group's config and never runs a call while
//! closed: keys report to the judge, on their slow path only. Under the
//! consecutive policy a key reports when it *begins* a failure run (its first
//! failure after a success) and when it *recovers* (a success after failures,
//! or its own probe closing it); the judge counts the keys that began failing
//! while none recovered (one key failing again and again counts once), and
//! opens the group when that count reaches `systemic_share` of the keys it
//! holds (two at least), or `threshold` keys (two at least) while no key of the group
//! succeeded since the first of them began (read from the keys' success
//! counts, a walk over the keys, when a run begins and when it would trip).
//! Under a window policy every outcome of every key reaches the slow path, and
//! each one is the group breaker's too: the group judges the rate over all its
//! keys' calls, whether or not any one key had `min_calls`. A closed key's
//! plain success reports nothing: a group whose keys are healthy costs
//! nothing more.
//!
//! Open, the group's breaker is what [`KeyedGroup::breaker`] hands out for
//! every key: each call is refused with [`OpenReason::Group`], and when the
//! open time has passed, one claim, for whichever key, is the group's probe.
//! The keys' own breakers are left as they were, and resume when the group
//! closes. A group that closes with a ramp (`ramp_ms`) lets its keys back in
//! as one: each lookup of a key takes its share of the group's ramp; one the
//! ramp refuses is handed the group's breaker, which refuses it with
//! [`OpenReason::Ramping`], and one it admits runs on its key's own breaker.
//!
//! [`KeyedGroup::breaker`]: super::KeyedGroup::breaker
//! [`OpenReason::Group`]: crate::OpenReason::Group
//! [`OpenReason::Ramping`]: crate::OpenReason::Ramping

use std::sync::Arc;

use crate::breaker::Breaker;
use crate::clock::ClockSource;
use crate::config::Config;
use crate::events::{Subscribers, TripCause};
use crate::level::{GroupLevel, KeyCounts, KeyOutcome};
use crate::state::State;
use crate::sync::{AtomicU32, AtomicU64, Ordering::*};

/// The group level of a keyed group: its breaker and what it counts of its
/// keys.
pub(crate) struct Judge {
    /// The group's own circuit (see the module docs).
    breaker: Breaker,
    /// Keys the group holds, and those not admitting calls on their own
    /// (reservations for trips under way included): shared with the group's
    /// breaker, which tells them in its transitions.
    keys: Arc<KeyCounts>,
    /// Consecutive policy: keys that began failing while none recovered.
    run: AtomicU32,
    /// The group's successes when the current run began.
    run_successes: AtomicU64,
    /// The successes of every key the group ever held (a walk over them).
    successes: Box<dyn Fn() -> u64 + Send + Sync>,
}

impl Judge {
    /// The judge of the keyed group `group` running `config`, telling its
    /// transitions to `subscribers` (a registry's group).
    pub(crate) fn new(
        group: &'static str,
        config: Config,
        clock: ClockSource,
        subscribers: Option<Arc<Subscribers>>,
        successes: Box<dyn Fn() -> u64 + Send + Sync>,
    ) -> Self {
        let keys = Arc::new(KeyCounts::default());
        Judge {
            breaker: Breaker::group_level(group, config, clock, subscribers, Arc::clone(&keys)),
            keys,
            run: AtomicU32::new(0),
            run_successes: AtomicU64::new(0),
            successes,
        }
    }

    /// The group's breaker.
    #[inline]
    pub(crate) fn breaker(&self) -> &Breaker {
        &self.breaker
    }

    /// Whether the group is open as one (open, half-open or forced open) or
    /// its breaker holds (a hold of the whole group, its own or the
    /// fleet's): its breaker is then what every key's lookup hands out.
    #[inline]
    pub(crate) fn refuses(&self) -> bool {
        !matches!(self.breaker.state(), State::Closed | State::ForcedClosed)
            || self.breaker.held().is_some()
    }

    /// A key was created.
    pub(crate) fn key_created(&self) {
        self.keys.held.fetch_add(1, Relaxed);
    }

    /// A key in `state` left the group.
    pub(crate) fn key_evicted(&self, state: State) {
        self.keys.held.fetch_sub(1, Relaxed);
        if !admits(state) {
            self.keys.open.fetch_sub(1, Relaxed);
        }
    }

    /// The group's keys as it counts them, shared with its keys' breakers.
    pub(crate) fn key_counts(&self) -> Arc<KeyCounts> {
        Arc::clone(&self.keys)
    }

    /// Keys the group holds now.
    pub(crate) fn held(&self) -> usize {
        self.keys.held.load(Relaxed)
    }

    /// Keys not closed on their own now.
    pub(crate) fn open_keys(&self) -> usize {
        self.keys.open.load(Relaxed)
    }

    /// A key began a failure run: the share rule, then the count rule.
    fn began_failing(&self) {
        let failing = self.run.fetch_add(1, Relaxed).saturating_add(1);
        if failing == 1 {
            self.run_successes.store((self.successes)(), Relaxed);
        }
        let config = self.breaker.config();
        if let Some(share) = config.systemic_share() {
            let needed = (share * self.held() as f64).ceil().max(2.0);
            if f64::from(failing) >= needed {
                return self.trip(TripCause::SystemicShare);
            }
        }
        // Never one key alone: that key judges itself.
        let threshold = config.threshold().max(2);
        if failing >= threshold && (self.successes)() == self.run_successes.load(Relaxed) {
            self.trip(TripCause::ConsecutiveFailures);
        }
    }

    fn trip(&self, cause: TripCause) {
        self.run.store(0, Relaxed);
        self.breaker.trip_group(cause);
    }
}

impl GroupLevel for Judge {
    #[cold]
    fn key_outcome(&self, outcome: KeyOutcome, was_failing: bool, windowed: bool) {
        if windowed {
            self.breaker.report(outcome);
            return;
        }
        match (outcome.failed, was_failing) {
            (true, false) => self.began_failing(),
            (false, true) => self.run.store(0, Relaxed),
            _ => {}
        }
    }

    /// Under the consecutive policy each failure of the group's
    /// ([`Scope::Group`](crate::classify::Scope::Group)) counts as a key
    /// beginning to fail; under a window it is a failure of the group
    /// breaker's window.
    #[cold]
    fn group_failure(&self, windowed: bool) {
        if windowed {
            // The call is not timed here: a failure, not a slow one.
            self.breaker.report(KeyOutcome {
                failed: true,
                lasted: 0,
                ended: None,
            });
        } else {
            self.began_failing();
        }
    }

    fn reserve_open(&self) -> bool {
        let Some(share) = self.breaker.config().max_open_keys() else {
            self.keys.open.fetch_add(1, Relaxed);
            return true;
        };
        // At least one key may open on its own, whatever the share.
        let cap = ((share * self.held() as f64) as usize).max(1);
        self.keys
            .open
            .fetch_update(Relaxed, Relaxed, |open| (open < cap).then_some(open + 1))
            .is_ok()
    }

    fn release_open(&self) {
        self.keys.open.fetch_sub(1, Relaxed);
    }

    #[cold]
    fn key_past_cap(&self) {
        self.trip(TripCause::MaxOpenKeys);
    }

    fn key_stopped(&self) {
        self.keys.open.fetch_add(1, Relaxed);
    }

    fn key_resumed(&self, closed: bool) {
        self.keys.open.fetch_sub(1, Relaxed);
        if closed {
            // A key that closes recovered.
            self.run.store(0, Relaxed);
        }
    }
}

/// Whether a breaker in `state` admits calls on its own.
fn admits(state: State) -> bool {
    matches!(state, State::Closed | State::ForcedClosed)
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("state", &self.breaker.state())
            .field("held", &self.held())
            .field("open", &self.open_keys())
            .finish()
    }
}
