//! Slow calls: measured from claim to verdict on the breaker's clock, counted
//! whether they succeed or fail, and tripping on their own rate.

use std::time::Duration;

use breaker_core::{Breaker, CallError, Config, ManualClock, State};

mod support;
use support::ms;

fn slow_breaker(config: Config) -> (Breaker, ManualClock) {
    let clock = ManualClock::new();
    (Breaker::with_clock("slow", config, clock.clone()), clock)
}

fn time_window(slow_call_ms: u64, slow_call_rate: f64, min_calls: u32) -> Config {
    Config::builder()
        .window(Duration::from_secs(60))
        .min_calls(min_calls)
        .slow_call(Duration::from_millis(slow_call_ms))
        .slow_call_rate(slow_call_rate)
        .build()
        .unwrap()
}

/// One successful call that takes `took` on the breaker's clock.
fn call_taking(b: &Breaker, clock: &ManualClock, took: Duration) {
    b.call(|| {
        clock.advance(took);
        Ok::<_, ()>(())
    })
    .expect("admitted and succeeded");
}

#[test]
fn a_manual_clock_advanced_inside_the_call_makes_it_slow() {
    let (b, clock) = slow_breaker(time_window(100, 1.0, 100));
    call_taking(&b, &clock, ms(101));
    let w = b.metrics().window.unwrap();
    assert_eq!(w.calls, 1);
    assert_eq!(w.failures, 0);
    assert_eq!(w.slow_calls, 1);
}

#[test]
fn a_call_taking_exactly_slow_call_ms_is_not_slow() {
    let (b, clock) = slow_breaker(time_window(100, 1.0, 100));
    call_taking(&b, &clock, ms(100));
    assert_eq!(b.metrics().window.unwrap().slow_calls, 0);
    call_taking(&b, &clock, ms(100) + Duration::from_nanos(1));
    assert_eq!(b.metrics().window.unwrap().slow_calls, 1);
}

#[test]
fn slow_successes_alone_trip_the_breaker_at_the_slow_call_rate() {
    let (b, clock) = slow_breaker(time_window(100, 0.5, 4));
    call_taking(&b, &clock, ms(500));
    call_taking(&b, &clock, ms(10));
    call_taking(&b, &clock, ms(500));
    assert_eq!(b.state(), State::Closed, "3 calls, 4 needed");
    call_taking(&b, &clock, ms(10));
    assert_eq!(b.state(), State::Open, "2 of 4 slow, every call succeeded");
    assert_eq!(b.metrics().failures, 0);
    assert!(matches!(
        b.call(|| Ok::<_, ()>(())),
        Err(CallError::Open(_))
    ));
}

#[test]
fn fast_successes_below_the_slow_rate_keep_it_closed() {
    let (b, clock) = slow_breaker(time_window(100, 0.5, 4));
    for took in [500, 10, 10, 10, 500, 10, 10, 10] {
        call_taking(&b, &clock, ms(took));
    }
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.metrics().window.unwrap().slow_call_rate(), Some(0.25));
}

#[test]
fn slow_failures_count_both_as_failures_and_as_slow() {
    let config = Config::builder()
        .window_calls(4)
        .failure_rate(1.0)
        .slow_call(Duration::from_millis(100))
        .slow_call_rate(1.0)
        .build()
        .unwrap();
    let (b, clock) = slow_breaker(config);
    let _ = b.call(|| {
        clock.advance(ms(200));
        Err::<(), _>("timeout")
    });
    let _ = b.call(|| Err::<(), _>("refused"));
    call_taking(&b, &clock, ms(150));
    let w = b.metrics().window.unwrap();
    assert_eq!(w.calls, 3);
    assert_eq!(w.failures, 2);
    assert_eq!(w.slow_calls, 2);
    assert_eq!(w.slow_call_rate(), Some(2.0 / 3.0));
}

#[test]
fn a_count_window_with_slow_calls_trips_on_slowness() {
    let config = Config::builder()
        .window_calls(3)
        .slow_call(Duration::from_millis(50))
        .slow_call_rate(0.6)
        .build()
        .unwrap();
    let (b, clock) = slow_breaker(config);
    call_taking(&b, &clock, ms(60));
    call_taking(&b, &clock, ms(60));
    assert_eq!(b.state(), State::Closed);
    call_taking(&b, &clock, ms(1));
    assert_eq!(b.state(), State::Open, "2 of 3 slow >= 60%");
}

#[test]
fn without_slow_call_ms_no_call_is_slow() {
    let config = Config::builder()
        .window(Duration::from_secs(10))
        .min_calls(1)
        .build()
        .unwrap();
    let (b, clock) = slow_breaker(config);
    call_taking(&b, &clock, ms(9_000));
    assert_eq!(b.metrics().window.unwrap().slow_calls, 0);
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn a_clock_stepping_back_during_a_call_makes_it_take_no_time() {
    let (b, clock) = slow_breaker(time_window(1, 1.0, 1));
    clock.set_nanos(5_000_000_000);
    b.call(|| {
        clock.set_nanos(0);
        Ok::<_, ()>(())
    })
    .unwrap();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.metrics().window.unwrap().slow_calls, 0);
}

#[tokio::test]
async fn an_async_call_is_timed_from_its_first_poll_to_its_verdict() {
    let (b, clock) = slow_breaker(time_window(100, 0.5, 1));
    let c = clock.clone();
    let pending = b.call_async(async move {
        c.advance(ms(50));
        Ok::<_, ()>(())
    });
    clock.advance(ms(1_000)); // before the first poll, so before the claim
    pending.await.unwrap();
    assert_eq!(b.metrics().window.unwrap().slow_calls, 0);
    assert_eq!(b.state(), State::Closed);

    let c = clock.clone();
    b.call_async(async move {
        c.advance(ms(250));
        Ok::<_, ()>(())
    })
    .await
    .unwrap();
    assert_eq!(b.state(), State::Open, "1 of 2 slow reaches 50%");
}
