//! An async fn records exactly one outcome on every way out (return, `?`, panic)
//! and, when its future is dropped mid-flight, none: it is abandoned and its probe
//! slot is freed. Proven on a real tokio runtime with `timeout`, `select!` and
//! task abort.

mod support;

use std::future::Future;
use std::time::Duration;

use breakerbox::{circuit_breaker, State};
use support::{after_gate, metrics, state, tally, AppError, Tally, CLOCK, REG};
use tokio::sync::oneshot;

fn step(ok: bool) -> Result<u32, AppError> {
    if ok {
        Ok(1)
    } else {
        Err(AppError::Down)
    }
}

#[circuit_breaker(group = "async-exits", registry = &REG)]
async fn exits(how: u8) -> Result<u32, AppError> {
    tokio::task::yield_now().await;
    if how == 0 {
        return Err(AppError::Down);
    }
    let a = step(how != 1)?;
    tokio::task::yield_now().await;
    let b = step(how != 2)?;
    Ok(a + b)
}

#[tokio::test]
async fn return_each_question_mark_and_tail_each_record_one_outcome() {
    assert_eq!(exits(0).await, Err(AppError::Down));
    assert_eq!(tally("async-exits"), Tally::calls(1).failures(1));
    assert_eq!(exits(1).await, Err(AppError::Down));
    assert_eq!(tally("async-exits"), Tally::calls(2).failures(2));
    assert_eq!(exits(2).await, Err(AppError::Down));
    assert_eq!(tally("async-exits"), Tally::calls(3).failures(3));
    assert_eq!(exits(3).await, Ok(2));
    assert_eq!(
        tally("async-exits"),
        Tally::calls(4).successes(1).failures(3)
    );
}

#[circuit_breaker(group = "async-panic", registry = &REG)]
async fn panics() -> Result<(), AppError> {
    tokio::task::yield_now().await;
    panic!("boom in an async body");
}

#[tokio::test]
async fn a_panic_in_an_async_body_is_one_failure_and_reaches_the_task() {
    let joined = tokio::spawn(panics()).await.unwrap_err();
    assert!(joined.is_panic());
    let payload = joined.into_panic();
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"boom in an async body")
    );
    assert_eq!(tally("async-panic"), Tally::calls(1).failures(1));
}

#[circuit_breaker(group = "async-creation", registry = &REG)]
async fn counted() -> Result<(), AppError> {
    Ok(())
}

#[tokio::test]
async fn creating_a_future_claims_nothing_until_it_runs() {
    let future = counted();
    assert!(REG.get("async-creation").is_none(), "nothing ran yet");
    future.await.unwrap();
    assert_eq!(tally("async-creation"), Tally::calls(1).successes(1));
}

/// A body that waits until told, so a test can drop it mid-flight.
#[circuit_breaker(group = "async-drop", registry = &REG, threshold = 1, open_ms = 1000)]
async fn waits(gate: Option<oneshot::Receiver<()>>, fail: bool) -> Result<(), AppError> {
    after_gate(gate, fail).await
}

/// Trips `async-drop` and lets its open time pass, so the next call is a probe.
async fn trip_and_wait_for_probe() {
    let _ = waits(None, true).await;
    assert_eq!(state("async-drop"), State::Open);
    CLOCK.advance(Duration::from_millis(1000));
}

/// One test, in order, because all three share the half-open probe of one group.
#[tokio::test]
async fn a_dropped_probe_is_abandoned_and_frees_its_slot_via_timeout_select_and_abort() {
    // tokio::time::timeout drops the probe future when time runs out.
    trip_and_wait_for_probe().await;
    let (_keep, gate) = oneshot::channel::<()>();
    let out = tokio::time::timeout(Duration::from_millis(20), waits(Some(gate), false)).await;
    assert!(out.is_err(), "the probe was still waiting");
    let m = metrics("async-drop");
    assert_eq!(m.abandoned, 1);
    assert_eq!(m.probes_in_flight, 0);
    assert_eq!(m.state, State::HalfOpen);

    // select! drops the losing branch.
    let (_keep, gate) = oneshot::channel::<()>();
    tokio::select! {
        _ = waits(Some(gate), false) => unreachable!("the gate never opens"),
        _ = tokio::task::yield_now() => {}
    }
    let m = metrics("async-drop");
    assert_eq!(m.abandoned, 2);
    assert_eq!(m.probes_in_flight, 0);

    // Aborting a task drops its future.
    let (_keep, gate) = oneshot::channel::<()>();
    let task = tokio::spawn(waits(Some(gate), false));
    while metrics("async-drop").probes_in_flight == 0 {
        tokio::task::yield_now().await;
    }
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    let m = metrics("async-drop");
    assert_eq!(m.abandoned, 3);
    assert_eq!(m.probes_in_flight, 0);
    assert_eq!(m.successes, 0, "only the trip counted");
    assert_eq!(m.failures, 1, "only the trip counted");

    // The slot is free: the next probe runs and closes the circuit.
    waits(None, false).await.unwrap();
    assert_eq!(state("async-drop"), State::Closed);
}

fn assert_send<F: Future + Send>(f: F) -> F {
    f
}

#[circuit_breaker(group = "async-send", registry = &REG)]
async fn holds_send_state(name: String) -> Result<usize, AppError> {
    tokio::task::yield_now().await;
    Ok(name.len())
}

#[tokio::test]
async fn the_future_stays_send_and_runs_on_a_multi_thread_runtime() {
    let handle = tokio::spawn(assert_send(holds_send_state("abc".into())));
    assert_eq!(handle.await.unwrap(), Ok(3));
    assert_eq!(tally("async-send"), Tally::calls(1).successes(1));
}

static BOXED: std::sync::LazyLock<support::Isolated> =
    std::sync::LazyLock::new(support::Isolated::new);

/// The `#[async_trait]` shape: a fn returning `Box::pin(async move { .. })`.
#[circuit_breaker(group = "async-boxed-drop", registry = &BOXED, threshold = 1, open_ms = 10)]
fn boxed_waits(
    gate: Option<oneshot::Receiver<()>>,
    fail: bool,
) -> std::pin::Pin<Box<dyn Future<Output = Result<(), AppError>> + Send>> {
    Box::pin(async move { after_gate(gate, fail).await })
}

#[tokio::test]
async fn a_dropped_boxed_future_probe_is_abandoned_and_frees_its_slot() {
    let _ = boxed_waits(None, true).await;
    BOXED.clock.advance(Duration::from_millis(10));
    let (_keep, gate) = oneshot::channel::<()>();
    let out = tokio::time::timeout(Duration::from_millis(20), boxed_waits(Some(gate), false)).await;
    assert!(out.is_err());
    let m = BOXED.metrics("async-boxed-drop");
    assert_eq!(m.abandoned, 1);
    assert_eq!(m.probes_in_flight, 0);
    assert_eq!(m.failures, 1);
    boxed_waits(None, false).await.unwrap();
    assert_eq!(BOXED.metrics("async-boxed-drop").state, State::Closed);
}
