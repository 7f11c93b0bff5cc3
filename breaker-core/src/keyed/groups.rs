//! The keyed groups of one registry, by name, each with its own key type:
//! [`Registry::keyed`], [`Registry::get_keyed`] and [`Registry::keyed_metrics`].

use std::any::{type_name, Any};
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use parking_lot::Mutex;

use super::{KeyedGroup, KeyedMetrics, Shared};
use crate::config::Config;
use crate::registry::{ConfigSource, Conflict, Registry};

/// The keyed groups of one registry, by group name.
#[derive(Default)]
pub(crate) struct KeyedGroups(Mutex<HashMap<&'static str, Held>>);

/// One group, its key type erased.
struct Held {
    /// The group's `Shared<K>`.
    shared: Arc<dyn Any + Send + Sync>,
    /// `K`'s name, for [`WrongKeyType`].
    key_type: &'static str,
    /// Reads the group's metrics without knowing `K`.
    metrics: fn(&(dyn Any + Send + Sync)) -> KeyedMetrics,
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

fn metrics_of<K: Hash + Eq + Send + Sync + 'static>(any: &(dyn Any + Send + Sync)) -> KeyedMetrics {
    match any.downcast_ref::<Shared<K>>() {
        Some(shared) => shared.metrics(),
        None => unreachable!("a keyed group's metrics reader matches its key type"),
    }
}

impl KeyedGroups {
    /// The group `group` of key type `K`: the existing one (and whether its
    /// config differs from `config`), or a new one from `make`.
    fn get_or_create<K: Hash + Eq + Send + Sync + 'static>(
        &self,
        group: &str,
        config: &Config,
        make: impl FnOnce(&'static str) -> KeyedGroup<K>,
    ) -> Result<(KeyedGroup<K>, Option<Conflict>), WrongKeyType> {
        let mut groups = self.0.lock();
        if let Some((name, held)) = groups.get_key_value(group) {
            let name = *name;
            let keyed = Arc::clone(&held.shared)
                .downcast::<Shared<K>>()
                .map(|shared| KeyedGroup { shared })
                .map_err(|_| WrongKeyType {
                    group: name,
                    existing: held.key_type,
                    requested: type_name::<K>(),
                })?;
            let holding = *keyed.config();
            let conflict = (holding != *config).then_some(Conflict {
                group: name,
                holding,
                source: ConfigSource::Declared,
                first_declared: holding,
                ignored: *config,
            });
            return Ok((keyed, conflict));
        }
        let name = crate::names::intern(group);
        let keyed = make(name);
        groups.insert(
            name,
            Held {
                shared: Arc::clone(&keyed.shared) as Arc<dyn Any + Send + Sync>,
                key_type: type_name::<K>(),
                metrics: metrics_of::<K>,
            },
        );
        Ok((keyed, None))
    }

    /// Every group's metrics, sorted by group. The list is copied first: no
    /// group is read under this lock.
    fn metrics(&self) -> Vec<KeyedMetrics> {
        let held: Vec<_> = self
            .0
            .lock()
            .values()
            .map(|h| (Arc::clone(&h.shared), h.metrics))
            .collect();
        let mut all: Vec<_> = held.iter().map(|(any, read)| read(&**any)).collect();
        all.sort_unstable_by_key(|m| m.group);
        all
    }

    fn get<K: Hash + Eq + Send + Sync + 'static>(
        &self,
        group: &str,
    ) -> Result<Option<KeyedGroup<K>>, WrongKeyType> {
        let groups = self.0.lock();
        let Some((name, held)) = groups.get_key_value(group) else {
            return Ok(None);
        };
        Arc::clone(&held.shared)
            .downcast::<Shared<K>>()
            .map(|shared| Some(KeyedGroup { shared }))
            .map_err(|_| WrongKeyType {
                group: name,
                existing: held.key_type,
                requested: type_name::<K>(),
            })
    }
}

impl Registry {
    /// The keyed group `group`: one breaker per key, all on one config, at most
    /// about `max_keys` idle keys (see [`KeyedGroup`]). The first call creates
    /// it with `config` and `max_keys`; later calls get it unchanged, and one
    /// asking for another `config` is recorded as a [`Conflict`] (listed by
    /// [`conflicts`](Registry::conflicts)), as for two declarations of an unkeyed
    /// group. Another `max_keys` is not recorded anywhere: the first one holds
    /// ([`KeyedGroup::max_keys`] tells which).
    ///
    /// Keyed and unkeyed groups are separate: a keyed group and the breaker
    /// [`breaker`](Registry::breaker) makes for the same name are two things,
    /// listed apart ([`keyed_metrics`](Registry::keyed_metrics) and
    /// [`snapshot`](Registry::snapshot)). Configuration the registry is given
    /// for a group ([`configure`](Registry::configure),
    /// [`layer`](Registry::layer)) is for the unkeyed breaker only.
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
    pub fn keyed<K: Hash + Eq + Send + Sync + 'static>(
        &self,
        group: &str,
        config: &Config,
        max_keys: usize,
    ) -> Result<KeyedGroup<K>, WrongKeyType> {
        let clock = self.clock_source().clone();
        let (keyed, conflict) = self.keyed_groups().get_or_create(group, config, |name| {
            KeyedGroup::from_parts(name, *config, clock, max_keys)
        })?;
        if let Some(conflict) = conflict {
            // No lock held: a subscriber may come back into the registry.
            self.report(conflict);
        }
        Ok(keyed)
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
}
