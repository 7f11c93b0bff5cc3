//! Keyed breakers: one breaker per key (host, tenant, shard) of a group, all on
//! the group's config, in bounded memory ([`KeyedGroup`]).
//!
//! Keys live in a lock-free map (`papaya`): finding a key that exists takes no
//! lock and does not wait while other keys are created or evicted; it clones
//! the key's breaker handle and checks the key's mark (see `handshake`). Only a
//! call that meets its own key in the instant a sweep is deciding to evict it
//! waits, for that decision. The call itself is then a breaker's call: one
//! that trips or closes the key's circuit takes that breaker's transition lock. Creating and evicting keys take turns on the
//! group's writer lock. Evicted entries are freed in batches (`RETIRE_BATCH`)
//! once no lookup can still see them, by whichever thread comes last.
//! The key type owns its data (`K: Hash + Eq`, a `String` for a host): nothing is
//! interned or leaked. When a new key would pass `key_capacity`, a sweep evicts idle,
//! closed breakers in approximately least-recently-used order (the CLOCK
//! algorithm: a key used since the last sweep gets a second chance). A breaker that
//! is forced, open within its open time (a host that is down stays refused),
//! half-open with a probe holding its slot, or whose handle anyone holds (a call
//! in flight), is not evicted; so the group can exceed `key_capacity` by the keys in
//! that state. An open key that no call has come for during one more open
//! duration past its open time may go, and so may a half-open key whose probes
//! all ended (cancelled, say) and that no probe was admitted to for an open
//! duration: its next call would only have been a probe, and dead hosts must not
//! pin the group's memory for ever. A sweep that frees nothing is not repeated until the
//! group has grown a sixteenth or an open duration has passed.
//! An evicted breaker's counts are folded into the group's, so the group's
//! metrics lose nothing.
//!
//! `KeyedGroup`'s methods are split by concern: this file has the group and
//! its lookups; `insert` creates keys and names them for subscribers (and
//! states the invariant that ties the two); `sweep` evicts; `reconfigure`
//! reconfigures; `groups` erases the key type for the registry.

use std::borrow::Borrow;
use std::fmt;
use std::hash::Hash;
use std::sync::{Arc, Weak};

use crate::breaker::{Breaker, PolicyChange};
use crate::clock::ClockSource;
use crate::config::Config;
use crate::histogram::CallHistogram;
use crate::level::GroupLevel;
use crate::retry::{Retry, RetryPolicy, RetrySlot, RetryTuning};
use crate::state::State;
use crate::sync::{AtomicU64, AtomicUsize, Mutex, Ordering::*};

mod groups;
mod handshake;
mod hold;
mod insert;
mod judge;
mod key;
mod key_text;
mod metrics;
mod reconfigure;
mod sweep;
#[cfg(all(test, not(loom)))]
mod tests;
mod worst;

pub(crate) use self::groups::KeyedGroups;
pub use self::groups::WrongKeyType;
use self::handshake::Mark;
pub(crate) use self::insert::Tell;
pub(crate) use self::judge::Judge;
pub use self::key::AsKey;
pub(crate) use self::key_text::key_text;
use self::metrics::Folded;
pub use self::metrics::KeyedMetrics;

/// How many evicted entries a thread retires before they are freed together:
/// each batch costs one process-wide barrier (`membarrier` on Linux), and is
/// freed by whichever thread leaves the last guard that could see it, a
/// calling thread included. seize's default is 32; at 128, churning keys pays
/// a quarter of the barriers, and a batch is about 128 small frees.
const RETIRE_BATCH: usize = 128;

/// The breakers of one group, one per key, sharing the group's config.
/// Cloning is cheap and shares the same group.
///
/// The key type's `Hash` and `Eq` must not panic. A panic while a key is
/// evicted leaves that key held and every count in place
/// (`keyed_sweep_survives_a_panicking_key.rs`), but one while the map grows
/// leaves its resize unfinished, and every walk of the group (sweeps,
/// [`metrics`](Self::metrics), [`keys`](Self::keys), reconfiguration) then
/// waits for it for ever, as `papaya` documents for its own map.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Config, keyed::KeyedGroup, State};
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
    /// What the group was first declared with (what conflicts compare against).
    declared: Config,
    /// What the keys run and new keys are built with: `declared`, unless a
    /// `configure`d config, layered configuration or
    /// [`KeyedGroup::reconfigure`] replaced it. Written under `writer`.
    config: Mutex<Config>,
    clock: ClockSource,
    key_capacity: usize,
    /// The keys. Hashed with `foldhash`, seeded at random per group, but not
    /// flooding-resistant as SipHash is (see the crate docs' "Keyed breakers"):
    /// cheaper to hash on every call.
    map: papaya::HashMap<K, Key, foldhash::fast::RandomState>,
    /// Creating a key and sweeping take turns here; calls never do.
    writer: Mutex<()>,
    keys: AtomicUsize,
    /// How many entries the next sweep skips before it starts: where the last
    /// one stopped.
    hand: AtomicUsize,
    /// The key count after the last sweep that evicted nothing (0: none did),
    /// and when it ran (clock nanos). No sweep runs again until the group has
    /// grown a sixteenth past that count or an open duration has passed (open
    /// keys become evictable with time): with nothing evictable (every key
    /// open, or in a call), each new key would otherwise pass over every key
    /// under the writer lock.
    futile: AtomicUsize,
    futile_at: AtomicU64,
    evictions: AtomicU64,
    /// The counts of evicted breakers.
    evicted: Mutex<Folded>,
    /// Where the keys' transitions go: a registry's group only. Keys are
    /// named for its subscribers as `insert` says; until one wants keys, no
    /// key's text is made.
    tell: Option<Tell<K>>,
    /// The call-duration histogram every key counts in, when the group keeps
    /// one (`histogram_ms` is fixed for the group's life).
    histogram: Option<Arc<CallHistogram>>,
    /// The group's retry budget, which every key draws on: made by the
    /// group's first retried call, in a slot every key holds from its start.
    retry: Arc<RetrySlot>,
    /// The group level, when the group judges as one (`systemic_share`,
    /// `max_open_keys`; see `judge`): every key holds it from its start.
    judge: Option<Arc<Judge>>,
    /// When the group's hold ends (clock nanos; 0: never held): every key
    /// created before then is held until then. Written under `writer`.
    held_until: AtomicU64,
}

/// A key's breaker.
struct Key {
    breaker: Breaker,
    /// Used since the last sweep passed it (spared once), or being evicted.
    mark: Mark,
}

impl<K: Hash + Eq + Send + Sync + 'static> KeyedGroup<K> {
    /// A standalone keyed group on the monotonic clock holding at most about
    /// `key_capacity` idle keys (at least 1). Most code gets one from
    /// [`Registry::keyed`](crate::Registry::keyed).
    pub fn new(group: &str, config: Config, key_capacity: usize) -> Self {
        Self::from_parts(
            crate::names::intern(group),
            config,
            config,
            ClockSource::Monotonic,
            key_capacity,
            None,
        )
    }

    /// A group declared with `declared` whose keys run `config` (the
    /// declaration through the registry's layered configuration), telling
    /// its keys' transitions as `tell` says (a registry's group; `None`: a
    /// standalone one, which tells no one).
    pub(crate) fn from_parts(
        group: &'static str,
        declared: Config,
        config: Config,
        clock: ClockSource,
        key_capacity: usize,
        tell: Option<Tell<K>>,
    ) -> Self {
        KeyedGroup {
            shared: Arc::new_cyclic(|shared: &Weak<Shared<K>>| {
                let judge = config.judges_group().then(|| {
                    let subscribers = tell.as_ref().map(|tell| Arc::clone(&tell.subscribers));
                    let shared = shared.clone();
                    let successes = move || shared.upgrade().map_or(0, |s| s.successes());
                    Arc::new(Judge::new(
                        group,
                        config,
                        clock.clone(),
                        subscribers,
                        Box::new(successes),
                    ))
                });
                Shared {
                    group,
                    declared,
                    config: Mutex::new(config),
                    clock,
                    key_capacity: key_capacity.max(1),
                    map: papaya::HashMap::builder()
                        .hasher(Default::default())
                        .collector(seize::Collector::new().batch_size(RETIRE_BATCH))
                        .build(),
                    writer: Mutex::new(()),
                    keys: AtomicUsize::new(0),
                    hand: AtomicUsize::new(0),
                    futile: AtomicUsize::new(0),
                    futile_at: AtomicU64::new(0),
                    evictions: AtomicU64::new(0),
                    evicted: Mutex::new(Folded::default()),
                    tell,
                    histogram: CallHistogram::new(&config, true).map(Arc::new),
                    retry: Arc::new(RetrySlot::with_level(
                        judge.clone().map(|judge| judge as Arc<dyn GroupLevel>),
                        judge.as_ref().map(|judge| judge.key_counts()),
                    )),
                    judge,
                    held_until: AtomicU64::new(0),
                }
            }),
        }
    }

    /// The group.
    pub fn group(&self) -> &'static str {
        self.shared.group
    }

    /// The group's [`Retry`], one budget for all its keys: made from
    /// `declared` by the first call that asks (for any key, through
    /// [`Breaker::group_retry`] on a key's breaker too), and returned as made
    /// to every later one. A later `declared` that differs is logged once at
    /// `warn`, and the first one holds (see [`Breaker::group_retry`]).
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{keyed::KeyedGroup, Config, RetryPolicy};
    ///
    /// static POLICY: RetryPolicy = RetryPolicy::new(2);
    /// let hosts = KeyedGroup::<String>::new("hosts", Config::default(), 100);
    /// let retry = hosts.group_retry(&POLICY);
    /// let a = hosts.breaker("a.example");
    /// assert!(std::ptr::eq(a.group_retry(&POLICY), retry), "one budget for every key");
    /// ```
    pub fn group_retry(&self, declared: &RetryPolicy) -> &Retry {
        let clock = &self.shared.clock;
        self.shared
            .retry
            .retry(self.shared.group, declared, false, || clock.now())
    }

    /// Layers `tuning` over the group's retry declaration, for every key
    /// (see `RetrySlot::tune`).
    pub(crate) fn tune_retry(&self, tuning: &RetryTuning) {
        self.shared.tune_retry(tuning);
    }

    /// The config every key's breaker runs with (and new keys are built
    /// with).
    pub fn config(&self) -> Config {
        *self.shared.config.lock()
    }

    /// The config the group was first declared with: what
    /// [`config`](Self::config) is unless a config
    /// [`configure`](crate::Registry::configure)d for the name, layered
    /// configuration ([`Registry::apply_config`](crate::Registry::apply_config), a config
    /// file) or [`reconfigure`](Self::reconfigure) replaced it.
    pub fn declared(&self) -> Config {
        self.shared.declared
    }

    /// Replaces the config of every key's breaker while they run, keeping each
    /// one's state and counts (as [`Breaker::reconfigure`]), and of every key
    /// created from now on. Returns the config it replaced.
    ///
    /// # Errors
    ///
    /// [`PolicyChange`], changing nothing, for what [`Breaker::reconfigure`]
    /// refuses: another failure policy, or another `max_concurrent`,
    /// `timeout_ms` or `latency_p99_ms`.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, keyed::KeyedGroup, State};
    ///
    /// let hosts = KeyedGroup::<String>::new("hosts", Config::builder().threshold(5).build().unwrap(), 100);
    /// hosts.breaker("a.example").try_acquire().unwrap().failure();
    /// hosts.reconfigure(Config::builder().threshold(2).build().unwrap()).unwrap();
    /// hosts.breaker("a.example").try_acquire().unwrap().failure(); // the second: trips
    /// assert_eq!(hosts.breaker("a.example").state(), State::Open);
    /// assert_eq!(hosts.breaker("b.example").config().threshold(), 2);
    /// assert_eq!(hosts.declared().threshold(), 5);
    /// ```
    pub fn reconfigure(&self, config: Config) -> Result<Config, PolicyChange> {
        self.shared.reconfigure(config)
    }

    /// Whether [`reconfigure`](Self::reconfigure) would take `config`.
    pub fn check_reconfigure(&self, config: &Config) -> Result<(), PolicyChange> {
        self.shared.check_reconfigure(config)
    }

    /// Switches shadow mode on or off, live, for every key the group holds
    /// and every key it creates from now on (as [`Breaker::set_shadow`]); one
    /// key alone switches with its own breaker's `set_shadow`. The group's
    /// [`config`](Self::config) and its keys' say the mode set, so the next
    /// reconfiguration of the group (a reload) that names another mode
    /// switches every key together.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, keyed::KeyedGroup};
    ///
    /// let hosts = KeyedGroup::<String>::new("hosts", Config::builder().threshold(1).build().unwrap(), 100);
    /// hosts.breaker("a.example").try_acquire().unwrap().failure();
    /// hosts.set_shadow(true);
    /// assert!(hosts.breaker("a.example").try_acquire().is_ok());
    /// assert!(hosts.breaker("b.example").is_shadow());
    /// assert_eq!(hosts.metrics().shadow_refused, 1);
    /// ```
    pub fn set_shadow(&self, on: bool) {
        self.shared.set_shadow(on);
    }

    /// The group's own breaker when the group judges as one
    /// (`systemic_share` or `max_open_keys` set), `None` otherwise. Closed
    /// while its keys judge alone; open (or half-open), it stands for every
    /// key, and after its close with a ramp, for the lookups the ramp
    /// refuses, as [`breaker`](Self::breaker) says. Force it open to refuse the
    /// whole group by hand. A registry's group tells its transitions to the
    /// registry's subscribers as [`Event::Transition`](crate::events::Event::Transition)s
    /// of the group's name (its keys' are `KeyedTransition`s), with the trip
    /// causes `systemic_share` and `max_open_keys` of its own.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{keyed::KeyedGroup, Config, OpenReason, State};
    ///
    /// let config = Config::builder().threshold(3).systemic_share(0.5).build().unwrap();
    /// let hosts = KeyedGroup::<u32>::new("shards", config, 100);
    /// for shard in 0..4 {
    ///     hosts.breaker(&shard).try_acquire().unwrap().success();
    /// }
    /// // Two of four shards fail, none recovers: half the keys, a shared fault.
    /// hosts.breaker(&0).try_acquire().unwrap().failure();
    /// hosts.breaker(&1).try_acquire().unwrap().failure();
    /// assert_eq!(hosts.group_breaker().unwrap().state(), State::Open);
    /// let refused = hosts.breaker(&3).try_acquire().unwrap_err();
    /// assert_eq!(refused.reason(), OpenReason::Group);
    /// assert_eq!(hosts.breaker(&0).state(), State::Open, "the group's, for every key");
    /// assert_eq!(hosts.get(&0).unwrap().state(), State::Closed, "the key's own");
    /// ```
    pub fn group_breaker(&self) -> Option<Breaker> {
        self.shared
            .judge
            .as_ref()
            .map(|judge| judge.breaker().clone())
    }

    /// The most idle keys the group holds.
    pub fn key_capacity(&self) -> usize {
        self.shared.key_capacity
    }

    /// The breaker of `key`, created on first use (evicting idle keys if the group
    /// is full). Holding the handle keeps the key from being evicted; a call
    /// holds it for the call's length.
    ///
    /// While a group that judges as one (`systemic_share`, `max_open_keys`)
    /// is open, this is the group's own breaker, whatever the key: it refuses
    /// with [`OpenReason::Group`](crate::OpenReason::Group) and admits the
    /// group's probe (see [`group_breaker`](Self::group_breaker)). When such
    /// a group closes with a ramp (`ramp_ms`), each lookup takes its share of
    /// the group's ramp, and one the ramp refuses is the group's breaker
    /// again, refusing with [`OpenReason::Ramping`](crate::OpenReason::Ramping).
    /// Look the key up for each call: a handle kept from before the group
    /// opened runs the key's own breaker.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{CallError, Config, keyed::KeyedGroup};
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
    /// # use breaker_core as breakerbox;
    /// use std::net::{IpAddr, Ipv4Addr};
    /// use breakerbox::{Config, keyed::KeyedGroup};
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

    /// The breaker of `key` itself, created on first use: as
    /// [`breaker`](Self::breaker), but never the group's own breaker, whatever
    /// the group level says, and taking no share of a ramp. For acting on one
    /// key (forcing it open, reading it); a call looks its key up with
    /// `breaker`.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{keyed::KeyedGroup, Config, State};
    ///
    /// let config = Config::builder().threshold(2).systemic_share(0.5).build().unwrap();
    /// let hosts = KeyedGroup::<u32>::new("hosts", config, 100);
    /// hosts.group_breaker().unwrap().force_open(); // the whole group, by hand
    /// assert_eq!(hosts.breaker(&7).state(), State::ForcedOpen, "the group's");
    /// hosts.own_breaker(&7).force_open();
    /// assert_eq!(hosts.get(&7).unwrap().state(), State::ForcedOpen, "the key's own");
    /// ```
    pub fn own_breaker<Q>(&self, key: &Q) -> Breaker
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.own(key, Q::to_owned)
    }

    /// The breaker of `key`; `owned` makes the key the map keeps, only when
    /// the group does not hold it.
    #[inline]
    fn find_or_create<Q>(&self, key: &Q, owned: impl FnOnce(&Q) -> K) -> Breaker
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if self.shared.judge.is_some() {
            if let Some(group) = self.group_open() {
                return group;
            }
        }
        self.own(key, owned)
    }

    /// The key's own breaker, found or created.
    #[inline]
    fn own<Q>(&self, key: &Q, owned: impl FnOnce(&Q) -> K) -> Breaker
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let map = &self.shared.map;
        let guard = map.guard();
        if let Some(entry) = map.get(key, &guard) {
            if let Some(breaker) = entry.handle(true) {
                return breaker;
            }
        }
        drop(guard);
        self.create(key, owned)
    }

    /// The group's own breaker if the group is open as one, or its ramp
    /// after it closed refuses this lookup (out of line: a group that does
    /// not judge as one never calls it).
    #[cold]
    #[inline(never)]
    fn group_open(&self) -> Option<Breaker> {
        let judge = self.shared.judge.as_ref()?;
        let stands_in = judge.refuses() || judge.breaker().ramp_refuses_lookup();
        stands_in.then(|| judge.breaker().clone())
    }

    /// The breaker of `key` if the group holds one; creates nothing and changes
    /// nothing (a key met while a sweep decides on it waits for the decision).
    pub fn get<Q>(&self, key: &Q) -> Option<Breaker>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let map = &self.shared.map;
        let found = map.get(key, &map.guard())?.handle(false);
        found.or_else(|| {
            // Found as a sweep was evicting it: the sweep has decided by the
            // time the writer lock is free.
            let _writer = self.shared.writer.lock();
            self.held(key, &map.guard(), false)
        })
    }

    /// Every key the group holds, with its breaker's state, in no order.
    pub fn keys(&self) -> Vec<(K, State)>
    where
        K: Clone,
    {
        let map = &self.shared.map;
        map.pin()
            .iter()
            .map(|(key, entry)| (key.clone(), entry.breaker.state()))
            .collect()
    }

    /// The group's counts (its keys' summed, evicted keys included) and keys by
    /// state. Pure. Exact once the counting threads are quiet.
    pub fn metrics(&self) -> KeyedMetrics {
        self.shared.metrics()
    }
}

impl<K: Hash + Eq> Shared<K> {
    /// The successes of every key the group ever held: what the group level
    /// reads when a failure run begins and when it would trip.
    fn successes(&self) -> u64 {
        let evicted = self.evicted.lock();
        let held = self.map.pin().iter().fold(0u64, |sum, (_, entry)| {
            sum.saturating_add(entry.breaker.metrics().successes)
        });
        held.saturating_add(evicted.successes())
    }

    /// See [`KeyedGroup::metrics`].
    fn metrics(&self) -> KeyedMetrics {
        // Held across the scan (see `sweep`): an eviction is seen either in the
        // map or in the sums, never in neither. Calls take no part in it.
        let evicted = self.evicted.lock();
        let pinned = self.map.pin();
        metrics::keyed_metrics(
            self.group,
            self.key_capacity,
            self.evictions.load(Relaxed),
            *evicted,
            pinned.iter().map(|(_, entry)| entry.breaker.metrics()),
            self.histogram.as_ref().map(|h| h.read()),
            self.judge.as_ref().map(|judge| judge.breaker().metrics()),
        )
    }
}

impl Key {
    /// A handle on the key's breaker, unless a sweep is evicting it; `touch`
    /// marks it used (the sweep's second chance).
    #[inline]
    fn handle(&self, touch: bool) -> Option<Breaker> {
        self.mark.hand_out(|| self.breaker.clone(), touch)
    }
}

impl<K> fmt::Debug for KeyedGroup<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedGroup")
            .field("group", &self.shared.group)
            .field("keys", &self.shared.keys.load(Relaxed))
            .field("key_capacity", &self.shared.key_capacity)
            .finish_non_exhaustive()
    }
}
