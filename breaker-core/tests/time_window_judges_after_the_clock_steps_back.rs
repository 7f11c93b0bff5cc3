//! A time window whose clock steps back (a manual clock set earlier, a
//! monotonic source that is not) keeps judging the outcomes after the step.

use breaker_core::{Breaker, Config, ManualClock, State};
use std::time::Duration;

mod support;
use support::{fail, succeed, window};

fn time_window_at(window_ms: u64, clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .window(Duration::from_millis(window_ms))
        .failure_rate(0.5)
        .min_calls(4)
        .build()
        .unwrap();
    Breaker::with_clock("time-window", config, clock.clone())
}

/// Time stepping back counts as zero elapsed: outcomes after the step are
/// still judged.
#[test]
fn a_time_window_judges_outcomes_after_the_clock_steps_back() {
    let clock = ManualClock::new();
    clock.set_nanos(10_000_000_000);
    let breaker = time_window_at(10, &clock);
    succeed(&breaker);
    clock.set_nanos(9_000_000_000);
    for i in 0..50 {
        if breaker.state() == State::Open {
            assert!(i >= 3, "tripped after {i} failures");
            return;
        }
        fail(&breaker);
    }
    panic!(
        "50 failures after the clock stepped back, still {:?}: {:?}",
        breaker.state(),
        window(&breaker)
    );
}

/// The same with longer buckets and the step inside the window.
#[test]
fn a_window_of_seconds_judges_outcomes_after_the_clock_steps_back() {
    let clock = ManualClock::new();
    clock.set_nanos(10_000_000_000);
    let breaker = time_window_at(10_000, &clock);
    succeed(&breaker);
    clock.set_nanos(9_000_000_000);
    for _ in 0..3 {
        fail(&breaker);
    }
    // One success and three failures, as the window saw them at 9 s.
    assert_eq!(breaker.state(), State::Open, "{:?}", window(&breaker));
}
