//! `#[circuit_breaker(retry = N, retry_on = path)]`: which errors are retried
//! is decided apart from which count as failures, so a `429` (an error
//! `is_failure` ignores, whose `RetryAfterHint` says when) is retried after
//! its wait and leaves the breaker closed, while an error `retry_on` declines
//! ends the call at once. A wait longer than the retry's cap on a delay holds
//! the group instead: the call returns at once, and no caller asks again
//! before the wait ends.

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::LazyLock;
use std::time::Duration;

use breakerbox::{
    circuit_breaker, clock::Clock, hold::HoldScope, CircuitOpen, ManualClock, Registry,
    RetryAfterHint, State,
};

#[derive(Debug, PartialEq)]
enum ApiError {
    /// A `429`: the server is well and asks to wait.
    TooMany(Duration),
    /// A `400`: repeating it changes nothing.
    BadRequest,
    Open,
}

impl From<CircuitOpen> for ApiError {
    fn from(_: CircuitOpen) -> Self {
        ApiError::Open
    }
}

impl RetryAfterHint for ApiError {
    fn retry_after(&self) -> Option<Duration> {
        match self {
            ApiError::TooMany(wait) => Some(*wait),
            _ => None,
        }
    }
}

/// Neither a `429` nor a `400` says the server is unwell.
fn server_side(_: &ApiError) -> bool {
    false
}

/// A `429` is worth repeating after its wait; a `400` is not.
fn retryable(e: &ApiError) -> bool {
    matches!(e, ApiError::TooMany(_))
}

struct Site {
    clock: ManualClock,
    registry: Registry,
}

static SITE: LazyLock<Site> = LazyLock::new(|| {
    let clock = ManualClock::new();
    Site {
        registry: Registry::with_clock(clock.clone()),
        clock,
    }
});
static CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "retry-on-429", registry = &SITE.registry, threshold = 1, retry = 2,
    idempotent = true, retry_max_delay_ms = 5000, is_failure = server_side, retry_on = retryable)]
fn quote(symbol: &str) -> Result<String, ApiError> {
    match CALLS.fetch_add(1, SeqCst) {
        0 => Err(ApiError::TooMany(Duration::from_secs(3))),
        1 => Ok(symbol.to_uppercase()),
        _ => Err(ApiError::BadRequest),
    }
}

#[test]
fn a_429_is_retried_after_its_wait_and_leaves_the_breaker_closed() {
    assert_eq!(quote("abc").as_deref(), Ok("ABC"));
    assert_eq!(CALLS.load(SeqCst), 2);
    assert!(
        SITE.clock.now_nanos() >= 3_000_000_000,
        "waited at least the server's 3 s"
    );
    let breaker = SITE.registry.get("retry-on-429").unwrap();
    let m = breaker.metrics();
    assert_eq!(
        (m.failures, m.ignored, m.successes, m.retries),
        (0, 1, 1, 1)
    );
    assert_eq!(
        breaker.state(),
        State::Closed,
        "threshold 1, and still closed"
    );

    // An error `retry_on` declines ends the call at once, not a failure.
    assert_eq!(quote("abc"), Err(ApiError::BadRequest));
    assert_eq!(CALLS.load(SeqCst), 3, "sent once");
    assert_eq!(breaker.metrics().retries, 1);
    assert_eq!(breaker.state(), State::Closed);
}

static LONG: LazyLock<Site> = LazyLock::new(|| {
    let clock = ManualClock::new();
    Site {
        registry: Registry::with_clock(clock.clone()),
        clock,
    }
});
static LONG_CALLS: AtomicU32 = AtomicU32::new(0);
static FAILING_CALLS: AtomicU32 = AtomicU32::new(0);

/// A quota that resets in a minute, past the retry's 1 s cap on a delay.
#[circuit_breaker(group = "wait-past-the-cap", registry = &LONG.registry, threshold = 1,
    retry = 2, idempotent = true, retry_max_delay_ms = 1000, is_failure = server_side,
    retry_on = retryable)]
fn search(term: &str) -> Result<String, ApiError> {
    LONG_CALLS.fetch_add(1, SeqCst);
    let _ = term;
    Err(ApiError::TooMany(Duration::from_secs(60)))
}

/// The same wait on an error that counts as a failure.
#[circuit_breaker(group = "failure-waiting-past-the-cap", registry = &LONG.registry,
    threshold = 1, retry = 2, idempotent = true, retry_max_delay_ms = 1000)]
fn translate(term: &str) -> Result<String, ApiError> {
    FAILING_CALLS.fetch_add(1, SeqCst);
    let _ = term;
    Err(ApiError::TooMany(Duration::from_secs(60)))
}

#[test]
fn a_wait_past_the_retrys_cap_holds_the_group_instead_of_waiting_or_failing() {
    for (group, call, calls) in [
        ("wait-past-the-cap", search as fn(&str) -> _, &LONG_CALLS),
        ("failure-waiting-past-the-cap", translate, &FAILING_CALLS),
    ] {
        let start = LONG.clock.now_nanos();
        assert_eq!(
            call("abc"),
            Err(ApiError::TooMany(Duration::from_secs(60))),
            "{group}: the server's answer, at once"
        );
        assert_eq!(
            LONG.clock.now_nanos(),
            start,
            "{group}: no wait in the call"
        );
        assert_eq!(calls.load(SeqCst), 1, "{group}: sent once");

        // Every later caller is refused at once, for the rest of the minute.
        assert_eq!(call("abc"), Err(ApiError::Open), "{group}");
        assert_eq!(calls.load(SeqCst), 1, "{group}: not sent again");
        let breaker = LONG.registry.get(group).unwrap();
        let held = breaker.held().expect("held");
        assert!(
            held.remaining >= Duration::from_secs(60),
            "{group}: {held:?}"
        );
        let m = breaker.metrics();
        assert_eq!(
            (m.failures, m.ignored, m.holds.key, m.holds.group),
            (0, 1, 0, 1),
            "{group}: the group is held"
        );
        assert_eq!(held.scope, HoldScope::Group, "{group}");
        assert_eq!(
            breaker.state(),
            State::Closed,
            "{group}: threshold 1, no trip"
        );

        LONG.clock.advance(held.remaining);
        assert_eq!(call("abc"), Err(ApiError::TooMany(Duration::from_secs(60))));
        assert_eq!(
            calls.load(SeqCst),
            2,
            "{group}: sent again once the hold ended"
        );
    }
}
