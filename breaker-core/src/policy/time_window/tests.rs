//! The time window's stamps and buckets, alone.

use super::super::rule::fixtures::{rule, FAIL, OK};
use super::*;

const MS: u64 = 1_000_000;

#[test]
fn stamps_order_by_generation_then_epoch_and_wrap() {
    let st = Stamps::for_bucket(MS);
    assert_eq!(st.gen_bits, 18);
    let top = st.gen_mask();
    assert!(st.is_after(st.make(5, 1), st.make(4, 1)));
    assert!(!st.is_after(st.make(4, 1), st.make(4, 1)));
    assert!(st.is_after(st.make(0, 2), st.make(9, 1)));
    assert!(!st.is_after(st.make(9, 1), st.make(0, 2)));
    assert!(st.is_after(st.make(0, 0), st.make(0, top)));
    assert_eq!(st.generation(st.make(7, top + 3)), 2);
}

#[test]
fn no_stamp_a_clock_can_reach_is_the_resetting_mark() {
    for bucket_nanos in [MS, 1_000 * MS, u64::MAX / 16, u64::MAX / 10, u64::MAX] {
        let st = Stamps::for_bucket(bucket_nanos);
        let max_epoch = u64::MAX / bucket_nanos;
        let stamp = st.make(max_epoch, u64::MAX);
        assert_ne!(stamp, RESETTING, "bucket of {bucket_nanos} ns");
        assert_eq!(st.epoch(stamp), max_epoch, "bucket of {bucket_nanos} ns");
        assert!(st.gen_bits >= 1);
    }
    assert_eq!(Stamps::for_bucket(1_000 * MS).gen_bits, 28);
}

#[test]
fn an_outcome_of_an_older_generation_is_dropped_and_never_trips() {
    let w = TimeWindow::new(10_000, rule(0.5, 1, None, 1.0));
    assert!(!w.record(3, 0, OK));
    assert!(!w.record(2, 0, FAIL));
    assert_eq!(w.counts(3, 0).failures, 0);
    assert_eq!(w.counts(2, 0), Counts::default());
}

#[test]
fn the_time_window_keeps_outcomes_nine_to_ten_buckets() {
    let w = TimeWindow::new(100, rule(1.0, 100, None, 1.0));
    w.record(0, 5 * MS, FAIL); // epoch 0 (10 ms buckets)
    assert_eq!(w.counts(0, 99 * MS).calls, 1);
    assert_eq!(w.counts(0, 100 * MS).calls, 0);
}

#[test]
fn only_untimed_windows_with_buckets_of_100_ms_or_more_place_by_the_coarse_clock() {
    assert!(TimeWindow::new(1_000, rule(0.5, 1, None, 1.0)).coarse);
    assert!(!TimeWindow::new(999, rule(0.5, 1, None, 1.0)).coarse);
    assert!(!TimeWindow::new(60_000, rule(0.5, 1, Some(100), 1.0)).coarse);
    // A custom clock has no coarse reading: both are the same call.
    let clock = ClockSource::of(crate::ManualClock::new());
    let w = TimeWindow::new(1_000, rule(0.5, 1, None, 1.0));
    assert_eq!(w.now(&clock), clock.now());
}

/// The bucket protocol under loom's model checker: every interleaving of two
/// outcomes racing into a bucket that must be emptied first keeps both.
/// Run with `RUSTFLAGS="--cfg loom" cargo test -p breaker-core --lib loom_`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::super::*;
    use crate::config::RateThresholds;
    use loom::sync::Arc;

    const MS: u64 = 1_000_000;

    fn counting() -> TimeWindow {
        TimeWindow::new(
            10,
            Rule::new(&RateThresholds {
                failure_rate: 1.0,
                min_calls: u32::MAX,
                slow_call_ms: None,
                slow_call_rate: 1.0,
            }),
        )
    }

    #[test]
    fn loom_two_outcomes_racing_a_bucket_rollover_are_both_kept() {
        loom::model(|| {
            let w = Arc::new(counting());
            // Epoch 0 holds an old outcome; both threads record in epoch 10,
            // which lives in the same bucket and must empty it first.
            w.record(
                0,
                0,
                Outcome {
                    failed: true,
                    slow: false,
                },
            );
            let handles: Vec<_> = (0..2)
                .map(|i| {
                    let w = Arc::clone(&w);
                    loom::thread::spawn(move || {
                        w.record(
                            0,
                            10 * MS,
                            Outcome {
                                failed: i == 0,
                                slow: false,
                            },
                        );
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            let c = w.counts(0, 10 * MS);
            assert_eq!(c.calls, 2);
            assert_eq!(c.failures, 1);
        });
    }

    #[test]
    fn loom_a_stale_generation_racing_a_new_one_never_mixes_in() {
        loom::model(|| {
            let w = Arc::new(counting());
            let old = {
                let w = Arc::clone(&w);
                loom::thread::spawn(move || {
                    w.record(
                        4,
                        MS,
                        Outcome {
                            failed: true,
                            slow: false,
                        },
                    );
                })
            };
            w.record(
                5,
                MS,
                Outcome {
                    failed: false,
                    slow: false,
                },
            );
            old.join().unwrap();
            let c = w.counts(5, MS);
            assert_eq!(c.calls, 1);
            assert_eq!(c.failures, 0);
        });
    }
}
