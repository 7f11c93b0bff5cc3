//! What `#[circuit_breaker]`'s generated code reaches through the facade's
//! versioned `__private_v01`, and the one home of the core's items that exist
//! for it; integrations use the public API instead. Not public API: these
//! items may change in any release.

use std::time::Duration;

use crate::breaker::{Breaker, Permit};
use crate::error::TimedOut;

pub use crate::classify::EveryError;
pub use crate::outcome::{
    Answered, AnsweredAny, AnyOutcome, Classified, ClassifiedAny, NoClassifier, NoFailure, Outcome,
};
pub use crate::site::{CallSite, KeyedSite, SiteBreaker};

/// Records a call dropped at its deadline `after` and returns its error. Not
/// public API.
#[cold]
pub fn timed_out(breaker: &Breaker, permit: Permit<'_>, after: Duration) -> TimedOut {
    breaker.timed_out(permit, after)
}

// `retry = N`: the loop's steps, each attempt's hint, and the split of a
// failure fallback's error.
pub use crate::breaker::{RetryAttempts, RetryVerdict};
pub use crate::retry::{Retry, RetryPolicy};

/// The policy of `#[circuit_breaker(idempotent = true)]` without `retry`:
/// no retry, unless configuration gives the group some (its `retry` is
/// not a literal of the attribute). Not public API.
pub const fn no_retries() -> RetryPolicy {
    RetryPolicy::new(0).retries_unset()
}

/// The group's one budget, made from `declared` by the group's first retried
/// call ([`Breaker::group_retry`]). Not public API.
#[inline]
pub fn group_retry<'a>(breaker: &'a Breaker, declared: &'static RetryPolicy) -> &'a Retry {
    breaker.group_retry_static(declared)
}

/// The start of a retried call: reads the clock only for a policy with a
/// deadline. Not public API.
#[inline]
pub fn retry_start(breaker: &Breaker, retry: &Retry) -> RetryAttempts {
    breaker.first_attempt(retry)
}

/// Records one attempt's `result` and says whether to wait and go again or
/// to end with it. Not public API.
#[inline]
pub fn retry_verdict<T, E, C>(
    breaker: &Breaker,
    retry: &Retry,
    attempts: &mut RetryAttempts,
    permit: Permit<'_>,
    result: Result<T, E>,
    classifier: &C,
    hint: Option<Duration>,
) -> RetryVerdict<Result<T, E>>
where
    C: crate::Classifier<E> + ?Sized,
{
    breaker.verdict(retry, attempts, permit, result, classifier, hint)
}

/// As [`retry_verdict`], with `retry_on` deciding which errors are retried
/// apart from `classifier`, which decides which count as failures. Not public
/// API.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn retry_verdict_on<T, E, C, R>(
    breaker: &Breaker,
    retry: &Retry,
    attempts: &mut RetryAttempts,
    permit: Permit<'_>,
    result: Result<T, E>,
    classifier: &C,
    retry_on: &R,
    hint: Option<Duration>,
) -> RetryVerdict<Result<T, E>>
where
    C: crate::Classifier<E> + ?Sized,
    R: Fn(&E) -> bool + ?Sized,
{
    breaker.verdict_on(retry, attempts, permit, result, classifier, retry_on, hint)
}

/// A timed-out attempt (recorded as a failure): the wait before the next one,
/// or the error to answer with. Not public API.
#[cold]
pub fn retry_timed_out(
    breaker: &Breaker,
    retry: &Retry,
    attempts: &mut RetryAttempts,
    permit: Permit<'_>,
    after: Duration,
) -> Result<Duration, TimedOut> {
    breaker.retry_timed_out(retry, attempts, permit, after)
}

/// Waits `delay` on the breaker's clock, between two sync attempts. Not public API.
#[cold]
pub fn retry_sleep(breaker: &Breaker, delay: Duration) {
    breaker.sleep(delay);
}

/// A retried call's last result, for `fallback_on = "failure"`: `Ok` with the
/// value to return (a success, an error the classifier ignores, or anything a
/// `shadow` call returned: one shadow mode admitted in place of a refusal),
/// `Err` with a failure for the fallback. Not public API.
#[inline]
pub fn retry_failed<T, E, C>(
    result: Result<T, E>,
    classifier: &C,
    shadow: bool,
) -> Result<Result<T, E>, E>
where
    C: crate::Classifier<E> + ?Sized,
{
    match result {
        Err(error) if !shadow && classifier.is_failure(&error) => Err(error),
        other => Ok(other),
    }
}

/// An attempt's error, asked for a [`RetryAfterHint`](crate::RetryAfterHint)
/// by method lookup: `(&Hint(error)).hint()` is the error's own when its type
/// implements the trait ([`ViaHint`]), `None` otherwise ([`ViaNoHint`]). Not
/// public API.
pub struct Hint<'a, E>(pub &'a E);

/// The hint of an error that implements [`RetryAfterHint`](crate::RetryAfterHint).
pub trait ViaHint {
    /// The error's delay.
    fn hint(&self) -> Option<Duration>;
}

impl<E: crate::RetryAfterHint> ViaHint for Hint<'_, E> {
    #[inline]
    fn hint(&self) -> Option<Duration> {
        self.0.retry_after()
    }
}

/// The hint of any other error: none.
pub trait ViaNoHint {
    /// No delay.
    fn hint(&self) -> Option<Duration> {
        None
    }
}

impl<T> ViaNoHint for &T {}

/// The wait between two async attempts, on `timer`. Not public API.
#[cold]
pub fn retry_wait<T: crate::Timer + ?Sized>(timer: &T, delay: Duration) -> T::Sleep {
    timer.sleep(delay)
}
