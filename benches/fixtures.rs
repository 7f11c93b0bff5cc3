//! What both bench binaries call: the protected function, its error, a
//! caller's `async fn` around `call_async`, runtime-free polls (inlined, a
//! `block_on`, a task's poll through `dyn Future`), and a ready tower service answering the function at once.
//! One definition, so both measure the same code.

use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};

use breakerbox::{Breaker, CallError, CircuitOpen, TimedOut};

/// The protected function's error.
#[derive(Debug)]
pub enum BenchError {
    /// The dependency failed.
    Upstream,
    /// The breaker refused the call.
    Open,
    /// The call ran past its `timeout_ms`.
    TimedOut,
}

impl From<TimedOut> for BenchError {
    fn from(_: TimedOut) -> Self {
        BenchError::TimedOut
    }
}

impl From<CircuitOpen> for BenchError {
    fn from(_: CircuitOpen) -> Self {
        BenchError::Open
    }
}

/// The protected function every case calls: a real call that does nothing.
#[inline(never)]
pub fn work(x: u64) -> Result<u64, BenchError> {
    Ok(x)
}

/// The same function, failing.
#[inline(never)]
pub fn fail(_: u64) -> Result<u64, BenchError> {
    Err(BenchError::Upstream)
}

/// The async version: one `work` call inside a future that is ready at once.
pub async fn work_async(x: u64) -> Result<u64, BenchError> {
    work(x)
}

/// What a user writes around `call_async`: their own `async fn` that awaits it,
/// on a future of its own (an `async` block calling `work`), so that it shares
/// no code with the case that polls `call_async(work_async(x))` directly.
pub async fn via_call_async(breaker: &Breaker, x: u64) -> Result<u64, CallError<BenchError>> {
    breaker.call_async(async move { work(x) }).await
}

/// Polls `future` to completion on this thread with a no-op waker: no runtime.
/// Inlined into the bench loop, so the future is built and polled in place.
#[inline(always)]
pub fn poll_now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// Polls `future` to completion as `futures::executor::block_on` does: a plain
/// generic fn, whose inlining (and that of the future's `poll` into it) the
/// compiler decides, as it does in a user's program; with a no-op waker.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// Polls `task` to completion as an executor polls a spawned task: through
/// `dyn Future`, so the task's `poll` (a caller's `async fn`, with whatever the
/// compiler inlined into it) is a function of its own, as in every executor that
/// type-erases its tasks; from a frame of its own, with a no-op waker.
#[inline(never)]
pub fn run_task<O>(mut task: Pin<&mut dyn Future<Output = O>>) -> O {
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = task.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// A ready tower service that answers `work(x)` at once.
#[derive(Clone, Copy)]
pub struct Work;

impl tower::Service<u64> for Work {
    type Response = u64;
    type Error = BenchError;
    type Future = std::future::Ready<Result<u64, BenchError>>;

    #[inline]
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BenchError>> {
        Poll::Ready(Ok(()))
    }

    #[inline]
    fn call(&mut self, x: u64) -> Self::Future {
        std::future::ready(work(x))
    }
}
