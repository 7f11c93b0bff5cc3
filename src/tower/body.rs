//! Recording at the end of a response body: [`RecordedBody`], the body
//! wrapper every integration records through (the reqwest middleware, the
//! layer's [`at_end_of_body`](super::CircuitBreakerLayer::at_end_of_body)
//! mode, a gRPC layer judging trailers), and that mode's layer, service and
//! future.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use breaker_core::hold::{HoldScope, Wait};
use breaker_core::{CircuitOpen, OwnedPermit};
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use super::classify::record_classified;
use super::{BreakerError, CircuitBreaker, CircuitBreakerLayer, Classify, HttpResponses, Verdict};

pin_project! {
    /// A response body that records its call's outcome on an [`OwnedPermit`]
    /// when the outcome is known: at the end of the body.
    ///
    /// - **The end** of the body is a success, or, with
    ///   [`judge_trailers`](Self::judge_trailers), the verdict on its trailers
    ///   (a gRPC status) when they come.
    /// - **An error** while reading it (a reset, a timeout while the upstream
    ///   stalls mid-body) is a failure.
    /// - **Dropped before its end**: a success if it was never polled (a
    ///   caller that looks at the head only), *abandoned* if it was (a caller
    ///   that gave up mid-body, a timeout of its own around the read), which
    ///   counts as the group's `abandoned` key says (ignored by default), and
    ///   a failure while a panic unwinds.
    ///
    /// An empty body (`is_end_stream` when wrapped) is recorded as a success at
    /// once. Until it is recorded the call holds its permit, a half-open probe
    /// slot included, and the time to the end of the body is the call's
    /// duration for a slow-call rule. The frames pass through unchanged.
    ///
    /// ```
    /// use breakerbox::tower::RecordedBody;
    /// use breakerbox::{Breaker, Config};
    /// use http_body_util::BodyExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let breaker = Breaker::new("docs-body", Config::default());
    /// let permit = breaker.try_acquire_owned().unwrap();
    /// let body = RecordedBody::new(http_body_util::Full::new(&b"hello"[..]), permit);
    /// assert_eq!(breaker.metrics().successes, 0); // not yet: the body has not ended
    /// let bytes = body.collect().await.unwrap().to_bytes();
    /// assert_eq!(&bytes[..], b"hello");
    /// assert_eq!(breaker.metrics().successes, 1);
    /// # });
    /// ```
    pub struct RecordedBody<B> {
        #[pin]
        inner: B,
        // `None` once recorded.
        permit: Option<OwnedPermit>,
        // Whether the body was polled at all.
        read: bool,
        trailers: Option<fn(&http::HeaderMap) -> Verdict>,
    }

    impl<B> PinnedDrop for RecordedBody<B> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let Some(permit) = this.permit.take() {
                if !*this.read && !std::thread::panicking() {
                    permit.success();
                }
                // Else dropped as it is: abandoned (a failure while panicking).
            }
        }
    }
}

impl<B: Body> RecordedBody<B> {
    /// `inner`, recording under `permit` as the type's docs say; an empty body
    /// is recorded as a success now.
    pub fn new(inner: B, permit: OwnedPermit) -> Self {
        let permit = match inner.is_end_stream() {
            true => {
                permit.success();
                None
            }
            false => Some(permit),
        };
        RecordedBody {
            inner,
            permit,
            read: false,
            trailers: None,
        }
    }
}

impl<B> RecordedBody<B> {
    /// `inner` of a call whose outcome is recorded already (a response whose
    /// head decided it): the body passes through and records nothing.
    pub fn recorded(inner: B) -> Self {
        RecordedBody {
            inner,
            permit: None,
            read: false,
            trailers: None,
        }
    }

    /// The same body, recording the verdict `judge` gives the trailers when
    /// they come (for gRPC, the `grpc-status` a layer reads there); a body
    /// that ends without trailers is still a success.
    ///
    /// ```
    /// use breakerbox::tower::{RecordedBody, Verdict};
    ///
    /// fn grpc_status(trailers: &http::HeaderMap) -> Verdict {
    ///     match trailers.get("grpc-status").map(|status| status.as_bytes()) {
    ///         Some(b"0") | None => Verdict::Success,
    ///         Some(b"3" | b"5" | b"6" | b"7" | b"9" | b"11" | b"16") => Verdict::Ignored,
    ///         Some(_) => Verdict::Failure,
    ///     }
    /// }
    /// # let breaker = breakerbox::Breaker::new("docs-trailers", breakerbox::Config::default());
    /// # let permit = breaker.try_acquire_owned().unwrap();
    /// let body = RecordedBody::new(http_body_util::Empty::<&[u8]>::new(), permit);
    /// let body = body.judge_trailers(grpc_status);
    /// # drop(body);
    /// ```
    pub fn judge_trailers(mut self, judge: fn(&http::HeaderMap) -> Verdict) -> Self {
        self.trailers = Some(judge);
        self
    }

    /// Whether the call's outcome is recorded.
    pub fn is_recorded(&self) -> bool {
        self.permit.is_none()
    }

    /// The inner body.
    pub fn get_ref(&self) -> &B {
        &self.inner
    }
}

impl<B: Body> Body for RecordedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let mut this = self.project();
        *this.read = true;
        // Held in a local while the inner body is polled: a panic there drops
        // it during the unwind, a failure.
        let held = this.permit.take();
        let polled = this.inner.as_mut().poll_frame(cx);
        let Some(permit) = held else {
            return polled;
        };
        match &polled {
            Poll::Ready(None) => permit.success(),
            Poll::Ready(Some(Err(_))) => permit.failure(),
            Poll::Ready(Some(Ok(frame))) => match (frame.trailers_ref(), this.trailers) {
                (Some(trailers), Some(judge)) => record(permit, judge(trailers)),
                _ if this.inner.is_end_stream() => permit.success(),
                _ => *this.permit = Some(permit),
            },
            Poll::Pending => *this.permit = Some(permit),
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<B: fmt::Debug> fmt::Debug for RecordedBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordedBody")
            .field("inner", &self.inner)
            .field("recorded", &self.permit.is_none())
            .finish_non_exhaustive()
    }
}

/// Records `verdict` under `permit`.
fn record(permit: OwnedPermit, verdict: Verdict) {
    match verdict {
        Verdict::Success => permit.success(),
        Verdict::Failure => permit.failure(),
        Verdict::Ignored => permit.ignore(),
        Verdict::GroupFailure => permit.failure_of_group(),
    }
}

/// A [`CircuitBreakerLayer`] that records a response the classifier counts as
/// a success only at the end of its body, through a [`RecordedBody`]; made by
/// [`CircuitBreakerLayer::at_end_of_body`].
#[derive(Clone, Debug)]
pub struct AtEndOfBodyLayer<C = HttpResponses> {
    layer: CircuitBreakerLayer<C>,
}

impl<C> CircuitBreakerLayer<C> {
    /// The same layer, for services answering `http::Response<B>` whose
    /// outcome is known only at the end of the body (a stream, a download, a
    /// gRPC call): a response whose head the classifier counts as a success is
    /// recorded by its [`RecordedBody`] (a success at the end, a failure when
    /// reading fails, abandoned when dropped part-read); a head that fails or
    /// is ignored is recorded when it comes. The response's body becomes
    /// `RecordedBody<B>`.
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use breakerbox::tower::CircuitBreakerLayer;
    /// use http_body_util::{BodyExt, Full};
    /// use tower::{service_fn, Layer, ServiceExt};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let download = service_fn(|_: http::Request<()>| async {
    ///     Ok::<_, Infallible>(http::Response::new(Full::new(&b"file"[..])))
    /// });
    /// let layer = CircuitBreakerLayer::new("docs-download").at_end_of_body();
    /// let breaker = layer.breaker().clone();
    /// let response = layer.layer(download).oneshot(http::Request::new(())).await.unwrap();
    /// assert_eq!(breaker.metrics().successes, 0); // the head came, the body not yet
    /// response.into_body().collect().await.unwrap();
    /// assert_eq!(breaker.metrics().successes, 1);
    /// # });
    /// ```
    pub fn at_end_of_body(self) -> AtEndOfBodyLayer<C> {
        AtEndOfBodyLayer { layer: self }
    }
}

impl<C> AtEndOfBodyLayer<C> {
    /// The breaker this layer guards with.
    pub fn breaker(&self) -> &breaker_core::Breaker {
        self.layer.breaker()
    }
}

impl<S, C: Clone> Layer<S> for AtEndOfBodyLayer<C> {
    type Service = AtEndOfBody<S, C>;

    fn layer(&self, inner: S) -> Self::Service {
        AtEndOfBody {
            guard: self.layer.layer(inner),
        }
    }
}

/// A service behind a circuit breaker that records successes at the end of
/// the response body; made by [`AtEndOfBodyLayer`].
#[derive(Debug)]
pub struct AtEndOfBody<S, C = HttpResponses> {
    guard: CircuitBreaker<S, C>,
}

impl<S, C> AtEndOfBody<S, C> {
    /// The breaker this service guards with.
    pub fn breaker(&self) -> &breaker_core::Breaker {
        self.guard.breaker()
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        self.guard.get_ref()
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> S {
        self.guard.into_inner()
    }
}

/// A clone is not ready: like any tower service, it must be polled before a call.
impl<S: Clone, C: Clone> Clone for AtEndOfBody<S, C> {
    fn clone(&self) -> Self {
        AtEndOfBody {
            guard: self.guard.clone(),
        }
    }
}

impl<S, C, B, Req> Service<Req> for AtEndOfBody<S, C>
where
    S: Service<Req, Response = http::Response<B>>,
    B: Body,
    C: Classify<http::Response<B>, S::Error> + Clone,
{
    type Response = http::Response<RecordedBody<B>>;
    type Error = BreakerError<S::Error>;
    type Future = AtEndOfBodyFuture<S::Future, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.guard.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let guard = &mut self.guard;
        let kind = if guard.refusal.is_some() {
            Kind::Refused {
                open: Some(guard.refusal_now()),
            }
        } else {
            match guard.breaker.try_acquire_owned() {
                Ok(permit) => Kind::Called {
                    future: guard.inner.call(request),
                    permit: Some(permit),
                    classifier: guard.classifier.clone(),
                },
                Err(open) => Kind::Refused { open: Some(open) },
            }
        };
        AtEndOfBodyFuture { kind }
    }
}

pin_project! {
    /// The future of a call through an [`AtEndOfBody`] service: as
    /// [`ResponseFuture`](super::ResponseFuture), except that a response the
    /// classifier counts as a success hands its permit to its body.
    pub struct AtEndOfBodyFuture<F, C> {
        #[pin]
        kind: Kind<F, C>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F, C> {
        Called {
            #[pin]
            future: F,
            // `None` once handed on or recorded.
            permit: Option<OwnedPermit>,
            classifier: C,
        },
        Refused {
            // `None` once returned.
            open: Option<CircuitOpen>,
        },
    }
}

impl<F, C, B, E> Future for AtEndOfBodyFuture<F, C>
where
    F: Future<Output = Result<http::Response<B>, E>>,
    B: Body,
    C: Classify<http::Response<B>, E>,
{
    type Output = Result<http::Response<RecordedBody<B>>, BreakerError<E>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Called {
                future,
                permit,
                classifier,
            } => {
                // Held in a local while the inner future is polled: a panic
                // there drops it during the unwind, a failure.
                let held = permit.take();
                let result = match future.poll(cx) {
                    Poll::Ready(result) => result,
                    Poll::Pending => {
                        *permit = held;
                        return Poll::Pending;
                    }
                };
                let Some(permit) = held else {
                    return Poll::Ready(
                        result
                            .map(|response| response.map(RecordedBody::recorded))
                            .map_err(BreakerError::Inner),
                    );
                };
                // A success is recorded at the end of its body; a hold, or
                // any other verdict, now.
                let holds = classifier.wait(result.as_ref()) != Wait::None;
                Poll::Ready(match (classifier.classify(result.as_ref()), result) {
                    (Verdict::Success, Ok(response)) if !holds => {
                        Ok(response.map(|body| RecordedBody::new(body, permit)))
                    }
                    (_, result) => {
                        record_classified(permit, &*classifier, result.as_ref(), HoldScope::Group);
                        result
                            .map(|response| response.map(RecordedBody::recorded))
                            .map_err(BreakerError::Inner)
                    }
                })
            }
            KindProj::Refused { open } => Poll::Ready(Err(BreakerError::Open(
                open.take()
                    .expect("AtEndOfBodyFuture polled after it completed"),
            ))),
        }
    }
}

impl<F, C> fmt::Debug for AtEndOfBodyFuture<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Called { permit, .. } => f
                .debug_struct("AtEndOfBodyFuture::Called")
                .field("permit", permit)
                .finish_non_exhaustive(),
            Kind::Refused { open } => f
                .debug_struct("AtEndOfBodyFuture::Refused")
                .field("open", open)
                .finish(),
        }
    }
}
