//! The future `Breaker::call_async` returns: it claims on its first poll and polls
//! the caller's future where it lies, never moving it.
//!
//! An `async fn` helper would move the caller's future from its argument slot into
//! the slot it is awaited from: a copy made with narrow stores and read back with
//! one wide load, a store-forwarding stall on every call. This future keeps the
//! caller's future in one field, pinned in place from the first poll on.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::handle::Breaker;
use super::permit::{Classifier, Permit, Scope};
use crate::error::CallError;

pin_project! {
    pub(super) struct CallFuture<'a, Fut, C> {
        breaker: &'a Breaker,
        // By value: `EveryError` for `call_async` takes no room and no store.
        classifier: C,
        stage: Stage<'a>,
        // Pinned from the first poll on; the other fields are not.
        #[pin]
        future: Fut,
    }
}

enum Stage<'a> {
    /// Not polled yet: nothing is claimed.
    Unclaimed,
    /// Admitted: the caller's future runs under this permit.
    Running(Permit<'a>),
    /// The output was given back (or the claim refused).
    Done,
}

impl<'a, Fut, C> CallFuture<'a, Fut, C> {
    #[inline(always)]
    pub(super) fn new(breaker: &'a Breaker, classifier: C, future: Fut) -> Self {
        CallFuture {
            breaker,
            classifier,
            stage: Stage::Unclaimed,
            future,
        }
    }
}

impl<T, E, Fut, C> Future for CallFuture<'_, Fut, C>
where
    Fut: Future<Output = Result<T, E>>,
    C: Classifier<E>,
{
    type Output = Result<T, CallError<E>>;

    // Always inlined into the caller's `async fn`, which builds this future and
    // polls it in one place: there the first poll's stage is known to be
    // unclaimed, the permit stays in registers and the drop after `.await` sees
    // the stage this poll wrote. Out of line (what the compiler picks for
    // `#[inline]` once a few callers instantiate it) it is a frame of its own
    // that returns its output through memory.
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        // The permit is held in a local while the caller's future is polled, and
        // stored only if it is pending: a call that completes on its first poll
        // never writes it to memory and reads it back.
        let permit = match this.stage {
            // Nothing to clear before the caller's future runs: if it unwinds,
            // the local permit records the failure and the stage holds nothing.
            Stage::Unclaimed => match this.breaker.try_acquire() {
                Ok(permit) => permit,
                Err(open) => {
                    set(this.stage, Stage::Done);
                    return Poll::Ready(Err(CallError::Open(open)));
                }
            },
            Stage::Running(_) => match std::mem::replace(this.stage, Stage::Done) {
                Stage::Running(permit) => permit,
                _ => unreachable!("the stage was just matched as running"),
            },
            Stage::Done => panic!("`Breaker::call_async` future polled after completion"),
        };
        match this.future.poll(cx) {
            Poll::Pending => {
                set(this.stage, Stage::Running(permit));
                Poll::Pending
            }
            Poll::Ready(result) => {
                let output = permit.record_owned(result, this.classifier, CallError::Inner);
                // Written last, next to the drop that reads it once the caller's
                // `.await` completes, so that the drop knows there is no permit.
                set(this.stage, Stage::Done);
                Poll::Ready(output)
            }
        }
    }
}

/// Sets a stage that holds no permit (unclaimed or done), without dropping it:
/// dropping would read it back from memory after the caller's future ran.
#[inline(always)]
fn set<'a>(stage: &mut Stage<'a>, to: Stage<'a>) {
    let old = std::mem::replace(stage, to);
    debug_assert!(!matches!(old, Stage::Running(_)));
    std::mem::forget(old);
}

/// A borrowed classifier, for `call_async_with`. (A blanket impl for `&C` would
/// overlap the one for closures.)
pub(super) struct ByRef<'a, C: ?Sized>(pub(super) &'a C);

impl<E, C: Classifier<E> + ?Sized> Classifier<E> for ByRef<'_, C> {
    #[inline(always)]
    fn is_failure(&self, error: &E) -> bool {
        self.0.is_failure(error)
    }

    #[inline(always)]
    fn scope(&self, error: &E) -> Scope {
        self.0.scope(error)
    }
}
