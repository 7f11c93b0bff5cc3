//! The [`ResponseFuture`] of a guarded call: the inner future with the permit
//! that records its outcome.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use breaker_core::{CircuitOpen, OwnedPermit};
use pin_project_lite::pin_project;

use super::{BreakerError, Classify, Verdict};

pin_project! {
    /// The future of a call through a [`CircuitBreaker`](super::CircuitBreaker).
    ///
    /// It holds the inner call's future and the call's [`OwnedPermit`]: when the inner
    /// future finishes, the classifier's verdict is recorded; if it panics while
    /// polled, the permit records a failure as the panic unwinds (also when the
    /// panic is caught above this future, which is then dropped after the unwind);
    /// if this future is dropped first, the call counts as abandoned and a probe
    /// slot it held is freed. A refused call's future holds the refusal and is ready at once.
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
            // `None` once recorded.
            permit: Option<OwnedPermit>,
            classifier: C,
        },
        Refused {
            // `None` once returned.
            open: Option<CircuitOpen>,
        },
    }
}

impl<F, C> ResponseFuture<F, C> {
    #[inline]
    pub(super) fn called(future: F, permit: OwnedPermit, classifier: C) -> Self {
        ResponseFuture {
            kind: Kind::Called {
                future,
                permit: Some(permit),
                classifier,
            },
        }
    }

    #[inline]
    pub(super) fn refused(open: CircuitOpen) -> Self {
        ResponseFuture {
            kind: Kind::Refused { open: Some(open) },
        }
    }
}

impl<F, C, T, E> Future for ResponseFuture<F, C>
where
    F: Future<Output = Result<T, E>>,
    C: Classify<T, E>,
{
    type Output = Result<T, BreakerError<E>>;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Called {
                future,
                permit,
                classifier,
            } => {
                // The permit is held in a local while the inner future is polled:
                // a panic in that poll drops it during the unwind, a failure, even
                // when the panic is caught above this future (tower-http's
                // `CatchPanicLayer`) and the future itself is dropped later.
                let held = permit.take();
                let result = match future.poll(cx) {
                    Poll::Ready(result) => result,
                    Poll::Pending => {
                        *permit = held;
                        return Poll::Pending;
                    }
                };
                if let Some(permit) = held {
                    match classifier.classify(result.as_ref()) {
                        Verdict::Success => permit.success(),
                        Verdict::Failure => permit.failure(),
                        Verdict::Ignored => permit.ignore(),
                        Verdict::GroupFailure => permit.failure_of_group(),
                    }
                }
                Poll::Ready(result.map_err(BreakerError::Inner))
            }
            KindProj::Refused { open } => Poll::Ready(Err(BreakerError::Open(
                open.take()
                    .expect("ResponseFuture polled after it completed"),
            ))),
        }
    }
}

impl<F, C> fmt::Debug for ResponseFuture<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Called { permit, .. } => f
                .debug_struct("ResponseFuture::Called")
                .field("permit", permit)
                .finish_non_exhaustive(),
            Kind::Refused { open } => f
                .debug_struct("ResponseFuture::Refused")
                .field("open", open)
                .finish(),
        }
    }
}
