//! `latency_p99_ms`: a dependency whose p99 crosses the bound trips the breaker
//! while every call succeeds; one whose tail stays under 1% does not.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::{Breaker, Config, Event, ManualClock, State, TransitionReason, TripCause};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// One successful call that takes `took` on `clock`.
fn call(breaker: &Breaker, clock: &ManualClock, took: Duration) {
    let permit = breaker.try_acquire().expect("closed");
    clock.advance(took);
    permit.success();
}

fn count_window(group: &str, clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .window_calls(100)
        .min_calls(100)
        .latency_p99(Duration::from_millis(100))
        .build()
        .unwrap();
    Breaker::with_clock(group, config, clock.clone())
}

#[test]
fn three_slow_calls_in_a_hundred_trip_though_all_succeed_and_p95_is_fast() {
    let clock = ManualClock::new();
    let breaker = count_window("p99-slow", &clock);
    let causes = Arc::new(Mutex::new(Vec::new()));
    let sink = causes.clone();
    let _subscription = breaker.subscribe(move |event: &Event| {
        if let Event::Transition(t) = event {
            sink.lock().unwrap().push(t.reason);
        }
    });
    // 3% slow: p95 is 10 ms, p99 is 250 ms.
    for n in 0..99 {
        call(&breaker, &clock, ms(if n % 33 == 0 { 250 } else { 10 }));
        assert_eq!(
            breaker.state(),
            State::Closed,
            "judged from min_calls on ({n})"
        );
    }
    call(&breaker, &clock, ms(10));
    assert_eq!(breaker.state(), State::Open);
    let m = breaker.metrics();
    assert_eq!((m.successes, m.failures), (100, 0));
    assert_eq!(m.latency_trips, 1);
    assert_eq!(m.times_opened, 1);
    // Subscribers are told which rule opened it.
    assert_eq!(
        causes.lock().unwrap()[..],
        [TransitionReason::Tripped(TripCause::LatencyP99)]
    );
}

#[test]
fn a_tail_under_one_percent_keeps_p99_under_the_bound_and_does_not_trip() {
    let clock = ManualClock::new();
    let breaker = count_window("p99-fine", &clock);
    // One call in 200 very slow: p99 (and p95) stay at 10 ms. (The count
    // window's view is the last 100 to 110 calls, so a tail of exactly 1% may
    // show twice in it.)
    for n in 0..2_000 {
        call(&breaker, &clock, ms(if n % 200 == 50 { 5_000 } else { 10 }));
    }
    assert_eq!(breaker.state(), State::Closed);
    let m = breaker.metrics();
    assert_eq!(m.latency_trips, 0);
    let p99 = m.latency_p99.expect("a full window");
    assert!(
        p99 >= ms(10) && p99 <= ms(10) * 9 / 8,
        "p99 {p99:?}: the 10 ms bin"
    );
}

#[test]
fn a_call_exactly_at_the_bound_is_not_over_it() {
    let clock = ManualClock::new();
    let breaker = count_window("p99-edge", &clock);
    for _ in 0..100 {
        call(&breaker, &clock, ms(100));
    }
    assert_eq!(
        breaker.state(),
        State::Closed,
        "p99 == bound is not above it"
    );
    call(&breaker, &clock, ms(100) + Duration::from_nanos(1));
    call(&breaker, &clock, ms(100) + Duration::from_nanos(1));
    assert_eq!(breaker.state(), State::Open, "2 of 100 above: p99 above");
}

#[test]
fn a_time_window_trips_on_sustained_latency_and_forgets_old_calls() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .window(Duration::from_secs(10))
        .min_calls(20)
        .latency_p99(Duration::from_millis(200))
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("p99-time", config, clock.clone());
    // A slow burst long ago: forgotten once the window has passed it.
    for _ in 0..19 {
        call(&breaker, &clock, ms(300));
    }
    clock.advance(ms(20_000));
    for _ in 0..50 {
        call(&breaker, &clock, ms(20));
    }
    assert_eq!(breaker.state(), State::Closed, "the burst is forgotten");
    // 51 calls, one above the bound: the 51st-smallest (p99 by nearest rank)
    // is that one.
    call(&breaker, &clock, ms(1_000));
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(breaker.metrics().latency_trips, 1);
}

#[test]
fn the_window_starts_empty_after_the_circuit_closes_again() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .window_calls(10)
        .min_calls(10)
        .latency_p99(Duration::from_millis(100))
        .open(Duration::from_secs(1))
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("p99-gen", config, clock.clone());
    for _ in 0..10 {
        call(&breaker, &clock, ms(500));
    }
    assert_eq!(breaker.state(), State::Open);
    clock.advance(ms(1_000));
    call(&breaker, &clock, ms(1)); // the probe closes it
    assert_eq!(breaker.state(), State::Closed);
    for _ in 0..8 {
        call(&breaker, &clock, ms(1));
    }
    assert_eq!(
        breaker.state(),
        State::Closed,
        "old slow calls do not count"
    );
}

#[test]
fn racing_successes_are_each_counted_once_and_fast_ones_never_trip() {
    let clock = ManualClock::new();
    let breaker = count_window("p99-race", &clock);
    const THREADS: u64 = 4;
    const CALLS: u64 = 5_000;
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..CALLS {
                    breaker.try_acquire().expect("closed").success();
                }
            });
        }
    });
    let m = breaker.metrics();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        (m.successes, m.failures, m.latency_trips),
        (THREADS * CALLS, 0, 0)
    );
    assert_eq!(
        m.latency_p99,
        Some(Duration::from_millis(1)),
        "every call took 0 ns: the first bucket, up to 1 ms"
    );
}

#[test]
fn latency_p99_beside_slow_call_ms_is_refused_naming_both() {
    let err = Config::builder()
        .window_calls(100)
        .slow_call(ms(50))
        .latency_p99(ms(100))
        .build()
        .unwrap_err();
    assert_eq!(err.key(), "latency_p99_ms");
    let text = err.to_string();
    assert!(
        text.contains("`slow_call_ms`") && text.contains("1%"),
        "{text}"
    );
}

#[test]
fn a_failure_rate_trip_is_told_as_one_though_the_tail_is_slow_too() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .window_calls(10)
        .min_calls(10)
        .failure_rate(0.5)
        .latency_p99(ms(100))
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("p99-failures", config, clock.clone());
    for n in 0..10 {
        let permit = breaker.try_acquire().expect("closed");
        clock.advance(ms(500));
        if n % 2 == 0 {
            permit.failure();
        } else {
            permit.success();
        }
    }
    assert_eq!(breaker.state(), State::Open);
    let m = breaker.metrics();
    assert_eq!((m.times_opened, m.latency_trips), (1, 0));
}
