//! A fallback answers the ways out its `fallback_on` names: refusals by default,
//! and with `fallback_on = "failure"` timeouts and the errors the classifier
//! counts as failures too, never an ignored error or a panic. `fallback =
//! path(why)` tells it which way out it answers. Every outcome is recorded
//! before the fallback runs: its value is never counted, in any form.

mod support;

use std::future::{pending, ready, Future, Ready};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{LazyLock, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breakerbox::timeout::Timer;
use breakerbox::{circuit_breaker, Fallback, OpenReason, State};
use support::{AppError, Isolated, Tally};

/// Which way out a fallback answered, as it saw it.
#[derive(Debug, PartialEq, Eq)]
enum Saw {
    Refused(OpenReason),
    TimedOut(Duration),
    Failed(AppError),
}

fn saw(why: Fallback<AppError>) -> Saw {
    match why {
        Fallback::Refused(open) => Saw::Refused(open.reason()),
        Fallback::TimedOut(late) => Saw::TimedOut(late.after()),
        Fallback::Failed(error) => Saw::Failed(error),
        other => panic!("a way out these tests do not make: {other:?}"),
    }
}

/// `BadRequest` is the caller's mistake: ignored, neither success nor failure.
fn server_side(error: &AppError) -> bool {
    !matches!(error, AppError::BadRequest)
}

/// What the body does this call.
#[derive(Clone, Copy)]
enum Body {
    Ok,
    Down,
    BadRequest,
    Panic,
    /// Never finishes (async only): the deadline ends it.
    Hang,
}

fn run(body: Body) -> Result<String, AppError> {
    match body {
        Body::Ok => Ok("live".to_owned()),
        Body::Down => Err(AppError::Down),
        Body::BadRequest => Err(AppError::BadRequest),
        Body::Panic => panic!("the body panicked"),
        Body::Hang => unreachable!("a sync body cannot hang here"),
    }
}

/// Polls `future` to completion on a no-op waker; the bodies and timers of this
/// file are always ready or never.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

async fn run_async(body: Body) -> Result<String, AppError> {
    if let Body::Hang = body {
        pending::<()>().await;
    }
    run(body)
}

/// A deadline that has always passed: a call that is not ready at its first
/// poll times out.
struct AlreadyDue;
impl Timer for AlreadyDue {
    type Sleep = Ready<()>;
    fn sleep(&self, _: Duration) -> Ready<()> {
        ready(())
    }
}

static SEEN: Mutex<Vec<(String, Saw)>> = Mutex::new(Vec::new());

fn seen() -> Vec<(String, Saw)> {
    std::mem::take(&mut *SEEN.lock().unwrap())
}

fn cached(id: &str, _body: Body, why: Fallback<AppError>) -> Result<String, AppError> {
    SEEN.lock().unwrap().push((id.to_owned(), saw(why)));
    Ok(format!("cached {id}"))
}

async fn cached_async(id: &str, body: Body, why: Fallback<AppError>) -> Result<String, AppError> {
    cached(id, body, why)
}

// Sync, unkeyed: `fallback = path(why), fallback_on = "failure"`.

static SYNC: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(
    group = "why-sync", registry = &SYNC, threshold = 2, open_ms = 1_000,
    fallback = cached(why), fallback_on = "failure", is_failure = server_side
)]
fn fetch(id: &str, body: Body) -> Result<String, AppError> {
    run(body)
}

#[test]
fn a_sync_failure_fallback_answers_failures_and_refusals_and_is_never_counted() {
    let tally = || SYNC.tally("why-sync");
    assert_eq!(fetch("a", Body::Ok).unwrap(), "live");
    assert_eq!(tally(), Tally::calls(1).successes(1));
    assert!(seen().is_empty(), "a success calls no fallback");

    // A failure: recorded as one, then answered; the fallback's `Ok` is no success.
    assert_eq!(fetch("b", Body::Down).unwrap(), "cached b");
    assert_eq!(seen(), [("b".to_owned(), Saw::Failed(AppError::Down))]);
    assert_eq!(tally(), Tally::calls(2).successes(1).failures(1));

    // An ignored error is the fn's answer, as it is: no fallback.
    assert_eq!(fetch("c", Body::BadRequest), Err(AppError::BadRequest));
    assert!(seen().is_empty(), "an ignored error calls no fallback");
    assert_eq!(tally(), Tally::calls(3).successes(1).failures(1).ignored(1));

    // A panic is a failure and goes on; the fallback does not run.
    let panicked = catch_unwind(AssertUnwindSafe(|| fetch("d", Body::Panic)));
    assert!(panicked.is_err(), "the panic propagates");
    assert!(seen().is_empty(), "a panic calls no fallback");
    assert_eq!(tally(), Tally::calls(4).successes(1).failures(2).ignored(1));
    assert_eq!(
        SYNC.metrics("why-sync").state,
        State::Open,
        "the second failure tripped"
    );

    // A refusal: the body does not run, the fallback gets the `CircuitOpen`.
    assert_eq!(fetch("e", Body::Panic).unwrap(), "cached e");
    assert_eq!(seen(), [("e".to_owned(), Saw::Refused(OpenReason::Open))]);
    assert_eq!(
        tally(),
        Tally::calls(4)
            .successes(1)
            .failures(2)
            .ignored(1)
            .rejected(1)
    );

    // The probe's fallback answer (after a failure) is no success: it reopens.
    SYNC.clock.advance(Duration::from_secs(1));
    assert_eq!(fetch("f", Body::Down).unwrap(), "cached f");
    assert_eq!(seen(), [("f".to_owned(), Saw::Failed(AppError::Down))]);
    assert_eq!(
        SYNC.metrics("why-sync").state,
        State::Open,
        "the failed probe reopened"
    );
}

// Refusals only (the default), with `why`: a failure is the fn's own answer.

static REFUSALS: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(group = "why-refusals", registry = &REFUSALS, threshold = 2, fallback = cached(why))]
fn refusals_only(id: &str, body: Body) -> Result<String, AppError> {
    run(body)
}

#[test]
fn a_refusal_fallback_with_why_leaves_failures_to_the_fn_and_hears_the_reason() {
    assert_eq!(refusals_only("a", Body::Down), Err(AppError::Down));
    assert!(
        seen().is_empty(),
        "a refusal fallback does not answer failures"
    );
    let _ = refusals_only("a", Body::Down);
    REFUSALS.force_open("why-refusals").unwrap();
    assert_eq!(refusals_only("b", Body::Ok).unwrap(), "cached b");
    assert_eq!(
        seen(),
        [("b".to_owned(), Saw::Refused(OpenReason::ForcedOpen))]
    );
    assert_eq!(
        REFUSALS.tally("why-refusals"),
        Tally::calls(2).failures(2).rejected(1)
    );
}

// The same arguments alone (no `why`), answering failures.

static PLAIN: LazyLock<Isolated> = LazyLock::new(Isolated::new);
static PLAIN_CALLS: AtomicU32 = AtomicU32::new(0);

fn stale(id: &str, page: u32, _fail: bool) -> Result<String, AppError> {
    PLAIN_CALLS.fetch_add(1, Ordering::SeqCst);
    Ok(format!("stale {id} p{page}"))
}

#[circuit_breaker(
    group = "plain-failure", registry = &PLAIN, threshold = 2, fallback = stale,
    fallback_on = "failure"
)]
fn plain(id: &str, page: u32, fail: bool) -> Result<String, AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(format!("live {id} p{page}"))
    }
}

#[test]
fn a_failure_fallback_without_why_gets_the_same_arguments() {
    assert_eq!(plain("a", 1, false).unwrap(), "live a p1");
    assert_eq!(plain("a", 2, true).unwrap(), "stale a p2");
    assert_eq!(PLAIN_CALLS.load(Ordering::SeqCst), 1);
    assert_eq!(
        PLAIN.tally("plain-failure"),
        Tally::calls(2).successes(1).failures(1)
    );
    let _ = plain("a", 3, true);
    assert_eq!(plain("a", 4, false).unwrap(), "stale a p4", "refused now");
    assert_eq!(PLAIN_CALLS.load(Ordering::SeqCst), 3);
    assert_eq!(
        PLAIN.tally("plain-failure"),
        Tally::calls(3).successes(1).failures(2).rejected(1)
    );
}

// A method: a bare name is `Self::name`, and it gets the receiver first.

static METHOD: LazyLock<Isolated> = LazyLock::new(Isolated::new);

struct Catalog {
    cache: String,
}

impl Catalog {
    #[circuit_breaker(
        group = "why-method", registry = &METHOD, threshold = 1,
        fallback = cached(why), fallback_on = "failure"
    )]
    fn page(&self, n: u32) -> Result<String, AppError> {
        if n == 0 {
            Err(AppError::Down)
        } else {
            Ok(format!("live page {n}"))
        }
    }

    fn cached(&self, n: u32, why: Fallback<AppError>) -> Result<String, AppError> {
        Ok(format!("{} page {n} ({:?})", self.cache, saw(why)))
    }
}

#[test]
fn a_method_fallback_gets_the_receiver_the_arguments_and_why() {
    let catalog = Catalog {
        cache: "cached".to_owned(),
    };
    assert_eq!(catalog.page(1).unwrap(), "live page 1");
    assert_eq!(catalog.page(0).unwrap(), "cached page 0 (Failed(Down))");
    assert_eq!(catalog.page(2).unwrap(), "cached page 2 (Refused(Open))");
    assert_eq!(
        METHOD.tally("why-method"),
        Tally::calls(2).successes(1).failures(1).rejected(1)
    );
}

// Async, unkeyed: the deadline is a way out too.

static ASYNC: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(
    group = "why-async", registry = &ASYNC, threshold = 3, open_ms = 1_000, timeout_ms = 250,
    timer = AlreadyDue, fallback = cached_async(why), fallback_on = "failure",
    is_failure = server_side
)]
async fn fetch_async(id: &str, body: Body) -> Result<String, AppError> {
    run_async(body).await
}

#[test]
fn an_async_failure_fallback_answers_timeouts_failures_and_refusals() {
    let tally = || ASYNC.tally("why-async");
    assert_eq!(block_on(fetch_async("a", Body::Ok)).unwrap(), "live");
    assert_eq!(block_on(fetch_async("b", Body::Down)).unwrap(), "cached b");
    assert_eq!(seen(), [("b".to_owned(), Saw::Failed(AppError::Down))]);
    assert_eq!(tally(), Tally::calls(2).successes(1).failures(1));

    // A timeout: the call is dropped, counted a failure, then answered.
    assert_eq!(block_on(fetch_async("c", Body::Hang)).unwrap(), "cached c");
    assert_eq!(
        seen(),
        [("c".to_owned(), Saw::TimedOut(Duration::from_millis(250)))]
    );
    assert_eq!(tally(), Tally::calls(3).successes(1).failures(2));
    assert_eq!(ASYNC.metrics("why-async").timeouts, 1);

    assert_eq!(
        block_on(fetch_async("d", Body::BadRequest)),
        Err(AppError::BadRequest)
    );
    let panicked = catch_unwind(AssertUnwindSafe(|| block_on(fetch_async("e", Body::Panic))));
    assert!(panicked.is_err(), "the panic propagates");
    assert!(
        seen().is_empty(),
        "neither an ignored error nor a panic calls the fallback"
    );
    assert_eq!(tally(), Tally::calls(5).successes(1).failures(3).ignored(1));
    assert_eq!(ASYNC.metrics("why-async").state, State::Open);

    assert_eq!(block_on(fetch_async("f", Body::Ok)).unwrap(), "cached f");
    assert_eq!(seen(), [("f".to_owned(), Saw::Refused(OpenReason::Open))]);
    assert_eq!(
        tally(),
        Tally::calls(5)
            .successes(1)
            .failures(3)
            .ignored(1)
            .rejected(1)
    );
}

// Async, refusals only, without `why`: a timeout is the fn's `Err(TimedOut)`.

static ASYNC_REFUSALS: LazyLock<Isolated> = LazyLock::new(Isolated::new);
static ASYNC_REFUSAL_CALLS: AtomicU32 = AtomicU32::new(0);

#[derive(Debug)]
enum LateError {
    Open,
    Late,
    Down,
}

impl From<breakerbox::CircuitOpen> for LateError {
    fn from(_: breakerbox::CircuitOpen) -> Self {
        LateError::Open
    }
}

impl From<breakerbox::TimedOut> for LateError {
    fn from(_: breakerbox::TimedOut) -> Self {
        LateError::Late
    }
}

async fn stand_in(_hang: bool, _fail: bool) -> Result<u32, LateError> {
    ASYNC_REFUSAL_CALLS.fetch_add(1, Ordering::SeqCst);
    Ok(0)
}

#[circuit_breaker(
    group = "async-refusals", registry = &ASYNC_REFUSALS, threshold = 2, timeout_ms = 250,
    timer = AlreadyDue, fallback = stand_in
)]
async fn slow(hang: bool, fail: bool) -> Result<u32, LateError> {
    if hang {
        pending::<()>().await;
    }
    if fail {
        return Err(LateError::Down);
    }
    Ok(1)
}

#[test]
fn an_async_refusal_fallback_leaves_timeouts_and_failures_to_the_fn() {
    assert!(matches!(block_on(slow(true, false)), Err(LateError::Late)));
    assert!(matches!(block_on(slow(false, true)), Err(LateError::Down)));
    assert_eq!(ASYNC_REFUSAL_CALLS.load(Ordering::SeqCst), 0);
    assert_eq!(
        block_on(slow(false, false)).unwrap(),
        0,
        "refused: the fallback's value"
    );
    assert_eq!(ASYNC_REFUSAL_CALLS.load(Ordering::SeqCst), 1);
    assert_eq!(
        ASYNC_REFUSALS.tally("async-refusals"),
        Tally::calls(2).failures(2).rejected(1)
    );
}

// Keyed, sync and async: each key's way out is recorded against that key.

static KEYED: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(
    group = "why-keyed", key = host, registry = &KEYED, threshold = 1,
    fallback = cached(why), fallback_on = "failure"
)]
fn by_host(host: &str, body: Body) -> Result<String, AppError> {
    run(body)
}

#[circuit_breaker(
    group = "why-keyed-async", key = host, registry = &KEYED, threshold = 1, timeout_ms = 250,
    timer = AlreadyDue, fallback = cached_async(why), fallback_on = "failure"
)]
async fn by_host_async(host: &str, body: Body) -> Result<String, AppError> {
    run_async(body).await
}

fn key_tally(group: &str, key: &str) -> Tally {
    let hosts = KEYED.get_keyed::<String>(group).unwrap().unwrap();
    Tally::of(&hosts.get(key).expect("the key was used").metrics())
}

#[test]
fn a_keyed_failure_fallback_answers_per_key_and_is_never_counted() {
    assert_eq!(by_host("down", Body::Down).unwrap(), "cached down");
    assert_eq!(by_host("down", Body::Ok).unwrap(), "cached down");
    assert_eq!(by_host("up", Body::Ok).unwrap(), "live");
    assert_eq!(
        seen(),
        [
            ("down".to_owned(), Saw::Failed(AppError::Down)),
            ("down".to_owned(), Saw::Refused(OpenReason::Open)),
        ]
    );
    assert_eq!(
        key_tally("why-keyed", "down"),
        Tally::calls(1).failures(1).rejected(1)
    );
    assert_eq!(key_tally("why-keyed", "up"), Tally::calls(1).successes(1));

    assert_eq!(
        block_on(by_host_async("slow", Body::Hang)).unwrap(),
        "cached slow"
    );
    assert_eq!(
        block_on(by_host_async("slow", Body::Ok)).unwrap(),
        "cached slow"
    );
    assert_eq!(block_on(by_host_async("fine", Body::Ok)).unwrap(), "live");
    assert_eq!(
        seen(),
        [
            ("slow".to_owned(), Saw::TimedOut(Duration::from_millis(250))),
            ("slow".to_owned(), Saw::Refused(OpenReason::Open)),
        ]
    );
    assert_eq!(
        key_tally("why-keyed-async", "slow"),
        Tally::calls(1).failures(1).rejected(1)
    );
    assert_eq!(
        key_tally("why-keyed-async", "fine"),
        Tally::calls(1).successes(1)
    );
}

// A full bulkhead is a refusal with its own reason.

static BULKHEAD: LazyLock<Isolated> = LazyLock::new(Isolated::new);
static HOLD: AtomicBool = AtomicBool::new(false);

fn cached_crowded(id: &str, why: Fallback<AppError>) -> Result<String, AppError> {
    cached(id, Body::Ok, why)
}

#[circuit_breaker(
    group = "why-bulkhead", registry = &BULKHEAD, max_concurrent = 1,
    fallback = cached_crowded(why), fallback_on = "failure"
)]
fn crowded(id: &str) -> Result<String, AppError> {
    if HOLD.swap(false, Ordering::SeqCst) {
        // A second call while this one holds the only slot.
        return crowded("inner");
    }
    Ok(format!("live {id}"))
}

#[test]
fn a_full_bulkhead_tells_the_fallback_its_reason() {
    HOLD.store(true, Ordering::SeqCst);
    assert_eq!(crowded("outer").unwrap(), "cached inner");
    assert_eq!(
        seen(),
        [("inner".to_owned(), Saw::Refused(OpenReason::BulkheadFull))]
    );
    assert_eq!(
        BULKHEAD.tally("why-bulkhead"),
        Tally::calls(1).successes(1).rejected(1)
    );
    assert_eq!(BULKHEAD.metrics("why-bulkhead").bulkhead_rejected, 1);
}
