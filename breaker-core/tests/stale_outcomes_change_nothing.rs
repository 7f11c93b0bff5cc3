//! Outcomes from an earlier generation are stale: counted, and nothing else.
mod common;

use breaker_core::{Config, State};
use common::{manual, ms, trip};

#[test]
fn a_slow_success_admitted_while_closed_does_not_close_a_breaker_that_opened_meanwhile() {
    let (breaker, _clock) = manual(
        Config::builder()
            .threshold(2)
            .open_ms(1_000)
            .build()
            .unwrap(),
    );
    let slow = breaker.try_acquire().unwrap();
    trip(&breaker);
    assert_eq!(breaker.state(), State::Open);
    slow.success();
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(breaker.metrics().stale, 1);
    assert_eq!(breaker.metrics().successes, 0);
}

#[test]
fn a_late_failure_from_before_the_trip_does_not_count_toward_the_next_closed_period() {
    let (breaker, clock) = manual(
        Config::builder()
            .threshold(2)
            .open_ms(1_000)
            .build()
            .unwrap(),
    );
    let late = breaker.try_acquire().unwrap();
    trip(&breaker);
    clock.advance(ms(1_000));
    breaker.try_acquire().unwrap().success(); // closes
    late.failure();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(
        breaker.state(),
        State::Closed,
        "only one failure belongs to this generation"
    );
    assert_eq!(breaker.metrics().consecutive_failures, 1);
}

#[test]
fn a_probe_from_an_earlier_half_open_episode_neither_closes_nor_frees_a_slot() {
    let (breaker, clock) = manual(
        Config::builder()
            .threshold(1)
            .open_ms(100)
            .half_open_probes(2)
            .backoff(1.0)
            .build()
            .unwrap(),
    );
    trip(&breaker);
    clock.advance(ms(100));
    let old_probe = breaker.try_acquire().unwrap();
    breaker.try_acquire().unwrap().failure(); // reopens: a new generation
    clock.advance(ms(100));
    let current = breaker.try_acquire().unwrap();
    let _second = breaker.try_acquire().unwrap();
    old_probe.success();
    assert_eq!(
        breaker.state(),
        State::HalfOpen,
        "the old probe does not close it"
    );
    assert_eq!(
        breaker.metrics().probes_in_flight,
        2,
        "nor frees a slot it does not hold"
    );
    assert!(breaker.try_acquire().is_err());
    current.success();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().stale, 1);
}

#[test]
fn an_outcome_after_a_manual_reset_is_stale() {
    let (breaker, _clock) = manual(Config::builder().threshold(1).build().unwrap());
    let permit = breaker.try_acquire().unwrap();
    breaker.reset();
    permit.failure();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().stale, 1);
}
