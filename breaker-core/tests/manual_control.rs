//! Force open, force closed and reset, each visible in state and metrics.
mod support;

use breaker_core::{OpenReason, State};
use support::{config, manual, trip};

#[test]
fn force_open_refuses_everything_until_reset() {
    let (breaker, clock) = manual(config(3, 100));
    breaker.force_open();
    assert_eq!(breaker.state(), State::ForcedOpen);
    clock.advance(std::time::Duration::from_secs(3600));
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::ForcedOpen);
    assert_eq!(refused.retry_after(), None);
    assert_eq!(breaker.metrics().state, State::ForcedOpen);
    breaker.reset();
    assert!(breaker.try_acquire().is_ok());
}

#[test]
fn force_closed_admits_everything_and_never_trips() {
    let (breaker, _clock) = manual(config(1, 100));
    breaker.force_closed();
    for _ in 0..10 {
        breaker.try_acquire().unwrap().failure();
    }
    assert_eq!(breaker.state(), State::ForcedClosed);
    let m = breaker.metrics();
    assert_eq!(m.failures, 10);
    assert_eq!(m.times_opened, 0);
}

#[test]
fn reset_closes_an_open_breaker_and_starts_a_new_generation() {
    let (breaker, _clock) = manual(config(1, 100_000));
    trip(&breaker);
    let opened = breaker.metrics().generation;
    breaker.reset();
    assert_eq!(breaker.state(), State::Closed);
    assert!(breaker.metrics().generation > opened);
    assert_eq!(breaker.metrics().consecutive_failures, 0);
}
