//! Regressions of the defects an independent acceptance suite found (issue 10):
//! waiting `retry_after` on the real clock, a time window after 2^18 transitions
//! at one instant, and a time window after the clock steps back.

use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, State};

mod support;
use support::{fail, succeed, window};

/// Defect 1. On the real clock, a caller that sleeps exactly `retry_after` and
/// claims again must be admitted as the probe. The refusal compares the coarse
/// clock, up to a kernel tick behind; before the fix about half of these
/// rounds were refused again. Real time on purpose: the defect lives in the
/// gap between the two clocks, which no manual clock has. About 1.5 s.
#[test]
fn sleeping_retry_after_on_the_real_clock_finds_the_probe_slot_free() {
    let config = Config::builder().threshold(1).open_ms(7).build().unwrap();
    let mut refused_again = 0;
    for round in 0..200 {
        let breaker = Breaker::new("proof-retry-after", config);
        fail(&breaker);
        let open = breaker.try_acquire().expect_err("open after one failure");
        let wait = open.retry_after().expect("an open breaker says when");
        assert!(wait > Duration::ZERO && wait <= Duration::from_millis(7 + 20));
        std::thread::sleep(wait);
        match breaker.try_acquire() {
            Ok(probe) => {
                assert!(probe.is_probe());
                probe.success();
                assert_eq!(breaker.state(), State::Closed);
            }
            Err(again) => {
                refused_again += 1;
                eprintln!("round {round}: slept {wait:?}, refused again: {again:?}");
            }
        };
    }
    assert_eq!(refused_again, 0, "refused after sleeping retry_after");
}

/// Defect 1, the same promise through `would_admit`: once `retry_after` has
/// passed, asking says yes.
#[test]
fn would_admit_agrees_once_retry_after_has_passed() {
    let config = Config::builder().threshold(1).open_ms(5).build().unwrap();
    for _ in 0..50 {
        let breaker = Breaker::new("proof-would-admit", config);
        fail(&breaker);
        let wait = breaker.try_acquire().unwrap_err().retry_after().unwrap();
        std::thread::sleep(wait);
        assert!(breaker.would_admit());
    }
}

fn time_window_at(window_ms: u64, clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .window_ms(window_ms)
        .failure_rate(0.5)
        .min_calls(4)
        .build()
        .unwrap();
    Breaker::with_clock("proof-window", config, clock.clone())
}

/// Defect 3. Every transition empties the window, however many there were at
/// one instant: 2^18 resets brought the bucket stamps' generation tag back
/// round to the old failures'.
#[test]
fn a_time_window_is_empty_after_2_pow_18_resets_at_one_instant() {
    let clock = ManualClock::new();
    clock.set_nanos(5_000_000_000);
    let breaker = time_window_at(10, &clock);
    forgets_three_failures_over_resets(&breaker, 1 << 18);
}

/// Defect 3, the other half of the wrap: past 2^17 transitions the old tag
/// looked *newer* than the current one, and every outcome landing on that
/// bucket was dropped. The window must keep judging.
#[test]
fn a_time_window_keeps_judging_after_2_pow_17_and_more_resets() {
    let clock = ManualClock::new();
    clock.set_nanos(5_000_000_000);
    let breaker = time_window_at(10, &clock);
    fail(&breaker);
    for _ in 0..((1u32 << 17) + 1) {
        breaker.reset();
    }
    for _ in 0..4 {
        fail(&breaker);
    }
    assert_eq!(breaker.state(), State::Open, "four failures of four");
}

/// Defect 4. Time stepping back counts as zero elapsed: outcomes after the step
/// are still judged.
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

/// Defect 4 with longer buckets and the step inside the window.
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

fn count_window_of(calls: u32, clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .window_calls(calls)
        .failure_rate(0.5)
        .min_calls(4)
        .build()
        .unwrap();
    Breaker::with_clock("proof-count-window", config, clock.clone())
}

/// The count window's tally was tagged with 16 bits of the generation: 2^16
/// transitions without an outcome brought the old failures back.
#[test]
fn a_count_window_is_empty_after_2_pow_16_resets() {
    let clock = ManualClock::new();
    let breaker = count_window_of(10, &clock);
    forgets_three_failures_over_resets(&breaker, 1 << 16);
}

/// The other half of the wrap: past 2^15 transitions the old tag looked
/// *newer* than the current one, every failure was dropped and the breaker
/// never tripped again. Failures must still trip exactly at the rule.
#[test]
fn a_count_window_keeps_judging_after_2_pow_15_and_more_resets() {
    let clock = ManualClock::new();
    let breaker = count_window_of(10, &clock);
    fail(&breaker);
    for _ in 0..((1u32 << 15) + 1) {
        breaker.reset();
    }
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
    for _ in 0..resets {
        breaker.reset();
    }
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
