//! `Breaker::call` and `Breaker::call_async`: the permit API without writing it by hand.
mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use breaker_core::{CallError, Config, State};
use support::{config, manual, ms, trip};

#[test]
fn call_tells_a_refusal_from_the_functions_own_error() {
    let (breaker, _clock) = manual(config(1, 1_000));
    let own = breaker.call(|| Err::<(), _>("no such user"));
    assert_eq!(own, Err(CallError::Inner("no such user")));
    let refused = breaker.call(|| Ok::<_, &str>(()));
    match refused {
        Err(CallError::Open(open)) => assert_eq!(open.group(), "test"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn call_with_a_classifier_does_not_count_ignored_errors() {
    let (breaker, _clock) = manual(config(1, 1_000));
    let not_found = |e: &u16| *e >= 500;
    let r = breaker.call_with(&not_found, || Err::<(), _>(404u16));
    assert_eq!(r, Err(CallError::Inner(404)));
    assert_eq!(breaker.state(), State::Closed);
    let _ = breaker.call_with(&not_found, || Err::<(), _>(503u16));
    assert_eq!(breaker.state(), State::Open);
}

#[tokio::test]
async fn call_async_records_the_outcome_of_the_future() {
    let (breaker, _clock) = manual(config(2, 1_000));
    let ok = breaker.call_async(async { Ok::<_, ()>(5) }).await;
    assert_eq!(ok, Ok(5));
    let _ = breaker.call_async(async { Err::<(), _>(()) }).await;
    let _ = breaker.call_async(async { Err::<(), _>(()) }).await;
    assert_eq!(breaker.state(), State::Open);
    let ran = AtomicBool::new(false);
    let refused = breaker
        .call_async(async {
            ran.store(true, Ordering::Relaxed);
            Ok::<_, ()>(())
        })
        .await;
    assert!(refused.unwrap_err().is_open());
    assert!(
        !ran.load(Ordering::Relaxed),
        "the future is never polled when refused"
    );
}

#[tokio::test]
async fn cancelling_call_async_mid_flight_releases_the_probe_slot() {
    let (breaker, clock) = manual(config(1, 100));
    trip(&breaker);
    clock.advance(ms(100));
    let pending = breaker.call_async(async {
        std::future::pending::<()>().await;
        Ok::<_, ()>(())
    });
    let timed_out = tokio::time::timeout(Duration::from_millis(5), pending).await;
    assert!(timed_out.is_err());
    let m = breaker.metrics();
    assert_eq!(m.abandoned, 1);
    assert_eq!(m.probes_in_flight, 0);
    assert_eq!(breaker.state(), State::HalfOpen);
    breaker
        .call_async(async { Ok::<_, ()>(()) })
        .await
        .expect("the released slot admits the next probe");
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_async_futures_are_send_and_run_on_a_multi_thread_runtime() {
    let (breaker, _clock) = manual(Config::default());
    let handle = tokio::spawn(async move {
        breaker
            .call_async(async {
                tokio::task::yield_now().await;
                Ok::<_, ()>(1)
            })
            .await
    });
    assert_eq!(handle.await.unwrap(), Ok(1));
}

#[test]
fn call_async_claims_on_first_poll_and_a_refusal_is_ready_at_once() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    let breaker = breaker_core::Breaker::new(
        "call-async-lazy",
        Config::builder().threshold(1).build().unwrap(),
    );
    let mut cx = Context::from_waker(Waker::noop());
    // Created, not polled: nothing claimed, so forcing open still refuses it.
    let fut = breaker.call_async(async { Ok::<_, ()>(1) });
    breaker.force_open();
    let mut fut = std::pin::pin!(fut);
    assert!(matches!(
        fut.as_mut().poll(&mut cx),
        Poll::Ready(Err(CallError::Open(_)))
    ));
    assert_eq!(breaker.metrics().rejected, 1);
    breaker.reset();
    // A pending future holds its permit across polls and records once.
    let mut polled = 0;
    let inner = std::future::poll_fn(|_| {
        polled += 1;
        if polled < 3 {
            Poll::Pending
        } else {
            Poll::Ready(Err::<(), _>("down"))
        }
    });
    let mut fut = std::pin::pin!(breaker.call_async(inner));
    assert!(fut.as_mut().poll(&mut cx).is_pending());
    assert!(fut.as_mut().poll(&mut cx).is_pending());
    assert!(matches!(
        fut.as_mut().poll(&mut cx),
        Poll::Ready(Err(CallError::Inner("down")))
    ));
    let m = breaker.metrics();
    assert_eq!((m.failures, m.successes, m.abandoned), (1, 0, 0));
}

#[test]
fn a_panic_in_the_awaited_future_is_one_failure_on_any_poll() {
    use std::future::Future;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::task::{Context, Poll, Waker};

    let (breaker, _clock) = manual(config(5, 1_000));
    let mut cx = Context::from_waker(Waker::noop());
    // On the first poll, before the permit was ever stored.
    let mut fut = std::pin::pin!(breaker.call_async(std::future::poll_fn(
        |_| -> Poll<Result<(), ()>> { panic!("the dependency's client panicked") }
    )));
    assert!(catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx))).is_err());
    let m = breaker.metrics();
    assert_eq!((m.failures, m.abandoned), (1, 0));
    // On a later poll, with the permit held across the first.
    let mut polled = 0;
    let mut fut = std::pin::pin!(breaker.call_async(std::future::poll_fn(
        |_| -> Poll<Result<(), ()>> {
            polled += 1;
            if polled == 1 {
                Poll::Pending
            } else {
                panic!("the dependency's client panicked")
            }
        }
    )));
    assert!(fut.as_mut().poll(&mut cx).is_pending());
    assert!(catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx))).is_err());
    let m = breaker.metrics();
    assert_eq!((m.failures, m.successes, m.abandoned), (2, 0, 0));
}

#[test]
fn polling_call_async_again_after_it_completed_panics_and_records_nothing() {
    use std::future::Future;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::task::{Context, Poll, Waker};

    let (breaker, _clock) = manual(config(5, 1_000));
    let mut cx = Context::from_waker(Waker::noop());
    // A future that answers every poll, so only the helper can refuse a second one.
    let always_ready = std::future::poll_fn(|_| Poll::Ready(Ok::<_, ()>(7)));
    let mut fut = std::pin::pin!(breaker.call_async(always_ready));
    assert_eq!(fut.as_mut().poll(&mut cx), Poll::Ready(Ok(7)));
    assert!(catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx))).is_err());
    let m = breaker.metrics();
    assert_eq!((m.successes, m.failures, m.abandoned), (1, 0, 0));
}
