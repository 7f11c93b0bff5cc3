//! The retry helpers of [`Breaker`]: a closure or a future factory run under
//! one permit per attempt, retried as a [`Retry`] says, and the steps of that
//! loop, which `#[circuit_breaker(retry = ..)]` runs around its body too.

use std::future::Future;
use std::time::Duration;

use super::handle::Breaker;
use super::jitter;
use super::permit::{Classifier, EveryError, Permit, Scope};
use crate::error::{CallError, TimedOut};
use crate::events::{Event, RetryBudgetExhausted};
use crate::hold::HoldScope;
use crate::retry::{Retry, RetryAfterHint, RetryPolicy, RetryTuning};
use crate::timeout::{within, Timer};

/// Where a retried call stands: when its first attempt started (read only
/// for a policy with a deadline, `u64::MAX` otherwise) and which retry the
/// next attempt would be.
#[derive(Clone, Copy, Debug)]
pub struct RetryAttempts {
    started: u64,
    next_retry: u32,
}

/// What follows an attempt: the call ends with this result (recorded), or
/// the next attempt goes after the wait.
#[derive(Debug)]
pub enum RetryVerdict<R> {
    /// The call's answer.
    Done(R),
    /// Wait this long, then claim and attempt again.
    Again(Duration),
}

impl Breaker {
    /// The group's [`Retry`]: one budget for every fn of the group, every key
    /// of a keyed group and every integration that retries for the group.
    /// The first call that asks makes it from `declared` (so a group that
    /// never retries allocates nothing); every later call gets that one.
    ///
    /// Two declarations of one group with different policies are a conflict:
    /// the first declaration holds (its policy and its budget serve both),
    /// and the other is logged once at `warn`. Declarations are compared by
    /// value.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Breaker, Config, RetryPolicy};
    ///
    /// static POLICY: RetryPolicy = RetryPolicy::new(2);
    /// let search = Breaker::new("search", Config::default());
    /// let retry = search.group_retry(&POLICY);
    /// let answer = search.call_retrying(retry, || Ok::<_, &str>(7));
    /// assert_eq!(answer.unwrap(), 7);
    /// assert!(std::ptr::eq(search.clone().group_retry(&POLICY), retry));
    /// ```
    #[inline]
    pub fn group_retry(&self, declared: &RetryPolicy) -> &Retry {
        self.inner
            .guards
            .retry_slot()
            .retry(self.inner.name, declared, false, || self.inner.clock.now())
    }

    /// [`group_retry`](Self::group_retry) for a `static` declaration (the
    /// attribute's): the one the `Retry` was made from is known by its address,
    /// which costs one comparison.
    #[inline]
    pub(crate) fn group_retry_static(&self, declared: &'static RetryPolicy) -> &Retry {
        self.inner
            .guards
            .retry_slot()
            .retry(self.inner.name, declared, true, || self.inner.clock.now())
    }

    /// The group's [`Retry`] if a retried call made it (see
    /// [`group_retry`](Self::group_retry)).
    pub fn made_group_retry(&self) -> Option<&Retry> {
        self.inner.guards.made_retry_slot()?.made()
    }

    /// Layers `tuning` over the group's retry declaration: its `Retry` is
    /// made with it, or, made already, runs it from its next attempt on. A
    /// group that never retried gets a slot only for a tuning that sets
    /// something.
    pub(crate) fn tune_retry(&self, tuning: &RetryTuning) {
        let guards = &self.inner.guards;
        let slot = match guards.made_retry_slot() {
            Some(slot) => slot,
            None if tuning.is_empty() => return,
            None => guards.retry_slot(),
        };
        slot.tune(tuning, self.inner.clock.now());
    }

    /// Runs `f` under the breaker, retrying a failure as `retry` says, every
    /// `Err` counted as a failure; see
    /// [`call_retrying_with`](Self::call_retrying_with).
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{clock::Clock, Breaker, Config, ManualClock, Retry, RetryPolicy};
    ///
    /// static FLAKY: Retry = Retry::new(RetryPolicy::new(2).no_budget());
    /// let clock = ManualClock::new();
    /// let breaker = Breaker::with_clock("flaky", Config::default(), clock.clone());
    /// let mut attempts = 0;
    /// let answer = breaker.call_retrying(&FLAKY, || {
    ///     attempts += 1;
    ///     if attempts < 2 { Err("busy") } else { Ok(attempts) }
    /// });
    /// assert_eq!(answer.unwrap(), 2);
    /// assert_eq!(breaker.metrics().retries, 1);
    /// assert!(clock.now_nanos() <= 50_000_000); // one backoff, waited on the clock
    /// ```
    pub fn call_retrying<T, E, F>(&self, retry: &Retry, f: F) -> Result<T, CallError<E>>
    where
        E: RetryAfterHint,
        F: FnMut() -> Result<T, E>,
    {
        self.call_retrying_with(retry, &EveryError, f)
    }

    /// Runs `f` under the breaker, one permit and one outcome per attempt,
    /// and repeats it after a failure as `retry` says; `classifier` decides
    /// which errors count as failures, and only those are retried (an ignored
    /// error is returned at once).
    ///
    /// The operation must be safe to repeat: choosing this helper is the
    /// caller's promise that it is. Between attempts the thread waits on the
    /// breaker's clock ([`Clock::sleep`](crate::Clock::sleep)). A retry is not
    /// made, and the last error is returned at once, when: the policy's
    /// retries are used up; the breaker no longer admits (the failure opened
    /// it, or it is open or full: no wait, no claim); the delay would end past
    /// the policy's deadline; or the budget is spent (counted in
    /// `retries_budget_exhausted` and told as [`Event::RetryBudgetExhausted`]).
    /// A refusal, of the first attempt or of a retry claimed after its wait,
    /// ends the call at once with [`CallError::Open`] and is never retried.
    /// The error's [`RetryAfterHint`] is the next delay's floor.
    pub fn call_retrying_with<T, E, C, F>(
        &self,
        retry: &Retry,
        classifier: &C,
        mut f: F,
    ) -> Result<T, CallError<E>>
    where
        E: RetryAfterHint,
        C: Classifier<E> + ?Sized,
        F: FnMut() -> Result<T, E>,
    {
        let mut attempts = self.first_attempt(retry);
        loop {
            let permit = self.try_acquire()?;
            let result = f();
            let hint = result.as_ref().err().and_then(E::retry_after);
            match self.verdict(retry, &mut attempts, permit, result, classifier, hint) {
                RetryVerdict::Done(result) => return result.map_err(CallError::Inner),
                RetryVerdict::Again(delay) => self.sleep(delay),
            }
        }
    }

    /// Awaits the future `make` returns under the breaker, retrying a failure
    /// as `retry` says, every `Err` counted as a failure; see
    /// [`call_async_retrying_with`](Self::call_async_retrying_with).
    pub async fn call_async_retrying<T, E, Tm, Fut, F>(
        &self,
        retry: &Retry,
        timer: &Tm,
        make: F,
    ) -> Result<T, CallError<E>>
    where
        E: RetryAfterHint,
        Tm: Timer + ?Sized,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.call_async_retrying_with(retry, timer, &EveryError, make)
            .await
    }

    /// [`call_retrying_with`](Self::call_retrying_with) for async calls: each
    /// attempt awaits a new future from `make`, raced against the group's
    /// `timeout_ms` when it has one (a timed-out attempt is a failure, retried
    /// like any other; a last one is answered with [`CallError::TimedOut`]);
    /// the waits between attempts are `timer`'s. Dropping the returned future
    /// ends the call: an attempt in flight is abandoned, a wait cancelled.
    pub async fn call_async_retrying_with<T, E, C, Tm, Fut, F>(
        &self,
        retry: &Retry,
        timer: &Tm,
        classifier: &C,
        mut make: F,
    ) -> Result<T, CallError<E>>
    where
        E: RetryAfterHint,
        C: Classifier<E> + ?Sized,
        Tm: Timer + ?Sized,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let mut attempts = self.first_attempt(retry);
        loop {
            let permit = self.try_acquire()?;
            let result = match self.inner.config().timeout() {
                None => make().await,
                Some(after) => match within(timer, after, make()).await {
                    Some(result) => result,
                    None => match self.retry_timed_out(retry, &mut attempts, permit, after) {
                        Ok(delay) => {
                            timer.sleep(delay).await;
                            continue;
                        }
                        Err(timed_out) => return Err(CallError::TimedOut(timed_out)),
                    },
                },
            };
            let hint = result.as_ref().err().and_then(E::retry_after);
            match self.verdict(retry, &mut attempts, permit, result, classifier, hint) {
                RetryVerdict::Done(result) => return result.map_err(CallError::Inner),
                RetryVerdict::Again(delay) => timer.sleep(delay).await,
            }
        }
    }

    /// The loop's start: the clock is read only for a policy with a deadline
    /// (a call that started without one is not held to one a reload sets
    /// meanwhile).
    #[inline]
    pub(crate) fn first_attempt(&self, retry: &Retry) -> RetryAttempts {
        let started = match retry.has_deadline() {
            true => self.inner.clock.now(),
            false => UNTIMED,
        };
        RetryAttempts {
            started,
            next_retry: 1,
        }
    }

    /// An attempt that timed out `after` its deadline, recorded as a failure
    /// (a first attempt pays into the budget, as every first does): the wait
    /// before the next attempt, or the error to answer with.
    #[cold]
    pub(crate) fn retry_timed_out(
        &self,
        retry: &Retry,
        attempts: &mut RetryAttempts,
        permit: Permit<'_>,
        after: Duration,
    ) -> Result<Duration, TimedOut> {
        let timed_out = self.timed_out(permit, after);
        attempts.deposit_first(retry);
        self.retry_delay(retry, attempts, None).ok_or(timed_out)
    }

    /// Records one attempt's `result` under `permit` (as `classifier` judges
    /// it) and says what follows: the answer, or a wait and another attempt.
    #[inline]
    pub(crate) fn verdict<T, E, C>(
        &self,
        retry: &Retry,
        attempts: &mut RetryAttempts,
        permit: Permit<'_>,
        result: Result<T, E>,
        classifier: &C,
        hint: Option<Duration>,
    ) -> RetryVerdict<Result<T, E>>
    where
        C: Classifier<E> + ?Sized,
    {
        attempts.deposit_first(retry);
        let error = match result {
            Ok(value) => {
                permit.success();
                return RetryVerdict::Done(Ok(value));
            }
            Err(error) => error,
        };
        let failed = classifier.is_failure(&error);
        if let Some(wait) = holds_for(retry, failed, hint) {
            permit.hold(wait, self.retry_hold_scope());
            return RetryVerdict::Done(Err(error));
        }
        if !failed {
            permit.ignore();
            return RetryVerdict::Done(Err(error));
        }
        match classifier.scope(&error) {
            Scope::Key => permit.failure(),
            Scope::Group => permit.failure_of_group(),
        }
        match self.retry_delay(retry, attempts, hint) {
            Some(delay) => RetryVerdict::Again(delay),
            None => RetryVerdict::Done(Err(error)),
        }
    }

    /// What a wait past the retry's cap holds: the key, for a keyed group's
    /// key (one tenant's quota); the whole group, for any other breaker, so
    /// that a fleet shares it.
    #[cold]
    fn retry_hold_scope(&self) -> HoldScope {
        if self.inner.guards.keyed() && !self.inner.group_level {
            HoldScope::Key
        } else {
            HoldScope::Group
        }
    }

    /// As [`verdict`](Self::verdict), with retry apart from record:
    /// `retry_on` decides which errors are retried, `classifier` which count
    /// as failures. An error retried and not a failure (a `429` whose wait is
    /// its hint) is ignored in the breaker and repeated after the wait.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn verdict_on<T, E, C, R>(
        &self,
        retry: &Retry,
        attempts: &mut RetryAttempts,
        permit: Permit<'_>,
        result: Result<T, E>,
        classifier: &C,
        retry_on: &R,
        hint: Option<Duration>,
    ) -> RetryVerdict<Result<T, E>>
    where
        C: Classifier<E> + ?Sized,
        R: Fn(&E) -> bool + ?Sized,
    {
        attempts.deposit_first(retry);
        let error = match result {
            Ok(value) => {
                permit.success();
                return RetryVerdict::Done(Ok(value));
            }
            Err(error) => error,
        };
        let failed = classifier.is_failure(&error);
        let held = holds_for(retry, failed, hint);
        match held {
            Some(wait) => drop(permit.hold(wait, self.retry_hold_scope())),
            None if failed => permit.failure(),
            None => permit.ignore(),
        }
        // A wait past the cap on a retry's delay is held, not waited out here.
        let beyond_cap = held.is_some_and(|wait| wait > retry.effective_policy().delay_cap());
        if beyond_cap || !retry_on(&error) {
            return RetryVerdict::Done(Err(error));
        }
        match self.retry_delay(retry, attempts, hint) {
            Some(delay) => RetryVerdict::Again(delay),
            None => RetryVerdict::Done(Err(error)),
        }
    }

    /// After an attempt whose outcome the caller recorded itself (an
    /// integration that judges responses, or records a success only when a
    /// body ends): the first attempt earns the budget its share, and the
    /// wait before the next attempt is returned, or `None` when no retry is to
    /// be made (as [`call_retrying_with`](Self::call_retrying_with) decides).
    /// Call it after the outcome is recorded, so that a failure which opened
    /// the circuit is seen.
    #[cold]
    pub(crate) fn retry_recorded(
        &self,
        retry: &Retry,
        attempts: &mut RetryAttempts,
        hint: Option<Duration>,
    ) -> Option<Duration> {
        attempts.deposit_first(retry);
        self.retry_delay(retry, attempts, hint)
    }

    /// Waits `delay` on the breaker's clock.
    #[cold]
    pub(crate) fn sleep(&self, delay: Duration) {
        self.inner.clock.sleep(delay);
    }

    /// After a failed attempt: the wait before the next one, or `None` when no
    /// retry is to be made (see [`call_retrying_with`](Self::call_retrying_with)).
    /// A retry allowed is counted, and `attempts` moves on.
    #[cold]
    #[inline(never)]
    pub(crate) fn retry_delay(
        &self,
        retry: &Retry,
        attempts: &mut RetryAttempts,
        hint: Option<Duration>,
    ) -> Option<Duration> {
        let inner = &*self.inner;
        let policy = retry.effective_policy();
        let number = attempts.next_retry;
        // A hold in force is waited out: the retry goes once it ends.
        if number > policy.retries() || !self.would_admit_past_hold() {
            return None;
        }
        let drawn = jitter::full(
            policy.ceiling(number),
            inner.name,
            &inner.clock,
            retry.next_draw(),
        );
        let held = self.held().map_or(Duration::ZERO, |held| held.remaining);
        let delay = Duration::from_nanos(drawn)
            .max(hint.unwrap_or(Duration::ZERO))
            .max(held);
        let now = inner.clock.now();
        if let (Some(deadline), false) = (policy.overall_deadline(), attempts.started == UNTIMED) {
            let end = attempts
                .started
                .saturating_add(crate::clock::duration_to_nanos(deadline));
            if now.saturating_add(crate::clock::duration_to_nanos(delay)) > end {
                return None;
            }
        }
        if !retry.withdraw(now) {
            inner.events.count_retry(false);
            inner
                .events
                .tell_other(&Event::RetryBudgetExhausted(RetryBudgetExhausted {
                    group: inner.name,
                    retry: number,
                }));
            return None;
        }
        inner.events.count_retry(true);
        attempts.next_retry = number.saturating_add(1);
        Some(delay)
    }
}

/// The wait an attempt's error holds the breaker for, when it carries a
/// server's wait (`hint`, from its [`RetryAfterHint`]) and either is no
/// failure (a `429`: the server is well and asks every caller to wait) or asks
/// for longer than `retry`'s cap on a retry's delay (a retry would not wait it
/// out, and every other caller should not ask again before it ends). Such an
/// attempt counts as ignored and holds as [`Permit::hold`] does; a failure
/// asking for a wait within the cap is a failure, retried after its wait.
fn holds_for(retry: &Retry, failed: bool, hint: Option<Duration>) -> Option<Duration> {
    let wait = hint?;
    (!failed || wait > retry.effective_policy().delay_cap()).then_some(wait)
}

/// `RetryAttempts::started` of a call whose policy had no deadline when it
/// started.
const UNTIMED: u64 = u64::MAX;

impl RetryAttempts {
    /// The call ends with an attempt its caller recorded itself: the first
    /// attempt earns the budget its share, as every first one does.
    #[inline]
    pub(crate) fn settle(&mut self, retry: &Retry) {
        self.deposit_first(retry);
    }

    /// The first attempt's verdict earns the budget its share: once per call
    /// (only that verdict finds no retry made yet, as every later one follows
    /// a retry allowed).
    #[inline]
    fn deposit_first(&mut self, retry: &Retry) {
        if self.next_retry == 1 {
            retry.deposit();
        }
    }
}

/// The attempts of one retried call, for code that claims each attempt and
/// records its outcome on the permit itself: an integration that judges a
/// response by its status, records a success only when the body ends, or
/// reads a gRPC status from the trailers. [`Breaker::call_retrying_with`]
/// runs the same steps around a closure.
///
/// A call goes: [`start`](Self::start); then per attempt a claim
/// ([`Breaker::try_acquire`] or [`try_acquire_owned`](Breaker::try_acquire_owned):
/// a refusal ends the call and is never retried), the attempt, its outcome
/// recorded on the permit, and one of
///
/// - [`next_delay`](Self::next_delay) after a failure (or an answer that asks
///   to be sent again): the wait before the next attempt, or `None` when the
///   call ends with this one (no retries left, the circuit no longer admits,
///   the deadline, the budget);
/// - [`finish`](Self::finish) when the call ends with the attempt without
///   asking for a retry (a success, an ignored answer, a request that cannot
///   be sent again).
///
/// The first attempt earns the group's budget its share in either, once per
/// call.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Attempts, Breaker, Config, ManualClock, RetryPolicy};
///
/// let breaker = Breaker::with_clock("docs-attempts", Config::default(), ManualClock::new());
/// let retry = breaker.group_retry(&RetryPolicy::new(1));
/// let mut attempts = Attempts::start(&breaker, retry);
///
/// breaker.try_acquire()?.failure(); // the first attempt's answer: a 503, say
/// let wait = attempts.next_delay(&breaker, retry, None).expect("one retry left");
/// assert!(wait <= std::time::Duration::from_millis(50)); // the default first backoff
///
/// breaker.try_acquire()?.failure(); // the retry fails too
/// assert_eq!(attempts.next_delay(&breaker, retry, None), None); // no retry left
/// assert_eq!(breaker.metrics().retries, 1);
/// # Ok::<(), breakerbox::CircuitOpen>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Attempts {
    attempts: RetryAttempts,
}

impl Attempts {
    /// A retried call under `retry` (the group's, from
    /// [`Breaker::group_retry`]) on `breaker`, before its first attempt. The
    /// clock is read only when the policy has a deadline.
    #[inline]
    pub fn start(breaker: &Breaker, retry: &Retry) -> Self {
        Attempts {
            attempts: breaker.first_attempt(retry),
        }
    }

    /// After an attempt whose outcome was recorded on its permit (call it
    /// after, so that a failure that opened the circuit is seen): the wait
    /// before the next attempt, at least `hint` (a server's `Retry-After`),
    /// or `None` when the call ends with this attempt. A retry allowed is
    /// counted in the breaker's `retries` and drawn from the budget; one the
    /// budget refuses is counted in `retries_budget_exhausted`.
    #[inline]
    pub fn next_delay(
        &mut self,
        breaker: &Breaker,
        retry: &Retry,
        hint: Option<Duration>,
    ) -> Option<Duration> {
        breaker.retry_recorded(retry, &mut self.attempts, hint)
    }

    /// The call ends with the attempt just recorded, with no retry asked for.
    #[inline]
    pub fn finish(mut self, retry: &Retry) {
        self.attempts.settle(retry);
    }
}
