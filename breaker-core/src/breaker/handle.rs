//! The public [`Breaker`] handle: construction, the fast claim, the `call`
//! helpers, the pure questions and manual control.

use std::future::Future;
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use super::claim::Claimed;
use super::inner::{Hot, Inner};
use super::permit::{Classifier, EveryError, Permit};
use crate::clock::{Clock, ClockSource};
use crate::config::Config;
use crate::counters::Counters;
use crate::error::{CallError, CircuitOpen};
use crate::metrics::Metrics;
use crate::policy::Policy;
use crate::state::{State, Word};
use crate::sync::{AtomicU64, Mutex, Ordering::*};

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
        let word = Word::initial(policy.needs_clock(), policy.is_window());
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
            State::Open => inner.clock.reached(inner.reopen_at.load(Acquire)),
            State::HalfOpen => {
                word.probes() < inner.config.half_open_probes()
                    || inner.clock.reached(inner.lease_until.load(Acquire))
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
