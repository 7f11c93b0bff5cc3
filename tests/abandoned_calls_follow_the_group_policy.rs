//! `abandoned = "ignore" | "failure"`: what a call dropped before its verdict
//! counts as. A dependency that hangs while every caller gives up by its own
//! `tokio::time::timeout` trips a group that counts abandoned calls as
//! failures, and never one that ignores them (the default); an abandoned
//! probe reopens the first and frees its slot in the second.

use std::future::pending;
use std::sync::LazyLock;
use std::time::Duration;

use breakerbox::config::Abandoned;
use breakerbox::{circuit_breaker, Breaker, CircuitOpen, Config, Registry, State};

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

#[derive(Debug)]
enum LookupError {
    Open,
}

impl From<CircuitOpen> for LookupError {
    fn from(_: CircuitOpen) -> Self {
        LookupError::Open
    }
}

/// A dependency that takes the request and never answers.
async fn hang() -> Result<u32, LookupError> {
    pending::<()>().await;
    Ok(0)
}

#[circuit_breaker(group = "abandoned-failure", registry = &REGISTRY, threshold = 3,
    abandoned = "failure")]
async fn lookup_counting_abandoned() -> Result<u32, LookupError> {
    hang().await
}

#[circuit_breaker(group = "abandoned-ignore", registry = &REGISTRY, threshold = 3,
    abandoned = "ignore")]
async fn lookup_ignoring_abandoned() -> Result<u32, LookupError> {
    hang().await
}

#[circuit_breaker(group = "abandoned-default", registry = &REGISTRY, threshold = 3)]
async fn lookup_by_default() -> Result<u32, LookupError> {
    hang().await
}

#[tokio::test(start_paused = true)]
async fn a_hanging_dependency_behind_callers_own_timeouts_trips_only_the_failure_group() {
    let deadline = Duration::from_millis(200);
    // Ten callers of each group, each giving up on its own after 200 ms.
    for _ in 0..10 {
        let counted = tokio::time::timeout(deadline, lookup_counting_abandoned()).await;
        let ignored = tokio::time::timeout(deadline, lookup_ignoring_abandoned()).await;
        let default = tokio::time::timeout(deadline, lookup_by_default()).await;
        assert!(
            ignored.is_err() && default.is_err(),
            "they hang, and time out"
        );
        if let Ok(answer) = counted {
            assert!(matches!(answer, Err(LookupError::Open)), "{answer:?}");
        }
    }

    let failing = REGISTRY.get("abandoned-failure").unwrap();
    assert_eq!(failing.config().abandoned(), Abandoned::Failure);
    assert_eq!(
        failing.state(),
        State::Open,
        "three abandoned calls trip it"
    );
    let m = failing.metrics();
    assert_eq!((m.failures, m.abandoned, m.rejected), (3, 0, 7));

    for group in ["abandoned-ignore", "abandoned-default"] {
        let breaker = REGISTRY.get(group).unwrap();
        assert_eq!(breaker.config().abandoned(), Abandoned::Ignore);
        assert_eq!(breaker.state(), State::Closed, "{group} never trips");
        let m = breaker.metrics();
        assert_eq!((m.failures, m.abandoned, m.rejected), (0, 10, 0), "{group}");
    }
}

fn breaker(group: &'static str, abandoned: Abandoned) -> (Breaker, breakerbox::ManualClock) {
    let clock = breakerbox::ManualClock::new();
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(1))
        .abandoned(abandoned)
        .build()
        .unwrap();
    (Breaker::with_clock(group, config, clock.clone()), clock)
}

#[test]
fn an_abandoned_probe_reopens_under_failure_and_frees_its_slot_under_ignore() {
    for (abandoned, after) in [
        (Abandoned::Failure, State::Open),
        (Abandoned::Ignore, State::HalfOpen),
    ] {
        let (b, clock) = breaker("abandoned-probe", abandoned);
        b.try_acquire().unwrap().failure();
        clock.advance(Duration::from_secs(1));
        let probe = b.try_acquire().unwrap();
        assert!(probe.is_probe());
        drop(probe);
        assert_eq!(b.state(), after, "{abandoned}");
        assert_eq!(b.metrics().probes_in_flight, 0, "{abandoned}");
        assert_eq!(
            b.would_admit(),
            abandoned == Abandoned::Ignore,
            "{abandoned}"
        );
    }
}

#[test]
fn a_verdict_given_is_kept_when_abandoned_calls_are_failures() {
    let (b, _clock) = breaker("abandoned-verdicts", Abandoned::Failure);
    let call = b.try_acquire().unwrap();
    call.ignore();
    let call = b.try_acquire().unwrap();
    call.success();
    let m = b.metrics();
    assert_eq!((m.successes, m.ignored, m.failures), (1, 1, 0));
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn the_policy_changes_live_and_applies_to_the_next_call_dropped() {
    let (b, _clock) = breaker("abandoned-live", Abandoned::Ignore);
    drop(b.try_acquire().unwrap());
    assert_eq!(b.state(), State::Closed);
    let counting = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(1))
        .abandoned(Abandoned::Failure)
        .build()
        .unwrap();
    b.reconfigure(counting).unwrap();
    drop(b.try_acquire().unwrap());
    assert_eq!(b.state(), State::Open);
    let m = b.metrics();
    assert_eq!((m.abandoned, m.failures), (1, 1));
}
