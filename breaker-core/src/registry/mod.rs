//! Breakers keyed by group: the process-wide [`registry()`], isolated
//! [`Registry`] values for tests and embedding, and the record of conflicting
//! declarations.
//!
//! `Registry`'s methods are split by concern: this file finds, creates,
//! inspects and controls groups; `apply_config` layers configuration over them;
//! `notes` says what a locked section left to say and keeps the subscribers;
//! `keyed` holds the keyed groups. `reports` has the types they return and
//! the notes a locked section leaves, below them all: no file here imports
//! another that imports it back.

mod apply_config;
mod keyed;
mod notes;
mod reports;

use std::collections::HashMap;
use std::fmt;
// The registry's id counter and the process-wide registry are statics, std's
// (loom's atomics cannot be const); a registry's own state is behind its locks,
// which go through `crate::sync` as its breakers' atomics do, so loom models
// groups made and found concurrently.
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

use self::reports::Note;
pub use self::reports::{
    AlreadyCreated, ApplyConfigError, DeclarationOverride, DeclaredGroup, DeclaredSetting,
    Reconfigured, Resolution, Resolver, UnknownGroup,
};
use crate::breaker::Breaker;
use crate::clock::{Clock, ClockSource};
use crate::config::Config;
use crate::conflict::{ConfigSource, Conflict};
use crate::events::Subscribers;
use crate::metrics::Snapshot;
use crate::retry::RetryTuning;
use crate::sync::{Mutex, RwLock};

/// The process-wide registry that `#[circuit_breaker]` call sites use by default.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{registry, Config, State};
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
/// **Layered configuration.** [`apply_config`](Registry::apply_config) hands the registry a
/// [`Resolver`] (a configuration file and the environment, say) that turns a
/// group's declaration into the config it runs with: applied at once to every
/// live breaker, keeping its state, and to every group created later. The
/// declaration it is given is the group's [`configure`](Registry::configure)d
/// config if it has one, else its first call site's.
///
/// Keyed groups ([`keyed`](Registry::keyed)) follow the same rules, by name:
/// a configured config and layered configuration reach every key of the group.
pub struct Registry {
    id: u64,
    clock: ClockSource,
    groups: RwLock<Groups>,
    conflicts: Mutex<Vec<Conflict>>,
    /// Told every transition of every breaker of this registry, and conflicts.
    subscribers: Arc<Subscribers>,
    overrides: Mutex<Vec<DeclarationOverride>>,
    /// The declared groups a configuration loader resolved before their first
    /// call (`report_declared`), by group.
    declared: Mutex<Vec<DeclaredGroup>>,
    /// Keyed groups (`Registry::keyed`, in `keyed`).
    keyed: crate::keyed::KeyedGroups,
}

#[derive(Default)]
struct Groups {
    breakers: HashMap<&'static str, Group>,
    configured: HashMap<&'static str, Config>,
    resolver: Option<Arc<Resolver>>,
}

struct Group {
    breaker: Breaker,
    /// The config the first declaring call site asked for.
    declared: Option<Config>,
}

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
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, ManualClock, Registry, State};
    ///
    /// let clock = ManualClock::new();
    /// let registry = Registry::with_clock(clock.clone());
    /// let config = Config::builder().threshold(1).build().unwrap();
    /// registry.breaker("db", &config).try_acquire().unwrap().failure();
    /// assert_eq!(registry.get("db").unwrap().state(), State::Open);
    /// clock.advance(config.open());
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
            declared: Mutex::new(Vec::new()),
            keyed: Default::default(),
        }
    }

    pub(crate) fn clock_source(&self) -> &ClockSource {
        &self.clock
    }

    /// The registry's subscribers, which its keyed groups tell their keys'
    /// transitions.
    pub(crate) fn subscribers(&self) -> &Arc<Subscribers> {
        &self.subscribers
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
    /// sites declare: its breaker, and its keyed group if one is made
    /// ([`keyed`](Self::keyed)). Must come before the group's first use.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, Registry};
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
        if self.keyed.contains(group) {
            return Err(AlreadyCreated(crate::names::intern(group)));
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
        self.say(notes);
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
        self.say(notes);
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
        let (config, retry) = self.resolved(groups, name, declared, notes);
        let inherited = Some(self.subscribers.clone());
        let breaker = Breaker::from_parts_in(name, config, self.clock.clone(), inherited);
        breaker.tune_retry(&retry);
        let entry = Group {
            breaker: breaker.clone(),
            declared,
        };
        groups.breakers.insert(name, entry);
        breaker
    }

    /// The config a new group `name` declared with `declared` is built with:
    /// its explicit config, else `declared`, else the defaults, through the
    /// layered configuration if any; and what that gives its retries. What to
    /// announce goes to `notes`.
    fn resolved(
        &self,
        groups: &Groups,
        name: &'static str,
        declared: Option<Config>,
        notes: &mut Vec<Note>,
    ) -> (Config, RetryTuning) {
        let base = groups.configured.get(name).copied().or(declared);
        match &groups.resolver {
            None => (base.unwrap_or_default(), RetryTuning::NONE),
            Some(resolver) => match resolver(name, base.as_ref()) {
                Ok(resolution) => {
                    self.overridden(name, resolution.overrides, notes);
                    (resolution.config, resolution.retry)
                }
                Err(message) => {
                    // A call site cannot fail here; `apply_config` checks the
                    // declarations it knows of beforehand, so this is one it
                    // could not see (a hand-made `breaker` call).
                    notes.push(Note::Refused(name, message));
                    (base.unwrap_or_default(), RetryTuning::NONE)
                }
            },
        }
    }

    /// Runs `create` (which finds or creates a keyed group declared with
    /// `declared`) under the groups' read lock, so a concurrent
    /// [`apply_config`](Self::apply_config) either reconfigures the new group or builds it
    /// through its resolver. `create` gets what [`resolved`](Self::resolved)
    /// says for a name; what that has to say is announced once the lock is gone.
    pub(crate) fn creating_keyed<R>(
        &self,
        declared: &Config,
        create: impl FnOnce(&mut dyn FnMut(&'static str) -> (Config, RetryTuning)) -> R,
    ) -> R {
        let mut notes = Vec::new();
        let made = {
            let groups = self.groups.read();
            create(&mut |name| self.resolved(&groups, name, Some(*declared), &mut notes))
        };
        self.say(notes);
        made
    }

    /// A keyed group `group` running `holding`, first declared as `first`, was
    /// declared again as `declared`, which differs: a [`Conflict`].
    pub(crate) fn keyed_declared(
        &self,
        group: &'static str,
        holding: &Config,
        first: &Config,
        declared: &Config,
    ) {
        let source = if self.groups.read().configured.contains_key(group) {
            ConfigSource::Explicit
        } else {
            ConfigSource::Declared
        };
        // No lock held: a subscriber may come back into the registry.
        self.report(Conflict {
            group,
            holding: *holding,
            source,
            first_declared: *first,
            ignored: *declared,
        });
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

/// The registry under loom's model checker: two threads make the same group
/// at once; one breaker is made, both hold it, and no conflict is recorded.
/// Run with `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p breaker-core --release --lib loom_`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::{ManualClock, State};

    #[test]
    fn loom_a_group_made_by_two_threads_at_once_is_one_breaker() {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(|| {
            let registry = Arc::new(Registry::with_clock(ManualClock::new()));
            let config = Config::builder().threshold(1).build().unwrap();
            let other = {
                let registry = Arc::clone(&registry);
                loom::thread::spawn(move || registry.breaker("loom", &config))
            };
            let here = registry.breaker("loom", &config);
            let there = other.join().unwrap();
            here.try_acquire().expect("closed").failure();
            assert_eq!(there.state(), State::Open, "two breakers for one group");
            assert_eq!(registry.groups(), ["loom"]);
            assert!(registry.conflicts().is_empty());
        });
    }
}
