//! The time window policy: the rate over the last `window_ms`, its boundaries,
//! lazy expiry and the scattered failures a consecutive counter cannot see.

use breaker_core::{Breaker, Config, ManualClock, State, WindowMetrics};
use std::time::Duration;

mod support;
use support::{fail, ms, succeed, window};

fn windowed(window_ms: u64, rate: f64, min_calls: u32) -> (Breaker, ManualClock) {
    let config = Config::builder()
        .window(Duration::from_millis(window_ms))
        .failure_rate(rate)
        .min_calls(min_calls)
        .build()
        .unwrap();
    let clock = ManualClock::new();
    (Breaker::with_clock("tw", config, clock.clone()), clock)
}

#[test]
fn consecutive_and_window_policies_tell_apart_scattered_failures() {
    let clock = ManualClock::new();
    let consecutive = Breaker::with_clock(
        "consecutive",
        Config::builder().threshold(5).build().unwrap(),
        clock.clone(),
    );
    let windowed = Breaker::with_clock(
        "windowed",
        Config::builder()
            .window(Duration::from_secs(60))
            .failure_rate(0.5)
            .min_calls(5)
            .build()
            .unwrap(),
        clock.clone(),
    );
    let script = [false, false, false, false, true, false, false, false, false];
    for (i, ok) in script.into_iter().enumerate() {
        for b in [&consecutive, &windowed] {
            if b.state() == State::Closed {
                if ok {
                    succeed(b);
                } else {
                    fail(b);
                }
            }
        }
        clock.advance(ms(100));
        assert_eq!(consecutive.state(), State::Closed, "after outcome {i}");
    }
    assert_eq!(consecutive.state(), State::Closed);
    assert_eq!(consecutive.metrics().consecutive_failures, 4);
    assert_eq!(windowed.state(), State::Open);
}

#[test]
fn the_window_judges_only_from_min_calls_on_and_exactly_the_rate_trips() {
    let (b, _clock) = windowed(10_000, 0.5, 4);
    fail(&b);
    fail(&b);
    fail(&b);
    // 100% failures, but only 3 of the 4 calls needed to judge.
    assert_eq!(b.state(), State::Closed);
    succeed(&b);
    // 3 of 4 >= 50%: a success that completes the sample trips it.
    assert_eq!(b.state(), State::Open);

    let (b, _clock) = windowed(10_000, 0.5, 4);
    for ok in [true, false, true, true, false] {
        if ok {
            succeed(&b)
        } else {
            fail(&b)
        }
    }
    // 2 of 5 = 40% < 50%.
    assert_eq!(b.state(), State::Closed);
    fail(&b); // 3 of 6 = 50%: exactly the rate trips.
    assert_eq!(b.state(), State::Open);
}

#[test]
fn an_outcome_exactly_one_window_old_no_longer_counts() {
    let (b, clock) = windowed(10_000, 1.0, 100);
    fail(&b);
    clock.set_nanos(10_000_000_000 - 1);
    assert_eq!(
        window(&b).calls,
        1,
        "one nanosecond younger than the window"
    );
    clock.set_nanos(10_000_000_000);
    assert_eq!(window(&b).calls, 0, "exactly one window old");
}

#[test]
fn an_outcome_counts_for_at_least_nine_tenths_of_the_window_and_expires_by_bucket() {
    let (b, clock) = windowed(10_000, 1.0, 100);
    clock.set_nanos(999_999_999); // the last instant of the first 1 s bucket
    fail(&b);
    clock.set_nanos(999_999_999 + 9_000_000_000);
    assert_eq!(window(&b).calls, 1, "nine tenths of the window old");
    clock.set_nanos(10_000_000_000);
    assert_eq!(
        window(&b).calls,
        0,
        "its bucket expires as a whole, one window after the bucket began"
    );
}

#[test]
fn a_failure_every_eleven_seconds_under_a_ten_second_window_never_trips() {
    let (b, clock) = windowed(10_000, 0.5, 2);
    for i in 0..200 {
        fail(&b);
        assert_eq!(b.state(), State::Closed, "failure {i}");
        assert_eq!(window(&b).calls, 1);
        clock.advance(ms(11_000));
    }

    // The same failures nine seconds apart share the window, and trip it.
    let (b, clock) = windowed(10_000, 0.5, 2);
    fail(&b);
    clock.advance(ms(9_000));
    fail(&b);
    assert_eq!(b.state(), State::Open);
}

#[test]
fn after_one_hundred_idle_windows_every_stale_bucket_is_gone() {
    let (b, clock) = windowed(10_000, 0.5, 25);
    // Two failures in each of the ten buckets: 20 of 25 needed.
    for _ in 0..10 {
        fail(&b);
        fail(&b);
        clock.advance(ms(1_000));
    }
    clock.set_nanos(9_500_000_000);
    assert_eq!(window(&b).failures, 20);
    clock.advance(ms(100 * 10_000));
    assert_eq!(window(&b), WindowMetrics::default());
    // New outcomes start from nothing: none of the twenty old failures revive.
    for _ in 0..24 {
        succeed(&b);
    }
    fail(&b);
    let w = window(&b);
    assert_eq!(w.calls, 25);
    assert_eq!(w.failures, 1);
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn expiry_is_lazy_and_a_query_never_changes_the_window() {
    let (b, clock) = windowed(1_000, 0.5, 3);
    fail(&b);
    fail(&b);
    for _ in 0..1_000 {
        assert_eq!(window(&b).calls, 2);
    }
    clock.advance(ms(1_000));
    assert_eq!(window(&b).calls, 0);
    clock.set_nanos(0); // back in time: the buckets were never emptied by the query
    assert_eq!(window(&b).calls, 2);
    fail(&b);
    assert_eq!(b.state(), State::Open);
}

#[test]
fn rates_are_none_before_any_call_and_exact_after() {
    let (b, _clock) = windowed(10_000, 0.9, 100);
    let w = window(&b);
    assert_eq!(w.failure_rate(), None);
    assert_eq!(w.slow_call_rate(), None);
    succeed(&b);
    fail(&b);
    fail(&b);
    succeed(&b);
    let w = window(&b);
    assert_eq!(w.calls, 4);
    assert_eq!(w.failures, 2);
    assert_eq!(w.slow_calls, 0);
    assert_eq!(w.failure_rate(), Some(0.5));
    assert_eq!(w.slow_call_rate(), Some(0.0));
}

#[test]
fn ignored_and_abandoned_calls_are_not_outcomes_of_the_window() {
    let (b, _clock) = windowed(10_000, 0.5, 2);
    fail(&b);
    for _ in 0..10 {
        b.try_acquire().unwrap().ignore();
        drop(b.try_acquire().unwrap());
    }
    assert_eq!(window(&b).calls, 1);
    assert_eq!(b.state(), State::Closed);
    fail(&b);
    assert_eq!(b.state(), State::Open);
}

#[test]
fn the_consecutive_policy_reports_no_window() {
    let b = Breaker::new("plain", Config::default());
    assert_eq!(b.metrics().window, None);
}

#[test]
fn a_clock_far_ahead_or_stepping_back_never_panics() {
    let (b, clock) = windowed(10, 0.5, 2);
    clock.set_nanos(u64::MAX);
    fail(&b);
    assert_eq!(window(&b).calls, 1);
    clock.set_nanos(3);
    // Time stepping back counts as zero elapsed: the outcome "from the
    // future" is still in the window, and later ones are judged with it.
    assert_eq!(window(&b).calls, 1);
    fail(&b);
    // Two failures in two calls, at a 50% threshold.
    assert_eq!(b.state(), State::Open);
    let (b, clock) = windowed(u64::MAX, 0.5, 2);
    clock.set_nanos(u64::MAX);
    fail(&b);
    fail(&b);
    assert_eq!(b.state(), State::Open);
}
