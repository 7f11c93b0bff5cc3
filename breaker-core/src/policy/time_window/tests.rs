//! The time window's stamps and buckets, alone.

use super::super::rule::fixtures::{rule, FAIL, OK};
use super::*;

const MS: u64 = 1_000_000;

#[test]
fn generations_order_across_the_state_words_wrap() {
    assert!(is_later(5, 4));
    assert!(!is_later(4, 4));
    assert!(!is_later(4, 5));
    assert!(is_later(0, GEN_MASK), "the wrap of the word's generation");
    assert!(!is_later(GEN_MASK, 0));
    // Far beyond the 18-bit tag of 1 ms buckets: still ordered.
    assert!(is_later(3 + (1 << 18), 3));
    assert!(is_later(3 + (1 << 17) + 1, 3));
    let st = Stamps::for_bucket(MS);
    assert_eq!(st.gen_bits, 18);
    assert_eq!(st.make(7, st.gen_mask() + 3), (7 << 18) | 2);
}

#[test]
fn a_bucket_belongs_to_its_whole_generation_not_its_tag() {
    // Generations 2^18 apart share a stamp tag in 1 ms buckets: the old one's
    // outcomes are not the new one's, and the new one's are counted.
    let w = TimeWindow::new(10, rule(0.5, 4, None, 1.0), true);
    let (old, new) = (3, 3 + (1 << 18));
    for _ in 0..3 {
        assert!(!w.record(old, 5 * MS, FAIL));
    }
    assert_eq!(w.counts(new, 5 * MS), Counts::default());
    assert!(
        !w.record(new, 5 * MS, FAIL),
        "one failure in four trips nothing"
    );
    assert_eq!(w.counts(new, 5 * MS).failures, 1);
    // ...and a late outcome of the old generation is dropped.
    assert!(!w.record(old, 5 * MS, FAIL));
    assert_eq!(w.counts(new, 5 * MS).calls, 1);
    assert_eq!(w.counts(old, 5 * MS), Counts::default());
}

#[test]
fn an_outcome_after_the_clock_steps_back_is_counted_with_the_later_bucket() {
    let w = TimeWindow::new(10, rule(0.5, 4, None, 1.0), true);
    w.record(1, 10_000 * MS, OK);
    // 9 s is epoch 9000, the same bucket as 10 s's epoch 10000.
    for _ in 0..2 {
        assert!(!w.record(1, 9_000 * MS, FAIL), "under min_calls");
    }
    assert!(w.record(1, 9_000 * MS, FAIL), "three failures in four trip");
    let at_9s = w.counts(1, 9_000 * MS);
    assert_eq!((at_9s.calls, at_9s.failures), (4, 3));
    // The later bucket expires when the clock passes it by a window.
    assert_eq!(w.counts(1, 10_009 * MS).calls, 4);
    assert_eq!(w.counts(1, 10_010 * MS).calls, 0);
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
    let w = TimeWindow::new(10_000, rule(0.5, 1, None, 1.0), true);
    assert!(!w.record(3, 0, OK));
    assert!(!w.record(2, 0, FAIL));
    assert_eq!(w.counts(3, 0).failures, 0);
    assert_eq!(w.counts(2, 0), Counts::default());
}

#[test]
fn the_time_window_keeps_outcomes_nine_to_ten_buckets() {
    let w = TimeWindow::new(100, rule(1.0, 100, None, 1.0), true);
    w.record(0, 5 * MS, FAIL); // epoch 0 (10 ms buckets)
    assert_eq!(w.counts(0, 99 * MS).calls, 1);
    assert_eq!(w.counts(0, 100 * MS).calls, 0);
}

#[test]
fn only_untimed_windows_with_buckets_of_100_ms_or_more_place_by_the_coarse_clock() {
    assert!(TimeWindow::new(1_000, rule(0.5, 1, None, 1.0), true).coarse);
    assert!(!TimeWindow::new(999, rule(0.5, 1, None, 1.0), true).coarse);
    assert!(!TimeWindow::new(60_000, rule(0.5, 1, Some(100), 1.0), true).coarse);
    // A custom clock has no coarse reading: the window reads it as it is.
    assert!(!TimeWindow::new(1_000, rule(0.5, 1, None, 1.0), false).coarse);
    let clock = ClockSource::of(crate::ManualClock::new());
    let w = TimeWindow::new(1_000, rule(0.5, 1, None, 1.0), false);
    assert_eq!(w.now(&clock), clock.now());
}

/// The bucket protocol under loom's model checker: every interleaving of two
/// outcomes racing into a bucket that must be emptied first keeps both.
/// Run with `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p breaker-core --release --lib loom_`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::super::*;
    use super::rule;
    use loom::sync::Arc;

    const MS: u64 = 1_000_000;

    fn counting() -> TimeWindow {
        TimeWindow::new(10, rule(1.0, u32::MAX, None, 1.0), true)
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
    fn loom_two_successes_racing_into_a_new_bucket_are_both_kept() {
        loom::model(|| {
            let w = Arc::new(counting());
            let ok = Outcome {
                failed: false,
                slow: false,
            };
            w.record(0, 0, ok);
            // Epoch 1 (1 ms buckets) starts in a bucket no outcome has
            // claimed: one success claims it, the other adds to it, by the
            // window's `hot` word or the whole way.
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let w = Arc::clone(&w);
                    loom::thread::spawn(move || {
                        w.record(0, MS, ok);
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            assert_eq!(w.counts(0, MS).calls, 3);
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

#[test]
fn the_success_that_completes_min_calls_among_failures_trips() {
    // 10 s window, 1 s buckets: every outcome here is in one bucket.
    let w = TimeWindow::new(10_000, rule(0.5, 4, None, 1.0), true);
    assert!(!w.record(1, 0, FAIL));
    assert!(!w.record(1, 0, FAIL));
    assert!(!w.record(1, 0, OK), "three calls, under min_calls");
    assert!(
        w.record(1, 0, OK),
        "the fourth call, a success, trips at 2/4"
    );
}

#[test]
fn a_success_judges_failures_in_another_bucket() {
    let w = TimeWindow::new(10_000, rule(0.5, 4, None, 1.0), true);
    for _ in 0..3 {
        assert!(!w.record(1, 0, FAIL), "under min_calls");
    }
    // Eight seconds on, the failures' bucket still counts: the success that
    // completes min_calls in a bucket of its own trips at 3/4.
    assert!(w.record(1, 8_000 * MS, OK));
}

#[test]
fn a_success_judges_failures_until_their_bucket_rotates_out() {
    let w = TimeWindow::new(10_000, rule(0.5, 2, None, 1.0), true);
    assert!(!w.record(1, 0, FAIL), "under min_calls");
    // Epoch 9: the failure's bucket (epoch 0) is the oldest that counts.
    assert!(w.record(1, 9_999 * MS, OK), "1/2 trips");
    let w = TimeWindow::new(10_000, rule(0.5, 2, None, 1.0), true);
    assert!(!w.record(1, 0, FAIL));
    // Epoch 10 claims the failure's bucket: the window holds one success.
    assert!(!w.record(1, 10_000 * MS, OK));
    assert!(!w.record(1, 10_000 * MS, OK));
    assert_eq!(w.counts(1, 10_000 * MS).failures, 0);
}

#[test]
fn a_failure_added_to_a_later_bucket_is_judged_by_later_successes() {
    let w = TimeWindow::new(10_000, rule(0.5, 4, None, 1.0), true);
    assert!(!w.record(1, 19_000 * MS, OK));
    // The clock steps back to 9 s: epoch 9's bucket holds epoch 19, and the
    // failures are added there.
    assert!(!w.record(1, 9_000 * MS, FAIL));
    assert!(!w.record(1, 9_000 * MS, FAIL));
    // At 28.5 s, epoch 28, epoch 19's bucket still counts; this success
    // completes min_calls at 2/4.
    assert!(w.record(1, 28_500 * MS, OK));
}

#[test]
fn a_success_in_a_window_of_successes_only_adds_to_its_bucket() {
    let w = TimeWindow::new(10_000, rule(0.5, 1, None, 1.0), true);
    for i in 0..30 {
        assert!(!w.record(1, i * 500 * MS, OK));
    }
    assert_eq!(w.counts(1, 14_500 * MS).calls, 20, "epochs 5 to 14");
    assert!(!w.record(1, 14_500 * MS, FAIL), "1/20 of failures");
    assert_eq!(w.counts(1, 14_500 * MS).failures, 1);
}

#[test]
fn a_slow_success_is_judged() {
    let w = TimeWindow::new(10_000, rule(1.0, 2, Some(100), 0.5), true);
    let slow = Outcome {
        failed: false,
        slow: true,
    };
    assert!(!w.record(1, 0, OK));
    assert!(w.record(1, 0, slow), "one slow call in two trips");
}

#[test]
fn a_rule_of_a_zero_rate_judges_every_success() {
    // The config refuses a rate of zero; the window still judges it as the
    // rule says: 0 failures in 1 call is at a rate of 0.
    let w = TimeWindow::new(10_000, rule(0.0, 2, None, 1.0), true);
    assert!(!w.record(1, 0, OK), "under min_calls");
    assert!(w.record(1, 0, OK), "two calls, none failed: at the rate");
}

#[test]
fn a_new_generation_claims_a_bucket_for_the_later_slice_it_holds() {
    // 10 s window, 1 s buckets: epochs 9 and 19 share bucket 9.
    let w = TimeWindow::new(10_000, rule(0.5, 100, None, 1.0), true);
    assert!(!w.record(1, 19_000 * MS, OK));
    // A transition, and the clock stepped back to 9 s: generation 2 takes
    // the bucket for epoch 19, the slice it held.
    assert!(!w.record(2, 9_000 * MS, OK));
    // Back at 19 s, a success finds the bucket of its slice and adds to it.
    assert!(!w.record(2, 19_000 * MS, OK));
    assert_eq!(w.counts(2, 19_000 * MS).calls, 2);
    assert_eq!(w.counts(2, 28_999 * MS).calls, 2);
    assert_eq!(w.counts(2, 29_000 * MS).calls, 0);
}
