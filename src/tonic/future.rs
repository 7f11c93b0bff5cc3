//! The [`ResponseFuture`] of a call through the layer: the inner call's
//! future with the recorder of its outcome, or the layer's own answer.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use breaker_core::CircuitOpen;
use http_body::Body;
use pin_project_lite::pin_project;

use super::body::{status_headers, GrpcBody, Recorder};
use super::status::{Code, GrpcStatus};
use crate::tower::Classify;

pin_project! {
    /// The future of a call through a [`CircuitBreaker`](super::CircuitBreaker).
    ///
    /// Admitted, it polls the inner call and records its outcome as soon as
    /// it is known: a transport error as the classifier says (a failure by
    /// default), a trailers-only answer by its `grpc-status`, any other
    /// answer in its [`GrpcBody`]. Its deadline passing first answers
    /// `DEADLINE_EXCEEDED` and records that; dropped first, the call counts
    /// as abandoned. Refused, it answers the refusal at once.
    pub struct ResponseFuture<F, C> {
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
            // `None` once recorded or handed to the body.
            recorder: Option<Recorder<C>>,
        },
        Refused {
            // `None` once answered.
            open: Option<CircuitOpen>,
        },
    }
}

impl<F, C> ResponseFuture<F, C> {
    pub(super) fn called(future: F, recorder: Recorder<C>) -> Self {
        ResponseFuture {
            kind: Kind::Called {
                future,
                recorder: Some(recorder),
            },
        }
    }

    pub(super) fn refused(open: CircuitOpen) -> Self {
        ResponseFuture {
            kind: Kind::Refused { open: Some(open) },
        }
    }
}

impl<F, C, B, E> Future for ResponseFuture<F, C>
where
    F: Future<Output = Result<http::Response<B>, E>>,
    B: Body,
    C: Classify<GrpcStatus, E>,
{
    type Output = Result<http::Response<GrpcBody<B, C>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (future, recorder) = match self.project().kind.project() {
            KindProj::Called { future, recorder } => (future, recorder),
            KindProj::Refused { open } => {
                let open = open
                    .take()
                    .expect("ResponseFuture polled after it completed");
                return Poll::Ready(Ok(super::refusal(open)));
            }
        };
        if let Some(expired) = recorder.as_mut().filter(|r| r.deadline.is_some()) {
            if expired.poll_deadline(cx) {
                let status = GrpcStatus::new(Code::DeadlineExceeded);
                recorder.take().expect("a recorder").record(&status);
                return Poll::Ready(Ok(trailers_only(
                    Code::DeadlineExceeded,
                    "deadline exceeded",
                )));
            }
        }
        // Held in a local while the inner future is polled: a panic there
        // drops it during the unwind, a failure.
        let held = recorder.take();
        let result = match future.poll(cx) {
            Poll::Ready(result) => result,
            Poll::Pending => {
                *recorder = held;
                return Poll::Pending;
            }
        };
        let Some(held) = held else {
            return Poll::Ready(result.map(|r| r.map(|body| GrpcBody::inner(body, None))));
        };
        let response = match result {
            Ok(response) => response,
            Err(error) => {
                held.record_error(&error);
                return Poll::Ready(Err(error));
            }
        };
        let (parts, body) = response.into_parts();
        let status = GrpcStatus::from_headers(&parts.headers).or_else(|| {
            (parts.status != http::StatusCode::OK)
                .then(|| GrpcStatus::new(Code::from_http_status(parts.status.as_u16())))
        });
        let body = match status {
            // A trailers-only answer, or an HTTP error: the status is here.
            Some(status) => {
                held.record(&status);
                GrpcBody::inner(body, None)
            }
            // Ended with no status at all.
            None if body.is_end_stream() => {
                held.record(&GrpcStatus::new(Code::Unknown));
                GrpcBody::inner(body, None)
            }
            None => GrpcBody::inner(body, Some(held)),
        };
        Poll::Ready(Ok(http::Response::from_parts(parts, body)))
    }
}

/// A trailers-only answer of `code` with `message`: a `200` whose headers
/// carry the status, with an empty body.
pub(super) fn trailers_only<B, C>(code: Code, message: &str) -> http::Response<GrpcBody<B, C>> {
    let mut response = http::Response::new(GrpcBody::empty());
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/grpc"),
    );
    headers.extend(status_headers(code, message));
    response
}

impl<F, C> fmt::Debug for ResponseFuture<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Called { recorder, .. } => f
                .debug_struct("ResponseFuture::Called")
                .field("recording", &recorder.is_some())
                .finish_non_exhaustive(),
            Kind::Refused { open } => f
                .debug_struct("ResponseFuture::Refused")
                .field("open", open)
                .finish(),
        }
    }
}
