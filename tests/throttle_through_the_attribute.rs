//! `#[circuit_breaker(throttle = K)]`: the fallback answers the throttle's
//! refusals like any refusal (never counted as a success); without one the
//! caller gets `CircuitOpen` saying `Throttled`; and a group that retries
//! (`retry = N`) never retries the throttle's refusal: the body does not run.

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::LazyLock;
use std::time::Duration;

use breakerbox::{circuit_breaker, CircuitOpen, ManualClock, OpenReason, Registry, RetryAfterHint};

#[derive(Debug, PartialEq)]
enum Error {
    Down,
    Open(OpenReason),
}

impl From<CircuitOpen> for Error {
    fn from(open: CircuitOpen) -> Self {
        Error::Open(open.reason())
    }
}

impl RetryAfterHint for Error {
    fn retry_after(&self) -> Option<Duration> {
        None
    }
}

/// One registry on its own manual clock per test.
struct Site {
    _clock: ManualClock,
    registry: Registry,
}

fn site() -> Site {
    let clock = ManualClock::new();
    Site {
        registry: Registry::with_clock(clock.clone()),
        _clock: clock,
    }
}

static WITH_FALLBACK: LazyLock<Site> = LazyLock::new(site);
static WITHOUT_FALLBACK: LazyLock<Site> = LazyLock::new(site);
static RETRYING: LazyLock<Site> = LazyLock::new(site);
static RETRIED_BODIES: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "throttle-fallback", registry = &WITH_FALLBACK.registry,
    threshold = 1_000, throttle = 1.0, fallback = cached)]
fn lookup(fail: bool) -> Result<&'static str, Error> {
    if fail {
        Err(Error::Down)
    } else {
        Ok("fresh")
    }
}

fn cached(_: bool) -> Result<&'static str, Error> {
    Ok("cached")
}

#[circuit_breaker(group = "throttle-refuse", registry = &WITHOUT_FALLBACK.registry,
    threshold = 1_000, throttle = 1.0, throttle_window_ms = 10_000)]
fn fetch(fail: bool) -> Result<&'static str, Error> {
    if fail {
        Err(Error::Down)
    } else {
        Ok("fresh")
    }
}

#[circuit_breaker(group = "throttle-retry", registry = &RETRYING.registry,
    threshold = 1_000, throttle = 1.0, retry = 3, idempotent = true)]
fn retried() -> Result<(), Error> {
    RETRIED_BODIES.fetch_add(1, SeqCst);
    Err(Error::Down)
}

#[test]
fn the_fallback_answers_the_calls_the_throttle_refuses() {
    let answers: Vec<_> = (0..100).map(|_| lookup(true)).collect();
    let cached = answers.iter().filter(|a| **a == Ok("cached")).count() as u64;
    assert!(cached > 50, "{cached} of 100 answered by the fallback");
    let m = WITH_FALLBACK
        .registry
        .get("throttle-fallback")
        .unwrap()
        .metrics();
    assert_eq!(m.throttled, cached);
    assert_eq!(m.successes, 0, "a fallback's answer is no success");
    assert_eq!(m.failures + m.throttled, 100);
}

#[test]
fn without_a_fallback_the_caller_is_told_throttled_and_when() {
    let refusal = (0..100)
        .find_map(|_| match fetch(true) {
            Err(Error::Open(reason)) => Some(reason),
            _ => None,
        })
        .expect("a throttled call");
    assert_eq!(refusal, OpenReason::Throttled);
    let breaker = WITHOUT_FALLBACK.registry.get("throttle-refuse").unwrap();
    assert_eq!(
        breaker.config().throttle_window(),
        Some(Duration::from_secs(10))
    );
    assert!(breaker.metrics().throttled > 0);
}

#[test]
fn a_retrying_group_never_retries_the_throttles_refusal() {
    // Each call runs its first attempt and three retries, all failing, until
    // the throttle refuses a first attempt: then the body does not run at all.
    let mut refused_calls = 0;
    for _ in 0..50 {
        let before = RETRIED_BODIES.load(SeqCst);
        match retried() {
            Err(Error::Open(OpenReason::Throttled)) => {
                refused_calls += 1;
                let ran = RETRIED_BODIES.load(SeqCst) - before;
                assert!(ran <= 3, "a throttled attempt ends the call: {ran} ran");
            }
            Err(Error::Down) => {}
            other => panic!("{other:?}"),
        }
    }
    assert!(refused_calls > 0);
    let m = RETRYING.registry.get("throttle-retry").unwrap().metrics();
    assert_eq!(m.calls, u64::from(RETRIED_BODIES.load(SeqCst)));
}
