//! A rate window is emptied by every transition, however many transitions
//! there are: the generation tags of its buckets and tallies wrap around
//! without bringing old outcomes back or dropping new ones.

use breaker_core::{Breaker, Config, ManualClock, State};
use std::time::Duration;

mod support;
use support::{fail, window};

/// `n` transitions (an even number) with no outcome between them, ending
/// closed: forced closed and reset in turn (a reset of a closed breaker is no
/// transition).
fn transitions(breaker: &Breaker, n: u32) {
    assert!(n % 2 == 0);
    for _ in 0..n / 2 {
        breaker.force_closed();
        breaker.reset();
    }
}

fn time_window_at(window_ms: u64, clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .window(Duration::from_millis(window_ms))
        .failure_rate(0.5)
        .min_calls(4)
        .build()
        .unwrap();
    Breaker::with_clock("time-window", config, clock.clone())
}

/// Every transition empties the window, however many there were at one
/// instant: 2^18 resets bring the bucket stamps' generation tag round to the
/// old failures' tag, and the old failures still do not count.
#[test]
fn a_time_window_is_empty_after_2_pow_18_resets_at_one_instant() {
    let clock = ManualClock::new();
    clock.set_nanos(5_000_000_000);
    let breaker = time_window_at(10, &clock);
    forgets_three_failures_over_resets(&breaker, 1 << 18);
}

/// The other half of the wrap: past 2^17 transitions the old tag would look
/// *newer* than the current one if compared naively, and outcomes landing on
/// that bucket would be dropped. The window keeps judging.
#[test]
fn a_time_window_keeps_judging_after_2_pow_17_and_more_resets() {
    let clock = ManualClock::new();
    clock.set_nanos(5_000_000_000);
    let breaker = time_window_at(10, &clock);
    fail(&breaker);
    transitions(&breaker, (1u32 << 17) + 2);
    for _ in 0..4 {
        fail(&breaker);
    }
    assert_eq!(breaker.state(), State::Open, "four failures of four");
}

fn count_window_of(calls: u32, clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .window_calls(calls)
        .failure_rate(0.5)
        .min_calls(4)
        .build()
        .unwrap();
    Breaker::with_clock("count-window", config, clock.clone())
}

/// The count window's tally is tagged with 16 bits of the generation: 2^16
/// transitions without an outcome bring the tag round, and the old failures
/// still do not come back.
#[test]
fn a_count_window_is_empty_after_2_pow_16_resets() {
    let clock = ManualClock::new();
    let breaker = count_window_of(10, &clock);
    forgets_three_failures_over_resets(&breaker, 1 << 16);
}

/// The other half of the wrap: past 2^15 transitions the old tag would look
/// *newer* than the current one if compared naively, and failures would be
/// dropped. Failures still trip exactly at the rule.
#[test]
fn a_count_window_keeps_judging_after_2_pow_15_and_more_resets() {
    let clock = ManualClock::new();
    let breaker = count_window_of(10, &clock);
    fail(&breaker);
    transitions(&breaker, (1u32 << 15) + 2);
    for _ in 0..3 {
        fail(&breaker);
    }
    assert_eq!(
        breaker.state(),
        State::Closed,
        "three calls are below min_calls"
    );
    assert_eq!(window(&breaker).failures, 3);
    fail(&breaker);
    assert_eq!(breaker.state(), State::Open, "four failures of four");
}

/// Three failures, then `resets` transitions with no outcome between them: the
/// window must be empty after them, and one more failure must not trip.
fn forgets_three_failures_over_resets(breaker: &Breaker, resets: u32) {
    for _ in 0..3 {
        fail(breaker);
    }
    assert_eq!(window(breaker).failures, 3);
    transitions(breaker, resets);
    let w = window(breaker);
    assert_eq!(
        (w.calls, w.failures),
        (0, 0),
        "window after {resets} resets"
    );
    fail(breaker);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "one failure of four tripped"
    );
    assert_eq!(window(breaker).failures, 1);
}
