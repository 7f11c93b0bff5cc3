//! A permit records exactly one outcome, however it ends.
mod support;

use std::panic::{catch_unwind, RefUnwindSafe, UnwindSafe};

use breaker_core::{Breaker, Permit, State};
use support::{config, manual, ms, trip};

fn assert_send<T: Send>() {}

#[test]
fn permits_are_send() {
    assert_send::<Permit<'static>>();
    assert_send::<Breaker>();
}

#[test]
fn success_failure_and_ignore_each_count_once() {
    let (breaker, _clock) = manual(config(10, 1_000));
    breaker.try_acquire().unwrap().success();
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().ignore();
    let m = breaker.metrics();
    assert_eq!(m.calls, 3);
    assert_eq!(m.successes, 1);
    assert_eq!(m.failures, 1);
    assert_eq!(m.ignored, 1);
    assert_eq!(m.abandoned, 0);
}

#[test]
fn a_call_is_counted_when_it_ends_not_when_it_is_claimed() {
    let (breaker, _clock) = manual(config(10, 1_000));
    let permit = breaker.try_acquire().unwrap();
    assert_eq!(breaker.metrics().calls, 0, "in flight: in no counter yet");
    permit.success();
    assert_eq!(breaker.metrics().calls, 1);
    assert_eq!(breaker.metrics().successes, 1);
}

#[test]
fn a_permit_dropped_without_a_verdict_is_abandoned_and_counts_as_neither() {
    let (breaker, _clock) = manual(config(1, 1_000));
    drop(breaker.try_acquire().unwrap());
    let m = breaker.metrics();
    assert_eq!(m.abandoned, 1);
    assert_eq!(m.successes, 0);
    assert_eq!(m.failures, 0);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "an abandoned call is not a failure"
    );
}

#[test]
fn a_permit_dropped_while_panicking_is_a_failure_and_the_panic_goes_on() {
    let (breaker, _clock) = manual(config(1, 1_000));
    let result = catch_unwind(|| {
        let _permit = breaker.try_acquire().unwrap();
        panic!("user code blew up");
    });
    let payload = result.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"user code blew up"));
    assert_eq!(breaker.metrics().failures, 1);
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn a_panic_in_call_is_a_failure_and_the_next_call_still_works() {
    let (breaker, _clock) = manual(config(2, 1_000));
    let r = catch_unwind(|| breaker.call(|| -> Result<(), ()> { panic!("boom") }));
    assert!(r.is_err());
    assert_eq!(
        breaker.call(|| Ok::<_, ()>(7)),
        Ok(7),
        "nothing is poisoned"
    );
    assert_eq!(breaker.metrics().failures, 1);
    assert_eq!(breaker.metrics().successes, 1);
}

#[test]
fn an_abandoned_probe_releases_its_slot() {
    let (breaker, clock) = manual(config(1, 100));
    trip(&breaker);
    clock.advance(ms(100));
    drop(breaker.try_acquire().unwrap());
    assert_eq!(breaker.metrics().probes_in_flight, 0);
    assert_eq!(breaker.state(), State::HalfOpen);
    breaker
        .try_acquire()
        .expect("the slot is free again")
        .success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn record_counts_ok_as_success_and_err_as_failure() {
    let (breaker, _clock) = manual(config(5, 1_000));
    breaker.try_acquire().unwrap().record(&Ok::<_, ()>(1));
    breaker.try_acquire().unwrap().record(&Err::<(), _>("e"));
    let m = breaker.metrics();
    assert_eq!(m.successes, 1);
    assert_eq!(m.failures, 1);
}

#[test]
fn record_with_a_classifier_ignores_the_errors_it_does_not_count() {
    #[derive(Debug)]
    enum ApiError {
        NotFound,
        Unavailable,
    }
    fn server_side(e: &ApiError) -> bool {
        matches!(e, ApiError::Unavailable)
    }
    let (breaker, _clock) = manual(config(1, 1_000));
    breaker
        .try_acquire()
        .unwrap()
        .record_with(&Err::<(), _>(ApiError::NotFound), &server_side);
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().ignored, 1);
    breaker
        .try_acquire()
        .unwrap()
        .record_with(&Err::<(), _>(ApiError::Unavailable), &server_side);
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn an_ignored_probe_frees_its_slot_and_moves_nothing() {
    let (breaker, clock) = manual(config(1, 10));
    trip(&breaker);
    clock.advance(ms(10));
    breaker.try_acquire().unwrap().ignore();
    assert_eq!(breaker.state(), State::HalfOpen);
    assert_eq!(breaker.metrics().probes_in_flight, 0);
}

/// Compiles only while breakers and permits cross `catch_unwind` as they are.
#[test]
fn breakers_and_permits_are_unwind_safe_without_a_wrapper() {
    fn unwind_safe<T: UnwindSafe + RefUnwindSafe>() {}
    unwind_safe::<breaker_core::Breaker>();
    unwind_safe::<breaker_core::Permit<'static>>();
    unwind_safe::<&breaker_core::Breaker>();
}
