//! Creating a key's breaker, and naming keys for the registry's subscribers.
//!
//! **The invariant kept here: every inserted key is named, or the subscribe
//! walk sees it.** While the registry has a subscriber told keyed transitions,
//! each new key's breaker is named (its text made with no lock held) before it
//! is inserted under the writer lock; `create` checks, under that lock, that
//! the breaker is named if a subscriber wants keys, and goes round again if
//! not. `Registry::subscribe` lists its subscriber first, then calls
//! `name_keys`, which takes the writer lock once as a barrier and walks the
//! map: a key inserted before the barrier is in the map for the walk, and one
//! inserted after it saw the subscriber under the lock and was named first.
//! So no key's transitions reach such a subscriber unnamed.

use crate::sync::Ordering::*;
use std::borrow::Borrow;
use std::collections::hash_map::DefaultHasher;
use std::hash::{BuildHasher, BuildHasherDefault, Hash};
use std::sync::Arc;

use papaya::Guard;

use super::handshake::Mark;
use super::{Key, KeyedGroup, Shared};
use crate::breaker::Breaker;
use crate::config::Config;
use crate::events::Subscribers;

impl<K> Shared<K> {
    /// A breaker for a new key whose hash is `salt`, running `config`,
    /// counting its call durations in the group's histogram and its retries
    /// in the group's budget (and reporting to the group level the slot holds).
    fn new_breaker(&self, config: Config, salt: u32) -> Breaker {
        let histogram = self.histogram.clone();
        let retry = Some(Arc::clone(&self.retry));
        Breaker::from_parts_sharing(
            self.group,
            config,
            self.clock.clone(),
            None,
            histogram,
            retry,
            salt,
        )
    }
}

/// A registry's subscribers, and how its keyed group writes a key for them.
pub(crate) struct Tell<K> {
    pub(crate) subscribers: Arc<Subscribers>,
    /// [`key_text`](super::key_text()), which needs `K: Debug`: `Registry::keyed` asks for it, a
    /// standalone group does not.
    pub(crate) name: fn(&K) -> Arc<str>,
}

impl<K: Hash + Eq + Send + Sync + 'static> KeyedGroup<K> {
    /// A key not found (or found being evicted): under the writer lock, found
    /// again or created, after a sweep if the group is full.
    #[cold]
    pub(super) fn create<Q>(&self, key: &Q, owned: impl FnOnce(&Q) -> K) -> Breaker
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let shared = &*self.shared;
        // Built before the writer lock, which every new key of the group
        // takes in turn: only the map's work is done under it.
        let owned = owned(key);
        // Each key's opens draw their own jitter: keys that trip together
        // (one outage behind them all) do not probe in step.
        let salt = BuildHasherDefault::<DefaultHasher>::default().hash_one(&owned) as u32;
        let mut config = *shared.config.lock();
        let mut breaker = shared.new_breaker(config, salt);
        loop {
            // Named with no lock held: the key's text is the user's `Debug`.
            shared.name_key(&breaker, &owned);
            #[cfg(all(test, not(loom)))]
            super::tests::before_the_writer_lock();
            let _writer = shared.writer.lock();
            let guard = shared.map.guard();
            if let Some(found) = self.held(key, &guard, true) {
                return found;
            }
            let now = *shared.config.lock();
            if now != config {
                // Reconfigured since: build it as the other keys now run.
                config = now;
                breaker = shared.new_breaker(now, salt);
            }
            if shared.must_name(&breaker) {
                // A subscriber came since (or the breaker is new): name it
                // with the lock released. Seen under the lock, so a
                // subscription whose walk this key's insertion would miss
                // (`name_keys`) is always seen here.
                continue;
            }
            let keys = shared.keys.load(Relaxed);
            if keys >= shared.key_capacity && shared.may_sweep(keys) {
                self.sweep(&guard);
            }
            return self.insert(owned, breaker, &guard);
        }
    }

    /// Inserts the new key `owned`, the writer lock held.
    fn insert(&self, owned: K, breaker: Breaker, guard: &impl Guard) -> Breaker {
        let shared = &*self.shared;
        let replaced = shared.map.insert(
            owned,
            Key {
                breaker: breaker.clone(),
                mark: Mark::new(),
            },
            guard,
        );
        debug_assert!(replaced.is_none(), "a key is created under the writer lock");
        shared.keys.fetch_add(1, Relaxed);
        if let Some(judge) = &shared.judge {
            judge.key_created();
        }
        shared.hold_new_key(&breaker);
        breaker
    }

    /// `key`'s breaker, the writer lock held: no sweep is evicting it.
    pub(super) fn held<Q>(&self, key: &Q, guard: &impl Guard, touch: bool) -> Option<Breaker>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let entry = self.shared.map.get(key, guard)?;
        let breaker = entry.handle(touch);
        debug_assert!(breaker.is_some(), "a sweep ends under the writer lock");
        breaker
    }
}

impl<K: Hash + Eq> Shared<K> {
    /// Names `breaker` as `key`'s if the registry has a subscriber told keyed
    /// transitions (see `tell`). Runs the key's `Debug`: never under a lock.
    fn name_key(&self, breaker: &Breaker, key: &K) {
        if let Some(tell) = &self.tell {
            if tell.subscribers.wants_keys() {
                breaker.name_key(|| (tell.name)(key), &tell.subscribers);
            }
        }
    }

    /// Whether `breaker` is to be named and is not.
    fn must_name(&self, breaker: &Breaker) -> bool {
        self.tell
            .as_ref()
            .is_some_and(|tell| tell.subscribers.wants_keys())
            && !breaker.is_named()
    }

    /// Names every key's breaker; `Registry::subscribe` calls this once its
    /// subscriber is listed.
    pub(super) fn name_keys(&self) {
        if self.tell.is_none() {
            return;
        }
        // The writer lock as a barrier, held for no work: a key inserted
        // before it is in the map for the walk below, and one inserted after
        // it saw the subscriber and was named first (`create`). The walk
        // itself runs each key's `Debug` with no lock held.
        drop(self.writer.lock());
        for (key, entry) in self.map.pin().iter() {
            self.name_key(&entry.breaker, key);
        }
    }
}
