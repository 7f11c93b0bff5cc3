//! The [`ResponseFuture`] of a guarded call: the inner future with the permit
//! that records its outcome.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use std::time::Duration;

use breaker_core::hold::HoldScope;
use breaker_core::{CircuitOpen, OwnedBulkheadSlot, OwnedPermit};
use pin_project_lite::pin_project;

use super::classify::record_classified;
use super::{BreakerError, Classify};

pin_project! {
    /// The future of a call through a [`CircuitBreaker`](super::CircuitBreaker).
    ///
    /// It holds the inner call's future and the call's [`OwnedPermit`]: when the inner
    /// future finishes, the classifier's verdict is recorded; if it panics while
    /// polled, the permit records a failure as the panic unwinds (also when the
    /// panic is caught above this future, which is then dropped after the unwind);
    /// if this future is dropped first, the call is abandoned, which counts as
    /// the group's `abandoned` key says (ignored by default, freeing a probe
    /// slot it held; a failure under `"failure"`). A refused call's future holds the refusal and is ready at once.
    /// A call of a group with `max_concurrent` also holds its bulkhead slot;
    /// with `timeout_ms` (and the `tokio` feature) it races the group's
    /// deadline, and one past it is dropped and recorded as timed out.
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
        // A call of a group with `max_concurrent` or `timeout_ms`, boxed so
        // that a call of a group without them moves no more than it would.
        Guarded {
            call: Pin<Box<Guarded<F, C>>>,
        },
    }
}

pin_project! {
    /// A call holding a bulkhead slot and racing the group's deadline.
    struct Guarded<F, C> {
        #[pin]
        future: F,
        // `None` once recorded.
        permit: Option<OwnedPermit>,
        classifier: C,
        // Freed with the call: when it ends, or is dropped.
        slot: OwnedBulkheadSlot,
        deadline: Option<Deadline>,
    }
}

/// The group's `timeout_ms` on tokio's timer, and how long it was.
#[cfg(feature = "tokio")]
struct Deadline {
    sleep: Pin<Box<tokio::time::Sleep>>,
    after: Duration,
}

/// Without tokio's timer there is no deadline to race.
#[cfg(not(feature = "tokio"))]
enum Deadline {}

impl Deadline {
    #[cfg(feature = "tokio")]
    fn new(after: Duration) -> Option<Self> {
        Some(Deadline {
            sleep: Box::pin(tokio::time::sleep(after)),
            after,
        })
    }

    #[cfg(not(feature = "tokio"))]
    fn new(_: Duration) -> Option<Self> {
        None
    }

    /// `Some(after)` once the deadline has passed.
    #[cfg(feature = "tokio")]
    fn passed(&mut self, cx: &mut Context<'_>) -> Option<Duration> {
        let passed = self.sleep.as_mut().poll(cx).is_ready();
        passed.then_some(self.after)
    }

    #[cfg(not(feature = "tokio"))]
    fn passed(&mut self, _: &mut Context<'_>) -> Option<Duration> {
        match *self {}
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

    /// A call holding a bulkhead `slot`, raced against `deadline` (with the
    /// `tokio` feature).
    pub(super) fn guarded(
        future: F,
        permit: OwnedPermit,
        classifier: C,
        slot: OwnedBulkheadSlot,
        deadline: Option<Duration>,
    ) -> Self {
        let call = Guarded {
            future,
            permit: Some(permit),
            classifier,
            slot,
            deadline: deadline.and_then(Deadline::new),
        };
        ResponseFuture {
            kind: Kind::Guarded {
                call: Box::pin(call),
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
        let mut kind = self.project().kind;
        match kind.as_mut().project() {
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
                    record_classified(permit, &*classifier, result.as_ref(), HoldScope::Group);
                }
                Poll::Ready(result.map_err(BreakerError::Inner))
            }
            KindProj::Refused { open } => Poll::Ready(Err(BreakerError::Open(
                open.take()
                    .expect("ResponseFuture polled after it completed"),
            ))),
            KindProj::Guarded { .. } => poll_guarded(kind, cx),
        }
    }
}

/// A guarded call: the inner future as [`ResponseFuture::poll`] polls it,
/// then the deadline. When the deadline passes first, the call is dropped
/// (its slot with it), then recorded as timed out and answered with
/// [`BreakerError::TimedOut`].
#[cold]
#[inline(never)]
fn poll_guarded<F, C, T, E>(
    mut kind: Pin<&mut Kind<F, C>>,
    cx: &mut Context<'_>,
) -> Poll<Result<T, BreakerError<E>>>
where
    F: Future<Output = Result<T, E>>,
    C: Classify<T, E>,
{
    let KindProj::Guarded { call } = kind.as_mut().project() else {
        unreachable!("a guarded call")
    };
    let call = call.as_mut().project();
    let held = call.permit.take();
    match call.future.poll(cx) {
        Poll::Ready(result) => {
            if let Some(permit) = held {
                record_classified(permit, &*call.classifier, result.as_ref(), HoldScope::Group);
            }
            return Poll::Ready(result.map_err(BreakerError::Inner));
        }
        Poll::Pending => *call.permit = held,
    }
    let Some(after) = call.deadline.as_mut().and_then(|d| d.passed(cx)) else {
        return Poll::Pending;
    };
    let permit = call.permit.take();
    // Drops the call (its future, its slot) before the timeout is recorded.
    kind.set(Kind::Refused { open: None });
    let permit = permit.expect("a call holds its permit until it ends");
    Poll::Ready(Err(BreakerError::TimedOut(permit.timed_out(after))))
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
            Kind::Guarded { call } => f
                .debug_struct("ResponseFuture::Guarded")
                .field("permit", &call.permit)
                .field("slot", &call.slot)
                .finish_non_exhaustive(),
        }
    }
}
