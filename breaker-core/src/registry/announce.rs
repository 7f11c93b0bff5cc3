//! What a registry says once its locks are released: conflicts, values layered
//! configuration took away, a refused composition; and layering itself.

use std::sync::Arc;

use super::{LayerError, Overridden, Reconfigured, Registry, Resolver};
use crate::conflict::Conflict;
use crate::events::{Event, Subscription};

/// What a section under the registry's locks leaves to say once they are
/// released (see [`Registry::announce`]).
pub(super) enum Note {
    Conflict(Box<Conflict>),
    Overridden(&'static str, String),
    Refused(&'static str, String),
}

impl Registry {
    /// Records what layered configuration took from `group`'s declaration; the
    /// log lines go to `notes`, for after the locks.
    pub(super) fn overridden(
        &self,
        group: &'static str,
        details: Vec<String>,
        notes: &mut Vec<Note>,
    ) {
        let mut overrides = self.overrides.lock();
        for detail in details {
            overrides.push(Overridden {
                group,
                detail: detail.clone(),
            });
            notes.push(Note::Overridden(group, detail));
        }
    }

    /// Logs and tells what a locked section left to say. The caller holds no
    /// lock of this registry: a logger or a subscriber may come back into it.
    pub(super) fn announce(&self, notes: Vec<Note>) {
        for note in notes {
            match note {
                Note::Conflict(conflict) => self.report(*conflict),
                Note::Overridden(group, detail) => log::info!("breaker: group `{group}`: {detail}"),
                Note::Refused(group, message) => log::error!(
                    "breaker: group `{group}` keeps its declared config: \
                     the layered configuration refuses it: {message}"
                ),
            }
        }
    }

    /// Layers `resolver` over every group's declaration: every live breaker is
    /// [reconfigured](crate::Breaker::reconfigure) at once, keeping its state,
    /// and so is every keyed group, its keys held and to come
    /// ([`KeyedGroup::reconfigure`](crate::KeyedGroup::reconfigure)); every
    /// group created later is built through it. Replaces the resolver of an
    /// earlier call, and the [`overrides`](Self::overrides) it reported.
    ///
    /// All or nothing: when the resolver refuses a live group, or would change
    /// a live breaker's (or keyed group's) failure policy, nothing changes and
    /// the error says why. Returns the live breakers and keyed groups whose
    /// config changed, sorted by group.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breaker_core::{Config, Registry, Resolution};
    ///
    /// let registry = Registry::new();
    /// let declared = Config::builder().threshold(3).build().unwrap();
    /// let search = registry.breaker("search", &declared);
    /// // Every group's open duration from elsewhere (a file, say).
    /// registry
    ///     .layer(Arc::new(|_group: &str, declared: Option<&Config>| {
    ///         let threshold = declared.map_or(5, Config::threshold);
    ///         let config = Config::builder().threshold(threshold).open_ms(5_000).build();
    ///         Ok(Resolution { config: config.map_err(|e| e.to_string())?, overrides: vec![] })
    ///     }))
    ///     .unwrap();
    /// assert_eq!(search.config().open_duration().as_millis(), 5_000);
    /// assert_eq!(registry.breaker_or_default("later").config().open_duration().as_millis(), 5_000);
    /// ```
    pub fn layer(&self, resolver: Arc<Resolver>) -> Result<Vec<Reconfigured>, LayerError> {
        let mut groups = self.groups.write();
        let mut live: Vec<_> = groups.breakers.iter().collect();
        live.sort_unstable_by_key(|(name, _)| **name);
        let mut plan = Vec::with_capacity(live.len());
        for (&name, entry) in live {
            let base = groups.configured.get(name).or(entry.declared.as_ref());
            let resolution = resolver(name, base).map_err(|message| LayerError::Refused {
                group: name,
                message,
            })?;
            entry
                .breaker
                .check_reconfigure(&resolution.config)
                .map_err(LayerError::PolicyChange)?;
            plan.push((entry.breaker.clone(), resolution));
        }
        // Keyed groups are created under the groups' read lock (see
        // `creating_keyed`): none appears while this holds the write lock.
        let mut keyed_plan = Vec::new();
        for (name, keyed) in self.keyed_groups().all() {
            let base = groups
                .configured
                .get(name)
                .copied()
                .unwrap_or(keyed.declared());
            let resolution =
                resolver(name, Some(&base)).map_err(|message| LayerError::Refused {
                    group: name,
                    message,
                })?;
            keyed
                .check_reconfigure(&resolution.config)
                .map_err(LayerError::PolicyChange)?;
            keyed_plan.push((name, keyed, resolution));
        }
        // Nothing can fail from here on: a keyed group reconfigured by hand
        // meanwhile kept its policy and fixed keys, which is all the checks
        // above read.
        self.overrides.lock().clear();
        let mut changed = Vec::new();
        let mut notes = Vec::new();
        for (breaker, resolution) in plan {
            let from = *breaker.config();
            self.overridden(breaker.group(), resolution.overrides, &mut notes);
            breaker
                .reconfigure(resolution.config)
                .expect("checked above, under the same lock");
            if from != resolution.config {
                changed.push(Reconfigured {
                    group: breaker.group(),
                    from,
                    to: resolution.config,
                });
            }
        }
        for (group, keyed, resolution) in keyed_plan {
            self.overridden(group, resolution.overrides, &mut notes);
            let from = keyed
                .reconfigure(resolution.config)
                .expect("checked above; no reconfiguration changes a policy");
            if from != resolution.config {
                changed.push(Reconfigured {
                    group,
                    from,
                    to: resolution.config,
                });
            }
        }
        changed.sort_by_key(|c| c.group);
        groups.resolver = Some(resolver);
        drop(groups);
        self.announce(notes);
        Ok(changed)
    }

    /// Every declared value that layered configuration ([`layer`](Self::layer))
    /// took away, with its source: for the live groups as of the last `layer`,
    /// then for each group created since, in that order.
    pub fn overrides(&self) -> Vec<Overridden> {
        self.overrides.lock().clone()
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
    /// use breaker_core::{Config, Event, Registry};
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
    /// assert_eq!(log.lock().unwrap()[..], ["closed -> forced-open (1 groups)"]);
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
    /// (what a fleet agent, which shares whole groups, subscribes with).
    ///
    /// ```
    /// use breaker_core::{Config, Event, Registry};
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
}
