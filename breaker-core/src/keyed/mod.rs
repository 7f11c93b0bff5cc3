//! Keyed breakers: one breaker per key (host, tenant, shard) of a group, all on
//! the group's config, in bounded memory ([`KeyedGroup`]).
//!
//! Keys live in a lock-free map (`papaya`): a call for a key that exists takes
//! no lock and does not wait while other keys are created or evicted; it clones
//! the key's breaker handle and checks the key's mark (see `handshake`). Only a
//! call that meets its own key in the instant a sweep is deciding to evict it
//! waits, for that decision. Creating and evicting keys take turns on the
//! group's writer lock. Evicted entries are freed in batches (`RETIRE_BATCH`)
//! once no lookup can still see them, by whichever thread comes last.
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

use std::borrow::Borrow;
use std::fmt;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::Arc;

use papaya::Guard;
use parking_lot::Mutex;

use crate::breaker::{check_change, Breaker, PolicyChange};
use crate::clock::ClockSource;
use crate::config::Config;
use crate::events::Subscribers;
use crate::state::State;

mod groups;
mod handshake;
mod key;
mod metrics;
#[cfg(all(test, not(loom)))]
mod tests;

pub(crate) use self::groups::KeyedGroups;
pub use self::groups::WrongKeyType;
use self::handshake::Mark;
pub use self::key::AsKey;
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
    /// What the group was first declared with (what conflicts compare against).
    declared: Config,
    /// What the keys run and new keys are built with: `declared`, unless a
    /// `configure`d config, layered configuration or
    /// [`KeyedGroup::reconfigure`] replaced it. Written under `writer`.
    config: Mutex<Config>,
    clock: ClockSource,
    max_keys: usize,
    /// The keys. Hashed with `foldhash`, seeded at random per group, but not
    /// flooding-resistant as SipHash is (see the README's "Keyed breakers"):
    /// about 100 instructions a call cheaper.
    map: papaya::HashMap<K, Entry, foldhash::fast::RandomState>,
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
    /// Where the keys' transitions go: a registry's group only. Once the
    /// registry has a subscriber told keyed transitions, each key's breaker
    /// is named (`Breaker::name_key`) before it is inserted, or by the walk
    /// `Registry::subscribe` makes (`name_keys`), so its transitions reach
    /// them as `Event::KeyedTransition`s. Until then no key's text is made.
    tell: Option<Tell<K>>,
}

/// A registry's subscribers, and how its keyed group writes a key for them.
pub(crate) struct Tell<K> {
    pub(crate) subscribers: Arc<Subscribers>,
    /// [`key_text`], which needs `K: Debug`: `Registry::keyed` asks for it, a
    /// standalone group does not.
    pub(crate) name: fn(&K) -> Arc<str>,
}

/// The most bytes of a key's text kept for events; a longer one is cut
/// there, on a character boundary, and `…` is added.
const MAX_KEY_TEXT: usize = 256;

/// A key's text for events: a `String` key (what `&str`, `Box<str>` and
/// `Arc<str>` keys are kept as) as it is, unquoted, escaped by
/// `str::escape_debug`; any other key as its `Debug` writes it. Cut at
/// [`MAX_KEY_TEXT`] bytes, then `…`, however long the key.
pub(crate) fn key_text<K: fmt::Debug + 'static>(key: &K) -> Arc<str> {
    use std::fmt::Write;
    let mut text = Bounded {
        text: String::new(),
        cut: false,
    };
    // An error is the cut (or the key's own `Debug` failing): what was
    // written before it stands.
    let _ = match (key as &dyn std::any::Any).downcast_ref::<String>() {
        Some(string) => write!(text, "{}", string.escape_debug()),
        None => write!(text, "{key:?}"),
    };
    if text.cut {
        text.text.push('…');
    }
    text.text.into()
}

/// A `String` that takes at most [`MAX_KEY_TEXT`] bytes, then refuses every
/// write (so a huge key's `Debug` stops early, and one that goes on after a
/// refusal adds nothing).
struct Bounded {
    text: String,
    cut: bool,
}

impl fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.cut {
            return Err(fmt::Error);
        }
        let room = MAX_KEY_TEXT - self.text.len();
        if s.len() <= room {
            self.text.push_str(s);
            return Ok(());
        }
        let mut end = room;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&s[..end]);
        self.cut = true;
        Err(fmt::Error)
    }
}

/// A key's breaker.
struct Entry {
    breaker: Breaker,
    /// Used since the last sweep passed it (spared once), or being evicted.
    mark: Mark,
}

impl<K: Hash + Eq + Send + Sync + 'static> KeyedGroup<K> {
    /// A standalone keyed group on the monotonic clock holding at most about
    /// `max_keys` idle keys (at least 1). Most code gets one from
    /// [`Registry::keyed`](crate::Registry::keyed).
    pub fn new(group: &str, config: Config, max_keys: usize) -> Self {
        Self::from_parts(
            crate::names::intern(group),
            config,
            config,
            ClockSource::Monotonic,
            max_keys,
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
        max_keys: usize,
        tell: Option<Tell<K>>,
    ) -> Self {
        KeyedGroup {
            shared: Arc::new(Shared {
                group,
                declared,
                config: Mutex::new(config),
                clock,
                max_keys: max_keys.max(1),
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
            }),
        }
    }

    /// The group.
    pub fn group(&self) -> &'static str {
        self.shared.group
    }

    /// The config every key's breaker runs with (and new keys are built
    /// with).
    pub fn config(&self) -> Config {
        *self.shared.config.lock()
    }

    /// The config the group was first declared with: what
    /// [`config`](Self::config) is unless a config
    /// [`configure`](crate::Registry::configure)d for the name, layered
    /// configuration ([`Registry::layer`](crate::Registry::layer), a config
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
    /// use breaker_core::{Config, KeyedGroup, State};
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

    /// The most idle keys the group holds.
    pub fn max_keys(&self) -> usize {
        self.shared.max_keys
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
        let map = &self.shared.map;
        let guard = map.guard();
        if let Some(entry) = map.get(key, &guard) {
            if let Some(breaker) = entry.claim(true) {
                return breaker;
            }
        }
        drop(guard);
        self.create(key, owned)
    }

    /// A key not found (or found being evicted): under the writer lock, found
    /// again or created, after a sweep if the group is full.
    #[cold]
    fn create<Q>(&self, key: &Q, owned: impl FnOnce(&Q) -> K) -> Breaker
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let shared = &*self.shared;
        // Built before the writer lock, which every new key of the group
        // takes in turn: only the map's work is done under it.
        let owned = owned(key);
        let mut config = *shared.config.lock();
        let mut breaker = Breaker::from_parts(shared.group, config, shared.clock.clone());
        loop {
            // Named with no lock held: the key's text is the user's `Debug`.
            shared.name_key(&breaker, &owned);
            #[cfg(all(test, not(loom)))]
            tests::before_the_writer_lock();
            let _writer = shared.writer.lock();
            let guard = shared.map.guard();
            if let Some(found) = self.held(key, &guard, true) {
                return found;
            }
            let now = *shared.config.lock();
            if now != config {
                // Reconfigured since: build it as the other keys now run.
                config = now;
                breaker = Breaker::from_parts(shared.group, now, shared.clock.clone());
            }
            if shared.must_name(&breaker) {
                // A subscriber came since (or the breaker is new): name it
                // with the lock released. Seen under the lock, so a
                // subscription whose walk this key's insertion would miss
                // (`name_keys`) is always seen here.
                continue;
            }
            let keys = shared.keys.load(Relaxed);
            if keys >= shared.max_keys && shared.may_sweep(keys) {
                self.sweep(&guard);
            }
            return self.insert(owned, breaker, &guard);
        }
    }

    /// Inserts the new key `owned`, the writer lock held.
    fn insert(&self, owned: K, breaker: Breaker, guard: &impl Guard) -> Breaker {
        let shared = &*self.shared;
        let replaced = shared.map.insert(
            owned,
            Entry {
                breaker: breaker.clone(),
                mark: Mark::new(),
            },
            guard,
        );
        debug_assert!(replaced.is_none(), "a key is created under the writer lock");
        shared.keys.fetch_add(1, Relaxed);
        breaker
    }

    /// `key`'s breaker, the writer lock held: no sweep is evicting it.
    fn held<Q>(&self, key: &Q, guard: &impl Guard, touch: bool) -> Option<Breaker>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let entry = self.shared.map.get(key, guard)?;
        let breaker = entry.claim(touch);
        debug_assert!(breaker.is_some(), "a sweep ends under the writer lock");
        breaker
    }

    /// The breaker of `key` if the group holds one; creates nothing and changes
    /// nothing (a key met while a sweep decides on it waits for the decision).
    pub fn get<Q>(&self, key: &Q) -> Option<Breaker>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let map = &self.shared.map;
        let found = map.get(key, &map.guard())?.claim(false);
        found.or_else(|| {
            // Found as a sweep was evicting it: the sweep has decided by the
            // time the writer lock is free.
            let _writer = self.shared.writer.lock();
            self.held(key, &map.guard(), false)
        })
    }

    /// Evicts idle, closed keys until the group is a sixteenth below `max_keys`,
    /// or every key was passed twice (once to take back its second chance). The
    /// writer lock is held.
    fn sweep(&self, guard: &impl Guard) {
        let shared = &*self.shared;
        let target = shared.max_keys - shared.max_keys / 16 - 1;
        let map = &shared.map;
        // Held across the sweep, as in `metrics`: a reader never sees a key gone
        // from the map and not yet in the sums, so the group's counts never go
        // down.
        let mut evicted_sums = shared.evicted.lock();
        let mut freed = 0;
        let len = map.len();
        let start = shared.hand.load(Relaxed) % len.max(1);
        // From the hand round to it, twice: the first pass takes back second
        // chances the second may then use.
        let passes = map
            .iter(guard)
            .skip(start)
            .chain(map.iter(guard))
            .chain(map.iter(guard).take(start));
        let mut passed = 0;
        for (key, entry) in passes {
            if shared.keys.load(Relaxed) <= target {
                break;
            }
            passed += 1;
            if entry.mark.spare() || entry.breaker.handles() != 1 {
                continue;
            }
            let Some(evicting) = entry
                .mark
                .evict(|| entry.breaker.handles(), || entry.state_evictable())
            else {
                continue;
            };
            // Each eviction is booked whole before the next: the user's clock,
            // `Hash` or `Eq` may panic in the fold or the removal, and then
            // the entry stays (see `Evicting`) and nothing is counted twice
            // or lost.
            let counts = entry.breaker.metrics();
            map.remove(key, guard);
            evicting.done();
            evicted_sums.add(&counts);
            shared.keys.fetch_sub(1, Relaxed);
            shared.evictions.fetch_add(1, Relaxed);
            freed += 1;
        }
        shared.hand.store((start + passed) % len.max(1), Relaxed);
        drop(evicted_sums);
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

impl Entry {
    /// A handle on the key's breaker, unless a sweep is evicting it; `touch`
    /// marks it used (the sweep's second chance).
    #[inline]
    fn claim(&self, touch: bool) -> Option<Breaker> {
        self.mark.claim(|| self.breaker.clone(), touch)
    }

    /// Closed, or open and not called since its open time ran out a whole open
    /// duration ago. Read by a sweep once it knows no handle but the map's
    /// exists and none can be taken (see `handshake`).
    ///
    /// An open key is kept while its open time runs, so a host that is down
    /// stays refused. Past it, its next call would only be a probe; a key that
    /// no call has come for during another open duration (a crawler's dead
    /// host, say) may go, or the keys that once failed would pin the group's
    /// memory for ever.
    fn state_evictable(&self) -> bool {
        match self.breaker.state() {
            State::Closed => true,
            State::Open => self.breaker.open_long_past(),
            State::HalfOpen | State::ForcedOpen | State::ForcedClosed => false,
        }
    }
}

impl<K: Hash + Eq> Shared<K> {
    /// Names `breaker` as `key`'s if the registry has a subscriber told keyed
    /// transitions (see `tell`). Runs the key's `Debug`: never under a lock.
    fn name_key(&self, breaker: &Breaker, key: &K) {
        if let Some(tell) = &self.tell {
            if tell.subscribers.wants_keys() {
                breaker.name_key(|| (tell.name)(key), &tell.subscribers);
            }
        }
    }

    /// Whether `breaker` is to be named and is not.
    fn must_name(&self, breaker: &Breaker) -> bool {
        self.tell
            .as_ref()
            .is_some_and(|tell| tell.subscribers.wants_keys())
            && !breaker.is_named()
    }

    /// Names every key's breaker; `Registry::subscribe` calls this once its
    /// subscriber is listed.
    pub(super) fn name_keys(&self) {
        if self.tell.is_none() {
            return;
        }
        // The writer lock as a barrier, held for no work: a key inserted
        // before it is in the map for the walk below, and one inserted after
        // it saw the subscriber and was named first (`create`). The walk
        // itself runs each key's `Debug` with no lock held.
        drop(self.writer.lock());
        for (key, entry) in self.map.pin().iter() {
            self.name_key(&entry.breaker, key);
        }
    }

    pub(super) fn check_reconfigure(&self, config: &Config) -> Result<(), PolicyChange> {
        check_change(self.group, &self.config.lock(), config)
    }

    /// See [`KeyedGroup::reconfigure`]. Checked and applied under the writer
    /// lock, so no key is created meanwhile.
    pub(super) fn reconfigure(&self, config: Config) -> Result<Config, PolicyChange> {
        let _writer = self.writer.lock();
        self.check_reconfigure(&config)?;
        for (_, entry) in self.map.pin().iter() {
            // A key's breaker runs its group's policy and fixed keys (its own
            // handle's `reconfigure` cannot change them), so the check above
            // answers for every key.
            entry
                .breaker
                .reconfigure(config)
                .expect("a key runs its group's policy and fixed keys");
        }
        // Last: the group's config changes once every key runs it.
        Ok(std::mem::replace(&mut *self.config.lock(), config))
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
                        (self.futile_at.load(Relaxed))
                            .saturating_add(self.config.lock().open_nanos()),
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
