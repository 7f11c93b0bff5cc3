//! The failure-policy keys reach the core's window policies unchanged: failures
//! that never run consecutively still trip a rate window declared on the attribute.

mod support;

use breakerbox::{circuit_breaker, State};
use support::{state, AppError, REG};

#[circuit_breaker(
    group = "window-count",
    registry = &REG,
    window_calls = 4,
    failure_rate = 0.5,
    min_calls = 4
)]
fn alternating(fail: bool) -> Result<(), AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(())
    }
}

#[test]
fn scattered_failures_trip_a_count_window_at_its_rate() {
    assert_eq!(alternating(true), Err(AppError::Down));
    assert_eq!(alternating(false), Ok(()));
    assert_eq!(alternating(true), Err(AppError::Down));
    assert_eq!(
        state("window-count"),
        State::Closed,
        "3 calls: below min_calls"
    );
    assert_eq!(alternating(false), Ok(()));
    assert_eq!(
        state("window-count"),
        State::Open,
        "2 of 4 failed: 50% trips"
    );
    assert!(alternating(false).unwrap_err().is_open());
}

#[circuit_breaker(group = "window-consecutive", registry = &REG, threshold = 3)]
fn consecutive(fail: bool) -> Result<(), AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(())
    }
}

#[test]
fn the_same_scattered_pattern_never_trips_a_consecutive_threshold() {
    for fail in [true, false, true, false, true, false] {
        let _ = consecutive(fail);
    }
    assert_eq!(state("window-consecutive"), State::Closed);
}
