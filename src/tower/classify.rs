//! What a guarded service's outcome counts as: the [`Verdict`], the [`Classify`]
//! trait, and the ready classifiers [`HttpResponses`] and [`Errors`].

use std::time::Duration;

use breaker_core::classify::status_is_failure;
use breaker_core::hold::{HoldScope, Wait};
use breaker_core::{Classifier, EveryError, OwnedPermit};

/// What one call's outcome counts as for its breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The dependency answered well.
    Success,
    /// The dependency is unhealthy: counts toward opening the circuit.
    Failure,
    /// Says nothing about the dependency (a 404, a bad request): counted as
    /// ignored, frees a probe slot, moves nothing.
    Ignored,
    /// A failure of the whole keyed group, not of this key (an expired
    /// credential, a provider-wide 5xx): counts toward the group's own
    /// breaker when the group judges as one (`systemic_share`,
    /// `max_open_keys`), and as a [`Failure`](Self::Failure) anywhere else
    /// (see [`Permit::failure_of_group`](crate::breaker::Permit::failure_of_group)).
    GroupFailure,
}

/// Decides what a service's response or error counts as.
///
/// Any `Fn(Result<&Res, &E>) -> Verdict` is one, so a plain fn works:
///
/// ```
/// use breakerbox::tower::{Classify, Verdict};
///
/// // A gRPC-style service whose errors carry a code.
/// struct Status { code: u8 }
///
/// fn unavailable_fails(result: Result<&String, &Status>) -> Verdict {
///     match result {
///         Ok(_) => Verdict::Success,
///         Err(Status { code: 14 }) => Verdict::Failure, // UNAVAILABLE
///         Err(_) => Verdict::Ignored,
///     }
/// }
/// assert_eq!(unavailable_fails.classify(Err(&Status { code: 14 })), Verdict::Failure);
/// assert_eq!(unavailable_fails.classify(Ok(&"fine".to_owned())), Verdict::Success);
/// ```
pub trait Classify<Res, E> {
    /// The verdict on one call's response (`Ok`) or error (`Err`).
    fn classify(&self, result: Result<&Res, &E>) -> Verdict;

    /// The least delay before another attempt that the response or error asks
    /// for, read by a retrying layer or middleware only: the next wait's floor
    /// after a failure, and what makes an ignored answer worth repeating at
    /// all (a `429 Too Many Requests` with `Retry-After`). None by default;
    /// [`HttpResponses`] reads [`retry_after`](super::retry_after()).
    #[inline]
    fn retry_after(&self, result: Result<&Res, &E>) -> Option<std::time::Duration> {
        let _ = result;
        None
    }

    /// The wait the response or error asks of every caller (a `429` or `503`
    /// with `Retry-After`): the layer [holds](crate::Breaker::hold) its
    /// breaker for it, and the call counts as ignored, whatever
    /// [`classify`](Self::classify) says: a server that asks to wait is not
    /// failing. A [`Wait::Bad`] one is counted
    /// ([`HoldCounts::bad`](crate::hold::HoldCounts::bad)) and the call judged
    /// as without it. None by default; [`HttpResponses`] reads
    /// [`server_wait`](super::server_wait()).
    #[inline]
    fn wait(&self, result: Result<&Res, &E>) -> Wait {
        let _ = result;
        Wait::None
    }
}

/// Records one call's `result` under `permit`: a hold for the wait the
/// classifier reads in it (the call then counts as ignored), else its
/// verdict. Returns the verdict recorded and the wait held for, if any (a
/// retry waits until the hold ends, which the core reads itself).
pub(crate) fn record_classified<Res, E, C>(
    permit: OwnedPermit,
    classifier: &C,
    result: Result<&Res, &E>,
    scope: HoldScope,
) -> (Verdict, Option<Duration>)
where
    C: Classify<Res, E> + ?Sized,
{
    match classifier.wait(result) {
        Wait::For(wait) => {
            permit.hold(wait, scope);
            return (Verdict::Ignored, Some(wait));
        }
        Wait::Bad => permit.breaker().count_bad_hold(),
        Wait::None => {}
    }
    let verdict = classifier.classify(result);
    match verdict {
        Verdict::Success => permit.success(),
        Verdict::Failure => permit.failure(),
        Verdict::Ignored => permit.ignore(),
        Verdict::GroupFailure => permit.failure_of_group(),
    }
    (verdict, None)
}

impl<Res, E, F> Classify<Res, E> for F
where
    F: Fn(Result<&Res, &E>) -> Verdict,
{
    #[inline]
    fn classify(&self, result: Result<&Res, &E>) -> Verdict {
        self(result)
    }
}

/// The verdict on an HTTP status, by the rule of
/// [`classify::http_status`](crate::classify::http_status): a status
/// [`status_is_failure`](crate::classify::status_is_failure) says counts
/// (5xx, 408, invalid codes) is a failure, any other 4xx is ignored (the request
/// was wrong, not the server), and 1xx-3xx are successes.
///
/// ```
/// use breakerbox::tower::{status_verdict, Verdict};
///
/// assert_eq!(status_verdict(200), Verdict::Success);
/// assert_eq!(status_verdict(404), Verdict::Ignored);
/// assert_eq!(status_verdict(429), Verdict::Ignored);
/// assert_eq!(status_verdict(408), Verdict::Failure);
/// assert_eq!(status_verdict(503), Verdict::Failure);
/// ```
#[inline]
pub const fn status_verdict(code: u16) -> Verdict {
    if status_is_failure(code) {
        Verdict::Failure
    } else if code >= 400 {
        Verdict::Ignored
    } else {
        Verdict::Success
    }
}

/// Classifies `http::Response`s by status ([`status_verdict`]); every error of
/// the service (no response at all: a refused connection, a timeout) is a
/// failure. The default classifier of
/// [`CircuitBreakerLayer`](super::CircuitBreakerLayer); with the feature
/// `reqwest` it classifies `reqwest::Response`s the same way.
///
/// ```
/// use breakerbox::tower::{Classify, HttpResponses, Verdict};
///
/// let response = |code| http::Response::builder().status(code).body(()).unwrap();
/// let classify = |code| HttpResponses.classify(Ok::<_, &()>(&response(code)));
/// assert_eq!(classify(200), Verdict::Success);
/// assert_eq!(classify(404), Verdict::Ignored);
/// assert_eq!(classify(502), Verdict::Failure);
/// assert_eq!(HttpResponses.classify(Err::<&http::Response<()>, _>(&"refused")), Verdict::Failure);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct HttpResponses;

impl<B, E> Classify<http::Response<B>, E> for HttpResponses {
    #[inline]
    fn classify(&self, result: Result<&http::Response<B>, &E>) -> Verdict {
        match result {
            Ok(response) => status_verdict(response.status().as_u16()),
            Err(_) => Verdict::Failure,
        }
    }

    /// `Retry-After` on a `429` or `503` ([`retry_after`](super::retry_after())).
    fn retry_after(&self, result: Result<&http::Response<B>, &E>) -> Option<std::time::Duration> {
        let response = result.ok()?;
        super::retry_after(response.status().as_u16(), response.headers())
    }

    /// `Retry-After` on a `429` or `503`, for a hold ([`server_wait`](super::server_wait())).
    #[inline]
    fn wait(&self, result: Result<&http::Response<B>, &E>) -> Wait {
        match result {
            Ok(response) => super::server_wait(response.status().as_u16(), response.headers()),
            Err(_) => Wait::None,
        }
    }
}

/// Classifies by the error alone, for services that are not HTTP: every
/// response is a success, and an error is a failure or ignored as the
/// [`Classifier`] inside says (the default, [`EveryError`], fails them all;
/// [`classify::io_error`](crate::classify::io_error) and any
/// `Fn(&E) -> bool` work too).
///
/// ```
/// use breakerbox::tower::{Classify, Errors, Verdict};
/// use breakerbox::classify::EveryError;
///
/// assert_eq!(Errors(EveryError).classify(Ok::<_, &()>(&7)), Verdict::Success);
/// assert_eq!(Errors(EveryError).classify(Err::<&u32, _>(&())), Verdict::Failure);
/// let not_found = std::io::Error::from(std::io::ErrorKind::NotFound);
/// let files = Errors(breakerbox::classify::io_error);
/// assert_eq!(files.classify(Err::<&u32, _>(&not_found)), Verdict::Ignored);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Errors<C = EveryError>(pub C);

impl<Res, E, C: Classifier<E>> Classify<Res, E> for Errors<C> {
    #[inline]
    fn classify(&self, result: Result<&Res, &E>) -> Verdict {
        match result {
            Ok(_) => Verdict::Success,
            Err(e) if self.0.is_failure(e) => Verdict::Failure,
            Err(_) => Verdict::Ignored,
        }
    }
}
