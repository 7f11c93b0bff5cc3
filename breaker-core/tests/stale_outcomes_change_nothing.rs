//! Outcomes from an earlier generation are stale: counted, and nothing else.
mod support;

use breaker_core::{Config, State};
use std::time::Duration;
use support::{config, manual, ms, trip};

#[test]
fn a_slow_success_admitted_while_closed_does_not_close_a_breaker_that_opened_meanwhile() {
    let (breaker, _clock) = manual(config(2, 1_000));
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
    let (breaker, clock) = manual(config(2, 1_000));
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
            .open(Duration::from_millis(100))
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
    breaker.force_open();
    breaker.reset();
    permit.failure();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().stale, 1);
}

/// A clock that, once armed, stops the next thread that reads it until released:
/// a way to hold a thread inside a transition while others move the breaker.
#[derive(Clone)]
struct Gated(std::sync::Arc<GatedClock>);

struct GatedClock {
    nanos: std::sync::atomic::AtomicU64,
    armed: std::sync::atomic::AtomicBool,
    entered: std::sync::Barrier,
    released: std::sync::Barrier,
}

impl breaker_core::Clock for Gated {
    fn now_nanos(&self) -> u64 {
        use std::sync::atomic::Ordering::SeqCst;
        let gate = &self.0;
        if gate.armed.swap(false, SeqCst) {
            gate.entered.wait();
            gate.released.wait();
        }
        gate.nanos.load(SeqCst)
    }
}

#[test]
fn a_failed_probe_that_loses_the_race_to_a_closing_probe_is_stale_and_does_not_reopen() {
    use std::sync::atomic::Ordering::SeqCst;
    let clock = std::sync::Arc::new(GatedClock {
        nanos: 0.into(),
        armed: false.into(),
        entered: std::sync::Barrier::new(2),
        released: std::sync::Barrier::new(2),
    });
    let breaker = breaker_core::Breaker::with_clock(
        "gated",
        Config::builder()
            .threshold(1)
            .open(Duration::from_millis(100))
            .half_open_probes(2)
            .build()
            .unwrap(),
        Gated(clock.clone()),
    );
    trip(&breaker);
    clock.nanos.store(100_000_000, SeqCst);
    let failing = breaker.try_acquire().unwrap();
    let closing = breaker.try_acquire().unwrap();
    std::thread::scope(|s| {
        clock.armed.store(true, SeqCst);
        // This probe fails and stops inside the reopen, at its clock read.
        let reopening = s.spawn(move || failing.failure());
        clock.entered.wait();
        closing.success(); // meanwhile the other probe closes the circuit
        assert_eq!(breaker.state(), State::Closed);
        clock.released.wait();
        reopening.join().unwrap();
    });
    let m = breaker.metrics();
    assert_eq!(
        m.state,
        State::Closed,
        "the late failure must not reopen: {m:#?}"
    );
    assert_eq!(m.stale, 1);
    assert_eq!(m.probes_failed, 0);
    assert_eq!(m.times_opened, 1);
    // The trip's failure, the closing success, the stale failure: each once.
    assert_eq!(m.calls, 3);
    assert_eq!(m.successes, 1);
    assert_eq!(m.failures, 1);
}
