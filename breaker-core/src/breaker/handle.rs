//! The public [`Breaker`] handle: construction, the fast claim, the `call`
//! helpers, the pure questions and manual control.

use std::future::Future;
use std::sync::Arc;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use super::claim::Claimed;
use super::inner::{Hot, Inner};
use super::permit::{Classifier, EveryError, Permit};
use crate::bulkhead::BulkheadSlot;
use crate::clock::{Clock, ClockSource};
use crate::config::Config;
use crate::counters::Counters;
use crate::error::{CallError, CircuitOpen, OpenReason, TimedOut};
use crate::guards::Guards;
use crate::metrics::Metrics;
use crate::policy::Policy;
use crate::state::{State, Word};
use crate::sync::{AtomicU64, Ordering::*};
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
                config,
                clock,
                reopen_at: AtomicU64::new(0),
                open_for: AtomicU64::new(config.open_nanos()),
                lease_until: AtomicU64::new(0),
                transition: Mutex::new(()),
                counters: Counters::new(),
                guards: Guards::new(&config),
            }),
        }
    }

    /// The group this breaker guards.
    pub fn group(&self) -> &'static str {
        self.inner.name
    }

    /// The config this breaker runs with.
    pub fn config(&self) -> &Config {
        &self.inner.config
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
    pub async fn call_async<T, E, Fut>(&self, future: Fut) -> Result<T, CallError<E>>
    where
        Fut: Future<Output = Result<T, E>>,
    {
        // Not `call_async_with(..).await`: one state machine, not two nested ones
        // that move `future` twice.
        let permit = self.try_acquire()?;
        permit.record_owned(future.await, &EveryError, CallError::Inner)
    }

    /// [`call_async`](Self::call_async) with a classifier.
    pub async fn call_async_with<T, E, C, Fut>(
        &self,
        classifier: &C,
        future: Fut,
    ) -> Result<T, CallError<E>>
    where
        C: Classifier<E> + ?Sized,
        Fut: Future<Output = Result<T, E>>,
    {
        let permit = self.try_acquire()?;
        permit.record_owned(future.await, classifier, CallError::Inner)
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
        let Some(after) = self.inner.config.timeout() else {
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
    pub fn would_admit(&self) -> bool {
        let inner = &*self.inner;
        let word = inner.word();
        match word.state() {
            State::Closed | State::ForcedClosed => true,
            State::ForcedOpen => false,
            // The reading a claim compares: see the crate docs, "The coarse reading".
            State::Open => inner.clock.now_coarse() >= inner.reopen_at.load(Acquire),
            State::HalfOpen => {
                word.probes() < inner.config.half_open_probes()
                    || inner.clock.now_coarse() >= inner.lease_until.load(Acquire)
            }
        }
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
