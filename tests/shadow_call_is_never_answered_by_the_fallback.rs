//! A call shadow mode admits in place of a refusal returns what its body
//! returns: a failure fallback (`fallback_on = "failure"`) answers the failures
//! of the group's ordinary calls, never one of such a call, nor its deadline.
//! [`Permit::is_shadow_call`](breakerbox::breaker::Permit::is_shadow_call)
//! tells such a permit apart.

mod support;

use std::future::{ready, Future, Ready};
use std::pin::{pin, Pin};
use std::sync::LazyLock;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breakerbox::timeout::Timer;
use breakerbox::{circuit_breaker, Breaker, Config, Fallback, ManualClock, State};
use support::{AppError, Isolated, Tally};

/// What the fallback answered, by test: `"id: why"`.
static ANSWERED: Mutex<Vec<String>> = Mutex::new(Vec::new());
static ANSWERED_ASYNC: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn answered(of: &Mutex<Vec<String>>) -> Vec<String> {
    std::mem::take(&mut *of.lock().unwrap())
}

fn cached(id: &str, _fail: bool, why: Fallback<AppError>) -> Result<String, AppError> {
    ANSWERED.lock().unwrap().push(format!("{id}: {why:?}"));
    Ok(format!("cached {id}"))
}

static SYNC: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(
    group = "shadow-failure-sync", registry = &SYNC, threshold = 2, open_ms = 60_000,
    shadow = true, fallback = cached(why), fallback_on = "failure"
)]
fn fetch(id: &str, fail: bool) -> Result<String, AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(format!("live {id}"))
    }
}

#[test]
fn a_failing_shadow_call_returns_its_own_error_and_an_ordinary_failure_the_fallback() {
    // Closed: an ordinary call's failure is answered, as without shadow mode.
    assert_eq!(fetch("a", true).unwrap(), "cached a");
    assert_eq!(fetch("b", true).unwrap(), "cached b");
    assert_eq!(answered(&ANSWERED).len(), 2);
    assert_eq!(SYNC.metrics("shadow-failure-sync").state, State::Open);

    // Open: shadow mode admits the calls it would refuse; their failures are
    // theirs to return.
    assert!(matches!(fetch("c", true), Err(AppError::Down)));
    assert_eq!(fetch("d", false).unwrap(), "live d");
    assert!(
        answered(&ANSWERED).is_empty(),
        "the fallback answered a shadow call"
    );
    let m = SYNC.metrics("shadow-failure-sync");
    assert_eq!(m.shadow_refused, 2);
    assert_eq!(
        Tally::of(&m),
        Tally::calls(4).successes(1).failures(3),
        "both shadow calls are counted, and refused nothing"
    );
    assert_eq!(m.state, State::Open, "and moved nothing");
}

/// A deadline that has always passed: a call not ready at its first poll is
/// late.
struct AlreadyDue;
impl Timer for AlreadyDue {
    type Sleep = Ready<()>;
    fn sleep(&self, _: Duration) -> Ready<()> {
        ready(())
    }
}

/// Pending at its first poll, ready at the second: late for [`AlreadyDue`].
struct Slow(bool);
impl Future for Slow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

fn block_on<F: Future>(future: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

async fn cached_async(id: &str, _fail: bool, why: Fallback<AppError>) -> Result<String, AppError> {
    let why = match why {
        Fallback::TimedOut(late) => format!("timed out after {:?}", late.after()),
        other => format!("{other:?}"),
    };
    ANSWERED_ASYNC.lock().unwrap().push(format!("{id}: {why}"));
    Ok(format!("cached {id}"))
}

static ASYNC: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(
    group = "shadow-failure-async", registry = &ASYNC, threshold = 1, open_ms = 60_000,
    timeout_ms = 250, timer = AlreadyDue, shadow = true,
    fallback = cached_async(why), fallback_on = "failure"
)]
async fn fetch_async(id: &str, fail: bool) -> Result<String, AppError> {
    Slow(false).await;
    if fail {
        Err(AppError::Down)
    } else {
        Ok(format!("live {id}"))
    }
}

#[test]
fn a_late_shadow_call_returns_its_body_and_an_ordinary_late_call_the_fallback() {
    // Closed: the deadline ends an ordinary call, and the fallback answers.
    assert_eq!(block_on(fetch_async("a", false)).unwrap(), "cached a");
    assert_eq!(answered(&ANSWERED_ASYNC), ["a: timed out after 250ms"]);
    assert_eq!(ASYNC.metrics("shadow-failure-async").state, State::Open);

    // Open: the shadow call runs to its end, past the deadline, and returns
    // what its body does, failure or not.
    assert_eq!(block_on(fetch_async("b", false)).unwrap(), "live b");
    assert!(matches!(
        block_on(fetch_async("c", true)),
        Err(AppError::Down)
    ));
    assert!(
        answered(&ANSWERED_ASYNC).is_empty(),
        "the fallback answered a shadow call"
    );
    let m = ASYNC.metrics("shadow-failure-async");
    assert_eq!((m.shadow_refused, m.timeouts), (2, 1));
    assert_eq!(Tally::of(&m), Tally::calls(3).successes(1).failures(2));
    assert_eq!(m.state, State::Open);
}

#[test]
fn a_permit_tells_whether_shadow_mode_admitted_it_in_place_of_a_refusal() {
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(10))
        .shadow(true)
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("shadow-permit", config, ManualClock::new());
    let ordinary = breaker.try_acquire().unwrap();
    assert!(!ordinary.is_shadow_call(), "closed: an ordinary call");
    ordinary.failure();
    assert_eq!(breaker.state(), State::Open);
    let shadow = breaker.try_acquire().expect("shadow mode refuses nothing");
    assert!(shadow.is_shadow_call());
    shadow.failure();
    // Forced closed in shadow mode, nothing is refused: every call is ordinary.
    breaker.force_closed();
    let forced = breaker.try_acquire().unwrap();
    assert!(!forced.is_shadow_call());
    forced.success();
}

static RETRIED: LazyLock<Isolated> = LazyLock::new(Isolated::new);
static ANSWERED_RETRIED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn stand_in(_fail: bool, why: Fallback<AppError>) -> Result<String, AppError> {
    ANSWERED_RETRIED.lock().unwrap().push(format!("{why:?}"));
    Ok("stand-in".to_owned())
}

#[circuit_breaker(
    group = "shadow-failure-retried", registry = &RETRIED, threshold = 1, open_ms = 60_000,
    retry = 1, idempotent = true, shadow = true,
    fallback = stand_in(why), fallback_on = "failure"
)]
fn fetch_retried(fail: bool) -> Result<String, AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok("live".to_owned())
    }
}

#[test]
fn a_retried_call_whose_last_attempt_shadow_mode_admitted_returns_that_attempt() {
    // The first attempt fails and opens; the retry is a shadow call, whose
    // failure is the caller's answer.
    assert!(matches!(fetch_retried(true), Err(AppError::Down)));
    assert_eq!(RETRIED.metrics("shadow-failure-retried").state, State::Open);
    assert!(matches!(fetch_retried(true), Err(AppError::Down)));
    assert_eq!(fetch_retried(false).unwrap(), "live");
    assert!(
        answered(&ANSWERED_RETRIED).is_empty(),
        "the fallback answered a shadow call"
    );
    let m = RETRIED.metrics("shadow-failure-retried");
    assert_eq!(m.rejected, 0);
    assert!(m.shadow_refused >= 3, "{m:?}");
}
