//! One circuit breaker: the state machine, its transitions, and the claim and
//! query API over it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use crate::clock::{Clock, ClockSource};
use crate::config::Config;
use crate::counters::{Counters, Event};
use crate::error::{CallError, CircuitOpen, OpenReason};
use crate::metrics::{Metrics, WindowMetrics};
use crate::permit::{Classifier, EveryError, Permit, Verdict};
use crate::policy::Policy;
use crate::state::{State, Word};
use crate::sync::{AtomicU64, Ordering::*};

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

/// The shared state of one breaker.
pub(crate) struct Inner {
    /// Read by every claim and verdict; written on transitions, failures, and the
    /// success that resets a failure count (never by a success with nothing to reset).
    hot: CachePadded<Hot>,
    name: &'static str,
    config: Config,
    clock: ClockSource,
    /// When the current open state ends (clock nanos). Written before the word
    /// that publishes the `Open` state it belongs to.
    reopen_at: AtomicU64,
    /// The current open duration; grows by `backoff` after a failed probe.
    open_for: AtomicU64,
    /// Until when the probes in flight hold their slots: the latest probe
    /// admission plus `probe_timeout`.
    lease_until: AtomicU64,
    /// Serialises the transitions that write more than the word.
    transition: Mutex<()>,
    counters: Counters,
}

struct Hot {
    word: AtomicU64,
    policy: Policy,
}

impl Breaker {
    /// A standalone breaker on the monotonic clock. Most code gets breakers from a
    /// [`Registry`](crate::Registry) instead, keyed by group.
    pub fn new(group: &str, config: Config) -> Self {
        Self::from_parts(crate::intern(group), config, ClockSource::Monotonic)
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
        Self::from_parts(crate::intern(group), config, ClockSource::of(clock))
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
        // The slow path answers in two registers, and the permit or the refusal
        // is built here: one returned through memory and merged with the fast
        // path's made the compiler copy it with wide loads over narrow stores, a
        // store-forwarding stall on every call.
        let (admitted, started) = inner.acquire_contended(word);
        match admitted.state() {
            State::Closed | State::ForcedClosed | State::HalfOpen => {
                Ok(Permit::new(inner, admitted, started))
            }
            State::Open | State::ForcedOpen => Err(inner.refusal(admitted, started)),
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
            State::HalfOpen if word.probes() < inner.config.half_open_probes() => return None,
            State::HalfOpen => (OpenReason::HalfOpenFull, inner.lease_until.load(Acquire)),
        };
        // The same coarse reading a claim compares (see `acquire_contended`).
        let now = inner.clock.now_coarse();
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

impl Inner {
    #[inline]
    fn word(&self) -> Word {
        Word(self.hot.word.load(Acquire))
    }

    /// [`Breaker::would_admit`] for a word that is not closed.
    #[inline(never)]
    fn would_admit(&self, word: Word) -> bool {
        match word.state() {
            State::Closed | State::ForcedClosed => true,
            State::ForcedOpen => false,
            // The same coarse reading a claim compares (see `acquire_contended`).
            State::Open => self.clock.now_coarse() >= self.reopen_at.load(Acquire),
            State::HalfOpen => {
                word.probes() < self.config.half_open_probes()
                    || self.clock.now_coarse() >= self.lease_until.load(Acquire)
            }
        }
    }

    /// A call admitted on a closed or forced-closed `word` by a claim that went
    /// the slow way: the word is timed (the claim reads the clock), or it turned
    /// closed while the claim retried. Its permit is marked either way, and its
    /// success takes the slow path.
    fn admit(&self, word: Word) -> Permit<'_> {
        let started = if word.is_timed() { self.clock.now() } else { 0 };
        Permit::new(self, word.marked(), started)
    }

    #[inline]
    fn refuse(&self, reason: OpenReason, retry_after: Option<u64>) -> CircuitOpen {
        self.counters.bump(Event::Rejected);
        CircuitOpen::new(self.name, reason, retry_after)
    }

    /// A refusal as a contended claim returns it, in two registers: a word in a
    /// state no admitted permit has (open, or forced open), whose probe field
    /// says "half-open and full" and whose success field says whether the second
    /// value, the nanoseconds until a probe may go, is there.
    #[inline]
    fn refused(reason: OpenReason, retry_after: Option<u64>) -> (Word, u64) {
        let (state, full) = match reason {
            OpenReason::Open => (State::Open, 0),
            OpenReason::HalfOpenFull => (State::Open, 1),
            OpenReason::ForcedOpen => (State::ForcedOpen, 0),
        };
        let has_retry = u32::from(retry_after.is_some());
        (
            Word::new(state, 0, full, has_retry),
            retry_after.unwrap_or(0),
        )
    }

    /// The [`CircuitOpen`] a [`refused`](Self::refused) pair stands for.
    #[inline]
    fn refusal(&self, code: Word, retry_after: u64) -> CircuitOpen {
        let reason = match (code.state(), code.probes()) {
            (State::ForcedOpen, _) => OpenReason::ForcedOpen,
            (_, 0) => OpenReason::Open,
            _ => OpenReason::HalfOpenFull,
        };
        let retry_after = (code.successes() != 0).then_some(retry_after);
        CircuitOpen::new(self.name, reason, retry_after)
    }

    fn cas(&self, current: Word, next: Word) -> Result<(), Word> {
        self.hot
            .word
            .compare_exchange(current.0, next.0, AcqRel, Acquire)
            .map(drop)
            .map_err(Word)
    }

    /// Every claim that does not find the breaker closed. Refusing while open is
    /// the common case here; it stays a small frame, apart from the transitions.
    /// Returns the admitted permit's word and start time, or a
    /// [`refused`](Self::refused) pair.
    #[cold]
    #[inline(never)]
    fn acquire_contended(&self, word: Word) -> (Word, u64) {
        match word.state() {
            State::Closed | State::ForcedClosed => return self.admit(word).into_parts(),
            State::ForcedOpen => {
                self.counters.bump(Event::Rejected);
                return Self::refused(OpenReason::ForcedOpen, None);
            }
            State::Open => {
                let reopen_at = self.reopen_at.load(Acquire);
                let coarse = self.clock.now_coarse(); // see the `State::Open` arm below
                if coarse < reopen_at {
                    self.counters.bump(Event::Rejected);
                    return Self::refused(OpenReason::Open, Some(reopen_at - coarse));
                }
            }
            _ => {}
        }
        match self.acquire_moving(word) {
            Ok(permit) => permit.into_parts(),
            Err(open) => {
                let retry_after = open.retry_after().map(crate::clock::duration_to_nanos);
                Self::refused(open.reason(), retry_after)
            }
        }
    }

    /// The claims that may move the breaker: open to half-open, probe slots.
    #[inline(never)]
    fn acquire_moving(&self, mut word: Word) -> Result<Permit<'_>, CircuitOpen> {
        loop {
            match word.state() {
                State::Closed | State::ForcedClosed => return Ok(self.admit(word)),
                State::ForcedOpen => return Err(self.refuse(OpenReason::ForcedOpen, None)),
                State::Open => {
                    let reopen_at = self.reopen_at.load(Acquire);
                    // A coarse reading never leads the precise clock, so a refusal
                    // may come up to one tick late, and a probe never goes early.
                    let coarse = self.clock.now_coarse();
                    if coarse < reopen_at {
                        return Err(self.refuse(OpenReason::Open, Some(reopen_at - coarse)));
                    }
                    // The open duration has passed: this claim is the first probe.
                    let now = self.clock.now().max(coarse);
                    self.renew_lease(now);
                    let next = word.next(State::HalfOpen).with_probes(1);
                    match self.cas(word, next) {
                        Ok(()) => return Ok(self.admit_probe(next, now)),
                        Err(seen) => word = seen,
                    }
                }
                State::HalfOpen => {
                    let probes = word.probes();
                    if probes < self.config.half_open_probes() {
                        let now = self.clock.now();
                        self.renew_lease(now);
                        let next = word.with_probes(probes + 1);
                        match self.cas(word, next) {
                            Ok(()) => return Ok(self.admit_probe(next, now)),
                            Err(seen) => word = seen,
                        }
                        continue;
                    }
                    let lease_until = self.lease_until.load(Acquire);
                    let coarse = self.clock.now_coarse(); // late, never early: as above
                    if coarse < lease_until {
                        return Err(
                            self.refuse(OpenReason::HalfOpenFull, Some(lease_until - coarse))
                        );
                    }
                    // Every probe in flight has overrun its lease: a new half-open
                    // episode takes their slots, and their outcomes become stale.
                    let now = self.clock.now().max(coarse);
                    self.renew_lease(now);
                    let next = word.next(State::HalfOpen).with_probes(1);
                    match self.cas(word, next) {
                        Ok(()) => {
                            for _ in 0..probes {
                                self.counters.bump(Event::ProbesReclaimed);
                            }
                            log::warn!(
                                "circuit `{}`: reclaimed {probes} probe slot(s) held past probe_timeout",
                                self.name
                            );
                            return Ok(self.admit_probe(next, now));
                        }
                        Err(seen) => word = seen,
                    }
                }
            }
        }
    }

    /// Extends the probes' lease to `now + probe_timeout`. Never shortens it: a
    /// claim that read the clock, then lost the CPU, must not cut short the
    /// lease of a probe admitted after its read.
    fn renew_lease(&self, now: u64) {
        let lease = now.saturating_add(self.config.probe_timeout_nanos());
        self.lease_until.fetch_max(lease, AcqRel);
    }

    fn admit_probe(&self, word: Word, now: u64) -> Permit<'_> {
        Permit::new(self, word.marked(), now)
    }

    /// Records the verdict of a permit admitted when the word was `admitted`.
    #[inline(always)]
    pub(crate) fn settle(&self, admitted: Word, started: u64, verdict: Verdict) {
        // The common verdict: the success of a call claimed on a plain word (an
        // unmarked one) that finds the word as it was at the claim (so in the
        // same generation, with the same failure count: none). It only counts.
        if verdict == Verdict::Success && self.word() == admitted {
            return self.counters.bump(Event::Successes);
        }
        self.settle_slow(admitted, started, verdict);
    }

    /// Every other verdict: failures, probes, windows, resets of the failure
    /// count, and outcomes that find the breaker moved on.
    #[cold]
    #[inline(never)]
    fn settle_slow(&self, admitted: Word, started: u64, verdict: Verdict) {
        let word = self.word();
        if word.generation() != admitted.generation() {
            return self.counters.bump(Event::Stale);
        }
        match admitted.state() {
            State::HalfOpen => self.settle_probe(word, verdict),
            _ => self.settle_call(word, started, verdict),
        }
    }

    fn settle_call(&self, word: Word, started: u64, verdict: Verdict) {
        let generation = word.generation();
        // A forced-closed breaker counts outcomes and never trips.
        let closed = word.state() == State::Closed;
        let policy = &self.hot.policy;
        match verdict {
            Verdict::Success => {
                self.counters.bump(Event::Successes);
                match policy {
                    _ if !closed => {}
                    Policy::Consecutive { .. } => self.clear_failures(word),
                    _ => {
                        if policy.on_outcome(generation, false, started, &self.clock) {
                            self.trip(generation);
                        }
                    }
                }
            }
            Verdict::Failure => {
                self.counters.bump(Event::Failures);
                let trips = match *policy {
                    _ if !closed => false,
                    Policy::Consecutive { threshold } => self.count_failure(word, threshold),
                    _ => policy.on_outcome(generation, true, started, &self.clock),
                };
                if trips {
                    self.trip(generation);
                }
            }
            Verdict::Ignored => self.counters.bump(Event::Ignored),
            Verdict::Abandoned => self.counters.bump(Event::Abandoned),
        }
    }

    /// Adds a failure to the consecutive count of `word`'s generation; returns
    /// whether the count reached `threshold`. A failure that finds the breaker
    /// moved on since `word` counts nowhere (it is already counted as a failure).
    fn count_failure(&self, mut word: Word, threshold: u32) -> bool {
        let generation = word.generation();
        while word.generation() == generation && word.state() == State::Closed {
            let failures = word.failures().saturating_add(1);
            match self.cas(word, word.with_failures(failures)) {
                Ok(()) => return failures >= threshold,
                Err(seen) => word = seen,
            }
        }
        false
    }

    /// Resets the consecutive count of `word`'s generation to zero. A failure
    /// racing in is either reset too (it came first) or counted after this reset,
    /// never lost into it.
    fn clear_failures(&self, mut word: Word) {
        let generation = word.generation();
        while word.generation() == generation && word.failures() != 0 {
            match self.cas(word, word.with_failures(0)) {
                Ok(()) => return,
                Err(seen) => word = seen,
            }
        }
    }

    #[cold]
    fn settle_probe(&self, mut word: Word, verdict: Verdict) {
        let generation = word.generation();
        if verdict == Verdict::Failure {
            return self.reopen_after_probe(generation);
        }
        loop {
            if word.generation() != generation || word.state() != State::HalfOpen {
                return self.counters.bump(Event::Stale);
            }
            let probes = word.probes().saturating_sub(1);
            let (next, event) = match verdict {
                Verdict::Success => {
                    let successes = word.successes() + 1;
                    if successes >= self.config.successes_to_close() {
                        (word.next(State::Closed), Event::Successes)
                    } else {
                        (word.with_successes(probes, successes), Event::Successes)
                    }
                }
                Verdict::Ignored => (word.with_probes(probes), Event::Ignored),
                Verdict::Abandoned | Verdict::Failure => {
                    (word.with_probes(probes), Event::Abandoned)
                }
            };
            match self.cas(word, next) {
                Ok(()) => {
                    self.counters.bump(event);
                    if verdict == Verdict::Success {
                        self.counters.bump(Event::ProbesSucceeded);
                        if next.state() == State::Closed {
                            log::info!("circuit `{}` closed: probes succeeded", self.name);
                        }
                    }
                    return;
                }
                Err(seen) => word = seen,
            }
        }
    }

    /// Closed -> open, once per generation however many failures race here.
    #[cold]
    fn trip(&self, generation: u64) {
        let guard = self.transition.lock();
        let word = self.word();
        if word.generation() != generation || word.state() != State::Closed {
            return; // another failure of this generation already tripped it
        }
        let open_for = self.config.open_nanos();
        // Without this lock, failures and resets change only the count of a closed
        // word, never its generation: the open retries past them and cannot miss.
        let opened = self.open(word, open_for);
        debug_assert!(opened, "a closed word left its generation without the lock");
        drop(guard);
        log::warn!(
            "circuit `{}` opened: failure policy tripped; open for {:?}",
            self.name,
            Duration::from_nanos(open_for)
        );
    }

    /// Half-open -> open after a failed probe, with the open duration grown.
    #[cold]
    fn reopen_after_probe(&self, generation: u64) {
        let guard = self.transition.lock();
        let word = self.word();
        if word.generation() != generation || word.state() != State::HalfOpen {
            drop(guard);
            return self.counters.bump(Event::Stale);
        }
        let open_for = self.config.grown_open_nanos(self.open_for.load(Relaxed));
        if !self.open(word, open_for) {
            // While this probe waited, lock-free claims and verdicts moved the
            // breaker on (another probe closed it, or its lease was reclaimed).
            drop(guard);
            return self.counters.bump(Event::Stale);
        }
        drop(guard);
        self.counters.bump(Event::Failures);
        self.counters.bump(Event::ProbesFailed);
        log::warn!(
            "circuit `{}` reopened: probe failed; open for {:?}",
            self.name,
            Duration::from_nanos(open_for)
        );
    }

    /// Publishes `Open` for the generation after `word`'s, unless the breaker left
    /// that generation meanwhile; returns whether it opened. Caller holds
    /// `transition`.
    fn open(&self, mut word: Word, open_for: u64) -> bool {
        let generation = word.generation();
        let now = self.clock.now();
        // Published before the word: a claim that sees `Open` sees its deadline.
        // If the open does not happen, nothing reads it before the next open
        // writes it again (claims read it only on an `Open` word).
        self.reopen_at.store(now.saturating_add(open_for), Release);
        // Lock-free claims may move the probe count under us; anything else (a
        // probe closing the circuit, a reclaimed lease) makes this open stale.
        while let Err(seen) = self.cas(word, word.next(State::Open)) {
            if seen.generation() != generation {
                return false;
            }
            word = seen;
        }
        self.open_for.store(open_for, Relaxed);
        self.counters.bump(Event::Opened);
        true
    }

    fn force(&self, state: State) {
        let guard = self.transition.lock();
        if state == State::Closed {
            self.open_for.store(self.config.open_nanos(), Relaxed);
        }
        let mut word = self.word();
        while let Err(seen) = self.cas(word, word.next(state)) {
            word = seen;
        }
        drop(guard);
        log::info!("circuit `{}` set to {} by hand", self.name, state);
    }

    fn metrics(&self) -> Metrics {
        let word = self.word();
        let totals = self.counters.totals();
        // The reading refusals compare, so `retry_after` never reads zero while
        // claims are still refused.
        let now = || self.clock.now_coarse();
        let retry_after = match word.state() {
            State::Open => Some(self.reopen_at.load(Acquire).saturating_sub(now())),
            State::HalfOpen if word.probes() >= self.config.half_open_probes() => {
                Some(self.lease_until.load(Acquire).saturating_sub(now()))
            }
            _ => None,
        };
        Metrics {
            group: self.name,
            state: word.state(),
            generation: word.generation(),
            calls: [
                Event::Successes,
                Event::Failures,
                Event::Ignored,
                Event::Abandoned,
                Event::Stale,
            ]
            .iter()
            .fold(0u64, |calls, &event| {
                calls.saturating_add(totals.get(event))
            }),
            successes: totals.get(Event::Successes),
            failures: totals.get(Event::Failures),
            ignored: totals.get(Event::Ignored),
            rejected: totals.get(Event::Rejected),
            abandoned: totals.get(Event::Abandoned),
            stale: totals.get(Event::Stale),
            probes_succeeded: totals.get(Event::ProbesSucceeded),
            probes_failed: totals.get(Event::ProbesFailed),
            probes_reclaimed: totals.get(Event::ProbesReclaimed),
            times_opened: totals.get(Event::Opened),
            probes_in_flight: if word.state() == State::HalfOpen {
                word.probes()
            } else {
                0
            },
            consecutive_failures: word.failures(),
            window: self
                .hot
                .policy
                .window_counts(word.generation(), &self.clock)
                .map(WindowMetrics::from),
            retry_after: retry_after.map(Duration::from_nanos),
        }
    }
}
