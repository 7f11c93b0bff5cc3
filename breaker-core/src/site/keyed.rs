//! The per-call-site cache of a keyed `#[circuit_breaker(key = ..)]` fn: its
//! group, found once, so a call hashes only its key.

use std::any::Any;
use std::fmt::Debug;
use std::sync::OnceLock;

use crate::breaker::Breaker;
use crate::config::Config;
use crate::keyed::{AsKey, KeyedGroup};
use crate::registry::Registry;

/// A keyed call site's cached group: one `static` per annotated fn.
///
/// The first call finds (or creates) the group in its registry and keeps it
/// (the process-wide registry's in a slot of its own, with no registry to
/// compare); a later call against that registry checks the key type (one
/// `TypeId` comparison), then finds its key's breaker in the group: a hash, a lock-free
/// lookup and a handle clone, with no allocation for a key the group holds
/// (a thread's first call into a key's breaker may still grow that breaker's
/// counter cells, and a call that changes its state takes its transition lock). A call
/// against another registry than the cached one looks the group up there each
/// time.
///
/// # Panics
///
/// When the group exists with another key type (two fns keying one group by
/// `String` and by `u64`): the panic names the group and both types (see
/// [`WrongKeyType`](crate::WrongKeyType)). It comes on the first call that meets
/// the mismatch, every time.
///
/// ```
/// use breaker_core::__private::KeyedSite;
/// use breaker_core::{Config, Registry};
///
/// static SITE: KeyedSite = KeyedSite::new();
/// const CONFIG: Config = Config::DEFAULT;
/// let registry = Registry::new();
/// let a = SITE.breaker(&registry, "site-hosts", &CONFIG, 100, "a.example");
/// let again = SITE.breaker(&registry, "site-hosts", &CONFIG, 100, &String::from("a.example"));
/// assert!(a.same_as(&again));
/// ```
#[derive(Debug)]
pub struct KeyedSite {
    /// The registry's id and its `KeyedGroup<K>`.
    cached: OnceLock<(u64, Box<dyn Any + Send + Sync>)>,
    /// The process-wide registry's `KeyedGroup<K>`: no registry to compare.
    global: OnceLock<Box<dyn Any + Send + Sync>>,
}

impl Default for KeyedSite {
    fn default() -> Self {
        Self::new()
    }
}

impl KeyedSite {
    /// An empty site, for a `static`.
    pub const fn new() -> Self {
        KeyedSite {
            cached: OnceLock::new(),
            global: OnceLock::new(),
        }
    }

    /// The breaker of `key` in the keyed group `group` of the process-wide
    /// [`registry()`](crate::registry()), which the first call creates with
    /// `config` and `key_capacity`.
    #[inline]
    pub fn global<A: AsKey + ?Sized>(
        &self,
        group: &str,
        config: &Config,
        key_capacity: usize,
        key: &A,
    ) -> Breaker {
        if let Some(group) = self
            .global
            .get()
            .and_then(|g| g.downcast_ref::<KeyedGroup<A::Owned>>())
        {
            return group.breaker_for(key);
        }
        self.lookup_global(group, config, key_capacity, key)
    }

    /// Finds the group in the process-wide registry, caches it, and hands
    /// out `key`'s breaker: the whole first call, out of the call path.
    #[cold]
    #[inline(never)]
    fn lookup_global<A: AsKey + ?Sized>(
        &self,
        group: &str,
        config: &Config,
        key_capacity: usize,
        key: &A,
    ) -> Breaker {
        let keyed = group_of::<A::Owned>(crate::registry(), group, config, key_capacity);
        let _ = self.global.get_or_init(|| Box::new(keyed.clone()));
        keyed.breaker_for(key)
    }

    /// The breaker of `key` in the keyed group `group` of `registry`, which the
    /// first call creates with `config` and `key_capacity`.
    #[inline]
    pub fn breaker<A: AsKey + ?Sized>(
        &self,
        registry: &Registry,
        group: &str,
        config: &Config,
        key_capacity: usize,
        key: &A,
    ) -> Breaker {
        if let Some((id, group)) = self.cached.get() {
            if *id == registry.id() {
                if let Some(group) = group.downcast_ref::<KeyedGroup<A::Owned>>() {
                    return group.breaker_for(key);
                }
            }
        }
        self.lookup(registry, group, config, key_capacity, key)
    }

    /// Finds the group in `registry`, caches it if this site has none yet,
    /// and hands out `key`'s breaker, out of the call path.
    #[cold]
    #[inline(never)]
    fn lookup<A: AsKey + ?Sized>(
        &self,
        registry: &Registry,
        group: &str,
        config: &Config,
        key_capacity: usize,
        key: &A,
    ) -> Breaker {
        let keyed = group_of::<A::Owned>(registry, group, config, key_capacity);
        let _ = self
            .cached
            .get_or_init(|| (registry.id(), Box::new(keyed.clone())));
        keyed.breaker_for(key)
    }
}

/// The keyed group `group` of `registry`, created on first use; a group of
/// another key type is a programming error of the call sites (see the type's
/// `# Panics`).
fn group_of<K: std::hash::Hash + Eq + Debug + Send + Sync + 'static>(
    registry: &Registry,
    group: &str,
    config: &Config,
    key_capacity: usize,
) -> KeyedGroup<K> {
    registry
        .keyed::<K>(group, config, key_capacity)
        .unwrap_or_else(|wrong| panic!("#[circuit_breaker]: {wrong}"))
}
