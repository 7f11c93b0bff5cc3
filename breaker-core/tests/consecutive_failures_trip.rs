//! The consecutive-failure policy: `threshold` N trips on the N-th consecutive failure.
mod support;

use std::cell::Cell;

use breaker_core::{CallError, State};
use support::{config, manual};

#[test]
fn two_failures_under_threshold_three_keep_it_closed_and_the_next_call_runs() {
    let (breaker, _clock) = manual(config(3, 1_000));
    let ran = Cell::new(0);
    for _ in 0..2 {
        let r = breaker.call(|| {
            ran.set(ran.get() + 1);
            Err::<(), _>("boom")
        });
        assert!(matches!(r, Err(CallError::Inner("boom"))));
    }
    assert_eq!(breaker.state(), State::Closed);
    let r = breaker.call(|| {
        ran.set(ran.get() + 1);
        Ok::<_, &str>(42)
    });
    assert_eq!(r, Ok(42));
    assert_eq!(
        ran.get(),
        3,
        "the call after N-1 failures must reach the function"
    );
}

#[test]
fn third_consecutive_failure_opens_and_the_next_call_does_not_run() {
    let (breaker, _clock) = manual(config(3, 1_000));
    let ran = Cell::new(0);
    for _ in 0..3 {
        let _ = breaker.call(|| {
            ran.set(ran.get() + 1);
            Err::<(), _>("boom")
        });
    }
    assert_eq!(breaker.state(), State::Open);
    let r = breaker.call(|| {
        ran.set(ran.get() + 1);
        Ok::<_, &str>(())
    });
    assert!(matches!(r, Err(CallError::Open(_))));
    assert_eq!(ran.get(), 3, "no call reaches the function while open");
    assert_eq!(breaker.metrics().times_opened, 1);
}

#[test]
fn any_success_resets_the_consecutive_count() {
    let (breaker, _clock) = manual(config(3, 1_000));
    for _ in 0..5 {
        breaker.try_acquire().unwrap().failure();
        breaker.try_acquire().unwrap().failure();
        assert_eq!(breaker.metrics().consecutive_failures, 2);
        breaker.try_acquire().unwrap().success();
        assert_eq!(breaker.metrics().consecutive_failures, 0);
    }
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_success_claimed_before_the_failures_still_resets_them() {
    let (breaker, _clock) = manual(config(3, 1_000));
    let early = breaker.try_acquire().unwrap(); // claimed with no failures counted
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().failure();
    early.success();
    assert_eq!(breaker.metrics().consecutive_failures, 0);
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(
        breaker.state(),
        State::Closed,
        "two failures since the reset"
    );
}

#[test]
fn a_failure_claimed_before_a_success_counts_after_its_reset() {
    let (breaker, _clock) = manual(config(2, 1_000));
    breaker.try_acquire().unwrap().failure();
    let late = breaker.try_acquire().unwrap();
    breaker.try_acquire().unwrap().success();
    late.failure();
    assert_eq!(breaker.metrics().consecutive_failures, 1);
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn the_largest_threshold_trips_on_exactly_its_failure() {
    let (breaker, _clock) = manual(config(breaker_core::Config::MAX_THRESHOLD, 1_000));
    for _ in 1..breaker_core::Config::MAX_THRESHOLD {
        breaker.try_acquire().unwrap().failure();
    }
    let m = breaker.metrics();
    assert_eq!(m.state, State::Closed);
    assert_eq!(
        m.consecutive_failures,
        breaker_core::Config::MAX_THRESHOLD - 1
    );
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn ignored_errors_neither_count_nor_reset() {
    let (breaker, _clock) = manual(config(2, 1_000));
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().ignore();
    assert_eq!(breaker.metrics().consecutive_failures, 1);
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn threshold_one_opens_on_the_first_failure() {
    let (breaker, _clock) = manual(config(1, 1_000));
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
}
