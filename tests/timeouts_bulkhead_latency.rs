//! Timeouts, bulkheads and latency end to end through the attribute: a hanging dependency trips after
//! `threshold` timeouts; a bulkhead admits exactly its cap and frees slots on
//! every way out; the composition order is bulkhead, breaker, deadline.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use breakerbox::{circuit_breaker, CircuitOpen, OpenReason, Registry, State, TimedOut};

#[derive(Debug)]
enum Error {
    Down,
    Open(CircuitOpen),
    Late(TimedOut),
}
impl From<CircuitOpen> for Error {
    fn from(e: CircuitOpen) -> Self {
        Error::Open(e)
    }
}
impl From<TimedOut> for Error {
    fn from(e: TimedOut) -> Self {
        Error::Late(e)
    }
}

static HANGS: std::sync::LazyLock<Registry> = std::sync::LazyLock::new(Registry::new);

#[circuit_breaker(group = "hangs", threshold = 3, timeout_ms = 500, registry = &HANGS)]
async fn hangs() -> Result<(), Error> {
    std::future::pending::<()>().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_hanging_dependency_trips_after_threshold_timeouts() {
    for n in 1..=3 {
        let started = tokio::time::Instant::now();
        let late = hangs().await;
        assert!(
            matches!(&late, Err(Error::Late(t)) if t.after() == Duration::from_millis(500)),
            "{late:?}"
        );
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(500),
            "paused time: exactly the deadline"
        );
        let m = HANGS.get("hangs").unwrap().metrics();
        assert_eq!(m.timeouts, n);
        assert_eq!(
            m.failures, n,
            "a timeout is a failure, not an abandoned call"
        );
        assert_eq!(m.abandoned, 0);
    }
    let breaker = HANGS.get("hangs").unwrap();
    assert_eq!(breaker.state(), State::Open);
    // Open: refused at once, no timer started.
    let started = tokio::time::Instant::now();
    assert!(matches!(hangs().await, Err(Error::Open(o)) if o.reason() == OpenReason::Open));
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(breaker.metrics().timeouts, 3);
}

static QUICK: std::sync::LazyLock<Registry> = std::sync::LazyLock::new(Registry::new);

#[circuit_breaker(group = "quick", threshold = 1, timeout_ms = 500, registry = &QUICK)]
async fn answers_after(ms: u64) -> Result<u64, Error> {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(ms)
}

#[tokio::test(start_paused = true)]
async fn a_call_inside_its_deadline_is_a_plain_success() {
    assert!(matches!(answers_after(499).await, Ok(499)));
    assert!(
        matches!(answers_after(500).await, Ok(500)),
        "ready at the deadline: the call wins"
    );
    let m = QUICK.get("quick").unwrap().metrics();
    assert_eq!((m.successes, m.failures, m.timeouts), (2, 0, 0));
    assert!(matches!(answers_after(501).await, Err(Error::Late(_))));
    assert_eq!(QUICK.get("quick").unwrap().state(), State::Open);
}

static POOL: std::sync::LazyLock<Registry> = std::sync::LazyLock::new(Registry::new);

fn pool_cached(_gate: &Barrier, _admitted: &AtomicUsize) -> Result<u32, Error> {
    Ok(0)
}

/// Holds its slot until every racing caller has tried.
#[circuit_breaker(group = "pool", max_concurrent = 5, fallback = pool_cached, registry = &POOL)]
fn pooled(gate: &Barrier, admitted: &AtomicUsize) -> Result<u32, Error> {
    admitted.fetch_add(1, Ordering::SeqCst);
    gate.wait();
    Ok(1)
}

#[test]
fn a_bulkhead_of_five_admits_exactly_five_of_64_racing_threads() {
    const CALLERS: usize = 64;
    let start = Arc::new(Barrier::new(CALLERS));
    // The admitted ones wait here with the test thread until all refusals are in.
    let gate = Arc::new(Barrier::new(5 + 1));
    let admitted = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..CALLERS)
        .map(|_| {
            let (start, gate, admitted) = (start.clone(), gate.clone(), admitted.clone());
            std::thread::spawn(move || {
                start.wait();
                pooled(&gate, &admitted).unwrap()
            })
        })
        .collect();
    let breaker = loop {
        if let Some(b) = POOL.get("pool") {
            if b.metrics().bulkhead_rejected == (CALLERS - 5) as u64 {
                break b;
            }
        }
        std::thread::yield_now();
    };
    assert_eq!(breaker.metrics().bulkhead_in_flight, Some(5));
    gate.wait();
    let answers: Vec<u32> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(
        answers.iter().filter(|&&a| a == 1).count(),
        5,
        "ran the body"
    );
    assert_eq!(
        answers.iter().filter(|&&a| a == 0).count(),
        CALLERS - 5,
        "fallback"
    );
    assert_eq!(admitted.load(Ordering::SeqCst), 5);
    let m = breaker.metrics();
    assert_eq!(m.bulkhead_in_flight, Some(0), "every slot freed on return");
    assert_eq!(
        (m.successes, m.failures),
        (5, 0),
        "refusals are not failures"
    );
    assert_eq!(m.rejected, (CALLERS - 5) as u64);
    assert_eq!(breaker.state(), State::Closed);
}

static EXITS: std::sync::LazyLock<Registry> = std::sync::LazyLock::new(Registry::new);

#[circuit_breaker(group = "exits", max_concurrent = 1, window_calls = 100, registry = &EXITS)]
async fn exits(how: &'static str) -> Result<(), Error> {
    match how {
        "question" => Err(Error::Down)?,
        "panic" => panic!("the dependency blew up"),
        "hang" => std::future::pending::<()>().await,
        _ => {}
    }
    Ok(())
}

async fn slot_is_free() -> bool {
    // A call that returns at once succeeds only if the one slot is free.
    exits("return").await.is_ok()
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_slot_is_freed_on_every_way_out() {
    assert!(slot_is_free().await, "return");
    assert!(matches!(exits("question").await, Err(Error::Down)));
    assert!(slot_is_free().await, "`?`");
    let panicked = tokio::spawn(exits("panic")).await;
    assert!(panicked.unwrap_err().is_panic());
    assert!(slot_is_free().await, "panic");
    // Held while pending: a second call is refused with its own reason.
    let mut hung = Box::pin(exits("hang"));
    assert!(futures::poll!(hung.as_mut()).is_pending());
    assert!(
        matches!(exits("return").await, Err(Error::Open(o)) if o.reason() == OpenReason::BulkheadFull)
    );
    drop(hung);
    assert!(slot_is_free().await, "cancel");
    let m = EXITS.get("exits").unwrap().metrics();
    assert_eq!(m.bulkhead_rejected, 1);
    assert_eq!(m.bulkhead_in_flight, Some(0));
    assert_eq!(m.abandoned, 1, "the cancelled call");
}

static ORDER: std::sync::LazyLock<Registry> = std::sync::LazyLock::new(Registry::new);

#[circuit_breaker(
    group = "order", threshold = 1, open_ms = 1000, max_concurrent = 1, timeout_ms = 100,
    registry = &ORDER
)]
async fn ordered(hang: bool) -> Result<(), Error> {
    if hang {
        std::future::pending::<()>().await;
    }
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn bulkhead_outside_the_breaker_outside_the_deadline() {
    // A call over the cap never reaches the breaker: nothing is claimed or counted there.
    let mut held = Box::pin(ordered(true));
    assert!(futures::poll!(held.as_mut()).is_pending());
    assert!(
        matches!(ordered(false).await, Err(Error::Open(o)) if o.reason() == OpenReason::BulkheadFull)
    );
    let breaker = ORDER.get("order").unwrap();
    assert_eq!(breaker.state(), State::Closed);
    // The deadline is inside the breaker: the held call's timeout is the failure that trips it.
    assert!(matches!(held.await, Err(Error::Late(_))));
    assert_eq!(breaker.state(), State::Open);
    // Open: refused by the breaker (the bulkhead let it through), no timer, no slot kept.
    let started = tokio::time::Instant::now();
    assert!(matches!(ordered(true).await, Err(Error::Open(o)) if o.reason() == OpenReason::Open));
    assert_eq!(started.elapsed(), Duration::ZERO);
    let m = breaker.metrics();
    assert_eq!(
        (m.bulkhead_rejected, m.rejected, m.timeouts, m.failures),
        (1, 2, 1, 1)
    );
    assert_eq!(m.bulkhead_in_flight, Some(0));
}
