//! Half-open under a window policy keeps the contract of the state machine, and
//! every window starts empty after each transition.

use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, State};

const OPEN_MS: u64 = 1_000;

fn configs() -> [Config; 2] {
    let time = Config::builder()
        .window(Duration::from_secs(60))
        .failure_rate(0.5)
        .min_calls(4)
        .open(Duration::from_millis(OPEN_MS))
        .half_open_probes(2)
        .successes_to_close(2)
        .build()
        .unwrap();
    let count = Config::builder()
        .window_calls(4)
        .failure_rate(0.5)
        .open(Duration::from_millis(OPEN_MS))
        .half_open_probes(2)
        .successes_to_close(2)
        .build()
        .unwrap();
    [time, count]
}

fn trip(b: &Breaker) {
    for _ in 0..4 {
        b.try_acquire().expect("closed").failure();
    }
    assert_eq!(b.state(), State::Open);
}

fn each_window_policy(test: impl Fn(Breaker, ManualClock)) {
    for config in configs() {
        let clock = ManualClock::new();
        test(Breaker::with_clock("ho", config, clock.clone()), clock);
    }
}

#[test]
fn half_open_admits_at_most_half_open_probes_under_a_window() {
    each_window_policy(|b, clock| {
        trip(&b);
        clock.advance(Duration::from_millis(OPEN_MS));
        let first = b.try_acquire().expect("first probe");
        let second = b.try_acquire().expect("second probe");
        assert!(first.is_probe() && second.is_probe());
        assert!(b.try_acquire().is_err(), "a third probe is refused");
        first.success();
        assert_eq!(b.state(), State::HalfOpen, "one success of two");
        second.success();
        assert_eq!(b.state(), State::Closed);
    });
}

#[test]
fn any_probe_failure_reopens_under_a_window() {
    each_window_policy(|b, clock| {
        trip(&b);
        clock.advance(Duration::from_millis(OPEN_MS));
        let first = b.try_acquire().unwrap();
        let second = b.try_acquire().unwrap();
        first.success();
        second.failure();
        assert_eq!(b.state(), State::Open);
        assert_eq!(b.metrics().probes_failed, 1);
    });
}

#[test]
fn the_window_starts_empty_after_closing_so_old_failures_never_combine_with_new_ones() {
    each_window_policy(|b, clock| {
        trip(&b);
        clock.advance(Duration::from_millis(OPEN_MS));
        b.try_acquire().unwrap().success();
        b.try_acquire().unwrap().success();
        assert_eq!(b.state(), State::Closed);
        let w = b.metrics().window.unwrap();
        assert_eq!(w.calls, 0);
        assert_eq!(w.failures, 0);
        assert_eq!(w.failure_rate(), None);
        // Three failures and a success: 3 of 4 trips a fresh window...
        for _ in 0..3 {
            b.try_acquire().unwrap().failure();
        }
        assert_eq!(b.state(), State::Closed, "only 3 outcomes since closing");
        b.try_acquire().unwrap().success();
        assert_eq!(b.state(), State::Open);
    });
}

#[test]
fn probes_are_not_outcomes_of_the_window() {
    each_window_policy(|b, clock| {
        trip(&b);
        clock.advance(Duration::from_millis(OPEN_MS));
        let probe = b.try_acquire().unwrap();
        assert_eq!(b.metrics().window.unwrap().calls, 0);
        probe.success();
        assert_eq!(b.metrics().window.unwrap().calls, 0);
    });
}

#[test]
fn a_late_outcome_of_the_tripped_generation_never_reaches_the_new_window() {
    each_window_policy(|b, clock| {
        let slow = b.try_acquire().unwrap();
        trip(&b);
        clock.advance(Duration::from_millis(OPEN_MS));
        b.try_acquire().unwrap().success();
        b.try_acquire().unwrap().success();
        assert_eq!(b.state(), State::Closed);
        slow.failure();
        assert_eq!(b.metrics().window.unwrap().calls, 0);
        assert_eq!(b.metrics().stale, 1);
    });
}

#[test]
fn forced_closed_fills_the_window_with_its_outcomes_but_never_trips() {
    each_window_policy(|b, _clock| {
        b.force_closed();
        for _ in 0..20 {
            b.try_acquire().unwrap().failure();
        }
        assert_eq!(b.state(), State::ForcedClosed);
        let m = b.metrics();
        assert_eq!((m.failures, m.times_opened), (20, 0));
        // The rates it would judge on are there to see.
        let window = m.window.unwrap();
        assert!(window.calls >= 4, "{window:?}");
        assert_eq!(window.failure_rate(), Some(1.0), "{window:?}");
        b.reset();
        assert_eq!(b.metrics().window.unwrap().calls, 0);
        for _ in 0..3 {
            b.try_acquire().unwrap().failure();
        }
        assert_eq!(
            b.state(),
            State::Closed,
            "reset starts from an empty window"
        );
    });
}
