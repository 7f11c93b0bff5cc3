//! The registry's keyed groups: [`Registry::keyed`], [`Registry::get_keyed`],
//! [`Registry::keyed_metrics`] and [`Registry::keyed_names`].

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use super::Registry;
use crate::breaker::Breaker;
use crate::config::Config;
use crate::keyed::{key_text, KeyedGroup, KeyedMetrics, Tell, WrongKeyType};
use crate::metrics::Metrics;

impl Registry {
    /// The keyed group `group`: one breaker per key, all on one config, at most
    /// about `key_capacity` idle keys (see [`KeyedGroup`]). The first call creates
    /// it, declared with `config`, and `key_capacity`; later calls get it
    /// unchanged, and one declaring another `config` is recorded as a
    /// [`Conflict`](crate::Conflict) (listed by [`conflicts`](Registry::conflicts)), as for
    /// two declarations of an unkeyed group. Another `key_capacity` is not recorded
    /// anywhere: the first one holds ([`KeyedGroup::key_capacity`] tells which).
    ///
    /// Configuration works as for an unkeyed group: a config
    /// [`configure`](Registry::configure)d for the name replaces the
    /// declaration, and layered configuration ([`apply_config`](Registry::apply_config), a
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
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, Registry};
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
        key_capacity: usize,
    ) -> Result<KeyedGroup<K>, WrongKeyType> {
        if let Some(keyed) = self.keyed_groups().get::<K>(group)? {
            self.declared_again(&keyed, config);
            return Ok(keyed);
        }
        let clock = self.clock_source().clone();
        let (keyed, created) = self.creating_keyed(config, |resolved| {
            self.keyed_groups().get_or_create(group, |name| {
                let (resolved, retry) = resolved(name);
                let keyed = KeyedGroup::from_parts(
                    name,
                    *config,
                    resolved,
                    clock,
                    key_capacity,
                    Some(Tell {
                        subscribers: Arc::clone(self.subscribers()),
                        name: key_text::<K>,
                    }),
                );
                keyed.tune_retry(&retry);
                keyed
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
    fn declared_again<K: Hash + Eq + Send + Sync + 'static>(
        &self,
        keyed: &KeyedGroup<K>,
        declared: &Config,
    ) {
        let first = keyed.declared();
        if first != *declared {
            // Copied out: no lock of the group is held while the conflict is told.
            let holding = keyed.config();
            self.keyed_declared(keyed.group(), &holding, &first, declared);
        }
    }

    /// The keyed group `group` if it exists; creates nothing. Pure.
    ///
    /// # Errors
    ///
    /// [`WrongKeyType`] when the group exists with another key type.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, Registry};
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
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, Registry};
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

    /// The `limit` worst keys of the keyed group `group`, worst first, each by
    /// its text as the registry's subscribers are told it (a `String` key as
    /// it is, any other as its `Debug` writes it, cut at 256 bytes): what an
    /// exporter or an admin page lists without knowing the key type. `None`
    /// when there is no such keyed group. Pure.
    ///
    /// The keys are ranked as [`KeyedGroup::worst_keys`] ranks them (open,
    /// forced open or half-open keys only; most opened, then most failures,
    /// then most refusals; keys of equal rank in an order that is the same at
    /// every call for the group's life), in one pass that names only the keys
    /// returned.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, Registry, State};
    ///
    /// let registry = Registry::new();
    /// let config = Config::builder().threshold(1).build().unwrap();
    /// let shards = registry.keyed::<u32>("shards", &config, 100).unwrap();
    /// shards.breaker(&7).try_acquire().unwrap().failure();
    /// shards.breaker(&8).try_acquire().unwrap().success();
    /// let worst = registry.keyed_worst_keys("shards", 5).unwrap();
    /// assert_eq!(worst.len(), 1);
    /// assert_eq!((&*worst[0].0, worst[0].1.state), ("7", State::Open));
    /// assert!(registry.keyed_worst_keys("nothing", 5).is_none());
    /// ```
    pub fn keyed_worst_keys(&self, group: &str, limit: usize) -> Option<Vec<(Arc<str>, Metrics)>> {
        Some(self.keyed_groups().erased(group)?.worst_keys(limit))
    }

    /// The own breaker of the keyed group `group` when it judges as one
    /// (`systemic_share`, `max_open_keys`; see
    /// [`KeyedGroup::group_breaker`]), without knowing its key type: what a
    /// fleet agent opens and closes for the whole group. `None` for a keyed
    /// group whose keys judge alone, and for no such keyed group.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, Registry};
    ///
    /// let registry = Registry::new();
    /// let judged = Config::builder().systemic_share(0.5).build().unwrap();
    /// registry.keyed::<u32>("shards", &judged, 100).unwrap();
    /// registry.keyed::<u32>("tenants", &Config::default(), 100).unwrap();
    /// assert!(registry.keyed_group_breaker("shards").is_some());
    /// assert!(registry.keyed_group_breaker("tenants").is_none());
    /// ```
    pub fn keyed_group_breaker(&self, group: &str) -> Option<Breaker> {
        self.keyed_groups().erased(group)?.group_breaker()
    }

    /// Switches shadow mode on or off for every key of the keyed group
    /// `group` and the keys it creates from now on (as
    /// [`KeyedGroup::set_shadow`]), without knowing its key type: what an
    /// admin endpoint calls. `false` when there is no such keyed group.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, Registry};
    ///
    /// let registry = Registry::new();
    /// let shards = registry.keyed::<u32>("shards", &Config::default(), 100).unwrap();
    /// assert!(registry.set_keyed_shadow("shards", true));
    /// assert!(shards.breaker(&7).is_shadow());
    /// assert!(!registry.set_keyed_shadow("nothing", true));
    /// ```
    pub fn set_keyed_shadow(&self, group: &str, on: bool) -> bool {
        match self.keyed_groups().erased(group) {
            Some(keyed) => {
                keyed.set_shadow(on);
                true
            }
            None => false,
        }
    }

    /// The names of the keyed groups, sorted (as [`groups`](Registry::groups)
    /// lists the unkeyed ones). Reads no key.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, Registry};
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
