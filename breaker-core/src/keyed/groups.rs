//! The keyed groups of one registry, by name, each with its own key type
//! erased: what `Registry::keyed`, `Registry::get_keyed` and
//! `Registry::keyed_metrics` find, create and read.

use std::any::{type_name, Any};
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use super::{KeyedGroup, KeyedMetrics, Shared};
use crate::breaker::PolicyChange;
use crate::config::Config;
use crate::metrics::Metrics;
use crate::retry::RetryTuning;
use crate::sync::Mutex;

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
    /// Layers `tuning` over the group's retry declaration.
    fn tune_retry(&self, tuning: &RetryTuning);
    /// See [`KeyedGroup::set_shadow`].
    fn set_shadow(&self, on: bool);
    /// Names every key for the registry's subscribers (see `Shared::name_keys`).
    fn name_keys(&self);
    /// The group's own breaker when it judges as one (see
    /// `KeyedGroup::group_breaker`).
    fn group_breaker(&self) -> Option<crate::Breaker>;
    /// The `limit` worst keys (see `KeyedGroup::worst_keys`; equal ranks in
    /// the order of the keys' places in the map), each by its text as subscribers are
    /// told it; none for a group that cannot name its keys (a standalone one).
    fn worst_keys(&self, limit: usize) -> Vec<(Arc<str>, Metrics)>;
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

    fn tune_retry(&self, tuning: &RetryTuning) {
        Shared::tune_retry(self, tuning)
    }

    fn set_shadow(&self, on: bool) {
        Shared::set_shadow(self, on)
    }

    fn name_keys(&self) {
        Shared::name_keys(self)
    }

    fn group_breaker(&self) -> Option<crate::Breaker> {
        self.judge.as_ref().map(|judge| judge.breaker().clone())
    }

    fn worst_keys(&self, limit: usize) -> Vec<(Arc<str>, Metrics)> {
        match &self.tell {
            Some(tell) => {
                // Keys of equal rank by where the map holds them: the same
                // order at every reading while they are held, with no key's
                // text made.
                let tie = |a: &K, b: &K| std::ptr::from_ref(a).cmp(&std::ptr::from_ref(b));
                Shared::worst_keys(self, limit, &tie, tell.name)
            }
            None => Vec::new(),
        }
    }
}

/// [`Registry::keyed`](crate::Registry::keyed) (or a `#[circuit_breaker(key = ..)]` call site) named a
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
    pub(crate) fn get_or_create<K: Hash + Eq + Send + Sync + 'static>(
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
    pub(crate) fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.0.lock().keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// Whether the group `group` exists, of any key type.
    pub(crate) fn contains(&self, group: &str) -> bool {
        self.0.lock().contains_key(group)
    }

    /// Every group's metrics, sorted by group.
    pub(crate) fn metrics(&self) -> Vec<KeyedMetrics> {
        self.all()
            .iter()
            .map(|(_, group)| group.metrics())
            .collect()
    }

    /// The group `group`, of any key type.
    pub(crate) fn erased(&self, group: &str) -> Option<Arc<dyn Erased>> {
        self.0
            .lock()
            .get(group)
            .map(|held| Arc::clone(&held.shared))
    }

    pub(crate) fn get<K: Hash + Eq + Send + Sync + 'static>(
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
