//! A live reconfiguration may tune a window's rates, `min_calls`,
//! `slow_call_ms` and `latency_p99_ms` without dropping what it counted (they
//! judge from the next outcome); its size, kind, or turning slow-call or
//! latency judging on or off still needs a restart.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, State};

fn count_window(failure_rate: f64, min_calls: u32) -> Config {
    Config::builder()
        .window_calls(1_000)
        .failure_rate(failure_rate)
        .min_calls(min_calls)
        .slow_call(Duration::from_millis(100))
        .build()
        .unwrap()
}

#[test]
fn tuning_a_count_window_while_four_threads_call_loses_no_count() {
    // Successes only, and a rate no share of them can reach: it never trips,
    // so every outcome stays in the window, whatever the tuning.
    let breaker = Breaker::with_clock("tuned", count_window(0.9, 1_000), ManualClock::new());
    const THREADS: u64 = 4;
    const CALLS: u64 = 240;
    let made = AtomicU64::new(0);
    let start = Barrier::new(THREADS as usize + 1);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                start.wait();
                for _ in 0..CALLS {
                    breaker.try_acquire().expect("closed").success();
                    made.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        start.wait();
        for round in 0..200u32 {
            let rate = [0.9, 0.6, 0.75][round as usize % 3];
            let min_calls = 500 + round;
            breaker
                .reconfigure(count_window(rate, min_calls))
                .expect("rates and min_calls are live");
        }
    });
    let m = breaker.metrics();
    let window = m.window.expect("a window");
    assert_eq!(made.load(Ordering::Relaxed), THREADS * CALLS);
    assert_eq!(
        window.calls,
        THREADS * CALLS,
        "every outcome is still counted"
    );
    assert_eq!(m.successes, THREADS * CALLS);
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.config().min_calls(), Some(699));
}

#[test]
fn a_lowered_rate_judges_what_the_window_already_holds() {
    let breaker = Breaker::with_clock("lowered", count_window(0.9, 10), ManualClock::new());
    for failed in [true, true, true, false, false, false, false, false, false] {
        let permit = breaker.try_acquire().unwrap();
        if failed {
            permit.failure()
        } else {
            permit.success()
        }
    }
    // 3 of 9 failed: under 0.9, and too few calls anyway.
    assert_eq!(breaker.state(), State::Closed);
    breaker.reconfigure(count_window(0.3, 10)).unwrap();
    assert_eq!(breaker.metrics().window.unwrap().calls, 9, "kept");
    assert_eq!(
        breaker.state(),
        State::Closed,
        "judged from the next outcome"
    );
    breaker.try_acquire().unwrap().success();
    // 3 of 10 failed: 0.3 trips.
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn a_shorter_slow_call_judges_the_next_call() {
    let clock = ManualClock::new();
    let config = |slow_ms| {
        Config::builder()
            .window_calls(2)
            .min_calls(2)
            .slow_call(Duration::from_millis(slow_ms))
            .slow_call_rate(1.0)
            .build()
            .unwrap()
    };
    let breaker = Breaker::with_clock("slow", config(1_000), clock.clone());
    let call = |ms| {
        let permit = breaker.try_acquire().unwrap();
        clock.advance(Duration::from_millis(ms));
        permit.success();
    };
    call(200);
    breaker.reconfigure(config(100)).unwrap();
    call(200);
    // The first call was judged by 1 s (not slow), the second by 100 ms.
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().window.unwrap().slow_calls, 1);
    call(200);
    assert_eq!(
        breaker.state(),
        State::Open,
        "both calls of the window slow"
    );
}

#[test]
fn a_tighter_latency_bound_judges_from_the_next_call() {
    let clock = ManualClock::new();
    let config = |p99_ms| {
        Config::builder()
            .window_calls(1)
            .min_calls(1)
            .failure_rate(1.0)
            .latency_p99(Duration::from_millis(p99_ms))
            .build()
            .unwrap()
    };
    let breaker = Breaker::with_clock("p99", config(1_000), clock.clone());
    let call = |ms| {
        let permit = breaker.try_acquire().unwrap();
        clock.advance(Duration::from_millis(ms));
        permit.success();
    };
    call(300);
    assert_eq!(breaker.state(), State::Closed);
    breaker.reconfigure(config(100)).unwrap();
    assert_eq!(
        breaker.config().latency_p99(),
        Some(Duration::from_millis(100))
    );
    call(300);
    assert_eq!(breaker.state(), State::Open, "300 ms is over the new bound");
}

#[test]
fn a_window_of_another_size_or_kind_still_needs_a_restart() {
    let breaker = Breaker::new("fixed", count_window(0.5, 10));
    let refused = [
        Config::builder().window_calls(500).build().unwrap(),
        Config::builder()
            .window(Duration::from_secs(10))
            .build()
            .unwrap(),
        Config::builder().threshold(3).build().unwrap(),
        // The slow-call rule swapped for the p99 one.
        Config::builder()
            .window_calls(1_000)
            .failure_rate(0.5)
            .min_calls(10)
            .latency_p99(Duration::from_millis(500))
            .build()
            .unwrap(),
        // Slow-call judging off.
        Config::builder()
            .window_calls(1_000)
            .failure_rate(0.5)
            .min_calls(10)
            .build()
            .unwrap(),
    ];
    for config in refused {
        let err = breaker.reconfigure(config).unwrap_err();
        assert!(err.to_string().contains("restart to apply it"), "{err}");
        assert_eq!(err.group(), "fixed");
    }
    assert_eq!(breaker.config(), &count_window(0.5, 10));
}

#[test]
fn racing_reconfigurations_leave_the_window_judging_by_the_config_that_won() {
    // Two threads tune one breaker at once, one to a rate of 0.2, one to 0.8;
    // whichever config stays, the window must judge by it. Five successes and
    // five failures (a rate of 0.5) then trip the circuit exactly when the
    // config that won asks for 0.5 or less.
    let tuned = |rate: f64| {
        Config::builder()
            .window_calls(10)
            .failure_rate(rate)
            .min_calls(10)
            .build()
            .unwrap()
    };
    let (low, high) = (tuned(0.2), tuned(0.8));
    let mut mismatches = 0;
    for round in 0..8_000 {
        let breaker = Breaker::with_clock("raced", tuned(0.5), ManualClock::new());
        let start = Barrier::new(2);
        std::thread::scope(|s| {
            for config in [low, high] {
                let (breaker, start) = (&breaker, &start);
                s.spawn(move || {
                    start.wait();
                    breaker.reconfigure(config).unwrap();
                });
            }
        });
        for _ in 0..5 {
            breaker.try_acquire().unwrap().success();
        }
        for _ in 0..5 {
            breaker.try_acquire().unwrap().failure();
        }
        let won = breaker.config().failure_rate().expect("a window");
        let tripped = breaker.state() == State::Open;
        if tripped != (won <= 0.5) {
            mismatches += 1;
            eprintln!("round {round}: config says {won}, tripped: {tripped}");
        }
    }
    assert_eq!(
        mismatches, 0,
        "the window judged by a config that lost the race"
    );
}
