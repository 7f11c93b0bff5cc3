//! The keyed groups of one registry, by name, each with its own key type:
//! [`Registry::keyed`], [`Registry::get_keyed`] and [`Registry::keyed_metrics`].

use std::any::{type_name, Any};
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use parking_lot::Mutex;

use super::{key_text, KeyedGroup, KeyedMetrics, Shared, Tell};
use crate::breaker::PolicyChange;
use crate::config::Config;
use crate::registry::Registry;

/// The keyed groups of one registry, by group name.
#[derive(Default)]
pub(crate) struct KeyedGroups(Mutex<HashMap<&'static str, Held>>);

/// One group, its key type erased.
struct Held {
    /// The group's `Shared<K>`.
    shared: Arc<dyn Erased>,
    /// `K`'s name, for [`WrongKeyType`].
    key_type: &'static str,
}

/// What the registry does to a keyed group without knowing its key type.
pub(crate) trait Erased: Any + Send + Sync {
    /// Itself, as `Any` to downcast (not by trait upcasting: that needs Rust
    /// 1.86, and the workspace builds on 1.85).
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
    fn metrics(&self) -> KeyedMetrics;
    /// The config it was first declared with.
    fn declared(&self) -> Config;
    fn check_reconfigure(&self, config: &Config) -> Result<(), PolicyChange>;
    fn reconfigure(&self, config: Config) -> Result<Config, PolicyChange>;
    /// Names every key for the registry's subscribers (see `Shared::name_keys`).
    fn name_keys(&self);
}

impl<K: Hash + Eq + Send + Sync + 'static> Erased for Shared<K> {
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }

    fn metrics(&self) -> KeyedMetrics {
        Shared::metrics(self)
    }

    fn declared(&self) -> Config {
        self.declared
    }

    fn check_reconfigure(&self, config: &Config) -> Result<(), PolicyChange> {
        Shared::check_reconfigure(self, config)
    }

    fn reconfigure(&self, config: Config) -> Result<Config, PolicyChange> {
        Shared::reconfigure(self, config)
    }

    fn name_keys(&self) {
        Shared::name_keys(self)
    }
}

/// [`Registry::keyed`] (or a `#[circuit_breaker(key = ..)]` call site) named a
/// group that exists with another key type. A keyed group has one key type:
/// `&str`, `String` and `Arc<str>` keys are all `String` keys (see
/// [`AsKey`](crate::AsKey)), but `String` and `u64` keys cannot share a group.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WrongKeyType {
    /// The group.
    pub group: &'static str,
    /// The key type the group has.
    pub existing: &'static str,
    /// The key type asked for.
    pub requested: &'static str,
}

impl fmt::Display for WrongKeyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "keyed group `{}` is keyed by `{}`, and was asked for with keys of type `{}`: \
             a keyed group has one key type; key every use of `{}` by one type, or name two groups",
            self.group, self.existing, self.requested, self.group
        )
    }
}

impl std::error::Error for WrongKeyType {}

impl Held {
    fn typed<K: Hash + Eq + Send + Sync + 'static>(
        &self,
        name: &'static str,
    ) -> Result<KeyedGroup<K>, WrongKeyType> {
        Arc::clone(&self.shared)
            .into_any()
            .downcast::<Shared<K>>()
            .map(|shared| KeyedGroup { shared })
            .map_err(|_| WrongKeyType {
                group: name,
                existing: self.key_type,
                requested: type_name::<K>(),
            })
    }
}

impl KeyedGroups {
    /// The group `group` of key type `K`: the existing one (`false`), or a new
    /// one from `make` (`true`).
    fn get_or_create<K: Hash + Eq + Send + Sync + 'static>(
        &self,
        group: &str,
        make: impl FnOnce(&'static str) -> KeyedGroup<K>,
    ) -> Result<(KeyedGroup<K>, bool), WrongKeyType> {
        let mut groups = self.0.lock();
        if let Some((&name, held)) = groups.get_key_value(group) {
            return Ok((held.typed(name)?, false));
        }
        let name = crate::names::intern(group);
        let keyed = make(name);
        groups.insert(
            name,
            Held {
                shared: Arc::clone(&keyed.shared) as Arc<dyn Erased>,
                key_type: type_name::<K>(),
            },
        );
        Ok((keyed, true))
    }

    /// Every group, sorted by name: copied out, so no group is read under this
    /// lock.
    pub(crate) fn all(&self) -> Vec<(&'static str, Arc<dyn Erased>)> {
        let mut all: Vec<_> = self
            .0
            .lock()
            .iter()
            .map(|(&name, held)| (name, Arc::clone(&held.shared)))
            .collect();
        all.sort_unstable_by_key(|(name, _)| *name);
        all
    }

    /// Every group's name, sorted.
    fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.0.lock().keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// Whether the group `group` exists, of any key type.
    pub(crate) fn contains(&self, group: &str) -> bool {
        self.0.lock().contains_key(group)
    }

    /// Every group's metrics, sorted by group.
    fn metrics(&self) -> Vec<KeyedMetrics> {
        self.all()
            .iter()
            .map(|(_, group)| group.metrics())
            .collect()
    }

    fn get<K: Hash + Eq + Send + Sync + 'static>(
        &self,
        group: &str,
    ) -> Result<Option<KeyedGroup<K>>, WrongKeyType> {
        let groups = self.0.lock();
        match groups.get_key_value(group) {
            None => Ok(None),
            Some((&name, held)) => held.typed(name).map(Some),
        }
    }
}

impl Registry {
    /// The keyed group `group`: one breaker per key, all on one config, at most
    /// about `max_keys` idle keys (see [`KeyedGroup`]). The first call creates
    /// it, declared with `config`, and `max_keys`; later calls get it
    /// unchanged, and one declaring another `config` is recorded as a
    /// [`Conflict`](crate::Conflict) (listed by [`conflicts`](Registry::conflicts)), as for
    /// two declarations of an unkeyed group. Another `max_keys` is not recorded
    /// anywhere: the first one holds ([`KeyedGroup::max_keys`] tells which).
    ///
    /// Configuration works as for an unkeyed group: a config
    /// [`configure`](Registry::configure)d for the name replaces the
    /// declaration, and layered configuration ([`layer`](Registry::layer), a
    /// config file) applies over it, to the keys held and to new ones
    /// ([`KeyedGroup::config`] tells what they run).
    ///
    /// `K` is `Debug`: a key's text names it to the registry's subscribers
    /// ([`Event::KeyedTransition`](crate::Event::KeyedTransition)).
    ///
    /// Keyed and unkeyed groups are otherwise separate: a keyed group and the
    /// breaker [`breaker`](Registry::breaker) makes for the same name are two
    /// things, listed apart ([`keyed_metrics`](Registry::keyed_metrics) and
    /// [`snapshot`](Registry::snapshot)), though both take the name's
    /// configuration.
    ///
    /// # Errors
    ///
    /// [`WrongKeyType`] when the group exists with another key type.
    ///
    /// ```
    /// use breaker_core::{Config, Registry};
    ///
    /// let registry = Registry::new();
    /// let hosts = registry.keyed::<String>("crawl", &Config::default(), 100_000).unwrap();
    /// hosts.breaker("example.org").try_acquire().unwrap().success();
    /// let again = registry.keyed::<String>("crawl", &Config::default(), 1).unwrap();
    /// assert_eq!(again.metrics().successes, 1);
    /// assert!(registry.keyed::<u32>("crawl", &Config::default(), 1).is_err());
    /// ```
    pub fn keyed<K: Hash + Eq + fmt::Debug + Send + Sync + 'static>(
        &self,
        group: &str,
        config: &Config,
        max_keys: usize,
    ) -> Result<KeyedGroup<K>, WrongKeyType> {
        if let Some(keyed) = self.keyed_groups().get::<K>(group)? {
            self.declared_again(&keyed, config);
            return Ok(keyed);
        }
        let clock = self.clock_source().clone();
        let (keyed, created) = self.creating_keyed(config, |resolved| {
            self.keyed_groups().get_or_create(group, |name| {
                KeyedGroup::from_parts(
                    name,
                    *config,
                    resolved(name),
                    clock,
                    max_keys,
                    Some(Tell {
                        subscribers: Arc::clone(self.subscribers()),
                        name: key_text::<K>,
                    }),
                )
            })
        })?;
        if !created {
            self.declared_again(&keyed, config);
        }
        Ok(keyed)
    }

    /// An existing keyed group declared again as `declared`: a conflict if its
    /// first declaration differs. The group's live config is read only then
    /// (a call site of another registry than the one it caches comes here on
    /// every call).
    fn declared_again<K>(&self, keyed: &KeyedGroup<K>, declared: &Config) {
        let shared = &*keyed.shared;
        if shared.declared != *declared {
            // Copied out: no lock of the group is held while the conflict is told.
            let holding = *shared.config.lock();
            self.keyed_declared(shared.group, &holding, &shared.declared, declared);
        }
    }

    /// The keyed group `group` if it exists; creates nothing. Pure.
    ///
    /// # Errors
    ///
    /// [`WrongKeyType`] when the group exists with another key type.
    ///
    /// ```
    /// use breaker_core::{Config, Registry};
    ///
    /// let registry = Registry::new();
    /// assert!(registry.get_keyed::<String>("hosts").unwrap().is_none());
    /// registry.keyed::<String>("hosts", &Config::default(), 10).unwrap().breaker("a.example");
    /// let hosts = registry.get_keyed::<String>("hosts").unwrap().unwrap();
    /// assert_eq!(hosts.keys().len(), 1);
    /// assert!(registry.get_keyed::<u64>("hosts").is_err());
    /// ```
    pub fn get_keyed<K: Hash + Eq + Send + Sync + 'static>(
        &self,
        group: &str,
    ) -> Result<Option<KeyedGroup<K>>, WrongKeyType> {
        self.keyed_groups().get(group)
    }

    /// The metrics of every keyed group (its keys' counts summed, keys by
    /// state, evictions), sorted by group: what app code and exporters read
    /// without knowing the groups' key types. Pure.
    ///
    /// ```
    /// use breaker_core::{Config, Registry};
    ///
    /// let registry = Registry::new();
    /// let tenants = registry.keyed::<u64>("tenants", &Config::default(), 100).unwrap();
    /// tenants.breaker(&1).try_acquire().unwrap().success();
    /// tenants.breaker(&2).try_acquire().unwrap().success();
    /// let all = registry.keyed_metrics();
    /// assert_eq!((all[0].group, all[0].keys, all[0].successes), ("tenants", 2, 2));
    /// ```
    pub fn keyed_metrics(&self) -> Vec<KeyedMetrics> {
        self.keyed_groups().metrics()
    }

    /// The names of the keyed groups, sorted (as [`groups`](Registry::groups)
    /// lists the unkeyed ones). Reads no key.
    ///
    /// ```
    /// use breaker_core::{Config, Registry};
    ///
    /// let registry = Registry::new();
    /// registry.keyed::<u64>("tenants", &Config::default(), 100).unwrap();
    /// assert_eq!(registry.keyed_names(), ["tenants"]);
    /// assert!(registry.groups().is_empty());
    /// ```
    pub fn keyed_names(&self) -> Vec<&'static str> {
        self.keyed_groups().names()
    }
}
