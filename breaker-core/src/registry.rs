//! Breakers keyed by group: the process-wide [`registry()`], isolated
//! [`Registry`] values for tests and embedding, and the record of conflicting
//! declarations.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use parking_lot::{Mutex, RwLock};

use crate::breaker::Breaker;
use crate::clock::{Clock, ClockSource};
use crate::config::Config;
use crate::metrics::Snapshot;

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
pub struct Registry {
    id: u64,
    clock: ClockSource,
    groups: RwLock<Groups>,
    conflicts: Mutex<Vec<Conflict>>,
    /// Keyed groups (`Registry::keyed`, in `keyed.rs`).
    keyed: crate::keyed::KeyedGroups,
}

#[derive(Default)]
struct Groups {
    breakers: HashMap<&'static str, Entry>,
    configured: HashMap<&'static str, Config>,
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
        {
            let groups = self.groups.read();
            if let Some(entry) = groups.breakers.get(group) {
                if entry.declared.as_ref() == Some(declared) {
                    return entry.breaker.clone();
                }
            }
        }
        let mut groups = self.groups.write();
        let groups = &mut *groups;
        if let Some(entry) = groups.breakers.get_mut(group) {
            let breaker = entry.breaker.clone();
            match entry.declared {
                None => {
                    // Created by `breaker_or_default` before any declaration: a
                    // declaration that differs cannot apply any more; say so.
                    entry.declared = Some(*declared);
                    if !groups.configured.contains_key(group) && breaker.config() != declared {
                        self.report(Conflict {
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
                    self.report(Conflict {
                        group: breaker.group(),
                        holding: *breaker.config(),
                        source,
                        first_declared: first,
                        ignored: *declared,
                    });
                }
                Some(_) => {}
            }
            return breaker;
        }
        self.create(groups, group, Some(*declared))
    }

    /// The breaker of `group` without declaring anything, created from the
    /// explicit config or the defaults if it does not exist yet.
    pub fn breaker_or_default(&self, group: &str) -> Breaker {
        if let Some(breaker) = self.get(group) {
            return breaker;
        }
        let mut groups = self.groups.write();
        let groups = &mut *groups;
        if let Some(entry) = groups.breakers.get(group) {
            return entry.breaker.clone();
        }
        self.create(groups, group, None)
    }

    /// Creates `group`'s breaker (caller holds the write lock and saw none): from
    /// the explicit config if one was set, else `declared`, else the defaults.
    fn create(&self, groups: &mut Groups, group: &str, declared: Option<Config>) -> Breaker {
        let name = crate::names::intern(group);
        let config = match groups.configured.get(name) {
            Some(explicit) => *explicit,
            None => declared.unwrap_or_default(),
        };
        let breaker = Breaker::from_parts(name, config, self.clock.clone());
        let entry = Entry {
            breaker: breaker.clone(),
            declared,
        };
        groups.breakers.insert(name, entry);
        breaker
    }

    fn report(&self, conflict: Conflict) {
        let mut conflicts = self.conflicts.lock();
        if !conflicts.contains(&conflict) {
            log::warn!("breaker: {conflict}");
            conflicts.push(conflict);
        }
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
