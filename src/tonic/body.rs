//! The [`GrpcBody`] of an answer through the layer, and the recorder that
//! records a call's outcome when its `grpc-status` comes.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use breaker_core::hold::{HoldScope, Wait};
use breaker_core::OwnedPermit;
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use tokio::time::Sleep;

use super::status::{Code, GrpcStatus};
use crate::tower::{Classify, Verdict};

/// One admitted call's permit and what decides its verdict, held until the
/// call's status is known: at the head of a trailers-only answer, in the
/// trailers at the end of the body, or at the deadline.
pub(super) struct Recorder<C> {
    permit: OwnedPermit,
    classifier: C,
    /// The classifier's verdict on a status and the wait it reads in it, for
    /// the service's error type (which the body does not name).
    judge: fn(&C, &GrpcStatus) -> (Verdict, Wait),
    /// What a wait the server asks for holds: the key or the group.
    scope: HoldScope,
    /// Boxed, and made only for a call that has a deadline.
    pub(super) deadline: Option<Pin<Box<Sleep>>>,
}

/// `classifier`'s verdict on `status` and the wait it reads there, as a
/// service with errors `E` sees it.
fn on_status<C: Classify<GrpcStatus, E>, E>(
    classifier: &C,
    status: &GrpcStatus,
) -> (Verdict, Wait) {
    (classifier.classify(Ok(status)), classifier.wait(Ok(status)))
}

impl<C> Recorder<C> {
    pub(super) fn new<E>(
        permit: OwnedPermit,
        classifier: C,
        deadline: Option<Pin<Box<Sleep>>>,
        scope: HoldScope,
    ) -> Self
    where
        C: Classify<GrpcStatus, E>,
    {
        Recorder {
            permit,
            classifier,
            judge: on_status::<C, E>,
            scope,
            deadline,
        }
    }

    /// Records the classifier's verdict on `status`, or a hold for the wait
    /// it asks of every caller (`grpc-retry-pushback-ms` on a
    /// `RESOURCE_EXHAUSTED`): the call then counts as ignored.
    pub(super) fn record(self, status: &GrpcStatus) {
        let (verdict, wait) = (self.judge)(&self.classifier, status);
        match wait {
            Wait::For(wait) => {
                self.permit.hold(wait, self.scope);
                return;
            }
            Wait::Bad => self.permit.breaker().count_bad_hold(),
            Wait::None => {}
        }
        self.settle(verdict);
    }

    /// Records the classifier's verdict on the service's error.
    pub(super) fn record_error<E>(self, error: &E)
    where
        C: Classify<GrpcStatus, E>,
    {
        let verdict = self.classifier.classify(Err(error));
        self.settle(verdict);
    }

    fn settle(self, verdict: Verdict) {
        match verdict {
            Verdict::Success => self.permit.success(),
            Verdict::Failure => self.permit.failure(),
            Verdict::Ignored => self.permit.ignore(),
            Verdict::GroupFailure => self.permit.failure_of_group(),
        }
    }

    /// Whether the call's deadline has passed (registering the wake-up when
    /// it has not).
    pub(super) fn poll_deadline(&mut self, cx: &mut Context<'_>) -> bool {
        match &mut self.deadline {
            Some(deadline) => deadline.as_mut().poll(cx).is_ready(),
            None => false,
        }
    }
}

/// The status trailers (or trailers-only headers) of `code` with `message`.
pub(super) fn status_headers(code: Code, message: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("grpc-status", http::HeaderValue::from(code as i32));
    if let Ok(message) = http::HeaderValue::from_str(&percent_encode(message)) {
        headers.insert("grpc-message", message);
    }
    headers
}

/// `message` as gRPC writes a `grpc-message`: bytes outside the printable
/// ASCII range, and `%`, as `%XX`.
fn percent_encode(message: &str) -> String {
    use std::fmt::Write as _;
    let mut encoded = String::with_capacity(message.len());
    for &byte in message.as_bytes() {
        if (0x20..=0x7e).contains(&byte) && byte != b'%' {
            encoded.push(char::from(byte));
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    encoded
}

pin_project! {
    /// The body of an answer through a
    /// [`CircuitBreaker`](super::CircuitBreaker): the service's body, which
    /// records the call's outcome when its trailers come, or the empty body
    /// of an answer the layer made itself (a refusal, a deadline that passed
    /// before the answer's head).
    ///
    /// While a call's status is not known its body holds the call's permit,
    /// a half-open probe slot included. The body records:
    ///
    /// - at its trailers, the classifier's verdict on their `grpc-status`
    ///   (an answer whose trailers, or whose end, carry none counts as
    ///   `UNKNOWN`);
    /// - when reading it fails (a reset stream, a lost connection), a failure;
    /// - when the call's deadline passes first, the verdict on
    ///   `DEADLINE_EXCEEDED`: the body then ends with those trailers, as a
    ///   server's answer would;
    /// - when it is dropped before any of these (a client that stopped
    ///   reading a stream), *abandoned*, which counts as the group's
    ///   `abandoned` key says (ignored by default).
    pub struct GrpcBody<B, C> {
        #[pin]
        kind: Kind<B, C>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<B, C> {
        Inner {
            #[pin]
            body: B,
            // `None` once recorded, or for an answer recorded at its head.
            recorder: Option<Recorder<C>>,
            // Set once the deadline's trailers were returned.
            ended: bool,
        },
        Empty,
    }
}

impl<B, C> GrpcBody<B, C> {
    pub(super) fn inner(body: B, recorder: Option<Recorder<C>>) -> Self {
        GrpcBody {
            kind: Kind::Inner {
                body,
                recorder,
                ended: false,
            },
        }
    }

    pub(super) fn empty() -> Self {
        GrpcBody { kind: Kind::Empty }
    }
}

impl<B: Body, C> Body for GrpcBody<B, C> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let KindProj::Inner {
            body,
            recorder,
            ended,
        } = self.project().kind.project()
        else {
            return Poll::Ready(None);
        };
        if *ended {
            return Poll::Ready(None);
        }
        if let Some(expired) = recorder.as_mut().filter(|r| r.deadline.is_some()) {
            if expired.poll_deadline(cx) {
                let status = GrpcStatus::new(Code::DeadlineExceeded);
                recorder.take().expect("a recorder").record(&status);
                *ended = true;
                let trailers = status_headers(Code::DeadlineExceeded, "deadline exceeded");
                return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
            }
        }
        // Held in a local while the inner body is polled: a panic there
        // drops it during the unwind, a failure.
        let held = recorder.take();
        let polled = body.poll_frame(cx);
        match (&polled, held) {
            (_, None) => {}
            (Poll::Ready(Some(Ok(frame))), Some(held)) if frame.is_trailers() => {
                let status = frame
                    .trailers_ref()
                    .and_then(GrpcStatus::from_headers)
                    .unwrap_or(GrpcStatus::new(Code::Unknown));
                held.record(&status);
            }
            (Poll::Ready(Some(Err(_))), Some(held)) => held.settle(Verdict::Failure),
            (Poll::Ready(None), Some(held)) => held.record(&GrpcStatus::new(Code::Unknown)),
            (_, held) => *recorder = held,
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Inner { body, ended, .. } => *ended || body.is_end_stream(),
            Kind::Empty => true,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Inner {
                body, ended: false, ..
            } => body.size_hint(),
            _ => SizeHint::with_exact(0),
        }
    }
}

impl<B, C> std::fmt::Debug for GrpcBody<B, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Inner { recorder, .. } => f
                .debug_struct("GrpcBody::Inner")
                .field("recording", &recorder.is_some())
                .finish_non_exhaustive(),
            Kind::Empty => f.write_str("GrpcBody::Empty"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_percent_encoded_as_grpc_says() {
        assert_eq!(percent_encode("circuit `a` is open"), "circuit `a` is open");
        assert_eq!(percent_encode("100% é\n"), "100%25 %C3%A9%0A");
    }
}
