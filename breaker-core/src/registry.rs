//! Breakers keyed by group: the process-wide [`registry()`], isolated
//! [`Registry`] values for tests and embedding, and the record of conflicting
//! declarations.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};

use crate::breaker::{Breaker, PolicyChange};
use crate::clock::{Clock, ClockSource};
use crate::config::Config;
use crate::events::{Event, Subscribers, Subscription};
use crate::metrics::Snapshot;

/// What a section under the registry's locks leaves to say once they are
/// released (see [`Registry::announce`]).
enum Note {
    Conflict(Box<Conflict>),
    Overridden(&'static str, String),
    Refused(&'static str, String),
}

/// The process-wide registry that `#[circuit_breaker]` call sites use by default.
///
/// ```
/// use breaker_core::{registry, Config, State};
///
/// let search = registry().breaker("docs-search", &Config::default());
/// assert_eq!(search.state(), State::Closed);
/// assert!(registry().get("docs-search").is_some());
/// ```
#[inline]
pub fn registry() -> &'static Registry {
    static GLOBAL: OnceLock<Registry> = OnceLock::new();
    GLOBAL.get_or_init(Registry::new)
}

/// Breakers keyed by group name, all on one clock.
///
/// **Which config holds.** The first use of a group creates its breaker. If the
/// group was [`configure`](Registry::configure)d before that, the explicit config
/// holds; otherwise the config declared by the first call site to use it does.
/// A later call site declaring a different config for the same group gets the
/// existing breaker unchanged, and the mismatch is recorded as a [`Conflict`]
/// (listed by [`conflicts`](Registry::conflicts)) and logged once at `warn`.
/// So is the first declaration of a group that
/// [`breaker_or_default`](Registry::breaker_or_default) created with the defaults,
/// when it asks for something else.
///
/// **Layered configuration.** [`layer`](Registry::layer) hands the registry a
/// [`Resolver`] (a configuration file and the environment, say) that turns a
/// group's declaration into the config it runs with: applied at once to every
/// live breaker, keeping its state, and to every group created later. The
/// declaration it is given is the group's [`configure`](Registry::configure)d
/// config if it has one, else its first call site's.
pub struct Registry {
    id: u64,
    clock: ClockSource,
    groups: RwLock<Groups>,
    conflicts: Mutex<Vec<Conflict>>,
    /// Told every transition of every breaker of this registry, and conflicts.
    subscribers: Arc<Subscribers>,
    overrides: Mutex<Vec<Overridden>>,
    /// Keyed groups (`Registry::keyed`, in `keyed.rs`).
    keyed: crate::keyed::KeyedGroups,
}

#[derive(Default)]
struct Groups {
    breakers: HashMap<&'static str, Entry>,
    configured: HashMap<&'static str, Config>,
    resolver: Option<Arc<Resolver>>,
}

/// Turns a group's declaration into the config it runs with: given the group
/// and the config its code declared (`None` when the group is used without a
/// declaration), the layered config, or why it cannot have one. Called under
/// the registry's write lock: it must not use the registry.
pub type Resolver = dyn Fn(&str, Option<&Config>) -> Result<Resolution, String> + Send + Sync;

/// What a [`Resolver`] made of one group's declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolution {
    /// The config the group's breaker runs with.
    pub config: Config,
    /// Each declared value the layers took away, said with its source
    /// (listed by [`Registry::overrides`]).
    pub overrides: Vec<String>,
}

/// A value of a group's declaration that layered configuration took away.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overridden {
    /// The group.
    pub group: &'static str,
    /// What was overridden, and by what (from the [`Resolution`]).
    pub detail: String,
}

impl fmt::Display for Overridden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "group `{}`: {}", self.group, self.detail)
    }
}

/// [`Registry::layer`] refused a configuration; nothing of it was applied.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum LayerError {
    /// The resolver refused a live group's declaration.
    Refused {
        /// The group.
        group: &'static str,
        /// The resolver's reason.
        message: String,
    },
    /// The new config would change a live breaker's failure policy.
    PolicyChange(PolicyChange),
}

impl fmt::Display for LayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayerError::Refused { group, message } => {
                write!(f, "group `{group}`: {message}; nothing was applied")
            }
            LayerError::PolicyChange(change) => write!(f, "{change}; nothing was applied"),
        }
    }
}

impl std::error::Error for LayerError {}

/// A live breaker whose config [`Registry::layer`] replaced.
#[derive(Clone, Debug, PartialEq)]
pub struct Reconfigured {
    /// The group.
    pub group: &'static str,
    /// The config it ran with.
    pub from: Config,
    /// The config it runs with now.
    pub to: Config,
}

struct Entry {
    breaker: Breaker,
    /// The config the first declaring call site asked for.
    declared: Option<Config>,
}

/// Where the config a breaker runs with came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    /// Set with [`Registry::configure`] before the group's first use.
    Explicit,
    /// Declared by the first call site that used the group.
    Declared,
    /// The defaults: the group was first touched by
    /// [`Registry::breaker_or_default`], before any call site declared a config.
    Default,
}

/// Two call sites declared different configs for one group.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflict {
    /// The group.
    pub group: &'static str,
    /// The config the breaker runs with.
    pub holding: Config,
    /// Where `holding` came from.
    pub source: ConfigSource,
    /// The first declared config (equal to `holding` unless the group was
    /// configured explicitly).
    pub first_declared: Config,
    /// The declaration that differed from `first_declared` and was not applied.
    pub ignored: Config,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "group `{}` declared with two configs; the breaker keeps {:?} ({}); ignored {:?}",
            self.group,
            self.holding,
            match self.source {
                ConfigSource::Explicit => "set explicitly",
                ConfigSource::Declared => "first declaration",
                ConfigSource::Default => "defaults: the group was used before any declaration",
            },
            self.ignored
        )
    }
}

/// A registry operation named a group it does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownGroup(pub String);

impl fmt::Display for UnknownGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no breaker for group `{}` in this registry", self.0)
    }
}

impl std::error::Error for UnknownGroup {}

/// [`Registry::configure`] came after the group's breaker was created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlreadyCreated(pub &'static str);

impl fmt::Display for AlreadyCreated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "group `{}` is already in use; configure it before its first call",
            self.0
        )
    }
}

impl std::error::Error for AlreadyCreated {}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl Registry {
    /// An empty registry on the monotonic clock.
    pub fn new() -> Self {
        Self::from_clock(ClockSource::Monotonic)
    }

    /// An empty registry whose breakers all read `clock`.
    ///
    /// ```
    /// use breaker_core::{Config, ManualClock, Registry, State};
    ///
    /// let clock = ManualClock::new();
    /// let registry = Registry::with_clock(clock.clone());
    /// let config = Config::builder().threshold(1).build().unwrap();
    /// registry.breaker("db", &config).try_acquire().unwrap().failure();
    /// assert_eq!(registry.get("db").unwrap().state(), State::Open);
    /// clock.advance(config.open_duration());
    /// assert!(registry.get("db").unwrap().would_admit());
    /// ```
    pub fn with_clock<C: Clock>(clock: C) -> Self {
        Self::from_clock(ClockSource::of(clock))
    }

    fn from_clock(clock: ClockSource) -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Registry {
            id: NEXT_ID.fetch_add(1, Relaxed),
            clock,
            groups: RwLock::new(Groups::default()),
            conflicts: Mutex::new(Vec::new()),
            subscribers: Arc::default(),
            overrides: Mutex::new(Vec::new()),
            keyed: Default::default(),
        }
    }

    pub(crate) fn clock_source(&self) -> &ClockSource {
        &self.clock
    }

    pub(crate) fn keyed_groups(&self) -> &crate::keyed::KeyedGroups {
        &self.keyed
    }

    /// A number no other registry of this process has; call sites use it to tell
    /// registries apart when caching their breaker.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Sets the config `group` will be created with, overriding whatever its call
    /// sites declare. Must come before the group's first use.
    ///
    /// ```
    /// use breaker_core::{Config, Registry};
    ///
    /// let registry = Registry::new();
    /// let strict = Config::builder().threshold(1).build().unwrap();
    /// registry.configure("search", strict).unwrap();
    /// let declared = Config::builder().threshold(9).build().unwrap();
    /// assert_eq!(registry.breaker("search", &declared).config().threshold(), 1);
    /// assert!(registry.configure("search", strict).is_err());
    /// ```
    pub fn configure(&self, group: &str, config: Config) -> Result<(), AlreadyCreated> {
        let mut groups = self.groups.write();
        if let Some((name, _)) = groups.breakers.get_key_value(group) {
            return Err(AlreadyCreated(name));
        }
        groups
            .configured
            .insert(crate::names::intern(group), config);
        Ok(())
    }

    /// The breaker of `group`, created on first use from the explicit config if
    /// one was set, else from `declared`. See the type docs for conflicts.
    pub fn breaker(&self, group: &str, declared: &Config) -> Breaker {
        let (breaker, notes) = self.breaker_locked(group, declared);
        // Logged and told with no lock held: a logger or subscriber may come
        // back into this registry.
        self.announce(notes);
        breaker
    }

    /// [`breaker`](Self::breaker) under the registry's locks: the breaker, and
    /// what its declaration or creation has to say, once the locks are gone.
    fn breaker_locked(&self, group: &str, declared: &Config) -> (Breaker, Vec<Note>) {
        {
            let groups = self.groups.read();
            if let Some(entry) = groups.breakers.get(group) {
                if entry.declared.as_ref() == Some(declared) {
                    return (entry.breaker.clone(), Vec::new());
                }
            }
        }
        let mut groups = self.groups.write();
        let groups = &mut *groups;
        if let Some(entry) = groups.breakers.get_mut(group) {
            let breaker = entry.breaker.clone();
            let mut conflict = None;
            match entry.declared {
                None => {
                    // Created by `breaker_or_default` before any declaration: a
                    // declaration that differs cannot apply any more; say so.
                    entry.declared = Some(*declared);
                    if !groups.configured.contains_key(group) && breaker.config() != declared {
                        conflict = Some(Conflict {
                            group: breaker.group(),
                            holding: *breaker.config(),
                            source: ConfigSource::Default,
                            first_declared: *declared,
                            ignored: *declared,
                        });
                    }
                }
                Some(first) if first != *declared => {
                    let source = if groups.configured.contains_key(group) {
                        ConfigSource::Explicit
                    } else {
                        ConfigSource::Declared
                    };
                    conflict = Some(Conflict {
                        group: breaker.group(),
                        holding: *breaker.config(),
                        source,
                        first_declared: first,
                        ignored: *declared,
                    });
                }
                Some(_) => {}
            }
            return (
                breaker,
                conflict
                    .map(|c| Note::Conflict(Box::new(c)))
                    .into_iter()
                    .collect(),
            );
        }
        let mut notes = Vec::new();
        let breaker = self.create(groups, group, Some(*declared), &mut notes);
        (breaker, notes)
    }

    /// The breaker of `group` without declaring anything, created from the
    /// explicit config or the defaults if it does not exist yet.
    pub fn breaker_or_default(&self, group: &str) -> Breaker {
        if let Some(breaker) = self.get(group) {
            return breaker;
        }
        let mut notes = Vec::new();
        let breaker = {
            let mut groups = self.groups.write();
            let groups = &mut *groups;
            match groups.breakers.get(group) {
                Some(entry) => entry.breaker.clone(),
                None => self.create(groups, group, None, &mut notes),
            }
        };
        self.announce(notes);
        breaker
    }

    /// Creates `group`'s breaker (caller holds the write lock and saw none): from
    /// the explicit config if one was set, else `declared`, else the defaults.
    /// What the caller must announce once the lock is released goes to `notes`.
    fn create(
        &self,
        groups: &mut Groups,
        group: &str,
        declared: Option<Config>,
        notes: &mut Vec<Note>,
    ) -> Breaker {
        let name = crate::names::intern(group);
        let base = groups.configured.get(name).copied().or(declared);
        let config = match &groups.resolver {
            None => base.unwrap_or_default(),
            Some(resolver) => match resolver(name, base.as_ref()) {
                Ok(resolution) => {
                    self.overridden(name, resolution.overrides, notes);
                    resolution.config
                }
                Err(message) => {
                    // A call site cannot fail here; `layer` checks the
                    // declarations it knows of beforehand, so this is one it
                    // could not see (a hand-made `breaker` call).
                    notes.push(Note::Refused(name, message));
                    base.unwrap_or_default()
                }
            },
        };
        let inherited = Some(self.subscribers.clone());
        let breaker = Breaker::from_parts_in(name, config, self.clock.clone(), inherited);
        let entry = Entry {
            breaker: breaker.clone(),
            declared,
        };
        groups.breakers.insert(name, entry);
        breaker
    }

    /// Records what layered configuration took from `group`'s declaration; the
    /// log lines go to `notes`, for after the locks.
    fn overridden(&self, group: &'static str, details: Vec<String>, notes: &mut Vec<Note>) {
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
    fn announce(&self, notes: Vec<Note>) {
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
    /// [reconfigured](Breaker::reconfigure) at once, keeping its state, and
    /// every group created later is built through it. Replaces the resolver of
    /// an earlier call, and the [`overrides`](Self::overrides) it reported.
    ///
    /// All or nothing: when the resolver refuses a live group, or would change
    /// a live breaker's failure policy, nothing changes and the error says why.
    /// Returns the live breakers whose config changed, sorted by group.
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
        // Nothing can fail from here on.
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
    fn report(&self, conflict: Conflict) {
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
        self.subscribers.add(Box::new(subscriber))
    }

    /// The breaker of `group`, if it exists.
    pub fn get(&self, group: &str) -> Option<Breaker> {
        self.groups
            .read()
            .breakers
            .get(group)
            .map(|e| e.breaker.clone())
    }

    /// Every group that has a breaker, sorted.
    pub fn groups(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.groups.read().breakers.keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// Every breaker, sorted by group.
    pub fn breakers(&self) -> Vec<Breaker> {
        let mut all: Vec<_> = self
            .groups
            .read()
            .breakers
            .values()
            .map(|e| e.breaker.clone())
            .collect();
        all.sort_unstable_by_key(Breaker::group);
        all
    }

    /// The metrics of every breaker, sorted by group. Pure.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot(self.breakers().iter().map(Breaker::metrics).collect())
    }

    /// Conflicting declarations seen so far, each once.
    pub fn conflicts(&self) -> Vec<Conflict> {
        self.conflicts.lock().clone()
    }

    /// Forces `group` open.
    pub fn force_open(&self, group: &str) -> Result<(), UnknownGroup> {
        self.with(group, Breaker::force_open)
    }

    /// Forces `group` closed.
    pub fn force_closed(&self, group: &str) -> Result<(), UnknownGroup> {
        self.with(group, Breaker::force_closed)
    }

    /// Resets `group` to closed.
    pub fn reset(&self, group: &str) -> Result<(), UnknownGroup> {
        self.with(group, Breaker::reset)
    }

    fn with(&self, group: &str, act: impl FnOnce(&Breaker)) -> Result<(), UnknownGroup> {
        let breaker = self
            .get(group)
            .ok_or_else(|| UnknownGroup(group.to_owned()))?;
        act(&breaker);
        Ok(())
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("id", &self.id)
            .field("clock", &self.clock)
            .field("groups", &self.groups())
            .finish()
    }
}
