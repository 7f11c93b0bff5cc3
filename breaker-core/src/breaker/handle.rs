//! The public [`Breaker`] handle: construction, the fast claim, the pure
//! questions and manual control (the other `impl Breaker` files are listed in
//! the module's docs).

use std::sync::Arc;
use std::time::Duration;

use super::claim::Claimed;
use super::inner::{Hot, Inner};
use super::permit::Permit;
use super::transition::open_refusal;
use crate::clock::{Clock, ClockSource};
use crate::config::Config;
use crate::error::{CircuitOpen, OpenReason};
use crate::events::{Event, Hub, Subscribers, Subscription};
use crate::guards::Guards;
use crate::histogram::CallHistogram;
use crate::level::KeyCounts;
use crate::metrics::Metrics;
use crate::policy::Policy;
use crate::retry::RetrySlot;
use crate::state::{State, Word};
use crate::sync::{AtomicU64, Ordering::*};
use crate::throttle::Throttle;

/// A circuit breaker. Cloning is cheap and shares the same breaker.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Breaker, CallError, Config, State};
///
/// let breaker = Breaker::new("ledger", Config::builder().threshold(2).build().unwrap());
/// for _ in 0..2 {
///     let _ = breaker.call(|| Err::<(), _>("timeout"));
/// }
/// assert_eq!(breaker.state(), State::Open);
/// let refused = breaker.call(|| Ok::<_, &str>("never runs"));
/// assert!(matches!(refused, Err(CallError::Open(_))));
/// ```
#[derive(Clone)]
pub struct Breaker {
    pub(super) inner: Arc<Inner>,
}

impl Breaker {
    /// A standalone breaker on the monotonic clock. Most code gets breakers from a
    /// [`Registry`](crate::Registry) instead, keyed by group.
    pub fn new(group: &str, config: Config) -> Self {
        Self::from_parts(crate::names::intern(group), config, ClockSource::Monotonic)
    }

    /// A standalone breaker on `clock`.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, Config, ManualClock, State};
    ///
    /// let clock = ManualClock::new();
    /// let config = Config::builder().threshold(1).open(Duration::from_secs(1)).build().unwrap();
    /// let breaker = Breaker::with_clock("db", config, clock.clone());
    /// breaker.try_acquire().unwrap().failure();
    /// assert!(!breaker.would_admit());
    /// clock.advance(Duration::from_millis(1_000));
    /// assert!(breaker.would_admit()); // asking changes nothing...
    /// assert_eq!(breaker.state(), State::Open);
    /// let probe = breaker.try_acquire().unwrap(); // ...claiming does
    /// assert_eq!(breaker.state(), State::HalfOpen);
    /// probe.success();
    /// assert_eq!(breaker.state(), State::Closed);
    /// ```
    pub fn with_clock<C: Clock>(group: &str, config: Config, clock: C) -> Self {
        Self::from_parts(crate::names::intern(group), config, ClockSource::of(clock))
    }

    pub(crate) fn from_parts(name: &'static str, config: Config, clock: ClockSource) -> Self {
        Self::from_parts_in(name, config, clock, None)
    }

    /// A breaker that also tells `inherited` (its registry's subscribers).
    pub(crate) fn from_parts_in(
        name: &'static str,
        config: Config,
        clock: ClockSource,
        inherited: Option<Arc<Subscribers>>,
    ) -> Self {
        Self::from_parts_sharing(name, config, clock, inherited, None, None, 0)
    }

    /// A keyed group's own breaker (see `keyed::judge`), telling its
    /// transitions to `inherited` (the registry's subscribers), with the
    /// group's `keys` counted as of each one.
    pub(crate) fn group_level(
        name: &'static str,
        config: Config,
        clock: ClockSource,
        inherited: Option<Arc<Subscribers>>,
        keys: Arc<KeyCounts>,
    ) -> Self {
        let slot = Arc::new(RetrySlot::with_level(None, Some(keys)));
        Self::build(name, config, clock, inherited, None, Some(slot), 0, true)
    }

    /// A breaker that counts its call durations in `histogram` when given (a
    /// keyed group's key), else in one of its own if `config` asks for one,
    /// retries in `retry`'s budget when given (a keyed group's key), else in
    /// one its first retried call makes, and mixes `jitter_salt` into its
    /// jitter's draws (a key's hash).
    pub(crate) fn from_parts_sharing(
        name: &'static str,
        config: Config,
        clock: ClockSource,
        inherited: Option<Arc<Subscribers>>,
        histogram: Option<Arc<CallHistogram>>,
        retry: Option<Arc<RetrySlot>>,
        jitter_salt: u32,
    ) -> Self {
        Self::build(
            name,
            config,
            clock,
            inherited,
            histogram,
            retry,
            jitter_salt,
            false,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        name: &'static str,
        config: Config,
        clock: ClockSource,
        inherited: Option<Arc<Subscribers>>,
        histogram: Option<Arc<CallHistogram>>,
        retry: Option<Arc<RetrySlot>>,
        jitter_salt: u32,
        group_level: bool,
    ) -> Self {
        let judged_key = retry.as_ref().is_some_and(|slot| slot.level().is_some());
        let policy = Policy::new(&config, &clock);
        // A histogram times every call, as slow-call judging does.
        let timed = policy.needs_clock() || config.histogram().is_some();
        let throttle = config
            .throttle_rules()
            .map(|rules| Box::new(Throttle::new(&rules, &clock)));
        let word = Word::initial(timed, policy.is_window())
            .with_shadow(config.shadow())
            .with_throttle(config.throttle().is_some());
        let breaker = Breaker {
            inner: Arc::new(Inner::new(
                Hot {
                    word: AtomicU64::new(word.0),
                    policy,
                },
                name,
                jitter_salt,
                group_level,
                judged_key,
                config,
                clock,
                config.open_nanos(),
                Hub::new(word.generation(), inherited),
                Guards::new(&config, histogram, retry),
                throttle,
            )),
        };
        // Listed so that choosing whose calls are recorded reaches it.
        #[cfg(feature = "trace")]
        super::enlist(&breaker);
        breaker
    }

    /// Calls `subscriber` with every transition of this breaker, in generation
    /// order, after the breaker's locks are released (see [the guarantees](crate::events)),
    /// until the returned [`Subscription`] is dropped. A breaker from a
    /// [`Registry`](crate::Registry) also tells the registry's subscribers.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Breaker, Config, events::Event, State};
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::Arc;
    ///
    /// let breaker = Breaker::new("db", Config::default());
    /// let opened = Arc::new(AtomicU64::new(0));
    /// let count = opened.clone();
    /// let subscription = breaker.subscribe(move |event: &Event| {
    ///     if matches!(event, Event::Transition(t) if t.to == State::ForcedOpen) {
    ///         count.fetch_add(1, Ordering::Relaxed);
    ///     }
    /// });
    /// breaker.force_open();
    /// assert_eq!(opened.load(Ordering::Relaxed), 1);
    /// subscription.unsubscribe();
    /// breaker.reset();
    /// breaker.force_open();
    /// assert_eq!(opened.load(Ordering::Relaxed), 1);
    /// ```
    pub fn subscribe<F>(&self, subscriber: F) -> Subscription
    where
        F: Fn(&Event) + Send + Sync + 'static,
    {
        self.inner.events.subscribe(Box::new(subscriber))
    }

    /// Tells this keyed breaker's transitions to `subscribers` (its
    /// registry's), as [`Event::KeyedTransition`]s of `key` (made only if the
    /// breaker has no key yet).
    pub(crate) fn name_key(&self, key: impl FnOnce() -> Arc<str>, subscribers: &Arc<Subscribers>) {
        self.inner.events.name_key(key, subscribers);
    }

    /// Whether [`name_key`](Self::name_key) has named this breaker.
    pub(crate) fn is_named(&self) -> bool {
        self.inner.events.is_named()
    }

    /// How many handles to this breaker exist (for keyed eviction: one is idle).
    pub(crate) fn handles(&self) -> usize {
        Arc::strong_count(&self.inner)
    }

    /// The group this breaker guards.
    #[inline]
    pub fn group(&self) -> &'static str {
        self.inner.name
    }

    /// The config this breaker runs with now (see [`reconfigure`](Self::reconfigure)).
    pub fn config(&self) -> &Config {
        self.inner.config()
    }

    /// Whether `self` and `other` are handles to the same breaker.
    pub fn same_as(&self, other: &Breaker) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Claims the right to make one call.
    ///
    /// Closed: always admitted. Open: refused until `opened_at + open_for`; the
    /// first claim at or after that instant moves the breaker to half-open and
    /// takes a probe slot in the same step (`open_for - 1ns` is refused,
    /// `open_for` admitted). Half-open: admitted while a probe slot is free.
    // Always inlined: the closed claim is a load and one test, and a call would
    // cost more than that (and return the permit through memory).
    #[inline(always)]
    pub fn try_acquire(&self) -> Result<Permit<'_>, CircuitOpen> {
        let inner = &*self.inner;
        let word = Word(inner.hot.word.load(Acquire));
        if word.is_plain() {
            // Nothing is counted here: a call is counted once, by its outcome.
            return Ok(Permit::new(inner, word, 0));
        }
        if word.admits_untimed() {
            // Closed with a window to feed or failures to reset: admitted here
            // all the same, marked so that its verdict takes the slow path.
            return Ok(Permit::new(inner, word.marked(), 0));
        }
        // The permit or the refusal is built here, from the slow path's plain
        // answer: a `Result` built there and merged with the fast path's would
        // be copied, as `Permit::record_owned` explains.
        match inner.acquire_contended(word).get() {
            Claimed::Admitted { word, started } => Ok(Permit::new(inner, word, started)),
            Claimed::Refused {
                reason,
                retry_after,
            } => Err(CircuitOpen::new(inner.name, reason, retry_after)),
        }
    }

    /// The current state. Pure: never moves the breaker, even when the open
    /// duration has passed (the move to half-open happens on the next claim).
    pub fn state(&self) -> State {
        self.inner.word().state()
    }

    /// Whether a claim made now would be admitted. Pure: takes no slot.
    // Inlined so that a caller that asks on every request (a tower service's
    // readiness) pays a load and a test while closed; the rest is out of line.
    #[inline]
    pub fn would_admit(&self) -> bool {
        let word = self.inner.word();
        word.admits_outright() || self.inner.would_admit(word)
    }

    /// The refusal a claim made now would meet, without claiming: `None` when it
    /// would be admitted. Pure, like [`would_admit`](Self::would_admit): it takes
    /// no slot, moves nothing and counts nothing (a refused claim counts as
    /// `rejected`; asking does not). For a caller that must decide before it
    /// claims, such as a `tower` service's readiness.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, Config, ManualClock, OpenReason};
    ///
    /// let clock = ManualClock::new();
    /// let config = Config::builder().threshold(1).open(Duration::from_secs(1)).build()?;
    /// let breaker = Breaker::with_clock("quotes", config, clock.clone());
    /// assert!(breaker.refusal().is_none());
    /// breaker.try_acquire().unwrap().failure();
    /// let open = breaker.refusal().unwrap();
    /// assert_eq!(open.reason(), OpenReason::Open);
    /// assert_eq!(open.retry_after(), Some(Duration::from_millis(1_000)));
    /// assert_eq!(breaker.metrics().rejected, 0); // asking is not a refused claim
    /// clock.advance(Duration::from_millis(1_000));
    /// assert!(breaker.refusal().is_none()); // a claim now would be the probe
    /// breaker.force_open();
    /// assert_eq!(breaker.refusal().unwrap().reason(), OpenReason::ForcedOpen);
    /// # Ok::<(), breakerbox::ConfigError>(())
    /// ```
    pub fn refusal(&self) -> Option<CircuitOpen> {
        let inner = &*self.inner;
        let word = inner.word();
        if word.is_shadow() && word.state() != State::ForcedOpen {
            // Shadow mode admits every claim a forced open does not refuse.
            return None;
        }
        if let Some(held) = inner.held(word) {
            let open_left = (word.state() == State::Open)
                .then(|| inner.reopen_at.load(Acquire))
                .map(|until| Duration::from_nanos(until.saturating_sub(inner.clock.now_coarse())));
            let left = open_left.map_or(held.remaining, |open| open.max(held.remaining));
            return Some(CircuitOpen::new(
                inner.name,
                OpenReason::Held(held.scope),
                Some(nanos(left)),
            ));
        }
        if let Some(retry_after) = inner.throttle_refusal(word) {
            return Some(CircuitOpen::new(
                inner.name,
                OpenReason::Throttled,
                Some(retry_after),
            ));
        }
        let (reason, until) = match word.state() {
            State::Closed if word.is_ramping() => {
                let now = inner.clock.now_coarse();
                let retry_after = inner.ramp_refusal(now)?;
                return Some(CircuitOpen::new(
                    inner.name,
                    OpenReason::Ramping,
                    Some(retry_after),
                ));
            }
            State::Closed | State::ForcedClosed => return None,
            State::ForcedOpen => {
                return Some(CircuitOpen::new(inner.name, OpenReason::ForcedOpen, None))
            }
            State::Open => (open_refusal(word).reason(), inner.reopen_at.load(Acquire)),
            State::HalfOpen if word.probes() < inner.config().half_open_probes() => return None,
            State::HalfOpen => (OpenReason::HalfOpenFull, inner.lease_until.load(Acquire)),
        };
        // The reading a claim compares, confirmed near the deadline as a claim
        // confirms it: see the crate docs, "The coarse reading".
        let coarse = inner.clock.now_coarse();
        let now = if coarse < until {
            inner.clock.confirm(coarse, until)
        } else {
            coarse
        };
        let reason = if inner.group_level {
            OpenReason::Group
        } else {
            reason
        };
        (now < until).then(|| CircuitOpen::new(inner.name, reason, Some(until - now)))
    }

    /// Whether the breaker is closed and ramping traffic back in, the ramp
    /// not yet run its length: a keyed sweep keeps such a key, or its next
    /// call would find it closed to every call, its grown backoff lost.
    pub(crate) fn ramp_running(&self) -> bool {
        self.inner.ramp_running(self.inner.word())
    }

    /// Refusing or probing, with nothing to guard for a while: what a keyed
    /// group may evict besides a closed breaker, whose next call would only
    /// be a probe. Pure; reads the clock.
    ///
    /// - Open: its open time ran out at least one more open duration ago with
    ///   no claim since (a claim would have made it half-open).
    /// - Half-open: no probe holds a slot (each one ended, was abandoned, or
    ///   overran its lease, which the next claim reclaims), and no probe was
    ///   admitted for one open duration (a claim while no slot is held is
    ///   admitted as a probe, and renews the lease). The last admission is
    ///   read from the lease: its end less the probe timeout.
    pub(crate) fn idle_past_open(&self) -> bool {
        let inner = &*self.inner;
        let word = inner.word();
        let since = match word.state() {
            State::Open => inner.reopen_at.load(Acquire),
            State::HalfOpen => {
                let lease_until = inner.lease_until.load(Acquire);
                if word.probes() != 0 && !inner.clock.reached(lease_until) {
                    return false;
                }
                lease_until.saturating_sub(inner.config().probe_timeout_nanos())
            }
            State::Closed | State::ForcedOpen | State::ForcedClosed => return false,
        };
        inner
            .clock
            .reached(since.saturating_add(inner.open_for.load(Relaxed)))
    }

    /// A snapshot of this breaker's state and counters. Pure.
    pub fn metrics(&self) -> Metrics {
        self.inner.metrics()
    }

    /// Forces the circuit open: every claim is refused until [`reset`](Self::reset)
    /// or [`force_closed`](Self::force_closed). Outcomes of calls in flight are
    /// stale. On a breaker forced open already it does nothing: no transition
    /// is told, and the generation stays.
    pub fn force_open(&self) {
        self.inner.force(State::ForcedOpen);
    }

    /// Forces the circuit closed: every claim is admitted and nothing trips until
    /// [`reset`](Self::reset). Outcomes are still counted, and a window policy's
    /// window still takes them, so its failure and slow-call rates show what it
    /// would judge on. On a breaker forced closed already it does nothing: no
    /// transition is told, and calls in flight keep their outcomes.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Breaker, Config, State};
    ///
    /// let config = Config::builder().window_calls(10).min_calls(2).build().unwrap();
    /// let breaker = Breaker::new("search", config);
    /// breaker.force_closed();
    /// for _ in 0..4 {
    ///     breaker.try_acquire().unwrap().failure();
    /// }
    /// assert_eq!(breaker.state(), State::ForcedClosed);
    /// assert_eq!(breaker.metrics().window.unwrap().failure_rate(), Some(1.0));
    /// ```
    pub fn force_closed(&self) {
        self.inner.force(State::ForcedClosed);
    }

    /// Back to closed with a fresh policy and the base open duration.
    ///
    /// From any other state it is a transition into a new generation: the
    /// window starts empty, and outcomes of calls in flight are stale. On a
    /// closed breaker it tells no transition and keeps the generation, so
    /// calls in flight keep their outcomes: it clears the consecutive failure
    /// count, ends a traffic ramp under way and sets the open duration back to
    /// `open_ms`; a window policy's window keeps what it holds.
    pub fn reset(&self) {
        self.inner.force(State::Closed);
    }

    /// Switches shadow mode on or off, live, from the next claim on: in shadow
    /// mode the breaker refuses nothing but a forced open, and counts each
    /// claim it would have refused in
    /// [`Metrics::shadow_refused`](crate::Metrics::shadow_refused) (see
    /// [`ConfigBuilder::shadow`](crate::ConfigBuilder::shadow)). State,
    /// generation and counts are kept; calls in flight settle as they were
    /// admitted. Returns whether the mode was `on` already.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Breaker, Config};
    ///
    /// let breaker = Breaker::new("search", Config::builder().threshold(1).build().unwrap());
    /// breaker.try_acquire().unwrap().failure();
    /// assert!(breaker.try_acquire().is_err());
    /// breaker.set_shadow(true);
    /// breaker.try_acquire().expect("shadow mode").success();
    /// breaker.set_shadow(false);
    /// assert!(breaker.try_acquire().is_err());
    /// let metrics = breaker.metrics();
    /// assert_eq!((metrics.rejected, metrics.shadow_refused), (2, 1));
    /// ```
    pub fn set_shadow(&self, on: bool) -> bool {
        self.inner.set_shadow(on)
    }

    /// As a keyed group's own breaker: opens it because `cause` tripped, if
    /// it is closed.
    pub(crate) fn trip_group(&self, cause: crate::events::TripCause) {
        self.inner.trip_group(cause);
    }

    /// As a keyed group's own breaker: records a key's outcome in its policy
    /// (see `keyed::judge`).
    pub(crate) fn report(&self, outcome: crate::level::KeyOutcome) {
        self.inner.report(outcome);
    }

    /// Whether the breaker is in shadow mode now.
    pub fn is_shadow(&self) -> bool {
        self.inner.word().is_shadow()
    }
}

impl crate::fleet::FleetControl for Breaker {
    fn fleet_open(&self, remaining: Duration) -> bool {
        self.inner.fleet_open(nanos(remaining))
    }

    fn fleet_reopen(&self, remaining: Duration) -> bool {
        self.inner.fleet_reopen(nanos(remaining))
    }

    fn fleet_close(&self) -> bool {
        self.inner.fleet_close()
    }

    fn fleet_release(&self) -> bool {
        self.inner.fleet_release()
    }

    fn is_fleet_open(&self) -> bool {
        self.inner.word().is_fleet_open()
    }

    fn fleet_hold(&self, remaining: Duration) -> bool {
        self.inner.fleet_hold(nanos(remaining))
    }

    fn fleet_group_hold(&self, remaining: Duration) -> bool {
        self.inner.fleet_group_hold(nanos(remaining))
    }
}

/// Nanoseconds, saturating: a `Duration` past `u64::MAX` nanos is forever.
pub(super) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl std::fmt::Debug for Breaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Breaker")
            .field("group", &self.inner.name)
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}
