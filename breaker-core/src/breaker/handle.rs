//! The public [`Breaker`] handle: construction, the fast claim, the `call`
//! helpers, the pure questions and manual control.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;

use super::call_future::{ByRef, CallFuture};
use super::claim::Claimed;
use super::inner::{Hot, Inner, LiveConfig};
use super::permit::{Classifier, EveryError, Permit};
use crate::bulkhead::BulkheadSlot;
use crate::clock::{Clock, ClockSource};
use crate::config::{Config, FailurePolicy};
use crate::counters::Counters;
use crate::error::{CallError, CircuitOpen, OpenReason, TimedOut};
use crate::events::{Event, Hub, Subscribers, Subscription};
use crate::guards::Guards;
use crate::metrics::Metrics;
use crate::policy::Policy;
use crate::state::{State, Word};
use crate::sync::{AtomicU64, Mutex, Ordering::*};
use crate::timeout::{within, Timer};

/// A circuit breaker. Cloning is cheap and shares the same breaker.
///
/// ```
/// use breaker_core::{Breaker, CallError, Config, State};
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
    inner: Arc<Inner>,
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
    /// use std::time::Duration;
    /// use breaker_core::{Breaker, Config, ManualClock, State};
    ///
    /// let clock = ManualClock::new();
    /// let config = Config::builder().threshold(1).open_ms(1_000).build().unwrap();
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
        let policy = Policy::new(&config);
        // A latency window times every call, as slow-call judging does.
        let timed = policy.needs_clock() || config.latency_p99().is_some();
        let word = Word::initial(timed, policy.is_window());
        Breaker {
            inner: Arc::new(Inner {
                hot: CachePadded::new(Hot {
                    word: AtomicU64::new(word.0),
                    policy,
                }),
                name,
                config: LiveConfig::new(config),
                clock,
                reopen_at: AtomicU64::new(0),
                open_for: AtomicU64::new(config.open_nanos()),
                lease_until: AtomicU64::new(0),
                transition: Mutex::new(()),
                counters: Counters::new(),
                events: Hub::new(word.generation(), inherited),
                guards: Guards::new(&config),
            }),
        }
    }

    /// Calls `subscriber` with every transition of this breaker, in generation
    /// order, after the breaker's locks are released (see [the guarantees](crate::events)),
    /// until the returned [`Subscription`] is dropped. A breaker from a
    /// [`Registry`](crate::Registry) also tells the registry's subscribers.
    ///
    /// ```
    /// use breaker_core::{Breaker, Config, Event, State};
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

    /// How many handles to this breaker exist (for keyed eviction: one is idle).
    pub(crate) fn handles(&self) -> usize {
        Arc::strong_count(&self.inner)
    }

    /// The group this breaker guards.
    pub fn group(&self) -> &'static str {
        self.inner.name
    }

    /// The config this breaker runs with now (see [`reconfigure`](Self::reconfigure)).
    pub fn config(&self) -> &Config {
        self.inner.config()
    }

    /// Replaces the config of this breaker while it runs, keeping its state,
    /// its generation, its counters and what its failure policy has counted.
    ///
    /// What changes, and from when:
    /// - `threshold`: judged from the next failure against the count so far (a
    ///   count already at or above the new threshold trips on that failure);
    /// - `open_ms`, `max_open_ms`: from the next trip (an open circuit keeps
    ///   the deadline it was given); `backoff` from the next failed probe;
    /// - `half_open_probes`, `successes_to_close`, `probe_timeout_ms`: from the
    ///   next claim or probe outcome (probes already in flight keep their slots
    ///   and their lease).
    ///
    /// Refused, changing nothing, when the failure policy is not the same one
    /// with other numbers: switching between the consecutive count and a window,
    /// or changing any window key (`window_ms`, `window_calls`, `failure_rate`,
    /// `min_calls`, `slow_call_ms`, `slow_call_rate`). A window's counts are
    /// laid out for its size and judged by its rule as they are recorded;
    /// rebuilding it live would drop what it has counted, which is what this
    /// method promises not to do. Such a change takes a restart (or a new group).
    ///
    /// Refused as well: any change of `max_concurrent`, `timeout_ms` or
    /// `latency_p99_ms`. The bulkhead, the latency window and whether calls are
    /// timed are built with the breaker; a reload that changed them would report
    /// success while the breaker kept the old ones.
    ///
    /// ```
    /// use breaker_core::{Breaker, Config, State};
    ///
    /// let breaker = Breaker::new("ledger", Config::builder().threshold(5).build().unwrap());
    /// breaker.try_acquire().unwrap().failure();
    /// breaker.try_acquire().unwrap().failure();
    /// breaker.reconfigure(Config::builder().threshold(3).build().unwrap()).unwrap();
    /// assert_eq!(breaker.metrics().consecutive_failures, 2); // kept
    /// breaker.try_acquire().unwrap().failure(); // the third, judged by the new threshold
    /// assert_eq!(breaker.state(), State::Open);
    ///
    /// let window = Config::builder().window_calls(20).build().unwrap();
    /// assert!(breaker.reconfigure(window).is_err());
    /// assert_eq!(breaker.config().threshold(), 3);
    /// ```
    pub fn reconfigure(&self, config: Config) -> Result<(), PolicyChange> {
        self.check_reconfigure(&config)?;
        self.inner.config.set(config);
        Ok(())
    }

    /// Whether [`reconfigure`](Self::reconfigure) would take `config`.
    pub fn check_reconfigure(&self, config: &Config) -> Result<(), PolicyChange> {
        let from = self.config().policy();
        let to = config.policy();
        let same_kind = matches!(
            (from, to),
            (
                FailurePolicy::Consecutive { .. },
                FailurePolicy::Consecutive { .. }
            )
        ) || from == to;
        if !same_kind {
            return Err(PolicyChange {
                group: self.group(),
                policies: Box::new([from, to]),
                fixed: None,
            });
        }
        let now = self.config();
        let millis = |d: Option<Duration>| d.map(|d| d.as_millis() as u64);
        let fixed = [
            (
                "max_concurrent",
                now.max_concurrent().map(u64::from),
                config.max_concurrent().map(u64::from),
            ),
            (
                "timeout_ms",
                millis(now.timeout()),
                millis(config.timeout()),
            ),
            (
                "latency_p99_ms",
                millis(now.latency_p99()),
                millis(config.latency_p99()),
            ),
        ];
        match fixed.into_iter().find(|(_, was, asked)| was != asked) {
            None => Ok(()),
            Some((key, was, asked)) => Err(PolicyChange {
                group: self.group(),
                policies: Box::new([from, to]),
                fixed: Some(Box::new(FixedKey { key, was, asked })),
            }),
        }
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

    /// Runs `f` if the breaker admits it, counting every `Err` as a failure.
    /// A panic in `f` is recorded as a failure and goes on unwinding.
    #[inline]
    pub fn call<T, E, F>(&self, f: F) -> Result<T, CallError<E>>
    where
        F: FnOnce() -> Result<T, E>,
    {
        self.call_with(&EveryError, f)
    }

    /// Runs `f` if the breaker admits it; `classifier` decides which errors count.
    #[inline]
    pub fn call_with<T, E, C, F>(&self, classifier: &C, f: F) -> Result<T, CallError<E>>
    where
        C: Classifier<E> + ?Sized,
        F: FnOnce() -> Result<T, E>,
    {
        let permit = self.try_acquire()?;
        permit.record_owned(f(), classifier, CallError::Inner)
    }

    /// Awaits `future` if the breaker admits it, counting every `Err` as a failure.
    /// The claim is made on the first poll; dropping the returned future before it
    /// completes counts as abandoned and releases any probe slot.
    ///
    /// ```
    /// use breaker_core::{Breaker, Config};
    ///
    /// # async fn lookup() -> Result<u32, std::io::Error> { Ok(7) }
    /// # async fn run() {
    /// let breaker = Breaker::new("dns", Config::default());
    /// assert_eq!(breaker.call_async(lookup()).await.unwrap(), 7);
    /// # }
    /// ```
    // Not an `async fn`: its state machine moved `future` from the argument slot
    // to the awaited one on every call (see `call_future`).
    #[inline]
    pub fn call_async<'a, T, E, Fut>(
        &'a self,
        future: Fut,
    ) -> impl Future<Output = Result<T, CallError<E>>> + use<'a, T, E, Fut>
    where
        Fut: Future<Output = Result<T, E>>,
    {
        CallFuture::new(self, EveryError, future)
    }

    /// [`call_async`](Self::call_async) with a classifier.
    #[inline]
    pub fn call_async_with<'a, T, E, C, Fut>(
        &'a self,
        classifier: &'a C,
        future: Fut,
    ) -> impl Future<Output = Result<T, CallError<E>>> + use<'a, T, E, C, Fut>
    where
        C: Classifier<E> + ?Sized,
        Fut: Future<Output = Result<T, E>>,
    {
        CallFuture::new(self, ByRef(classifier), future)
    }

    /// Takes a place in the group's bulkhead (`max_concurrent`), held until the
    /// [`BulkheadSlot`] is dropped; refused at once with
    /// [`OpenReason::BulkheadFull`] when every place is taken (counted in
    /// `rejected` and `bulkhead_rejected`, never as a failure). Without
    /// `max_concurrent`, always a slot that holds nothing.
    ///
    /// The bulkhead stands outside the breaker: take the slot first, then
    /// [`try_acquire`](Self::try_acquire), so a probe holds a place like any call.
    #[inline]
    pub fn enter(&self) -> Result<BulkheadSlot<'_>, CircuitOpen> {
        let inner = &*self.inner;
        let Some(bulkhead) = &inner.guards.bulkhead else {
            return Ok(BulkheadSlot::free());
        };
        match bulkhead.try_enter() {
            Some(slot) => Ok(slot),
            None => Err(self.bulkhead_full()),
        }
    }

    #[cold]
    fn bulkhead_full(&self) -> CircuitOpen {
        let inner = &*self.inner;
        inner.counters.bump(crate::counters::Event::Rejected);
        Guards::bump(&inner.guards.bulkhead_rejected);
        CircuitOpen::new(inner.name, OpenReason::BulkheadFull, None)
    }

    /// [`call`](Self::call) inside the group's bulkhead: a call over
    /// `max_concurrent` is refused with [`OpenReason::BulkheadFull`] and `f`
    /// does not run. `timeout_ms` does not apply: a sync call cannot be
    /// interrupted from outside its thread.
    ///
    /// ```
    /// use breaker_core::{Breaker, CallError, Config, OpenReason};
    ///
    /// let breaker = Breaker::new("files", Config::builder().max_concurrent(1).build()?);
    /// let inner = breaker.clone();
    /// let nested = breaker
    ///     .call_guarded(|| {
    ///         // The one slot is held by this call: a second one is refused.
    ///         Ok::<_, ()>(inner.call_guarded(|| Ok::<_, ()>(())))
    ///     })
    ///     .unwrap();
    /// assert!(matches!(nested, Err(CallError::Open(o)) if o.reason() == OpenReason::BulkheadFull));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn call_guarded<T, E, F>(&self, f: F) -> Result<T, CallError<E>>
    where
        F: FnOnce() -> Result<T, E>,
    {
        self.call_guarded_with(&EveryError, f)
    }

    /// [`call_guarded`](Self::call_guarded) with a classifier.
    #[inline]
    pub fn call_guarded_with<T, E, C, F>(&self, classifier: &C, f: F) -> Result<T, CallError<E>>
    where
        C: Classifier<E> + ?Sized,
        F: FnOnce() -> Result<T, E>,
    {
        let _slot = self.enter()?;
        let permit = self.try_acquire()?;
        permit.record_owned(f(), classifier, CallError::Inner)
    }

    /// Awaits `future` with everything the group's config asks for, in this
    /// order: the bulkhead (`max_concurrent`) outside the breaker, the breaker
    /// outside the deadline (`timeout_ms`, raced on `timer`), the deadline
    /// around the call.
    ///
    /// A call that overruns the deadline is dropped, counted as a failure (and
    /// a slow call), and answered with [`CallError::TimedOut`]. Its bulkhead slot
    /// is freed on every way out: completion, timeout, panic, or this future
    /// being dropped. Without `timeout_ms` no timer is made.
    ///
    /// ```
    /// use std::future::{pending, ready, Ready};
    /// use std::time::Duration;
    /// use breaker_core::{Breaker, CallError, Config, State, Timer};
    ///
    /// struct AlreadyDue; // a timer whose every deadline has passed
    /// impl Timer for AlreadyDue {
    ///     type Sleep = Ready<()>;
    ///     fn sleep(&self, _: Duration) -> Ready<()> { ready(()) }
    /// }
    ///
    /// let config = Config::builder().threshold(1).timeout_ms(100).build()?;
    /// let breaker = Breaker::new("hangs", config);
    /// # let rt = tokio::runtime::Builder::new_current_thread().build()?;
    /// # rt.block_on(async {
    /// let hung = breaker.call_async_guarded(&AlreadyDue, pending::<Result<(), ()>>()).await;
    /// assert!(matches!(hung, Err(CallError::TimedOut(_))));
    /// # });
    /// assert_eq!(breaker.state(), State::Open); // a timeout is a failure
    /// assert_eq!(breaker.metrics().timeouts, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn call_async_guarded<T, E, Tm, Fut>(
        &self,
        timer: &Tm,
        future: Fut,
    ) -> Result<T, CallError<E>>
    where
        Tm: Timer + ?Sized,
        Fut: Future<Output = Result<T, E>>,
    {
        self.call_async_guarded_with(timer, &EveryError, future)
            .await
    }

    /// [`call_async_guarded`](Self::call_async_guarded) with a classifier (a
    /// timeout is a failure whatever it says).
    pub async fn call_async_guarded_with<T, E, C, Tm, Fut>(
        &self,
        timer: &Tm,
        classifier: &C,
        future: Fut,
    ) -> Result<T, CallError<E>>
    where
        C: Classifier<E> + ?Sized,
        Tm: Timer + ?Sized,
        Fut: Future<Output = Result<T, E>>,
    {
        let _slot = self.enter()?;
        let permit = self.try_acquire()?;
        let Some(after) = self.inner.config().timeout() else {
            return permit.record_owned(future.await, classifier, CallError::Inner);
        };
        match within(timer, after, future).await {
            Some(result) => permit.record_owned(result, classifier, CallError::Inner),
            None => Err(CallError::TimedOut(self.timed_out(permit, after))),
        }
    }

    /// Records a call dropped at its deadline `after` and returns its error.
    #[doc(hidden)]
    #[cold]
    pub fn timed_out(&self, permit: Permit<'_>, after: std::time::Duration) -> TimedOut {
        let inner = &*self.inner;
        Guards::bump(&inner.guards.timeouts);
        permit.timed_out(u64::try_from(after.as_nanos()).unwrap_or(u64::MAX));
        TimedOut::new(inner.name, after)
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
        matches!(word.state(), State::Closed | State::ForcedClosed) || self.inner.would_admit(word)
    }

    /// The refusal a claim made now would meet, without claiming: `None` when it
    /// would be admitted. Pure, like [`would_admit`](Self::would_admit): it takes
    /// no slot, moves nothing and counts nothing (a refused claim counts as
    /// `rejected`; asking does not). For a caller that must decide before it
    /// claims, such as a `tower` service's readiness.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_core::{Breaker, Config, ManualClock, OpenReason};
    ///
    /// let clock = ManualClock::new();
    /// let config = Config::builder().threshold(1).open_ms(1_000).build()?;
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
    /// # Ok::<(), breaker_core::ConfigError>(())
    /// ```
    pub fn refusal(&self) -> Option<CircuitOpen> {
        let inner = &*self.inner;
        let word = inner.word();
        let (reason, until) = match word.state() {
            State::Closed | State::ForcedClosed => return None,
            State::ForcedOpen => {
                return Some(CircuitOpen::new(inner.name, OpenReason::ForcedOpen, None))
            }
            State::Open => (OpenReason::Open, inner.reopen_at.load(Acquire)),
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
        (now < until).then(|| CircuitOpen::new(inner.name, reason, Some(until - now)))
    }

    /// A snapshot of this breaker's state and counters. Pure.
    pub fn metrics(&self) -> Metrics {
        self.inner.metrics()
    }

    /// Forces the circuit open: every claim is refused until [`reset`](Self::reset)
    /// or [`force_closed`](Self::force_closed). Outcomes of calls in flight are stale.
    pub fn force_open(&self) {
        self.inner.force(State::ForcedOpen);
    }

    /// Forces the circuit closed: every claim is admitted and nothing trips until
    /// [`reset`](Self::reset). Outcomes are still counted.
    pub fn force_closed(&self) {
        self.inner.force(State::ForcedClosed);
    }

    /// Back to closed with a fresh policy and the base open duration.
    pub fn reset(&self) {
        self.inner.force(State::Closed);
    }
}

impl std::fmt::Debug for Breaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Breaker")
            .field("group", &self.inner.name)
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

/// [`Breaker::reconfigure`] was asked to change the failure policy of a live
/// breaker in a way that would drop what it has counted, or a key fixed when
/// the breaker was built (`max_concurrent`, `timeout_ms`, `latency_p99_ms`).
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyChange {
    group: &'static str,
    /// The policy it runs and the one asked for (boxed: errors stay small).
    policies: Box<[FailurePolicy; 2]>,
    /// The fixed key asked to change, if that is what was refused.
    fixed: Option<Box<FixedKey>>,
}

/// A key fixed at construction, its value and the one asked for.
#[derive(Clone, Debug, PartialEq)]
struct FixedKey {
    key: &'static str,
    was: Option<u64>,
    asked: Option<u64>,
}

impl PolicyChange {
    /// The breaker's group.
    pub fn group(&self) -> &'static str {
        self.group
    }

    /// The policy the breaker runs.
    pub fn from(&self) -> FailurePolicy {
        self.policies[0]
    }

    /// The policy asked for.
    pub fn to(&self) -> FailurePolicy {
        self.policies[1]
    }

    /// The key fixed at construction that was asked to change
    /// (`"max_concurrent"`, `"timeout_ms"` or `"latency_p99_ms"`); `None` when
    /// the failure policy was what was refused.
    pub fn key(&self) -> Option<&'static str> {
        self.fixed.as_ref().map(|fixed| fixed.key)
    }
}

impl std::fmt::Display for PolicyChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(fixed) = &self.fixed {
            let show = |value: Option<u64>| match value {
                Some(value) => value.to_string(),
                None => "unset".to_owned(),
            };
            return write!(
                f,
                "group `{}` is live with `{}` {}; a live reconfiguration cannot \
                 change it to {} (the bulkhead, latency window and call timing are \
                 built with the breaker): restart to apply it",
                self.group,
                fixed.key,
                show(fixed.was),
                show(fixed.asked)
            );
        }
        write!(
            f,
            "group `{}` is live with failure policy {:?}; a live reconfiguration \
             may change the consecutive `threshold` and the open, half-open and \
             probe keys, but not {:?} (another policy or other window keys would \
             drop what the breaker has counted): restart to apply it",
            self.group,
            self.from(),
            self.to()
        )
    }
}

impl std::error::Error for PolicyChange {}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::{Breaker, Config, Registry, Resolution};

    fn with_threshold(threshold: u32) -> Config {
        Config::builder().threshold(threshold).build().unwrap()
    }

    /// Each config published is kept until the breaker drops: a reload that
    /// changes nothing, applied again and again, must not grow that list.
    #[test]
    fn an_identical_config_is_not_published_again() {
        let breaker = Breaker::new("db", with_threshold(3));
        for _ in 0..100 {
            breaker.reconfigure(with_threshold(3)).unwrap();
        }
        assert_eq!(breaker.inner.config.published(), 1);
        breaker.reconfigure(with_threshold(4)).unwrap();
        assert_eq!(breaker.inner.config.published(), 2);
        assert_eq!(breaker.config().threshold(), 4);
    }

    /// `==` leaves out which keys were spelled out, which the config file
    /// reads back: a config that differs only there is still published.
    #[test]
    fn a_config_that_differs_only_in_its_explicit_keys_is_published() {
        let breaker = Breaker::new("db", Config::DEFAULT);
        let spelled = Config::builder()
            .threshold(Config::DEFAULT.threshold())
            .build()
            .unwrap();
        assert_eq!(spelled, Config::DEFAULT);
        breaker.reconfigure(spelled).unwrap();
        assert_eq!(breaker.inner.config.published(), 2);
        assert!(breaker.config().is_explicit("threshold"));
    }

    #[test]
    fn repeated_identical_layers_publish_nothing() {
        let registry = Registry::new();
        let breaker = registry.breaker("search", &with_threshold(3));
        for _ in 0..100 {
            let changed = registry
                .layer(Arc::new(|_: &str, _: Option<&Config>| {
                    Ok(Resolution {
                        config: Config::builder()
                            .threshold(5)
                            .open_ms(5_000)
                            .build()
                            .unwrap(),
                        overrides: vec![],
                    })
                }))
                .unwrap();
            assert!(changed.len() <= 1);
        }
        assert_eq!(breaker.inner.config.published(), 2, "the first layer only");
        assert_eq!(breaker.config().threshold(), 5);
    }
}
