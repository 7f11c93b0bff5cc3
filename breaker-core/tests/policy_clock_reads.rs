//! How often each policy reads the clock on the closed path: never for the
//! consecutive policy, once per call (at the verdict) for a time window, and
//! twice only when slow calls are timed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breaker_core::{Breaker, Clock, Config};

/// A clock that counts how often it is read.
#[derive(Clone, Default)]
struct CountingClock(Arc<AtomicU64>);

impl Clock for CountingClock {
    fn now_nanos(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed);
        0
    }
}

fn reads_per_call(config: Config, fail: bool) -> u64 {
    let clock = CountingClock::default();
    let breaker = Breaker::with_clock("reads", config, clock.clone());
    for _ in 0..100 {
        let permit = breaker.try_acquire().expect("stays closed");
        if fail {
            permit.failure();
        } else {
            permit.success();
        }
    }
    clock.0.load(Ordering::Relaxed) / 100
}

#[test]
fn the_consecutive_policy_never_reads_the_clock_on_the_closed_path() {
    let config = Config::builder().threshold(1_000).build().unwrap();
    assert_eq!(reads_per_call(config, false), 0);
    assert_eq!(reads_per_call(config, true), 0);
}

#[test]
fn a_time_window_reads_the_clock_once_per_call_at_the_verdict() {
    let config = Config::builder()
        .window(Duration::from_secs(1))
        .failure_rate(1.0)
        .min_calls(1_000)
        .build()
        .unwrap();
    assert_eq!(reads_per_call(config, false), 1);
    assert_eq!(reads_per_call(config, true), 1);
}

#[test]
fn a_count_window_reads_the_clock_only_to_time_slow_calls() {
    let plain = Config::builder()
        .window_calls(1_000)
        .failure_rate(1.0)
        .build()
        .unwrap();
    assert_eq!(reads_per_call(plain, false), 0);
    let timed = Config::builder()
        .window_calls(1_000)
        .failure_rate(1.0)
        .slow_call(Duration::from_millis(10))
        .build()
        .unwrap();
    assert_eq!(reads_per_call(timed, false), 2);
}

#[test]
fn a_time_window_timing_slow_calls_reads_the_clock_at_claim_and_verdict() {
    let config = Config::builder()
        .window(Duration::from_secs(1))
        .min_calls(1_000)
        .slow_call(Duration::from_millis(10))
        .build()
        .unwrap();
    assert_eq!(reads_per_call(config, false), 2);
}
