//! What breakers and registries tell their subscribers: the [`Event`]s
//! (transitions, conflicts), the [`Subscription`] that ends a subscriber, and the
//! per-breaker hub that counts transitions and delivers them in generation order.
//!
//! # The guarantees
//!
//! - **Slow paths only.** Events are built where a breaker changes generation or a
//!   registry records a conflict. A call that changes nothing never looks at the
//!   subscribers: with none, the call path runs no step for them.
//! - **No lock held.** A subscriber runs after the breaker's and the registry's
//!   locks are released, so it may inspect the registry, force or reset a
//!   breaker, or make a guarded call.
//! - **Order.** Per breaker, transitions are delivered in generation order, each
//!   once, to every subscriber, even when two threads make consecutive
//!   transitions at once: a transition that finds an earlier one not yet
//!   delivered waits in the breaker's queue, and the thread delivering drains it.
//!   So the thread that made a transition may return before its event is
//!   delivered (another thread delivers it), and a subscriber that causes a
//!   transition of the same breaker sees that transition after its own call
//!   returns, never nested inside it. (Should more than 65,536 transitions of
//!   one breaker queue behind one not yet announced, delivery moves on and
//!   the late one comes out of order, its generation telling it.) Conflicts
//!   have no order among themselves.
//! - **Panics stay put.** Each call is wrapped in `catch_unwind`: a subscriber
//!   that panics is counted ([`Subscription::panics`]) and logged, the others
//!   still receive the event, and the breaker is unchanged.

mod counts;
mod hub;

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Weak};
use std::time::Duration;

pub use self::counts::TransitionCounts;
use self::counts::{index, STATES};
pub(crate) use self::hub::Hub;
use crate::conflict::Conflict;
use crate::state::State;
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering::*};

/// What a subscriber is told.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Config, events::Event, ManualClock, Registry, State, events::TransitionReason, events::TripCause};
/// use std::sync::{Arc, Mutex};
///
/// let registry = Registry::with_clock(ManualClock::new());
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// let subscription = registry.subscribe(move |event: &Event| {
///     if let Event::Transition(t) = event {
///         sink.lock().unwrap().push((t.group, t.from, t.to, t.reason));
///     }
/// });
/// let db = registry.breaker("db", &Config::builder().threshold(1).build()?);
/// db.try_acquire()?.failure();
/// assert_eq!(
///     seen.lock().unwrap()[..],
///     [("db", State::Closed, State::Open, TransitionReason::Tripped(TripCause::ConsecutiveFailures))]
/// );
/// drop(subscription); // unsubscribes
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A breaker changed generation. Registry subscribers are told this of the
    /// registry's unkeyed breakers; a breaker's own subscribers, of it, keyed
    /// or not.
    Transition(Transition),
    /// A keyed group's breaker changed generation (registry subscribers only):
    /// the transition, with the key it belongs to. A keyed breaker's own
    /// subscribers ([`Breaker::subscribe`](crate::Breaker::subscribe)) are told
    /// [`Event::Transition`] instead, as for any breaker.
    KeyedTransition(KeyedTransition),
    /// Two call sites declared different configs for one group (registry
    /// subscribers only). Boxed: a config is large, and conflicts are rare.
    Conflict(Box<Conflict>),
    /// A retry was not made because its [`Retry`](crate::Retry)'s budget was
    /// spent: the call ended with its own last error. Told to the breaker's own
    /// subscribers and its registry's (for a keyed group's key, those of
    /// [`Registry::subscribe`](crate::Registry::subscribe), as its transitions are).
    RetryBudgetExhausted(RetryBudgetExhausted),
    /// A group's adaptive throttle (`throttle`) started refusing a share of
    /// its calls, or stopped: told by the claim that found the change, to the
    /// breaker's own subscribers and its registry's, as
    /// [`Event::RetryBudgetExhausted`] is.
    Throttle(ThrottleChange),
    /// A breaker took a hold: the server asked to wait
    /// ([`Breaker::hold`](crate::Breaker::hold)). No transition: the state and
    /// the generation stay. Told as [`RetryBudgetExhausted`](Event::RetryBudgetExhausted) is.
    Held(HoldStarted),
    /// A breaker's hold ended: its deadline passed (told by the first claim
    /// after it), or it was released by hand. Told as [`Held`](Event::Held) is.
    Released(HoldReleased),
}

/// The adaptive throttle started or stopped refusing ([`Event::Throttle`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct ThrottleChange {
    /// The group of the breaker whose throttle changed.
    pub group: &'static str,
    /// Whether it refuses a share of the calls now (`false`: it stopped).
    pub throttling: bool,
    /// The share it refuses at the claim that found the change, in `[0, 1)`.
    pub reject_share: f64,
}

/// A hold a breaker took ([`Event::Held`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HoldStarted {
    /// The group of the breaker.
    pub group: &'static str,
    /// What the hold holds back.
    pub scope: crate::HoldScope,
    /// The wait the server asked for.
    pub asked: Duration,
    /// The time the breaker holds its calls from now: the wait, capped at
    /// `max_hold_ms`, with the release spread drawn; the time left of an
    /// earlier hold that ends later, which it keeps.
    pub retry_after: Duration,
    /// The wait was longer than `max_hold_ms` and was capped.
    pub capped: bool,
    /// The hold is another instance's group-scope hold, applied here by a
    /// fleet agent ([`FleetControl::fleet_group_hold`](crate::fleet::FleetControl::fleet_group_hold)):
    /// an agent that shares holds publishes only the ones that are not.
    pub fleet: bool,
}

/// A hold that ended ([`Event::Released`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HoldReleased {
    /// The group of the breaker.
    pub group: &'static str,
    /// What the hold held back.
    pub scope: crate::HoldScope,
    /// Released by hand ([`Breaker::release_hold`](crate::Breaker::release_hold),
    /// manual control, the admin router) rather than by its deadline.
    pub by_hand: bool,
}

/// A retry its budget refused ([`Event::RetryBudgetExhausted`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryBudgetExhausted {
    /// The group of the breaker the call went through.
    pub group: &'static str,
    /// The retry that was refused: 1 for the call's first retry.
    pub retry: u32,
}

/// One change of generation of one breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Transition {
    /// The breaker's group.
    pub group: &'static str,
    /// The state it left.
    pub from: State,
    /// The state it entered.
    pub to: State,
    /// Why.
    pub reason: TransitionReason,
    /// The generation it entered (every transition starts a new one; it wraps
    /// after 2^33).
    pub generation: u64,
    /// When it entered [`State::Open`]: how long it stays open this time (grown by
    /// `backoff` after failed probes, with `jitter` drawn; the fleet's time left after a
    /// [fleet open](TransitionReason::FleetOpen)). `None` for every other state.
    pub open_for: Option<Duration>,
    /// When it entered [`State::Open`]: the time until a probe may go, as of the
    /// transition (equal to `open_for`). `None` otherwise (a forced open has no end).
    /// After a [fleet open](TransitionReason::FleetOpen) the agent may still
    /// move that moment ([`FleetControl::fleet_hold`](crate::fleet::FleetControl::fleet_hold)),
    /// which is no transition.
    pub retry_after: Option<Duration>,
    /// When it entered [`State::Closed`] with a traffic ramp (`ramp_ms`): how
    /// long the ramp runs. The share of calls admitted rises from none now to
    /// all of them then; the ramp's end is no transition of its own (the
    /// generation stays), and a trip before it is. `None` otherwise.
    pub ramp: Option<Duration>,
    /// In a keyed group that judges as one (`systemic_share`,
    /// `max_open_keys`), for a key's transition and the group's own: its keys
    /// open on their own and the keys it holds, as of this transition. `None`
    /// for every other breaker.
    pub keys_open: Option<KeysOpen>,
}

/// How many keys of a keyed group that judges as one are open on their own
/// ([`Transition::keys_open`]): the level the group's `max_open_keys` caps,
/// and what tells one bad key from a systemic fault.
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::sync::{Arc, Mutex};
/// use breakerbox::{events::Event, Config, Registry};
///
/// let registry = Registry::new();
/// let config = Config::builder().threshold(1).systemic_share(0.5).build().unwrap();
/// let hosts = registry.keyed::<u32>("hosts", &config, 100).unwrap();
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = Arc::clone(&seen);
/// let _subscription = registry.subscribe(move |event: &Event| {
///     if let Event::KeyedTransition(k) = event {
///         sink.lock().unwrap().push(k.transition.keys_open.unwrap());
///     }
/// });
/// for host in 0..4 {
///     hosts.breaker(&host).try_acquire().unwrap().success();
/// }
/// hosts.breaker(&0).try_acquire().unwrap().failure();
/// let keys_open = seen.lock().unwrap()[0];
/// assert_eq!((keys_open.open, keys_open.keys), (1, 4));
/// assert_eq!(keys_open.to_string(), "1 of 4 keys open");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct KeysOpen {
    /// Keys not admitting calls on their own: open, half-open or forced open.
    pub open: usize,
    /// Keys the group holds.
    pub keys: usize,
}

impl fmt::Display for KeysOpen {
    /// `3 of 40 keys open`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of {} keys open", self.open, self.keys)
    }
}

/// A transition of one key's breaker in a keyed group
/// ([`Registry::keyed`](crate::Registry::keyed), `#[circuit_breaker(key = ..)]`).
///
/// The registry learns a key's text only once it has a subscriber told keyed
/// transitions: keys created before are named by
/// [`Registry::subscribe`](crate::Registry::subscribe), which walks every keyed
/// group once, and keys created after are named as they are created. A
/// registry with no such subscriber keeps no key's text
/// ([`Registry::subscribe_unkeyed`](crate::Registry::subscribe_unkeyed)
/// subscribes without).
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Config, events::Event, ManualClock, Registry, State};
/// use std::sync::{Arc, Mutex};
///
/// let registry = Registry::with_clock(ManualClock::new());
/// let hosts = registry.keyed::<String>("upstream", &Config::builder().threshold(1).build()?, 1_000)?;
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// let _subscription = registry.subscribe(move |event: &Event| {
///     if let Event::KeyedTransition(k) = event {
///         sink.lock().unwrap().push(format!("{}", k));
///     }
/// });
/// hosts.breaker("a.example").try_acquire()?.failure();
/// assert_eq!(
///     seen.lock().unwrap()[..],
///     ["circuit `upstream` key a.example closed -> open (tripped by consecutive_failures), generation 1, open for 30s"]
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeyedTransition {
    /// The key's text: a `String` key (what `&str`, `Box<str>` and
    /// `Arc<str>` keys are kept as) as it is, unquoted (`a.example`; control
    /// characters, quotes and backslashes escaped by `str::escape_debug`),
    /// any other key as its `Debug` writes it (`7`, `("db", 5432)`). Cut at
    /// 256 bytes, then `…`. A name to read, not to parse back into a key.
    pub key: Arc<str>,
    /// The transition; its `group` is the keyed group's.
    pub transition: Transition,
}

/// Why a breaker changed generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransitionReason {
    /// The failure policy tripped: closed to open.
    Tripped(TripCause),
    /// The open duration passed and a claim became the first probe: open to
    /// half-open.
    OpenElapsed,
    /// A probe failed: half-open to open.
    ProbeFailed,
    /// Enough probes succeeded: half-open to closed.
    ProbesSucceeded,
    /// Every probe overran `probe_timeout`; a claim took their `probes` slots
    /// and started a new half-open episode.
    LeaseReclaimed {
        /// Slots taken back.
        probes: u32,
    },
    /// [`Breaker::force_open`](crate::Breaker::force_open).
    ForcedOpen,
    /// [`Breaker::force_closed`](crate::Breaker::force_closed).
    ForcedClosed,
    /// [`Breaker::reset`](crate::Breaker::reset).
    Reset,
    /// [`FleetControl::fleet_open`](crate::fleet::FleetControl::fleet_open): another instance's
    /// trip (or failed probe) reached this one through a fleet agent. Closed,
    /// open or half-open to open; `open_for` and `retry_after` are the time
    /// the fleet's open has left.
    FleetOpen,
    /// [`FleetControl::fleet_close`](crate::fleet::FleetControl::fleet_close): a probe on another
    /// instance closed the circuit. Open or half-open to closed.
    FleetClose,
}

/// Which rule of the failure policy tripped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TripCause {
    /// `threshold` failures in a row (the consecutive policy).
    ConsecutiveFailures,
    /// The failure rate of a window policy's window reached `failure_rate`.
    FailureRate,
    /// The slow-call rate of a window policy's window reached `slow_call_rate`.
    SlowCallRate,
    /// More than 1% of the window's calls took longer than `latency_p99_ms`
    /// (its p99 is above it), while the failure rate alone would not have
    /// tripped.
    LatencyP99,
    /// A keyed group's own breaker: at least `systemic_share` of its keys
    /// began failing while none recovered.
    SystemicShare,
    /// A keyed group's own breaker: a key would have tripped with
    /// `max_open_keys` of the keys open already.
    MaxOpenKeys,
}

impl TransitionReason {
    /// A short snake_case name, for logs and labels: `tripped`, `open_elapsed`,
    /// `probe_failed`, `probes_succeeded`, `lease_reclaimed`, `forced_open`,
    /// `forced_closed`, `reset`, `fleet_open`, `fleet_close`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TransitionReason::Tripped(_) => "tripped",
            TransitionReason::OpenElapsed => "open_elapsed",
            TransitionReason::ProbeFailed => "probe_failed",
            TransitionReason::ProbesSucceeded => "probes_succeeded",
            TransitionReason::LeaseReclaimed { .. } => "lease_reclaimed",
            TransitionReason::ForcedOpen => "forced_open",
            TransitionReason::ForcedClosed => "forced_closed",
            TransitionReason::Reset => "reset",
            TransitionReason::FleetOpen => "fleet_open",
            TransitionReason::FleetClose => "fleet_close",
        }
    }
}

impl TripCause {
    /// `consecutive_failures`, `failure_rate`, `slow_call_rate`,
    /// `latency_p99`, `systemic_share` or `max_open_keys`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TripCause::ConsecutiveFailures => "consecutive_failures",
            TripCause::FailureRate => "failure_rate",
            TripCause::SlowCallRate => "slow_call_rate",
            TripCause::LatencyP99 => "latency_p99",
            TripCause::SystemicShare => "systemic_share",
            TripCause::MaxOpenKeys => "max_open_keys",
        }
    }
}

impl fmt::Display for TransitionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransitionReason::Tripped(cause) => write!(f, "tripped by {}", cause.as_str()),
            TransitionReason::LeaseReclaimed { probes } => {
                write!(f, "lease reclaimed from {probes} probe(s)")
            }
            other => f.write_str(other.as_str()),
        }
    }
}

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(None, f)
    }
}

impl fmt::Display for KeyedTransition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.transition.write(Some(&self.key), f)
    }
}

impl Transition {
    /// `circuit `group` [key K ]from -> to (reason), generation N[, open for
    /// D][, ramping over D][, O of N keys open]`.
    fn write(&self, key: Option<&str>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "circuit `{}` ", self.group)?;
        if let Some(key) = key {
            write!(f, "key {key} ")?;
        }
        write!(
            f,
            "{} -> {} ({}), generation {}",
            self.from, self.to, self.reason, self.generation
        )?;
        if let Some(open_for) = self.open_for {
            write!(f, ", open for {open_for:?}")?;
        }
        if let Some(ramp) = self.ramp {
            write!(f, ", ramping over {ramp:?}")?;
        }
        if let Some(keys_open) = self.keys_open {
            write!(f, ", {keys_open}")?;
        }
        Ok(())
    }
}

/// A subscriber: anything that can be told an [`Event`] from any thread.
type Callback = Box<dyn Fn(&Event) + Send + Sync>;

struct Listener {
    id: u64,
    callback: Callback,
    /// Told keyed groups' transitions ([`Event::KeyedTransition`]).
    keyed: bool,
    active: AtomicBool,
    panics: AtomicU64,
}

/// A list of subscribers: a registry's, or one breaker's own.
#[derive(Default)]
pub(crate) struct Subscribers {
    /// Copied out (one `Arc` clone) by each delivery, so no call runs under it.
    entries: Mutex<Arc<[Arc<Listener>]>>,
    len: AtomicUsize,
    /// How many of them are told keyed transitions: while none is, no key
    /// is named for them (see `KeyedGroup`'s `tell`).
    keyed_len: AtomicUsize,
    next_id: AtomicU64,
}

impl Subscribers {
    /// Adds `callback`, told keyed groups' transitions too if `keyed`.
    pub(crate) fn add(self: &Arc<Self>, callback: Callback, keyed: bool) -> Subscription {
        let entry = Arc::new(Listener {
            id: self.next_id.fetch_add(1, Relaxed),
            callback,
            keyed,
            active: AtomicBool::new(true),
            panics: AtomicU64::new(0),
        });
        {
            let mut entries = self.entries.lock();
            let mut all = entries.to_vec();
            all.push(entry.clone());
            self.publish(&mut entries, all);
        }
        Subscription {
            list: Arc::downgrade(self),
            entry,
        }
    }

    fn remove(&self, id: u64) {
        let mut entries = self.entries.lock();
        let kept: Vec<_> = entries.iter().filter(|e| e.id != id).cloned().collect();
        self.publish(&mut entries, kept);
    }

    /// Replaces the list with `all` and its counts; `entries` is its lock.
    fn publish(&self, entries: &mut Arc<[Arc<Listener>]>, all: Vec<Arc<Listener>>) {
        let keyed = all.iter().filter(|e| e.keyed).count();
        *entries = all.into();
        self.len.store(entries.len(), Release);
        self.keyed_len.store(keyed, Release);
    }

    fn is_empty(&self) -> bool {
        self.len.load(Acquire) == 0
    }

    /// Whether any subscriber is told keyed groups' transitions.
    pub(crate) fn wants_keys(&self) -> bool {
        self.keyed_len.load(Acquire) > 0
    }

    /// Calls every active subscriber with `event` (a keyed transition: those
    /// told keyed transitions only); none under a lock.
    pub(crate) fn deliver(&self, event: &Event) {
        let keyed = matches!(event, Event::KeyedTransition(_));
        self.deliver_to(event, if keyed { Some(true) } else { None });
    }

    /// Calls the active subscribers told keyed groups' keys with `event`, one
    /// key's (a hold, a release): a subscriber without keys hears the
    /// group's instead.
    pub(crate) fn deliver_keyed(&self, event: &Event) {
        self.deliver_to(event, Some(true));
    }

    /// Calls the active subscribers not told keyed groups' keys with `event`,
    /// one that stands for every key of a keyed group (its hold).
    pub(crate) fn deliver_unkeyed(&self, event: &Event) {
        self.deliver_to(event, Some(false));
    }

    /// Calls every active subscriber whose `keyed` is `keyed` (all of them for
    /// `None`) with `event`; none under a lock.
    fn deliver_to(&self, event: &Event, keyed: Option<bool>) {
        let none = match keyed {
            Some(true) => !self.wants_keys(),
            Some(false) => self.len.load(Acquire) == self.keyed_len.load(Acquire),
            None => false,
        };
        if none || self.is_empty() {
            return;
        }
        let entries = self.entries.lock().clone();
        for entry in entries.iter() {
            if !entry.active.load(Acquire) || keyed.is_some_and(|keyed| entry.keyed != keyed) {
                continue;
            }
            if catch_unwind(AssertUnwindSafe(|| (entry.callback)(event))).is_err() {
                entry.panics.fetch_add(1, Relaxed);
                log::error!("breaker: a subscriber panicked on {event:?}; the others were told");
            }
        }
    }
}

/// A subscriber's registration. Dropping it (or [`unsubscribe`](Self::unsubscribe))
/// removes the subscriber; [`detach`](Self::detach) keeps it for as long as
/// the registry or breaker lives.
///
/// After removal no new delivery reaches the subscriber; a delivery already
/// under way on another thread may still finish its call.
#[must_use = "dropping a Subscription unsubscribes; call `.detach()` to keep it"]
pub struct Subscription {
    list: Weak<Subscribers>,
    entry: Arc<Listener>,
}

impl Subscription {
    /// Removes the subscriber now.
    pub fn unsubscribe(self) {
        drop(self);
    }

    /// Keeps the subscriber for the life of what it subscribed to.
    pub fn detach(self) {
        std::mem::forget(self);
    }

    /// How many times this subscriber panicked (each panic was caught, logged
    /// at `error`, and the event still went to the other subscribers).
    pub fn panics(&self) -> u64 {
        self.entry.panics.load(Relaxed)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.entry.active.store(false, Release);
        if let Some(list) = self.list.upgrade() {
            list.remove(self.entry.id);
        }
    }
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.entry.id)
            .field("panics", &self.panics())
            .finish()
    }
}
