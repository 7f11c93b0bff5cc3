//! What a registry says once its locks are released, and to whom: the
//! [`Note`]s a locked section leaves, the conflicts it reports, and
//! [`Registry::subscribe`].

use super::reports::Note;
use super::Registry;
use crate::conflict::Conflict;
use crate::events::{Event, Subscription};

impl Registry {
    /// Logs and tells what a locked section left to say. The caller holds no
    /// lock of this registry: a logger or a subscriber may come back into it.
    pub(super) fn say(&self, notes: Vec<Note>) {
        for note in notes {
            match note {
                Note::Conflict(conflict) => self.report(*conflict),
                Note::DeclarationOverride(group, detail) => {
                    log::info!("breaker: group `{group}`: {detail}")
                }
                Note::Refused(group, message) => log::error!(
                    "breaker: group `{group}` keeps its declared config: \
                     the layered configuration refuses it: {message}"
                ),
            }
        }
    }

    /// Records `conflict` once; the first time, logs it and tells the
    /// subscribers, after the conflicts' lock is released. The caller holds no lock.
    pub(crate) fn report(&self, conflict: Conflict) {
        {
            let mut conflicts = self.conflicts.lock();
            if conflicts.contains(&conflict) {
                return;
            }
            conflicts.push(conflict.clone());
        }
        log::warn!("breaker: {conflict}");
        self.subscribers
            .deliver(&Event::Conflict(Box::new(conflict)));
    }

    /// Calls `subscriber` with every transition of every breaker of this
    /// registry (those created later too) and with every [`Conflict`], until the
    /// returned [`Subscription`] is dropped. Calls come after the registry's
    /// and the breakers' locks are released, per breaker in generation order;
    /// a panic is caught and counted. See [`events`](crate::events).
    ///
    /// The breakers of keyed groups are told as
    /// [`Event::KeyedTransition`]s, with their key. Subscribing passes once
    /// over every keyed group's keys, with no lock held, to name those not
    /// named yet (their `Debug` text, kept from then on, and made for each
    /// new key while such a subscriber is listed); a registry with none keeps
    /// no key's text. A subscriber that has no use for keys
    /// ([`subscribe_unkeyed`](Self::subscribe_unkeyed)) costs the keys nothing.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, events::Event, Registry};
    /// use std::sync::{Arc, Mutex};
    ///
    /// let registry = Arc::new(Registry::new());
    /// let log = Arc::new(Mutex::new(Vec::new()));
    /// let (sink, inspect) = (log.clone(), registry.clone());
    /// registry
    ///     .subscribe(move |event: &Event| {
    ///         // Inspecting the registry from a subscriber is fine: no lock is held.
    ///         let groups = inspect.groups().len();
    ///         if let Event::Transition(t) = event {
    ///             sink.lock().unwrap().push(format!("{} -> {} ({groups} groups)", t.from, t.to));
    ///         }
    ///     })
    ///     .detach();
    /// registry.breaker("mail", &Config::default()).force_open();
    /// assert_eq!(log.lock().unwrap()[..], ["closed -> forced_open (1 groups)"]);
    /// ```
    pub fn subscribe<F>(&self, subscriber: F) -> Subscription
    where
        F: Fn(&Event) + Send + Sync + 'static,
    {
        let subscription = self.subscribers.add(Box::new(subscriber), true);
        // Listed first: a key created from here on is named as it is created.
        for (_, keyed) in self.keyed_groups().all() {
            keyed.name_keys();
        }
        subscription
    }

    /// As [`subscribe`](Self::subscribe), without the keyed groups'
    /// transitions: `subscriber` is told the transitions of the registry's
    /// unkeyed breakers and its conflicts, and keys are not named for it
    /// (what a fleet agent, which shares whole groups, subscribes with). A
    /// keyed group's hold of every key ([`KeyedGroup::hold`](crate::KeyedGroup::hold))
    /// reaches it once, as the group's, never once per key.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, events::Event, Registry};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let registry = Registry::new();
    /// let told = Arc::new(AtomicUsize::new(0));
    /// let count = told.clone();
    /// let _subscription = registry.subscribe_unkeyed(move |_: &Event| {
    ///     count.fetch_add(1, Ordering::Relaxed);
    /// });
    /// registry.keyed::<u64>("tenants", &Config::default(), 100).unwrap().breaker(&7).force_open();
    /// registry.breaker("mail", &Config::default()).force_open();
    /// assert_eq!(told.load(Ordering::Relaxed), 1); // the mail breaker's
    /// ```
    pub fn subscribe_unkeyed<F>(&self, subscriber: F) -> Subscription
    where
        F: Fn(&Event) + Send + Sync + 'static,
    {
        self.subscribers.add(Box::new(subscriber), false)
    }

    /// The registry's clock now, in nanoseconds from the clock's origin: the
    /// time its breakers read (the monotonic clock, or the [`Clock`] given to
    /// [`with_clock`](Self::with_clock), a [`ManualClock`] in tests). For a
    /// subscriber that keeps when events came on the breakers' own time. Pure.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{ManualClock, Registry};
    /// use std::time::Duration;
    ///
    /// let clock = ManualClock::new();
    /// let registry = Registry::with_clock(clock.clone());
    /// let before = registry.clock_nanos();
    /// clock.advance(Duration::from_secs(2));
    /// assert_eq!(registry.clock_nanos() - before, 2_000_000_000);
    /// ```
    ///
    /// [`Clock`]: crate::Clock
    /// [`ManualClock`]: crate::ManualClock
    pub fn clock_nanos(&self) -> u64 {
        self.clock_source().now()
    }
}
