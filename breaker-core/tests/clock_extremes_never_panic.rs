//! Time arithmetic saturates: clock jumps, steps back and huge durations behave as documented.
mod support;

use std::time::Duration;

use breaker_core::{Config, State};
use support::{config, manual, ms, trip};

const TEN_YEARS: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

#[test]
fn a_clock_jumping_ten_years_ahead_lets_the_probe_go_and_closes_normally() {
    let (breaker, clock) = manual(config(1, 1_000));
    trip(&breaker);
    clock.advance(TEN_YEARS);
    breaker.try_acquire().unwrap().success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_clock_stepping_back_keeps_the_circuit_open_never_shorter() {
    let (breaker, clock) = manual(config(1, 1_000));
    clock.set_nanos(10_000_000_000);
    trip(&breaker);
    clock.set_nanos(0);
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.retry_after(), Some(Duration::from_millis(11_000)));
    clock.set_nanos(11_000_000_000);
    assert!(breaker.try_acquire().is_ok());
}

#[test]
fn open_ms_near_u64_max_saturates_instead_of_wrapping() {
    let (breaker, clock) = manual(
        Config::builder()
            .threshold(1)
            .open(Duration::from_millis(u64::MAX - 1))
            .backoff(1e300)
            .build()
            .unwrap(),
    );
    clock.set_nanos(u64::MAX / 2);
    trip(&breaker);
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(
        refused.retry_after(),
        Some(Duration::from_nanos(u64::MAX - u64::MAX / 2))
    );
    clock.set_nanos(u64::MAX - 1);
    assert!(breaker.try_acquire().is_err());
    // Durations saturate at the end of the clock's range: there, every open
    // duration has elapsed.
    clock.set_nanos(u64::MAX);
    let probe = breaker
        .try_acquire()
        .expect("the end of time admits the probe");
    probe.failure(); // backoff of 1e300 on an already saturated duration
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(breaker.metrics().retry_after, Some(Duration::ZERO));
}

#[test]
fn a_probe_lease_at_the_end_of_time_does_not_overflow() {
    let (breaker, clock) = manual(
        Config::builder()
            .threshold(1)
            .open(Duration::from_millis(1))
            .probe_timeout(Duration::from_millis(u64::MAX))
            .build()
            .unwrap(),
    );
    trip(&breaker);
    clock.advance(ms(1));
    let _probe = breaker.try_acquire().unwrap();
    clock.set_nanos(u64::MAX - 1);
    assert!(breaker.try_acquire().is_err());
    assert!(!breaker.would_admit());
}
