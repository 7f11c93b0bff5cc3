//! Keyed breakers: one breaker per key (host, tenant, shard) of a group, all on
//! the group's config, in bounded memory ([`KeyedGroup`]).
//!
//! Keys live in a sharded map: a call for a key that exists takes its shard's read
//! lock (shared with every other caller of that shard, waited on only while a key
//! of the same shard is created or evicted) and clones the key's breaker handle.
//! The key type owns its data (`K: Hash + Eq`, a `String` for a host): nothing is
//! interned or leaked. When a new key would pass `max_keys`, a sweep evicts idle,
//! closed breakers in approximately least-recently-used order (the CLOCK
//! algorithm: a key used since the last sweep gets a second chance). A breaker that
//! is half-open or forced, or open within its open time (a host that is down stays
//! refused), or whose handle anyone holds (a call in flight), is not evicted; so
//! the group can exceed `max_keys` by the keys in that state. An open key that no
//! call has come for during one more open duration past its open time may go: its
//! next call would only have been a probe, and dead hosts must not pin the
//! group's memory for ever. A sweep that frees nothing is not repeated until the
//! group has grown a sixteenth or an open duration has passed.
//! An evicted breaker's counts are folded into the group's, so the group's
//! metrics lose nothing.

use hashbrown::HashTable;
use std::borrow::Borrow;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::breaker::Breaker;
use crate::clock::ClockSource;
use crate::config::Config;
use crate::state::State;

mod groups;
mod key;
mod metrics;
mod site;

pub(crate) use self::groups::KeyedGroups;
pub use self::groups::WrongKeyType;
pub use self::key::AsKey;
use self::metrics::Folded;
pub use self::metrics::KeyedMetrics;
pub use self::site::KeyedSite;

const SHARDS: usize = 64;

/// The breakers of one group, one per key, sharing the group's config.
/// Cloning is cheap and shares the same group.
///
/// ```
/// use breaker_core::{Config, KeyedGroup, State};
///
/// let hosts = KeyedGroup::<String>::new("upstream", Config::builder().threshold(1).build().unwrap(), 10_000);
/// hosts.breaker("a.example").try_acquire().unwrap().failure();
/// assert_eq!(hosts.breaker("a.example").state(), State::Open);
/// assert_eq!(hosts.breaker("b.example").state(), State::Closed);
/// assert_eq!(hosts.metrics().keys, 2);
/// assert_eq!(hosts.metrics().open, 1);
/// ```
pub struct KeyedGroup<K> {
    shared: Arc<Shared<K>>,
}

impl<K> Clone for KeyedGroup<K> {
    fn clone(&self) -> Self {
        KeyedGroup {
            shared: Arc::clone(&self.shared),
        }
    }
}

struct Shared<K> {
    group: &'static str,
    config: Config,
    clock: ClockSource,
    max_keys: usize,
    /// One hash per call picks the shard and the slot in it. Seeded at random
    /// per group, but not flooding-resistant as SipHash is (see the README's
    /// "Keyed breakers"): about 100 instructions a call cheaper.
    hasher: foldhash::fast::RandomState,
    shards: Box<[RwLock<HashTable<Slot<K>>>]>,
    keys: AtomicUsize,
    /// Where the next sweep starts.
    hand: AtomicUsize,
    /// The key count after the last sweep that evicted nothing (0: none did),
    /// and when it ran (clock nanos). No sweep runs again until the group has
    /// grown a sixteenth past that count or an open duration has passed (open
    /// keys become evictable with time): with nothing evictable (every key
    /// open, or in a call), each new key would otherwise pass over every shard
    /// under its write lock.
    futile: AtomicUsize,
    futile_at: AtomicU64,
    evictions: AtomicU64,
    /// The counts of evicted breakers.
    evicted: Mutex<Folded>,
}

/// A key and its breaker.
struct Slot<K> {
    key: K,
    entry: Entry,
}

struct Entry {
    breaker: Breaker,
    /// Used since the last sweep passed it: spared once.
    used: AtomicBool,
}

impl<K: Hash + Eq + Send + Sync + 'static> KeyedGroup<K> {
    /// A standalone keyed group on the monotonic clock holding at most about
    /// `max_keys` idle keys (at least 1). Most code gets one from
    /// [`Registry::keyed`](crate::Registry::keyed).
    pub fn new(group: &str, config: Config, max_keys: usize) -> Self {
        Self::from_parts(
            crate::names::intern(group),
            config,
            ClockSource::Monotonic,
            max_keys,
        )
    }

    pub(crate) fn from_parts(
        group: &'static str,
        config: Config,
        clock: ClockSource,
        max_keys: usize,
    ) -> Self {
        KeyedGroup {
            shared: Arc::new(Shared {
                group,
                config,
                clock,
                max_keys: max_keys.max(1),
                hasher: Default::default(),
                shards: (0..SHARDS).map(|_| RwLock::default()).collect(),
                keys: AtomicUsize::new(0),
                hand: AtomicUsize::new(0),
                futile: AtomicUsize::new(0),
                futile_at: AtomicU64::new(0),
                evictions: AtomicU64::new(0),
                evicted: Mutex::new(Folded::default()),
            }),
        }
    }

    /// The group.
    pub fn group(&self) -> &'static str {
        self.shared.group
    }

    /// The config every key's breaker runs with.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// The most idle keys the group holds.
    pub fn max_keys(&self) -> usize {
        self.shared.max_keys
    }

    /// `key`'s hash, and the shard it lives in.
    #[inline]
    fn shard<Q: Hash + ?Sized>(&self, key: &Q) -> (u64, &RwLock<HashTable<Slot<K>>>) {
        let hash = self.shared.hasher.hash_one(key);
        // Middle bits: the table inside the shard indexes by the low ones and
        // tags its slots with the top seven.
        (hash, &self.shared.shards[(hash >> 32) as usize % SHARDS])
    }

    /// The breaker of `key`, created on first use (evicting idle keys if the group
    /// is full). Holding the handle keeps the key from being evicted; a call
    /// holds it for the call's length.
    ///
    /// ```
    /// use breaker_core::{CallError, Config, KeyedGroup};
    ///
    /// let tenants = KeyedGroup::<u64>::new("tenants", Config::default(), 1_000);
    /// let answer = tenants.breaker(&42).call(|| Ok::<_, std::io::Error>(7));
    /// assert_eq!(answer.unwrap(), 7);
    /// ```
    pub fn breaker<Q>(&self, key: &Q) -> Breaker
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.find_or_create(key, Q::to_owned)
    }

    /// The breaker of the key `key` names, created on first use: as
    /// [`breaker`](Self::breaker), for any [`AsKey`] whose owned form is `K`
    /// (`&str`, `String` and `Arc<str>` for a group of `String`). A key the
    /// group holds is found by its borrowed form, with no allocation.
    ///
    /// ```
    /// use std::net::{IpAddr, Ipv4Addr};
    /// use breaker_core::{Config, KeyedGroup};
    ///
    /// let peers = KeyedGroup::<IpAddr>::new("peers", Config::default(), 1_000);
    /// let peer = IpAddr::V4(Ipv4Addr::LOCALHOST);
    /// peers.breaker_for(&peer).try_acquire().unwrap().success();
    /// assert!(peers.breaker_for(&peer).same_as(&peers.get(&peer).unwrap()));
    /// ```
    #[inline]
    pub fn breaker_for<A>(&self, key: &A) -> Breaker
    where
        A: AsKey<Owned = K> + ?Sized,
        K: Borrow<A::Lookup>,
    {
        self.find_or_create::<A::Lookup>(key.lookup(), |_| key.to_owned_key())
    }

    /// The breaker of `key`; `owned` makes the key the map keeps, only when
    /// the group does not hold it.
    #[inline]
    fn find_or_create<Q>(&self, key: &Q, owned: impl FnOnce(&Q) -> K) -> Breaker
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let (hash, shard) = self.shard(key);
        if let Some(slot) = shard.read().find(hash, |slot| slot.key.borrow() == key) {
            return slot.entry.touch();
        }
        self.create(shard, hash, key, owned)
    }

    #[cold]
    fn create<Q>(
        &self,
        shard: &RwLock<HashTable<Slot<K>>>,
        hash: u64,
        key: &Q,
        owned: impl FnOnce(&Q) -> K,
    ) -> Breaker
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let keys = self.shared.keys.load(Relaxed);
        if keys >= self.shared.max_keys && self.shared.may_sweep(keys) {
            self.sweep();
        }
        let mut map = shard.write();
        if let Some(slot) = map.find(hash, |slot| slot.key.borrow() == key) {
            return slot.entry.touch();
        }
        let breaker = Breaker::from_parts(
            self.shared.group,
            self.shared.config,
            self.shared.clock.clone(),
        );
        let hasher = &self.shared.hasher;
        map.insert_unique(
            hash,
            Slot {
                key: owned(key),
                entry: Entry {
                    breaker: breaker.clone(),
                    used: AtomicBool::new(true),
                },
            },
            // `Borrow`'s contract: the owned key hashes as its borrowed form.
            |slot| hasher.hash_one(&slot.key),
        );
        self.shared.keys.fetch_add(1, Relaxed);
        breaker
    }

    /// The breaker of `key` if the group holds one; creates nothing. Pure.
    pub fn get<Q>(&self, key: &Q) -> Option<Breaker>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let (hash, shard) = self.shard(key);
        let map = shard.read();
        map.find(hash, |slot| slot.key.borrow() == key)
            .map(|slot| slot.entry.breaker.clone())
    }

    /// Evicts idle, closed keys until the group is a sixteenth below `max_keys`,
    /// or every key was passed twice (once to take back its second chance).
    fn sweep(&self) {
        let shared = &*self.shared;
        let target = shared.max_keys - shared.max_keys / 16 - 1;
        let start = shared.hand.fetch_add(1, Relaxed);
        let mut freed = 0;
        for i in 0..2 * SHARDS {
            if shared.keys.load(Relaxed) <= target {
                break;
            }
            // The evicted sums' lock first, then the shard's, as in `metrics`:
            // a reader never sees a key gone from its shard and not yet in the
            // sums, so the group's counts never go down.
            let mut evicted_sums = shared.evicted.lock();
            let mut map = shared.shards[(start + i) % SHARDS].write();
            let mut folded = Folded::default();
            let before = map.len();
            map.retain(|Slot { entry, .. }| {
                if entry.used.swap(false, Relaxed) {
                    return true;
                }
                if !entry.is_evictable() {
                    return true;
                }
                folded.add(&entry.breaker.metrics());
                false
            });
            let evicted = before - map.len();
            drop(map);
            freed += evicted;
            if evicted > 0 {
                evicted_sums.merge(&folded);
                shared.keys.fetch_sub(evicted, Relaxed);
                shared.evictions.fetch_add(evicted as u64, Relaxed);
            }
            drop(evicted_sums);
        }
        if freed == 0 {
            shared.futile_at.store(shared.clock.now(), Relaxed);
            shared
                .futile
                .store(shared.keys.load(Relaxed).max(1), Relaxed);
        } else {
            shared.futile.store(0, Relaxed);
        }
    }

    /// Every key the group holds, with its breaker's state, in no order.
    pub fn keys(&self) -> Vec<(K, State)>
    where
        K: Clone,
    {
        let mut all = Vec::with_capacity(self.shared.keys.load(Relaxed));
        for shard in self.shared.shards.iter() {
            all.extend(
                shard
                    .read()
                    .iter()
                    .map(|slot| (slot.key.clone(), slot.entry.breaker.state())),
            );
        }
        all
    }

    /// The group's counts (its keys' summed, evicted keys included) and keys by
    /// state. Pure. Exact once the counting threads are quiet.
    pub fn metrics(&self) -> KeyedMetrics {
        self.shared.metrics()
    }
}

impl Entry {
    #[inline]
    fn touch(&self) -> Breaker {
        if !self.used.load(Relaxed) {
            self.used.store(true, Relaxed);
        }
        self.breaker.clone()
    }

    /// Closed, or open and not called since its open time ran out a whole open
    /// duration ago; and no handle but the map's: nobody can be calling through
    /// it, and none can start while the caller holds the shard's write lock.
    ///
    /// An open key is kept while its open time runs, so a host that is down
    /// stays refused. Past it, its next call would only be a probe; a key that
    /// no call has come for during another open duration (a crawler's dead
    /// host, say) may go, or the keys that once failed would pin the group's
    /// memory for ever.
    fn is_evictable(&self) -> bool {
        if self.breaker.handles() != 1 {
            return false;
        }
        // Pairs with the release of the last other handle's drop, so its counts
        // are all read by the fold.
        fence(Acquire);
        match self.breaker.state() {
            State::Closed => true,
            State::Open => self.breaker.open_long_past(),
            State::HalfOpen | State::ForcedOpen | State::ForcedClosed => false,
        }
    }
}

impl<K> Shared<K> {
    /// Whether a new key, the group holding `keys`, sweeps: always, unless the
    /// last sweep freed nothing; then once the group has grown a sixteenth past
    /// what it left (so sweeps that find nothing cost each new key a sixteenth
    /// of a sweep at most), or an open duration later.
    fn may_sweep(&self, keys: usize) -> bool {
        match self.futile.load(Relaxed) {
            0 => true,
            left => {
                keys >= left.saturating_add((left / 16).max(1))
                    || self.clock.reached(
                        (self.futile_at.load(Relaxed)).saturating_add(self.config.open_nanos()),
                    )
            }
        }
    }
}

impl<K> fmt::Debug for KeyedGroup<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedGroup")
            .field("group", &self.shared.group)
            .field("keys", &self.shared.keys.load(Relaxed))
            .field("max_keys", &self.shared.max_keys)
            .finish_non_exhaustive()
    }
}
