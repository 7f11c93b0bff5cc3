//! The guarded helpers: `call_async_guarded` caps racing tasks with the bulkhead,
//! ends hung calls at the deadline as failures, and `call_in_bulkhead` ignores a
//! deadline it could not enforce.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breaker_core::{Breaker, CallError, Config, OpenReason, State, Timer};

/// Tokio's sleep, as the facade's `tokio` feature provides it.
struct TokioTimer;
impl Timer for TokioTimer {
    type Sleep = tokio::time::Sleep;
    fn sleep(&self, after: Duration) -> tokio::time::Sleep {
        tokio::time::sleep(after)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bulkhead_of_three_admits_exactly_three_of_64_racing_tasks() {
    let breaker = Breaker::new(
        "guarded-tasks",
        Config::builder().max_concurrent(3).build().unwrap(),
    );
    let running = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(tokio::sync::Notify::new());
    let start = Arc::new(tokio::sync::Barrier::new(64));
    let tasks: Vec<_> = (0..64)
        .map(|_| {
            let (b, running, release, start) = (
                breaker.clone(),
                running.clone(),
                release.clone(),
                start.clone(),
            );
            tokio::spawn(async move {
                start.wait().await;
                b.call_async_guarded(&TokioTimer, async {
                    running.fetch_add(1, Ordering::SeqCst);
                    release.notified().await;
                    Ok::<_, ()>(())
                })
                .await
            })
        })
        .collect();
    // Every refusal is in, and the admitted ones are parked on `release`.
    while breaker.metrics().bulkhead_rejected < 61 || running.load(Ordering::SeqCst) < 3 {
        tokio::task::yield_now().await;
    }
    assert_eq!(breaker.metrics().bulkhead_in_flight, Some(3));
    for _ in 0..3 {
        release.notify_one();
    }
    let mut ok = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(()) => ok += 1,
            Err(CallError::Open(o)) => assert_eq!(o.reason(), OpenReason::BulkheadFull),
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(ok, 3);
    assert_eq!(running.load(Ordering::SeqCst), 3);
    let m = breaker.metrics();
    assert_eq!((m.successes, m.failures, m.rejected), (3, 0, 61));
    assert_eq!(m.bulkhead_in_flight, Some(0));
}

#[tokio::test(start_paused = true)]
async fn hung_calls_time_out_as_failures_and_trip_after_threshold() {
    let config = Config::builder()
        .threshold(2)
        .timeout_ms(1_000)
        .build()
        .unwrap();
    let breaker = Breaker::new("guarded-hang", config);
    let hang = || std::future::pending::<Result<(), ()>>();
    let late = breaker.call_async_guarded(&TokioTimer, hang()).await;
    assert!(matches!(&late, Err(CallError::TimedOut(t)) if t.after() == Duration::from_secs(1)));
    assert_eq!(breaker.state(), State::Closed);
    let _ = breaker.call_async_guarded(&TokioTimer, hang()).await;
    assert_eq!(breaker.state(), State::Open);
    let m = breaker.metrics();
    assert_eq!((m.timeouts, m.failures, m.abandoned), (2, 2, 0));
    // The plain helper does not enforce the deadline (it has no timer).
    let breaker = Breaker::new("guarded-plain", config);
    let quick = breaker.call_async(async { Ok::<_, ()>(5) }).await;
    assert_eq!(quick, Ok(5));
}

#[test]
fn the_sync_guarded_helper_ignores_a_deadline_it_cannot_enforce() {
    let config = Config::builder().timeout_ms(1).build().unwrap();
    let breaker = Breaker::new("guarded-sync", config);
    assert_eq!(breaker.call_in_bulkhead(|| Ok::<_, ()>(1)), Ok(1));
    assert_eq!(breaker.metrics().timeouts, 0);
}
