//! A hold of the whole keyed group (a provider-wide quota): every key held
//! until one deadline, keys created while it lasts included.

use crate::sync::Ordering::*;
use std::hash::Hash;
use std::time::Duration;

use super::{KeyedGroup, Shared};
use crate::breaker::{hold_deadline, Breaker};
use crate::events::{Event, HoldStarted};
use crate::hold::{round, HoldScope};

impl<K: Hash + Eq + Send + Sync + 'static> KeyedGroup<K> {
    /// Holds every key of the group for `wait`, as [`HoldScope::Group`]: the
    /// server's wait is the whole group's (a provider-wide quota), not one
    /// key's. Capped at the group's `max_hold_ms` with one release spread
    /// drawn for the group (see [the release window](crate::hold#the-release-window)),
    /// the same deadline for every key: the keys held now, and every key
    /// created before it. A key whose own hold ends later keeps it. Each key
    /// held now counts the hold and tells it as an
    /// [`Event::Held`] (to its own subscribers and
    /// the registry's told keys), as [`Breaker::hold`] does; the registry's
    /// subscribers without keys are told the group's hold once. Returns
    /// the time held from now.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::{Config, HoldScope, keyed::KeyedGroup, OpenReason};
    ///
    /// let tenants = KeyedGroup::<String>::new("llm", Config::default(), 1_000);
    /// let _ = tenants.breaker("a");
    /// tenants.hold(Duration::from_secs(30));
    /// for key in ["a", "b"] {
    ///     let refused = tenants.breaker(key).try_acquire().unwrap_err();
    ///     assert_eq!(refused.reason(), OpenReason::Held(HoldScope::Group));
    /// }
    /// assert_eq!(tenants.metrics().held, 2);
    /// ```
    pub fn hold(&self, wait: Duration) -> Duration {
        let shared = &*self.shared;
        let config = *shared.config.lock();
        let writer = shared.writer.lock();
        let now = shared.clock.now();
        let draw = shared.held_until.load(Relaxed);
        let held = hold_deadline(&config, shared.group, &shared.clock, wait, draw);
        let capped = wait > config.max_hold();
        // Rounded as every hold's deadline is kept (see `HoldCell`).
        let until = round(now.saturating_add(held));
        shared.held_until.fetch_max(until, Relaxed);
        drop(writer);
        // The group's own breaker too (a group that judges as one): while it
        // holds, every key's lookup hands it out and refuses, and a group
        // open as one sends no probe before the hold ends.
        if let Some(judge) = &shared.judge {
            judge.breaker().hold_to(until, HoldScope::Group, None);
        }
        // Keys inserted after the store above hold themselves (`hold_new_key`,
        // under the writer lock); every other one is in the map now, and
        // tells its hold as a breaker of its own would.
        for (_, key) in shared.map.pin().iter() {
            key.breaker
                .hold_to(until, HoldScope::Group, Some((wait, capped)));
        }
        // The registry's subscribers without keys (a fleet agent) hear the
        // group's hold once, as one breaker's.
        if let Some(tell) = &shared.tell {
            tell.subscribers.deliver_unkeyed(&Event::Held(HoldStarted {
                group: shared.group,
                scope: HoldScope::Group,
                asked: wait,
                retry_after: Duration::from_nanos(until.saturating_sub(now)),
                capped,
                fleet: false,
            }));
        }
        Duration::from_nanos(until - now)
    }

    /// Releases the group's hold, and every key's (and the group's own
    /// breaker's, when it judges as one), by hand: returns how many keys
    /// were held.
    pub fn release_hold(&self) -> usize {
        let shared = &*self.shared;
        let writer = shared.writer.lock();
        shared.held_until.store(0, Relaxed);
        drop(writer);
        if let Some(judge) = &shared.judge {
            judge.breaker().release_hold();
        }
        shared
            .map
            .pin()
            .iter()
            .filter(|(_, key)| key.breaker.release_hold())
            .count()
    }
}

impl<K> Shared<K> {
    /// Holds a key's new `breaker` until the group's hold ends, if one is in
    /// force. Under the writer lock.
    pub(super) fn hold_new_key(&self, breaker: &Breaker) {
        let until = self.held_until.load(Relaxed);
        if until != 0 && breaker.clock_now() < until {
            breaker.hold_to(until, HoldScope::Group, None);
        }
    }
}
