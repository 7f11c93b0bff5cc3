//! Questions never change a breaker; only `try_acquire` claims.
//!
//! Regression shape: a breaker whose "may I?" took the half-open probe slot, and
//! whose caller then decided not to call, stayed half-open forever with nothing
//! left to report an outcome.
mod support;

use std::time::Duration;

use breaker_core::{Registry, State};
use support::{config, manual, ms, trip};

#[test]
fn asking_would_admit_a_thousand_times_after_the_open_duration_strands_nothing() {
    let (breaker, clock) = manual(config(1, 5_000));
    trip(&breaker);
    clock.advance(ms(5_000));
    let before = breaker.metrics();
    for _ in 0..1_000 {
        assert!(breaker.would_admit());
        assert_eq!(breaker.state(), State::Open);
        let _ = breaker.metrics();
    }
    // The caller walks away. Ten minutes later a real call comes.
    clock.advance(Duration::from_secs(600));
    assert_eq!(breaker.metrics(), {
        let mut m = before.clone();
        m.retry_after = Some(Duration::ZERO);
        m
    });
    let probe = breaker.try_acquire().expect("still admitted as the probe");
    assert!(probe.is_probe());
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn would_admit_is_false_while_open_and_when_half_open_is_full() {
    let (breaker, clock) = manual(config(1, 100));
    assert!(breaker.would_admit());
    trip(&breaker);
    assert!(!breaker.would_admit());
    clock.advance(ms(100));
    let probe = breaker.try_acquire().unwrap();
    assert!(!breaker.would_admit(), "the only probe slot is taken");
    drop(probe); // abandoned: the slot comes back
    assert!(breaker.would_admit());
    assert_eq!(breaker.state(), State::HalfOpen);
}

#[test]
fn registry_inspection_is_pure() {
    let clock = breaker_core::ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let config = config(1, 100);
    registry
        .breaker("db", &config)
        .try_acquire()
        .unwrap()
        .failure();
    clock.advance(ms(200));
    let first = registry.snapshot();
    for _ in 0..100 {
        assert_eq!(registry.snapshot(), first);
        assert_eq!(registry.groups(), vec!["db"]);
        assert!(registry.get("db").unwrap().would_admit());
    }
    assert_eq!(registry.get("db").unwrap().state(), State::Open);
}
