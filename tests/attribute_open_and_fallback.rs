//! An open circuit never runs the body: the fn returns its fallback's value (the
//! fallback gets the same arguments, a method's gets the receiver first) or
//! `Err(CircuitOpen.into())`, and a fallback is never counted as a success or a probe.

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use std::sync::LazyLock;

use breakerbox::{circuit_breaker, OpenReason, State};
use support::{after_gate, metrics, state, tally, AppError, Isolated, Tally, REG};

static OPEN: LazyLock<Isolated> = LazyLock::new(Isolated::new);
static HALF: LazyLock<Isolated> = LazyLock::new(Isolated::new);
static BODY_RUNS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "open-no-fallback", registry = &OPEN, threshold = 2, open_ms = 500)]
fn guarded(fail: bool) -> Result<u32, AppError> {
    BODY_RUNS.fetch_add(1, Ordering::SeqCst);
    if fail {
        Err(AppError::Down)
    } else {
        Ok(1)
    }
}

#[test]
fn an_open_circuit_refuses_without_running_the_body_and_says_why() {
    let _ = guarded(true);
    let _ = guarded(true);
    assert_eq!(OPEN.metrics("open-no-fallback").state, State::Open);
    let runs = BODY_RUNS.load(Ordering::SeqCst);

    let Err(AppError::Open(open)) = guarded(false) else {
        panic!("an open circuit must refuse");
    };
    assert_eq!(open.group(), "open-no-fallback");
    assert_eq!(open.reason(), OpenReason::Open);
    assert_eq!(open.retry_after(), Some(Duration::from_millis(500)));
    assert_eq!(
        BODY_RUNS.load(Ordering::SeqCst),
        runs,
        "the body did not run"
    );
    assert_eq!(OPEN.metrics("open-no-fallback").rejected, 1);

    OPEN.clock.advance(Duration::from_millis(500));
    assert_eq!(guarded(false), Ok(1), "the probe runs the body");
    assert_eq!(BODY_RUNS.load(Ordering::SeqCst), runs + 1);
    assert_eq!(OPEN.metrics("open-no-fallback").state, State::Closed);
}

static FALLBACK_ARGS: std::sync::Mutex<Vec<(String, u32)>> = std::sync::Mutex::new(Vec::new());

fn cached(query: &str, page: u32) -> Result<String, AppError> {
    FALLBACK_ARGS.lock().unwrap().push((query.to_owned(), page));
    Ok(format!("cached {query} p{page}"))
}

#[circuit_breaker(group = "fallback-free", registry = &REG, threshold = 1, fallback = cached)]
fn search(query: &str, page: u32) -> Result<String, AppError> {
    if query == "fail" {
        return Err(AppError::Down);
    }
    Ok(format!("live {query} p{page}"))
}

#[test]
fn the_fallback_gets_the_same_arguments_and_is_never_counted() {
    assert_eq!(search("rust", 1).unwrap(), "live rust p1");
    assert!(
        FALLBACK_ARGS.lock().unwrap().is_empty(),
        "closed: no fallback"
    );
    let _ = search("fail", 2);
    assert_eq!(state("fallback-free"), State::Open);
    let before = metrics("fallback-free");

    assert_eq!(search("books", 3).unwrap(), "cached books p3");
    assert_eq!(search("maps", 4).unwrap(), "cached maps p4");
    assert_eq!(
        *FALLBACK_ARGS.lock().unwrap(),
        [("books".to_owned(), 3), ("maps".to_owned(), 4)]
    );
    let after = metrics("fallback-free");
    assert_eq!(
        after.successes, before.successes,
        "a fallback is not a success"
    );
    assert_eq!(
        after.calls, before.calls,
        "a fallback is not an admitted call"
    );
    assert_eq!(after.rejected, before.rejected + 2);
    assert_eq!(after.state, State::Open, "a fallback is not a probe");
}

struct Client {
    name: &'static str,
    live: AtomicU32,
}

impl Client {
    #[circuit_breaker(group = "fallback-method", registry = &REG, threshold = 1, fallback = cached_copy)]
    fn fetch(&self, id: u32, fail: bool) -> Result<String, AppError> {
        self.live.fetch_add(1, Ordering::SeqCst);
        if fail {
            Err(AppError::Down)
        } else {
            Ok(format!("{} live {id}", self.name))
        }
    }

    fn cached_copy(&self, id: u32, _fail: bool) -> Result<String, AppError> {
        Ok(format!("{} cached {id}", self.name))
    }
}

#[test]
fn a_methods_fallback_gets_the_receiver_first() {
    let client = Client {
        name: "c1",
        live: AtomicU32::new(0),
    };
    assert_eq!(client.fetch(1, false).unwrap(), "c1 live 1");
    let _ = client.fetch(2, true);
    assert_eq!(client.fetch(3, false).unwrap(), "c1 cached 3");
    assert_eq!(client.live.load(Ordering::SeqCst), 2);
}

#[circuit_breaker(group = "fallback-async", registry = &REG, threshold = 1, fallback = async_cached)]
async fn async_search(query: String) -> Result<String, AppError> {
    ASYNC_BODY_RUNS.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    if query == "fail" {
        Err(AppError::Down)
    } else {
        Ok(format!("live {query}"))
    }
}

static ASYNC_BODY_RUNS: AtomicU32 = AtomicU32::new(0);

async fn async_cached(query: String) -> Result<String, AppError> {
    tokio::task::yield_now().await;
    Ok(format!("cached {query}"))
}

#[tokio::test]
async fn an_async_fns_fallback_is_awaited_and_never_counted() {
    assert_eq!(async_search("a".into()).await.unwrap(), "live a");
    let _ = async_search("fail".into()).await;
    assert_eq!(async_search("b".into()).await.unwrap(), "cached b");
    assert_eq!(
        ASYNC_BODY_RUNS.load(Ordering::SeqCst),
        2,
        "the open call skipped the body"
    );
    assert_eq!(
        tally("fallback-async"),
        Tally::calls(2).successes(1).failures(1).rejected(1)
    );
}

#[circuit_breaker(group = "half-open-full", registry = &HALF, threshold = 1, open_ms = 100)]
async fn slow_probe(
    gate: Option<tokio::sync::oneshot::Receiver<()>>,
    fail: bool,
) -> Result<(), AppError> {
    after_gate(gate, fail).await
}

#[tokio::test]
async fn a_second_call_while_the_only_probe_is_out_is_refused_as_half_open_full() {
    let _ = slow_probe(None, true).await;
    HALF.clock.advance(Duration::from_millis(100));
    let (open_gate, gate) = tokio::sync::oneshot::channel();
    let probe = tokio::spawn(slow_probe(Some(gate), false));
    while HALF.metrics("half-open-full").probes_in_flight == 0 {
        tokio::task::yield_now().await;
    }
    let Err(AppError::Open(open)) = slow_probe(None, false).await else {
        panic!("the probe slot is taken");
    };
    assert_eq!(open.reason(), OpenReason::HalfOpenFull);
    open_gate.send(()).unwrap();
    probe.await.unwrap().unwrap();
    assert_eq!(HALF.metrics("half-open-full").state, State::Closed);
}
