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

#[test]
fn forcing_closed_again_tells_nothing_and_keeps_the_outcomes_in_flight() {
    let (breaker, _clock) = manual(config(3, 100));
    breaker.force_closed();
    let generation = breaker.metrics().generation;
    let in_flight = breaker.try_acquire().unwrap();
    breaker.force_closed();
    breaker.force_open();
    breaker.force_open();
    let m = breaker.metrics();
    assert_eq!(
        m.generation,
        generation + 1,
        "one new generation, the open's"
    );
    assert_eq!(m.transitions.total(), 2, "forced closed, then forced open");
    breaker.force_closed();
    breaker.force_closed();
    assert_eq!(breaker.metrics().transitions.total(), 3);
    // Admitted before the force open: stale. One admitted since is not.
    in_flight.failure();
    let late = breaker.try_acquire().unwrap();
    breaker.force_closed();
    late.failure();
    let m = breaker.metrics();
    assert_eq!((m.stale, m.failures), (1, 1));
}

#[test]
fn reset_of_a_closed_breaker_tells_nothing_clears_the_count_and_keeps_calls_in_flight() {
    let (breaker, _clock) = manual(config(3, 100));
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().failure();
    let generation = breaker.metrics().generation;
    let in_flight = breaker.try_acquire().unwrap();
    breaker.reset();
    let m = breaker.metrics();
    assert_eq!(m.state, State::Closed);
    assert_eq!(m.generation, generation, "no new generation");
    assert_eq!(m.transitions.total(), 0, "no closed -> closed");
    assert_eq!(m.consecutive_failures, 0, "the failure count is cleared");
    in_flight.failure();
    let m = breaker.metrics();
    assert_eq!((m.stale, m.failures), (0, 3), "the call in flight counts");
    assert_eq!(m.consecutive_failures, 1);
    assert_eq!(breaker.state(), State::Closed);
}
