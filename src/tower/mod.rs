//! Tower middleware (feature `tower`): [`CircuitBreakerLayer`] puts any
//! `tower::Service` behind the breaker of a group, and [`Classify`] decides what
//! its responses and errors count as.
//!
//! ```
//! use std::convert::Infallible;
//! use breakerbox::tower::CircuitBreakerLayer;
//! use tower::{service_fn, Layer, ServiceExt};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let hello = service_fn(|_: http::Request<()>| async {
//!     Ok::<_, Infallible>(http::Response::new("hello"))
//! });
//! // 5xx responses count as failures; the group's breaker lives in `breakerbox::registry()`.
//! let guarded = CircuitBreakerLayer::new("docs-hello").layer(hello);
//! let response = guarded.oneshot(http::Request::new(())).await.unwrap();
//! assert_eq!(*response.body(), "hello");
//! # });
//! ```
//!
//! # What one request does
//!
//! - `poll_ready` asks [`Breaker::would_admit`], a pure query. When the circuit
//!   would refuse, it answers ready at once, without waiting for the inner service
//!   (an open circuit fails fast), and the next `call` refuses. It never claims:
//!   a service made ready and then dropped leaves the breaker as it was.
//! - `call` claims an [`OwnedPermit`](crate::breaker::OwnedPermit). Refused: the returned future resolves to
//!   [`BreakerError::Open`] and the inner service is not called. Admitted: the
//!   inner call's future and the permit move into a [`ResponseFuture`], which
//!   records the outcome when the call finishes: the classifier's verdict on its
//!   response or error, a failure if it panics, and *abandoned* if the future is
//!   dropped first (a client that went away, a timeout outside this layer),
//!   which counts as the group's `abandoned` key says, ignored by default. On
//!   a server, a client's cancel or disconnect is such a drop: keep
//!   `abandoned = "ignore"` for a server-side layer.
//! - A response that asks every caller to wait (a `429` or `503` with
//!   `Retry-After`, in seconds or as an HTTP date; [`Classify::wait`]) is no
//!   failure: the breaker is [held](crate::Breaker::hold) for the wait (at
//!   most the group's `max_hold_ms`), the call counts as ignored, and every
//!   call until the hold ends is refused at once with
//!   [`OpenReason::Held`](crate::OpenReason::Held) and the time left. A
//!   `Retry-After` that is unreadable, negative or past holds nothing and is
//!   counted ([`HoldCounts::bad`](crate::hold::HoldCounts::bad)).
//!
//!   This default suits a client-side layer, around a service that calls a
//!   dependency: a `503 + Retry-After` there is the dependency asking to wait.
//!   A server-side layer, around a handler that relays its own refusal as
//!   `503 + Retry-After` (its breaker of a dependency is open), would hold its
//!   route on its own answer instead of counting the failure it reports. Give
//!   such a layer a classifier whose [`Classify::wait`] reads no wait (the
//!   default of the trait), as the `tower` example's route does:
//!
//!   ```
//!   use breakerbox::tower::{status_verdict, CircuitBreakerLayer, Classify, Verdict};
//!
//!   /// Judges the route's answers by their status alone: its relayed `503`
//!   /// is a failure, never a hold.
//!   #[derive(Clone, Copy)]
//!   struct RouteAnswers;
//!
//!   impl<B, E> Classify<http::Response<B>, E> for RouteAnswers {
//!       fn classify(&self, result: Result<&http::Response<B>, &E>) -> Verdict {
//!           result.map_or(Verdict::Failure, |r| status_verdict(r.status().as_u16()))
//!       }
//!   }
//!   let route = CircuitBreakerLayer::new("docs-route").classify(RouteAnswers);
//!   # let _ = route;
//!   ```
//! - Nothing is boxed per request: the layer holds a handle to its breaker
//!   (a reference count, as tower's `ConcurrencyLimitLayer` holds its
//!   semaphore), and the future is the inner future plus an
//!   [`OwnedPermit`](crate::breaker::OwnedPermit) that holds a clone of that
//!   handle. A request whose
//!   outcome only counts takes no lock and allocates nothing; one that changes
//!   the breaker's state (the failure that trips it, a probe's verdict) takes
//!   the breaker's transition mutex, as any call does (see the crate docs,
//!   "Groups, config and speed").
//!
//! # Bulkhead and deadline
//!
//! A group with `max_concurrent` or `timeout_ms` (from its config, a file or
//! the variables) has them enforced by the layer: a call first takes a place
//! in the group's bulkhead, held by its future to the end of the call (a
//! full bulkhead refuses with
//! [`OpenReason::BulkheadFull`](crate::OpenReason::BulkheadFull), and the
//! inner service is not called); with the `tokio` feature the admitted call
//! races the group's deadline on tokio's timer, and a call past it is
//! dropped, counted as a timeout (a failure) and answered with
//! [`BreakerError::TimedOut`]. A group without them takes neither, and pays
//! one test of a flag. The [`RetryingLayer`] enforces neither: put tower's
//! `ConcurrencyLimitLayer` above it and a timeout layer below it.
//!
//! # Errors
//!
//! The service's error is [`BreakerError<E>`]: the inner error,
//! [`CircuitOpen`], or the group's deadline passing ([`TimedOut`]). It is a `std::error::Error` (a message of its own, the
//! refusal or the inner error as its `source`) when `E` is one, so it goes into
//! tower's `BoxError` (`Box<dyn Error + Send + Sync>`) or `anyhow` with `?`;
//! [`circuit_open`] finds a refusal anywhere in such an error's chain.
//! [`BreakerError::into_box_error`] converts by unwrapping instead (a refusal
//! becomes a boxed `CircuitOpen`, an inner error converts as it would without
//! this layer); it is also the conversion for an inner error that is itself a
//! `BoxError`, which no `Error` impl can cover. (Boxing allocates, as every
//! `BoxError` does; `BreakerError` itself does not.)
//!
//! # Retries
//!
//! [`CircuitBreakerLayer::retry`] makes a [`RetryingLayer`]: a failed attempt
//! is repeated as a [`RetryPolicy`](crate::RetryPolicy) says, on the group's
//! budget (the one its `#[circuit_breaker(retry = ..)]` fns draw on). A call
//! runs, outermost first: a bulkhead above the layer (one place for all of a
//! call's attempts), the retry, the breaker (one claim and one outcome per
//! attempt), the layers below (a timeout per attempt), the service. A refusal
//! is never retried; a `Retry-After` on a `429` or `503` is the next wait's
//! floor ([`retry_after`]). The request is copied for each retry by a
//! [`Replay`]; a request it cannot copy (an HTTP body that is a stream) is
//! sent once. The plain layer stays as it is: without `retry`, no retry code
//! runs and no bound is added.
//!
//! ```
//! use std::time::Duration;
//! use breakerbox::tower::{CircuitBreakerLayer, IdempotentHttp};
//! use breakerbox::RetryPolicy;
//! use tower::ServiceBuilder;
//!
//! let stack = ServiceBuilder::new()
//!     // A bulkhead goes here (tower's `ConcurrencyLimitLayer`), above the retry.
//!     .layer(
//!         CircuitBreakerLayer::new("docs-stack")
//!             .retry(RetryPolicy::new(2).deadline(Duration::from_secs(2)))
//!             .replay(IdempotentHttp),
//!     )
//!     .timeout(Duration::from_millis(500));
//! # let _ = stack;
//! ```
//!
//! # Which breaker
//!
//! [`CircuitBreakerLayer::new`] takes the group's breaker from the process-wide
//! [`registry()`](crate::registry()): the same one a `#[circuit_breaker(group = ..)]`
//! fn of that group uses. [`with_config`](CircuitBreakerLayer::with_config)
//! declares a config as an attribute does, and
//! [`for_breaker`](CircuitBreakerLayer::for_breaker) takes any breaker (from
//! another [`Registry`](crate::Registry), say).

mod body;
mod classify;
mod future;
mod retry;
mod retry_after;

use std::fmt;
use std::task::{Context, Poll};

use breaker_core::{Breaker, CircuitOpen, Config, TimedOut};
use tower_layer::Layer;
use tower_service::Service;

pub use self::body::{AtEndOfBody, AtEndOfBodyFuture, AtEndOfBodyLayer, RecordedBody};
pub use self::classify::{status_verdict, Classify, Errors, HttpResponses, Verdict};
pub use self::future::ResponseFuture;
#[cfg(feature = "reqwest")]
pub(crate) use self::retry::{is_idempotent, next_attempt};
pub use self::retry::{
    Cloned, IdempotentHttp, IdempotentMethods, Replay, RetryFuture, Retrying, RetryingLayer,
};
pub use self::retry_after::{retry_after, server_wait};

/// The type-erased error tower stacks use: `Box<dyn Error + Send + Sync>`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A [`Layer`] that puts a service behind a circuit breaker. Cloning it is cheap
/// and every clone, and every service it makes, shares the one breaker.
///
/// The classifier `C` says what each outcome counts as; the default,
/// [`HttpResponses`], fits services answering `http::Response` (5xx and 408
/// fail, other 4xx are ignored, every error fails). For other services pass
/// [`Errors`] or your own [`Classify`] with [`classify`](Self::classify).
#[derive(Clone)]
pub struct CircuitBreakerLayer<C = HttpResponses> {
    breaker: Breaker,
    classifier: C,
}

impl CircuitBreakerLayer {
    /// The layer of `group`'s breaker in the process-wide registry: the one its
    /// `#[circuit_breaker]` fns use, created with the group's explicit config or
    /// the defaults if nothing has used it yet. (Built while a test's
    /// `testing::TestKit` is installed, in the kit's registry.)
    ///
    /// A router is usually built before any handler runs: when the group's
    /// `#[circuit_breaker]` fns declare a config, pass the same one to
    /// [`with_config`](Self::with_config) instead, or the group is created here
    /// with the defaults and their declaration is reported as a
    /// [`Conflict`](crate::resolve::Conflict), not applied. A group that only layers
    /// and middleware use is best declared with
    /// [`declare_group!`](crate::declare_group), so a config file naming it is
    /// checked at start-up.
    pub fn new(group: &str) -> Self {
        crate::testing_hook::integration_registry(|registry| {
            Self::for_breaker(&registry.breaker_or_default(group))
        })
    }

    /// The layer of `group`'s breaker in the process-wide registry, declaring
    /// `config` as a `#[circuit_breaker]` attribute does: it holds unless the group
    /// was configured explicitly or already declared otherwise (a
    /// [`Conflict`](crate::resolve::Conflict) then says so).
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::{registry, tower::CircuitBreakerLayer, Config};
    ///
    /// let config = Config::builder().threshold(3).open(Duration::from_secs(10)).build()?;
    /// let layer = CircuitBreakerLayer::with_config("docs-payments", &config);
    /// assert!(layer.breaker().same_as(&registry().get("docs-payments").unwrap()));
    /// # Ok::<(), breakerbox::ConfigError>(())
    /// ```
    pub fn with_config(group: &str, config: &Config) -> Self {
        crate::testing_hook::integration_registry(|registry| {
            Self::for_breaker(&registry.breaker(group, config))
        })
    }

    /// The layer of `breaker`, from any registry or made by hand. The layer,
    /// its services and their calls in flight hold handles to it; the breaker
    /// lives as long as the last of them or its registry.
    pub fn for_breaker(breaker: &Breaker) -> Self {
        crate::testing_hook::reached(breaker);
        CircuitBreakerLayer {
            breaker: breaker.clone(),
            classifier: HttpResponses,
        }
    }
}

impl<C> CircuitBreakerLayer<C> {
    /// The same layer with another classifier.
    ///
    /// ```
    /// use breakerbox::tower::{CircuitBreakerLayer, Errors};
    ///
    /// // A non-HTTP service: `Ok` succeeds, an `io::Error` fails unless
    /// // `io_error` says it is the caller's (NotFound, PermissionDenied, ...).
    /// let layer = CircuitBreakerLayer::new("docs-files").classify(Errors(breakerbox::classify::io_error));
    /// ```
    pub fn classify<D>(self, classifier: D) -> CircuitBreakerLayer<D> {
        CircuitBreakerLayer {
            breaker: self.breaker,
            classifier,
        }
    }

    /// The breaker this layer guards with.
    pub fn breaker(&self) -> &Breaker {
        &self.breaker
    }
}

impl<C: fmt::Debug> fmt::Debug for CircuitBreakerLayer<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreakerLayer")
            .field("group", &self.breaker.group())
            .field("classifier", &self.classifier)
            .finish()
    }
}

impl<S, C: Clone> Layer<S> for CircuitBreakerLayer<C> {
    type Service = CircuitBreaker<S, C>;

    fn layer(&self, inner: S) -> Self::Service {
        CircuitBreaker {
            inner,
            breaker: self.breaker.clone(),
            classifier: self.classifier.clone(),
            refusal: None,
            guarded: guarded(&self.breaker),
        }
    }
}

/// Whether calls through `breaker` take a bulkhead slot (`max_concurrent`) or
/// race a deadline (`timeout_ms`, with the `tokio` feature): both are fixed
/// for a breaker's life, so a service asks once.
fn guarded(breaker: &Breaker) -> bool {
    let config = breaker.config();
    config.max_concurrent().is_some() || (cfg!(feature = "tokio") && config.timeout().is_some())
}

/// A service behind a circuit breaker; made by [`CircuitBreakerLayer`].
pub struct CircuitBreaker<S, C = HttpResponses> {
    inner: S,
    breaker: Breaker,
    classifier: C,
    /// Set by a `poll_ready` that found the circuit refusing: the next `call`
    /// refuses, and the inner service, not made ready, is not called.
    refusal: Option<CircuitOpen>,
    /// The group has `max_concurrent` or `timeout_ms`: calls take the
    /// guarded path.
    guarded: bool,
}

impl<S, C> CircuitBreaker<S, C> {
    /// The breaker this service guards with.
    pub fn breaker(&self) -> &Breaker {
        &self.breaker
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

/// A clone is not ready: like any tower service, it must be polled before a call.
impl<S: Clone, C: Clone> Clone for CircuitBreaker<S, C> {
    fn clone(&self) -> Self {
        CircuitBreaker {
            inner: self.inner.clone(),
            breaker: self.breaker.clone(),
            classifier: self.classifier.clone(),
            refusal: None,
            guarded: self.guarded,
        }
    }
}

impl<S: fmt::Debug, C: fmt::Debug> fmt::Debug for CircuitBreaker<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreaker")
            .field("inner", &self.inner)
            .field("group", &self.breaker.group())
            .field("classifier", &self.classifier)
            .finish()
    }
}

impl<S, C, Req> Service<Req> for CircuitBreaker<S, C>
where
    S: Service<Req>,
    C: Classify<S::Response, S::Error> + Clone,
{
    type Response = S::Response;
    type Error = BreakerError<S::Error>;
    type Future = ResponseFuture<S::Future, C>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Asked, never claimed: a ready service may be dropped without a call.
        if (!self.breaker.would_admit() || self.refusal.is_some()) && self.decide() {
            return Poll::Ready(Ok(()));
        }
        self.inner.poll_ready(cx).map_err(BreakerError::Inner)
    }

    #[inline]
    fn call(&mut self, request: Req) -> Self::Future {
        if self.refusal.is_some() {
            return self.refuse();
        }
        if self.guarded {
            return self.call_guarded(request);
        }
        match self.breaker.try_acquire_owned() {
            Ok(permit) => {
                ResponseFuture::called(self.inner.call(request), permit, self.classifier.clone())
            }
            Err(open) => ResponseFuture::refused(open),
        }
    }
}

impl<S, C> CircuitBreaker<S, C> {
    /// A call of a group with `max_concurrent` or `timeout_ms`: a bulkhead
    /// slot first (a full bulkhead refuses with
    /// [`OpenReason::BulkheadFull`](crate::OpenReason::BulkheadFull)), then
    /// the claim, then the inner call raced against the group's deadline.
    /// The slot and the deadline live in the response future.
    #[cold]
    #[inline(never)]
    fn call_guarded<Req>(&mut self, request: Req) -> ResponseFuture<S::Future, C>
    where
        S: Service<Req>,
        C: Clone,
    {
        let slot = match self.breaker.enter_bulkhead_owned() {
            Ok(slot) => slot,
            Err(open) => return ResponseFuture::refused(open),
        };
        match self.breaker.try_acquire_owned() {
            Ok(permit) => {
                let deadline = self.breaker.config().timeout();
                let future = self.inner.call(request);
                ResponseFuture::guarded(future, permit, self.classifier.clone(), slot, deadline)
            }
            Err(open) => ResponseFuture::refused(open),
        }
    }

    /// Readiness when the circuit may refuse, or refused at the last look:
    /// whether it refuses now (then `call` refuses without calling the inner
    /// service). Out of line, so that the closed path stays small enough for
    /// the compiler to inline a request's state machine around it.
    #[cold]
    #[inline(never)]
    fn decide(&mut self) -> bool {
        self.refusal = self.breaker.refusal();
        self.refusal.is_some()
    }

    /// A call after a `poll_ready` that found the circuit refusing. The inner
    /// service was not made ready, so it is not called, even if the circuit has
    /// come to admit since: then the permit is given back (counted as
    /// abandoned whatever the `abandoned` key says, since the call never ran;
    /// any probe slot is freed) and the call refused as `poll_ready` decided.
    #[cold]
    #[inline(never)]
    fn refuse<F>(&mut self) -> ResponseFuture<F, C> {
        ResponseFuture::refused(self.refusal_now())
    }

    /// The refusal of a call after a `poll_ready` that found the circuit
    /// refusing (see [`refuse`](Self::refuse)).
    #[cold]
    fn refusal_now(&mut self) -> CircuitOpen {
        let decided = self.refusal.take();
        match self.breaker.try_acquire() {
            Err(open) => open,
            Ok(permit) => {
                permit.give_back();
                decided.expect("a refusal")
            }
        }
    }
}

/// The error of a service behind a [`CircuitBreaker`]: the breaker refused, or
/// the inner service failed.
///
/// An error with a message of its own and the refusal or the inner error as its
/// [`source`](std::error::Error::source) (the convention of
/// [`CallError`](crate::CallError)), so an error reporter prints each message
/// once, and `?` puts it into `anyhow::Error` or [`BoxError`]. Boxed, it is found
/// by walking the chain, as [`circuit_open`] does:
///
/// ```
/// use breakerbox::tower::{circuit_open, BoxError, BreakerError};
/// use breakerbox::{Breaker, Config};
///
/// let breaker = Breaker::new("docs-box", Config::default());
/// breaker.force_open();
/// let refused: BreakerError<std::io::Error> = breaker.try_acquire().unwrap_err().into();
/// assert_eq!(refused.to_string(), "the circuit breaker refused the call");
/// let boxed = BoxError::from(refused);
/// assert_eq!(circuit_open(&*boxed).unwrap().group(), "docs-box");
///
/// // `into_box_error` unwraps instead: the inner error keeps its own type.
/// let failed = BreakerError::Inner(std::io::Error::other("reset"));
/// assert!(failed.into_box_error().is::<std::io::Error>());
/// ```
///
/// It is a `std::error::Error` when the inner error is one. A `BoxError` is not
/// (`Box<dyn Error>` does not implement `Error`), so a breaker above a service
/// whose error is a `BoxError` (tower's timeout, say) converts its errors with
/// [`into_box_error`](Self::into_box_error) where a layer above needs a
/// `BoxError`: `ServiceBuilder::new().map_err(BreakerError::into_box_error)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BreakerError<E> {
    /// The breaker refused; the inner service was not called.
    Open(CircuitOpen),
    /// The inner service was called and failed with this error.
    Inner(E),
    /// The call ran past the group's `timeout_ms` and was dropped (a
    /// failure the breaker counts); with the `tokio` feature.
    TimedOut(TimedOut),
}

impl<E> BreakerError<E> {
    /// Whether the breaker refused the call.
    pub fn is_open(&self) -> bool {
        matches!(self, BreakerError::Open(_))
    }

    /// The refusal, if the breaker refused.
    pub fn open(&self) -> Option<&CircuitOpen> {
        match self {
            BreakerError::Open(open) => Some(open),
            _ => None,
        }
    }

    /// The inner service's error, if it was called and failed on its own.
    pub fn into_inner(self) -> Option<E> {
        match self {
            BreakerError::Inner(e) => Some(e),
            _ => None,
        }
    }

    /// A [`BoxError`] by unwrapping: a refusal becomes a boxed [`CircuitOpen`],
    /// an inner error converts as it would without this layer (a `BoxError`
    /// stays itself), so each downcasts to its own type.
    pub fn into_box_error(self) -> BoxError
    where
        E: Into<BoxError>,
    {
        match self {
            BreakerError::Open(open) => Box::new(open),
            BreakerError::Inner(e) => e.into(),
            BreakerError::TimedOut(late) => Box::new(late),
        }
    }
}

impl<E> From<CircuitOpen> for BreakerError<E> {
    fn from(open: CircuitOpen) -> Self {
        BreakerError::Open(open)
    }
}

/// A message of its own; the refusal or the inner error is the
/// [`source`](std::error::Error::source).
impl<E> fmt::Display for BreakerError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BreakerError::Open(_) => "the circuit breaker refused the call",
            BreakerError::Inner(_) => "the service behind the circuit breaker failed",
            BreakerError::TimedOut(_) => "the call ran past its group's deadline",
        })
    }
}

impl<E: std::error::Error + 'static> std::error::Error for BreakerError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BreakerError::Open(open) => Some(open),
            BreakerError::Inner(e) => Some(e),
            BreakerError::TimedOut(late) => Some(late),
        }
    }
}

/// The refusal in `error` or anywhere in its [`source`](std::error::Error::source)
/// chain: a [`CircuitOpen`] itself, or one inside a [`BreakerError`] or a
/// [`CallError`](crate::CallError), however deep in a `BoxError` stack.
///
/// ```
/// use breakerbox::tower::{circuit_open, BoxError};
///
/// let other: BoxError = std::io::Error::other("reset").into();
/// assert!(circuit_open(&*other).is_none());
/// ```
pub fn circuit_open<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a CircuitOpen> {
    std::iter::successors(Some(error), |&e| e.source())
        .find_map(|e| e.downcast_ref::<CircuitOpen>())
}
