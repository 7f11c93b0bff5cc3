//! Window policies under real threads: no outcome is lost or counted twice, also
//! while buckets roll over under the racing threads (with failures, and with
//! successes only, which take the time window's shortest way), and a storm of
//! failures trips once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, State};

const THREADS: u64 = 4;
const PER_THREAD: u64 = 20_000;

/// A window that never trips: it only counts.
fn counting_time_window(clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .window(Duration::from_secs(10))
        .failure_rate(1.0)
        .min_calls(u32::MAX)
        .slow_call(Duration::from_millis(1))
        .slow_call_rate(1.0)
        .build()
        .unwrap();
    Breaker::with_clock("racing", config, clock.clone())
}

/// Every thread records `per_thread` outcomes, one in three a failure.
fn race(breaker: &Breaker, per_thread: u64, during: impl FnOnce() + Send) {
    let start = Barrier::new(THREADS as usize + 1);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                start.wait();
                for i in 0..per_thread {
                    let permit = breaker.try_acquire().expect("never trips");
                    if i % 3 == 0 {
                        permit.failure();
                    } else {
                        permit.success();
                    }
                }
            });
        }
        start.wait();
        during();
    });
}

fn expected_failures(per_thread: u64) -> u64 {
    THREADS * per_thread.div_ceil(3)
}

#[test]
fn time_window_counts_are_exact_at_quiescence() {
    let clock = ManualClock::new();
    let breaker = counting_time_window(&clock);
    race(&breaker, PER_THREAD, || {});
    let w = breaker.metrics().window.unwrap();
    assert_eq!(w.calls, THREADS * PER_THREAD);
    assert_eq!(w.failures, expected_failures(PER_THREAD));
    assert_eq!(w.slow_calls, 0);
}

#[test]
fn time_window_counts_stay_exact_while_buckets_roll_over_under_the_threads() {
    let clock = ManualClock::new();
    let breaker = counting_time_window(&clock);
    let done = AtomicBool::new(false);
    let start = Barrier::new(THREADS as usize + 1);
    let recorded: Vec<(u64, u64)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    let (mut calls, mut failures) = (0u64, 0u64);
                    // Record until the clock has stopped moving, so every
                    // rollover happens under racing outcomes.
                    while !done.load(Ordering::Acquire) {
                        let permit = breaker.try_acquire().expect("never trips");
                        if calls % 3 == 0 {
                            permit.failure();
                            failures += 1;
                        } else {
                            permit.success();
                        }
                        calls += 1;
                    }
                    (calls, failures)
                })
            })
            .collect();
        start.wait();
        // Eight of the ten 1 s buckets start while the threads record; nothing
        // recorded is a whole window old at the end.
        for _ in 0..80 {
            for _ in 0..10 {
                std::thread::yield_now();
            }
            clock.advance(Duration::from_millis(100));
        }
        done.store(true, Ordering::Release);
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let calls: u64 = recorded.iter().map(|r| r.0).sum();
    let failures: u64 = recorded.iter().map(|r| r.1).sum();
    assert!(calls > 0);
    let w = breaker.metrics().window.unwrap();
    assert_eq!(w.calls, calls);
    assert_eq!(w.failures, failures);
    // Calls that straddled a clock step may be slow; never more than all calls.
    assert!(w.slow_calls <= w.calls);
}

/// A window of successes only, with no slow-call rule, that never trips: its
/// successes take the window's shortest way (one add to the current bucket).
fn counting_successes(window: Duration) -> Config {
    Config::builder()
        .window(window)
        .failure_rate(1.0)
        .min_calls(u32::MAX)
        .build()
        .unwrap()
}

/// Every thread records `per_thread` successes; returns them all.
fn race_successes(breaker: &Breaker, per_thread: u64, during: impl FnOnce() + Send) -> u64 {
    let start = Barrier::new(THREADS as usize + 1);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                start.wait();
                for _ in 0..per_thread {
                    breaker.try_acquire().expect("never trips").success();
                }
            });
        }
        start.wait();
        during();
    });
    THREADS * per_thread
}

#[test]
fn time_window_successes_on_the_default_clock_are_all_counted() {
    // One minute, so a bucket counts for 54 s at the least: every success of
    // the race is in the window when it is read. The default clock places
    // them by its coarse reading.
    let breaker = Breaker::new(
        "racing-successes",
        counting_successes(Duration::from_secs(60)),
    );
    let recorded = race_successes(&breaker, PER_THREAD, || {});
    let w = breaker.metrics().window.unwrap();
    assert_eq!((w.calls, w.failures), (recorded, 0));
}

#[test]
fn time_window_successes_stay_counted_while_buckets_roll_over_under_the_threads() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock(
        "racing-rollover",
        counting_successes(Duration::from_secs(10)),
        clock.clone(),
    );
    // Eight of the ten 1 s buckets start while the threads record; nothing
    // recorded is a whole window old at the end.
    let recorded = race_successes(&breaker, PER_THREAD * 5, || {
        for _ in 0..80 {
            for _ in 0..10 {
                std::thread::yield_now();
            }
            clock.advance(Duration::from_millis(100));
        }
    });
    let w = breaker.metrics().window.unwrap();
    assert_eq!((w.calls, w.failures), (recorded, 0));
}

#[test]
fn count_window_counts_are_exact_at_quiescence() {
    let config = Config::builder()
        .window_calls(Config::MAX_WINDOW_CALLS)
        .failure_rate(1.0)
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("racing-ring", config, ManualClock::new());
    let per_thread = u64::from(Config::MAX_WINDOW_CALLS) / THREADS;
    race(&breaker, per_thread, || {});
    let w = breaker.metrics().window.unwrap();
    assert_eq!(w.calls, THREADS * per_thread);
    assert_eq!(w.failures, expected_failures(per_thread));

    // A small ring holds exactly its size, and its counts match its contents.
    let config = Config::builder()
        .window_calls(64)
        .failure_rate(1.0)
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("small-ring", config, ManualClock::new());
    race(&breaker, PER_THREAD, || {});
    let w = breaker.metrics().window.unwrap();
    assert_eq!(w.calls, 64);
    assert!(w.failures < 64, "the ring is never all failures here");
}

#[test]
fn a_storm_of_failures_under_a_window_opens_exactly_once() {
    for config in [
        Config::builder()
            .window(Duration::from_secs(1))
            .min_calls(50),
        Config::builder().window_calls(50),
    ] {
        let breaker = Breaker::with_clock("storm", config.build().unwrap(), ManualClock::new());
        let start = Barrier::new(8);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    start.wait();
                    for _ in 0..1_000 {
                        if let Ok(permit) = breaker.try_acquire() {
                            permit.failure();
                        }
                    }
                });
            }
        });
        let m = breaker.metrics();
        assert_eq!(m.state, State::Open);
        assert_eq!(m.times_opened, 1);
        assert_eq!(
            m.calls,
            m.successes + m.failures + m.ignored + m.abandoned + m.stale
        );
    }
}
