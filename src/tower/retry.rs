//! Retries in the tower layer: [`RetryingLayer`] (from
//! [`CircuitBreakerLayer::retry`]), its [`Retrying`] service and
//! [`RetryFuture`], and the [`Replay`] that copies a request for another attempt.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use breaker_core::hold::HoldScope;
use breaker_core::{Attempts, Breaker, OwnedPermit, Retry, RetryPolicy, Timer};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use super::classify::record_classified;
use super::{
    BreakerError, CircuitBreaker, CircuitBreakerLayer, Classify, HttpResponses, ResponseFuture,
    Verdict,
};
use crate::timeout::DefaultTimer;

/// Makes the copy of a request that another attempt sends, or says it cannot
/// (`None`: the request is sent once, with no retry).
///
/// [`IdempotentMethods`] (the default) clones an `http::Request` whose method
/// is idempotent; [`IdempotentHttp`] copies one whose method is idempotent and
/// whose body is empty (for bodies that are streams); [`Cloned`] clones any
/// `Clone` request, for services whose every request is safe to repeat; any
/// `Fn(&Req) -> Option<Req>` is one too:
///
/// ```
/// use breakerbox::tower::Replay;
///
/// // Only requests marked safe to repeat are retried.
/// #[derive(Clone)]
/// struct Job { id: u64, repeatable: bool }
///
/// let repeatable = |job: &Job| job.repeatable.then(|| job.clone());
/// assert!(repeatable.replay(&Job { id: 1, repeatable: true }).is_some());
/// assert!(repeatable.replay(&Job { id: 2, repeatable: false }).is_none());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot copy a `{Req}` for another attempt",
    label = "a retried request must be copied",
    note = "the default replays an `http::Request` of an idempotent method; for requests that are all safe to send again, say so with `.replay(Cloned)`, or give `.replay(|request: &{Req}| ..)`"
)]
pub trait Replay<Req> {
    /// The request for the next attempt, or `None` to send `request` once.
    fn replay(&self, request: &Req) -> Option<Req>;
}

impl<Req, F> Replay<Req> for F
where
    F: Fn(&Req) -> Option<Req>,
{
    #[inline]
    fn replay(&self, request: &Req) -> Option<Req> {
        self(request)
    }
}

/// Replays a request by cloning it, for any `Req: Clone` (a gRPC message, a
/// job): naming it says every request of the service is safe to send again,
/// whatever its method.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cloned;

/// Replays an `http::Request<B>` with a `Clone` body by cloning it when its
/// method is idempotent (`GET`, `HEAD`, `OPTIONS`, `TRACE`, `PUT`, `DELETE`):
/// [`RetryingLayer`]'s default. A `POST` or a `PATCH` is sent once.
///
/// ```
/// use breakerbox::tower::{IdempotentMethods, Replay};
///
/// let put = http::Request::put("/orders/7").body(String::from("{}")).unwrap();
/// assert_eq!(IdempotentMethods.replay(&put).unwrap().body(), "{}");
/// let post = http::Request::post("/orders").body(String::from("{}")).unwrap();
/// assert!(IdempotentMethods.replay(&post).is_none());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct IdempotentMethods;

impl<B: Clone> Replay<http::Request<B>> for IdempotentMethods {
    #[inline]
    fn replay(&self, request: &http::Request<B>) -> Option<http::Request<B>> {
        is_idempotent(request.method()).then(|| request.clone())
    }
}

impl<Req: Clone> Replay<Req> for Cloned {
    #[inline]
    fn replay(&self, request: &Req) -> Option<Req> {
        Some(request.clone())
    }
}

/// Replays an `http::Request<B>` whose method is idempotent (`GET`, `HEAD`,
/// `OPTIONS`, `TRACE`, `PUT`, `DELETE`) and whose body is empty, for bodies
/// that are streams and cannot be cloned (axum's and hyper's): the copy has
/// the same method, URI, version, headers and extensions and a new empty
/// body. A `POST`, a `PATCH`, or any request with a body is sent once.
///
/// ```
/// use breakerbox::tower::{IdempotentHttp, Replay};
///
/// let get = http::Request::get("/quote").header("accept", "text/plain").body(String::new()).unwrap();
/// let copy = IdempotentHttp.replay(&get).unwrap();
/// assert_eq!((copy.method(), copy.uri(), copy.headers()), (get.method(), get.uri(), get.headers()));
///
/// let post = http::Request::post("/orders").body(String::new()).unwrap();
/// assert!(IdempotentHttp.replay(&post).is_none());
/// let put = http::Request::put("/orders/7").body(String::from("{}")).unwrap();
/// assert!(IdempotentHttp.replay(&put).is_none(), "a body is not replayed");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct IdempotentHttp;

impl<B: http_body::Body + Default> Replay<http::Request<B>> for IdempotentHttp {
    fn replay(&self, request: &http::Request<B>) -> Option<http::Request<B>> {
        if !is_idempotent(request.method()) || !request.body().is_end_stream() {
            return None;
        }
        let mut copy = http::Request::new(B::default());
        *copy.method_mut() = request.method().clone();
        *copy.uri_mut() = request.uri().clone();
        *copy.version_mut() = request.version();
        *copy.headers_mut() = request.headers().clone();
        *copy.extensions_mut() = request.extensions().clone();
        Some(copy)
    }
}

/// Whether repeating a request with `method` has the effect of sending it
/// once (RFC 9110, 9.2.2).
pub(crate) fn is_idempotent(method: &http::Method) -> bool {
    use http::Method;
    [
        Method::GET,
        Method::HEAD,
        Method::OPTIONS,
        Method::TRACE,
        Method::PUT,
        Method::DELETE,
    ]
    .contains(method)
}

/// After an attempt whose outcome is recorded as `verdict`: the wait before
/// the next attempt, or `None` when the call ends with this one. A failure is
/// retried; an ignored answer only when the server asked for it again with a
/// delay (a `429` with `Retry-After`, which holds the breaker: the retry
/// waits the hold out); never a success, a request that cannot be replayed,
/// or one whose server asks to wait longer than the policy's own cap on a
/// wait ([`RetryPolicy::delay_cap`]): that wait stays a hold, which answers
/// every caller at once until it ends. The rest (retries left, the circuit
/// still admitting once a hold ends, the deadline, the budget) is the core's
/// decision.
pub(crate) fn next_attempt(
    breaker: &Breaker,
    retry: &Retry,
    attempts: &mut Attempts,
    verdict: Verdict,
    hint: Option<Duration>,
    replayable: bool,
) -> Option<Duration> {
    let asked = match verdict {
        Verdict::Success => false,
        Verdict::Failure | Verdict::GroupFailure => true,
        Verdict::Ignored => hint.is_some(),
    };
    let cap = retry.effective_policy().delay_cap();
    if !asked || !replayable || hint.is_some_and(|wait| wait > cap) {
        attempts.finish(retry);
        return None;
    }
    attempts.next_delay(breaker, retry, hint)
}

/// The group's retry of `breaker`, made when the layer or middleware that
/// retries for it was built ([`Breaker::group_retry`]).
pub(crate) fn made_retry(breaker: &Breaker) -> &Retry {
    breaker
        .made_group_retry()
        .expect("the group's retry is made when the retrying layer is built")
}

/// A [`CircuitBreakerLayer`] that retries: made by
/// [`CircuitBreakerLayer::retry`]. Each attempt claims its own permit and is
/// one outcome in the breaker; `P` copies the request for the next attempt
/// ([`IdempotentMethods`] by default, see [`Replay`]) and the waits between attempts
/// are `Tm`'s (tokio's with the `tokio` feature, see [`timer`](Self::timer)).
#[derive(Clone)]
pub struct RetryingLayer<C = HttpResponses, P = IdempotentMethods, Tm = DefaultTimer> {
    /// Its group's retry is made (see [`made_retry`]).
    breaker: Breaker,
    classifier: C,
    replay: P,
    timer: Tm,
}

impl<C> CircuitBreakerLayer<C> {
    /// The same layer, retrying a request as `policy` says: up to
    /// `policy.retries()` more attempts after a failure the classifier counts,
    /// each after a backoff with full jitter, within the policy's deadline and
    /// its budget, on the group's breaker.
    ///
    /// Only a request safe to send again is retried. By default
    /// ([`IdempotentMethods`]) an `http::Request` with a `Clone` body is
    /// cloned when its method is idempotent, and a `POST` or `PATCH` is sent
    /// once; name another [`Replay`] with [`replay`](RetryingLayer::replay):
    /// [`IdempotentHttp`] for `http::Request`s whose bodies are streams,
    /// [`Cloned`] for a service whose every request is safe to repeat (any
    /// `Clone` type), or a closure. A request the replay declines is sent once. The inner service must be `Clone`: later
    /// attempts go through a clone of it, made ready again.
    ///
    /// The order of a call, outermost first: the retry, the breaker (each
    /// attempt one claim and one outcome), then whatever layers sit below
    /// this one (a timeout belongs there, so that each attempt has its own).
    /// A bulkhead (tower's `ConcurrencyLimitLayer`) goes above it, so that a
    /// call holds one place for all its attempts. A refusal (an open or a
    /// full half-open circuit) is never retried: the call ends with
    /// [`BreakerError::Open`] at once, also when a retry is refused after its
    /// wait. No retry waits once a failure opened the circuit. An ignored
    /// answer is not retried, except one that asks for it with a delay (a `429`
    /// with `Retry-After`, see [`Classify::retry_after`]); a server's delay is
    /// the next wait's floor, never shortened. A server's wait
    /// ([`Classify::wait`]) holds the breaker: the call that met it retries
    /// once the hold ends, if the wait is within the policy's cap on a wait
    /// ([`RetryPolicy::delay_cap`]), and ends with that answer otherwise;
    /// every other call is refused at once with the hold's time left.
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use breakerbox::tower::CircuitBreakerLayer;
    /// use breakerbox::RetryPolicy;
    /// use tower::{service_fn, Layer, ServiceExt};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    /// let seen = calls.clone();
    /// let flaky = service_fn(move |_: http::Request<String>| {
    ///     let n = seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    ///     async move {
    ///         let status = if n == 0 { 502 } else { 200 };
    ///         Ok::<_, Infallible>(http::Response::builder().status(status).body(()).unwrap())
    ///     }
    /// });
    /// let layer = CircuitBreakerLayer::new("docs-retry").retry(RetryPolicy::new(2));
    /// let response = layer.layer(flaky).oneshot(http::Request::new(String::new())).await.unwrap();
    /// assert_eq!(response.status(), 200);
    /// assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2);
    /// # });
    /// ```
    pub fn retry(self, policy: RetryPolicy) -> RetryingLayer<C> {
        self.breaker.group_retry(&policy);
        RetryingLayer {
            breaker: self.breaker,
            classifier: self.classifier,
            replay: IdempotentMethods,
            timer: DefaultTimer,
        }
    }
}

impl<C, P, Tm> RetryingLayer<C, P, Tm> {
    /// The same layer, copying requests for another attempt with `replay`.
    ///
    /// ```
    /// use breakerbox::tower::{CircuitBreakerLayer, IdempotentHttp};
    /// use breakerbox::RetryPolicy;
    ///
    /// // axum's and hyper's bodies are streams: replay GETs and other
    /// // idempotent requests without a body, send the rest once.
    /// let layer = CircuitBreakerLayer::new("docs-replay")
    ///     .retry(RetryPolicy::new(1))
    ///     .replay(IdempotentHttp);
    /// ```
    pub fn replay<Q>(self, replay: Q) -> RetryingLayer<C, Q, Tm> {
        RetryingLayer {
            breaker: self.breaker,
            classifier: self.classifier,
            replay,
            timer: self.timer,
        }
    }

    /// The same layer, waiting between attempts on `timer` (for runtimes
    /// other than tokio, or a test's clock).
    ///
    /// ```
    /// use std::future::{ready, Ready};
    /// use std::time::Duration;
    /// use breakerbox::timeout::Timer;
    /// use breakerbox::tower::CircuitBreakerLayer;
    /// use breakerbox::RetryPolicy;
    ///
    /// /// Retries at once, whatever the backoff drew.
    /// #[derive(Clone)]
    /// struct NoWait;
    /// impl Timer for NoWait {
    ///     type Sleep = Ready<()>;
    ///     fn sleep(&self, _: Duration) -> Ready<()> {
    ///         ready(())
    ///     }
    /// }
    /// let layer = CircuitBreakerLayer::new("docs-timer").retry(RetryPolicy::new(1)).timer(NoWait);
    /// ```
    pub fn timer<T>(self, timer: T) -> RetryingLayer<C, P, T> {
        RetryingLayer {
            breaker: self.breaker,
            classifier: self.classifier,
            replay: self.replay,
            timer,
        }
    }

    /// The breaker this layer guards with.
    pub fn breaker(&self) -> &Breaker {
        &self.breaker
    }

    /// The retry policy and the budget its retries draw on.
    pub fn retry_budget(&self) -> &Retry {
        made_retry(&self.breaker)
    }
}

impl<C: fmt::Debug, P: fmt::Debug, Tm> fmt::Debug for RetryingLayer<C, P, Tm> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryingLayer")
            .field("group", &self.breaker.group())
            .field("classifier", &self.classifier)
            .field("policy", made_retry(&self.breaker).policy())
            .field("replay", &self.replay)
            .finish_non_exhaustive()
    }
}

impl<S, C: Clone, P: Clone, Tm: Clone> Layer<S> for RetryingLayer<C, P, Tm> {
    type Service = Retrying<S, C, P, Tm>;

    fn layer(&self, inner: S) -> Self::Service {
        Retrying {
            guard: CircuitBreaker {
                inner,
                breaker: self.breaker.clone(),
                classifier: self.classifier.clone(),
                refusal: None,
                // The retry's attempts are made by `RetryFuture`, not by the
                // guard's `call`.
                guarded: false,
            },
            replay: self.replay.clone(),
            timer: self.timer.clone(),
        }
    }
}

/// A service behind a circuit breaker that retries; made by [`RetryingLayer`].
pub struct Retrying<S, C = HttpResponses, P = IdempotentMethods, Tm = DefaultTimer> {
    /// Its breaker's group retry is made (see [`made_retry`]).
    guard: CircuitBreaker<S, C>,
    replay: P,
    timer: Tm,
}

impl<S, C, P, Tm> Retrying<S, C, P, Tm> {
    /// The breaker this service guards with.
    pub fn breaker(&self) -> &Breaker {
        &self.guard.breaker
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.guard.inner
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> S {
        self.guard.inner
    }
}

/// A clone is not ready: like any tower service, it must be polled before a call.
impl<S: Clone, C: Clone, P: Clone, Tm: Clone> Clone for Retrying<S, C, P, Tm> {
    fn clone(&self) -> Self {
        Retrying {
            guard: self.guard.clone(),
            replay: self.replay.clone(),
            timer: self.timer.clone(),
        }
    }
}

impl<S: fmt::Debug, C: fmt::Debug, P: fmt::Debug, Tm> fmt::Debug for Retrying<S, C, P, Tm> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retrying")
            .field("inner", &self.guard.inner)
            .field("group", &self.guard.breaker.group())
            .field("policy", made_retry(&self.guard.breaker).policy())
            .field("replay", &self.replay)
            .finish_non_exhaustive()
    }
}

impl<S, C, P, Tm, Req> Service<Req> for Retrying<S, C, P, Tm>
where
    S: Service<Req> + Clone,
    C: Classify<S::Response, S::Error> + Clone,
    P: Replay<Req> + Clone,
    Tm: Timer + Clone,
{
    type Response = S::Response;
    type Error = BreakerError<S::Error>;
    type Future = RetryFuture<S, Req, C, P, Tm>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.guard.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        if self.guard.refusal.is_some() {
            return RetryFuture::once(self.guard.refuse());
        }
        let breaker = &self.guard.breaker;
        let permit = match breaker.try_acquire_owned() {
            Ok(permit) => permit,
            Err(open) => return RetryFuture::once(ResponseFuture::refused(open)),
        };
        let classifier = self.guard.classifier.clone();
        let Some(spare) = self.replay.replay(&request) else {
            let future = self.guard.inner.call(request);
            return RetryFuture::once(ResponseFuture::called(future, permit, classifier));
        };
        let attempts = Attempts::start(breaker, made_retry(breaker));
        let breaker = breaker.clone();
        let future = self.guard.inner.call(request);
        RetryFuture {
            step: Step::Calling {
                future,
                permit: Some(permit),
            },
            again: Some(Again {
                service: self.guard.inner.clone(),
                spare: Some(spare),
                breaker,
                classifier,
                replay: self.replay.clone(),
                timer: self.timer.clone(),
                attempts,
            }),
        }
    }
}

pin_project! {
    /// The future of a call through a [`Retrying`] service: its attempts, one
    /// permit each, and the waits between them.
    ///
    /// Each attempt's outcome is recorded as [`ResponseFuture`]'s is: the
    /// classifier's verdict when it finishes, a failure if it panics, and
    /// *abandoned* if this future is dropped during it (counted as the group's
    /// `abandoned` key says, ignored by default); dropping it during a wait
    /// ends the call with nothing held.
    pub struct RetryFuture<S, Req, C, P, Tm>
    where
        S: Service<Req>,
        Tm: Timer,
    {
        #[pin]
        step: Step<S::Future, Tm::Sleep, C>,
        // `None` for a call made once.
        again: Option<Again<S, Req, C, P, Tm>>,
    }
}

pin_project! {
    #[project = StepProj]
    enum Step<F, W, C> {
        // A request not replayed, or refused: the plain layer's future.
        Once {
            #[pin]
            future: ResponseFuture<F, C>,
        },
        Calling {
            #[pin]
            future: F,
            // `None` once recorded.
            permit: Option<OwnedPermit>,
        },
        Waiting {
            #[pin]
            sleep: W,
        },
        // Waited: the service's clone is made ready, then the attempt claims.
        Readying,
        Done,
    }
}

/// What the attempts after the first need.
struct Again<S, Req, C, P, Tm> {
    service: S,
    /// The copy the next attempt sends; `None` when the replay declined.
    spare: Option<Req>,
    /// Its group's retry is made (see [`made_retry`]).
    breaker: Breaker,
    classifier: C,
    replay: P,
    timer: Tm,
    attempts: Attempts,
}

impl<S, Req, C, P, Tm> RetryFuture<S, Req, C, P, Tm>
where
    S: Service<Req>,
    Tm: Timer,
{
    fn once(future: ResponseFuture<S::Future, C>) -> Self {
        RetryFuture {
            step: Step::Once { future },
            again: None,
        }
    }
}

impl<S, Req, C, P, Tm> Future for RetryFuture<S, Req, C, P, Tm>
where
    S: Service<Req>,
    C: Classify<S::Response, S::Error>,
    P: Replay<Req>,
    Tm: Timer,
{
    type Output = Result<S::Response, BreakerError<S::Error>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            match this.step.as_mut().project() {
                StepProj::Once { future } => return future.poll(cx),
                StepProj::Calling { future, permit } => {
                    // Held in a local while the attempt is polled: a panic
                    // there drops it during the unwind, a failure.
                    let held = permit.take();
                    let result = match future.poll(cx) {
                        Poll::Ready(result) => result,
                        Poll::Pending => {
                            *permit = held;
                            return Poll::Pending;
                        }
                    };
                    let again = this.again.as_mut().expect("a retried call");
                    let permit = held.expect("an attempt's permit");
                    match again.settle(permit, result.as_ref()) {
                        Some(delay) => {
                            drop(result);
                            let sleep = again.timer.sleep(delay);
                            this.step.set(Step::Waiting { sleep });
                        }
                        None => {
                            this.step.set(Step::Done);
                            return Poll::Ready(result.map_err(BreakerError::Inner));
                        }
                    }
                }
                StepProj::Waiting { sleep } => {
                    ready!(sleep.poll(cx));
                    this.step.set(Step::Readying);
                }
                StepProj::Readying => {
                    let again = this.again.as_mut().expect("a retried call");
                    if let Err(e) = ready!(again.service.poll_ready(cx)) {
                        this.step.set(Step::Done);
                        return Poll::Ready(Err(BreakerError::Inner(e)));
                    }
                    let permit = match again.breaker.try_acquire_owned() {
                        Ok(permit) => permit,
                        Err(open) => {
                            this.step.set(Step::Done);
                            return Poll::Ready(Err(BreakerError::Open(open)));
                        }
                    };
                    let request = again.spare.take().expect("a retry has its request");
                    again.spare = again.replay.replay(&request);
                    let future = again.service.call(request);
                    this.step.set(Step::Calling {
                        future,
                        permit: Some(permit),
                    });
                }
                StepProj::Done => panic!("RetryFuture polled after it completed"),
            }
        }
    }
}

impl<S, Req, C, P, Tm> Again<S, Req, C, P, Tm> {
    /// Records an attempt's outcome: the wait before the next, or `None`.
    fn settle<Res, E>(&mut self, permit: OwnedPermit, result: Result<&Res, &E>) -> Option<Duration>
    where
        C: Classify<Res, E>,
    {
        let (verdict, asked) =
            record_classified(permit, &self.classifier, result, HoldScope::Group);
        let hint = asked.or_else(|| self.classifier.retry_after(result));
        next_attempt(
            &self.breaker,
            made_retry(&self.breaker),
            &mut self.attempts,
            verdict,
            hint,
            self.spare.is_some(),
        )
    }
}

impl<S, Req, C, P, Tm> fmt::Debug for RetryFuture<S, Req, C, P, Tm>
where
    S: Service<Req>,
    Tm: Timer,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let step = match &self.step {
            Step::Once { future } => return future.fmt(f),
            Step::Calling { .. } => "calling",
            Step::Waiting { .. } => "waiting",
            Step::Readying => "readying",
            Step::Done => "done",
        };
        let attempts = self.again.as_ref().map(|again| again.attempts);
        f.debug_struct("RetryFuture")
            .field("step", &step)
            .field("attempts", &attempts)
            .finish()
    }
}
