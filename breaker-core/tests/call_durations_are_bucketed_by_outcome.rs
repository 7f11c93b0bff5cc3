//! `histogram_ms`: every call that ends is counted by outcome in the bucket of
//! its duration from claim to verdict on the breaker's clock; a keyed group
//! counts all its keys in one histogram; racing threads lose no call; a group
//! without the key keeps none; and a live reconfiguration cannot change it.

use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, Registry};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn with_histogram(max: Duration) -> Config {
    Config::builder()
        .threshold(100)
        .histogram(max)
        .build()
        .unwrap()
}

#[test]
fn each_outcome_is_counted_in_the_bucket_of_its_duration() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("durations", with_histogram(ms(1_000)), clock.clone());
    for (took, verdict) in [
        (ms(0), "success"),
        (ms(3), "success"),
        (ms(5), "success"),
        (ms(70), "failure"),
        (ms(2_000), "failure"),
        (ms(20), "ignore"),
    ] {
        let permit = breaker.try_acquire().unwrap();
        clock.advance(took);
        match verdict {
            "success" => permit.success(),
            "failure" => permit.failure(),
            _ => permit.ignore(),
        }
    }
    let durations = breaker.metrics().call_durations.expect("a histogram");
    // 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000 ms, then every longer call.
    assert_eq!(durations.bounds().len(), 10);
    assert_eq!(durations.bounds().last(), Some(&ms(1_000)));
    // 5 ms exactly is in the bucket up to 5 ms.
    assert_eq!(
        durations.successful.buckets,
        [1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(durations.successful.count, 3);
    assert_eq!(durations.successful.sum, ms(8));
    assert_eq!(durations.failed.buckets, [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
    assert_eq!(durations.failed.sum, ms(2_070));
    assert_eq!(
        durations.ignored.cumulative().collect::<Vec<_>>(),
        [0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]
    );
    let labels: Vec<_> = durations.bucket_labels().collect();
    assert_eq!(labels.first(), Some(&"0.001"));
    assert_eq!(labels[labels.len() - 2..], ["1", "+Inf"]);
}

#[test]
fn probes_and_stale_outcomes_are_calls_too_and_abandoned_ones_are_not() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .threshold(1)
        .open(ms(100))
        .histogram(ms(1_000))
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("probes", config, clock.clone());
    // A slow call admitted closed, outlived by a trip: stale, still timed.
    let slow = breaker.try_acquire().unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.advance(ms(100));
    slow.success();
    // The probe, 40 ms.
    let probe = breaker.try_acquire().unwrap();
    assert!(probe.is_probe());
    clock.advance(ms(40));
    probe.success();
    // Abandoned: dropped without a verdict.
    let abandoned = breaker.try_acquire().unwrap();
    clock.advance(ms(7));
    drop(abandoned);

    let m = breaker.metrics();
    assert_eq!((m.stale, m.abandoned), (1, 1));
    let durations = m.call_durations.unwrap();
    assert_eq!(
        durations.successful.count, 2,
        "the stale call and the probe"
    );
    assert_eq!(durations.successful.sum, ms(140));
    assert_eq!(durations.failed.count, 1);
    assert_eq!(durations.ignored.count, 0);
}

#[test]
fn a_call_dropped_at_its_deadline_is_a_failure_lasting_at_least_the_deadline() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("deadline", with_histogram(ms(1_000)), clock.clone());
    let permit = breaker.try_acquire().unwrap();
    // The timer fired; the clock reads less than the deadline since the claim.
    clock.advance(ms(30));
    let _ = breaker_core::__private::timed_out(&breaker, permit, ms(250));
    let durations = breaker.metrics().call_durations.unwrap();
    assert_eq!(durations.failed.count, 1);
    assert_eq!(durations.failed.sum, ms(250));
    assert_eq!(durations.failed.buckets[7], 1, "in the bucket up to 250 ms");
}

#[test]
fn a_group_without_the_key_keeps_no_histogram() {
    let breaker = Breaker::new("plain", Config::default());
    breaker.try_acquire().unwrap().success();
    assert_eq!(breaker.metrics().call_durations, None);
    let window = Config::builder()
        .window_calls(10)
        .slow_call(ms(100))
        .build()
        .unwrap();
    let timed = Breaker::new("timed", window);
    timed.try_acquire().unwrap().success();
    assert_eq!(timed.metrics().call_durations, None);
}

#[test]
fn a_keyed_group_counts_every_key_in_one_histogram() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let group = registry
        .keyed::<u64>("hosts", &with_histogram(ms(100)), 100)
        .unwrap();
    for key in 0..50u64 {
        let breaker = group.breaker(&key);
        let permit = breaker.try_acquire().unwrap();
        clock.advance(ms(key % 3));
        permit.success();
    }
    let keyed = group.metrics();
    let durations = keyed.call_durations.expect("the group's histogram");
    assert_eq!(durations.successful.count, 50);
    // 17 calls of 0 ms, 17 of 1 ms (both in the first bucket), 16 of 2 ms.
    assert_eq!(durations.successful.buckets[..2], [34, 16]);
    // A key's own metrics leave the group's histogram out.
    assert_eq!(group.breaker(&1).metrics().call_durations, None);
    assert_eq!(registry.keyed_metrics()[0].call_durations, Some(durations));
}

#[test]
fn racing_threads_lose_no_call() {
    let breaker = Breaker::new("raced", with_histogram(ms(10_000)));
    std::thread::scope(|s| {
        for t in 0..4 {
            let breaker = &breaker;
            s.spawn(move || {
                for i in 0..5_000 {
                    let permit = breaker.try_acquire().unwrap();
                    if (i + t) % 2 == 0 {
                        permit.success();
                    } else {
                        permit.failure();
                    }
                }
            });
        }
    });
    let m = breaker.metrics();
    let durations = m.call_durations.unwrap();
    assert_eq!(durations.successful.count, 10_000);
    assert_eq!(durations.failed.count, 10_000);
    assert_eq!(durations.successful.count, m.successes);
    assert_eq!(durations.failed.count, m.failures);
    let total: u64 = durations.failed.buckets.iter().sum();
    assert_eq!(total, 10_000);
}

#[test]
fn a_live_reconfiguration_may_not_turn_it_on_off_or_change_it() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("fixed", with_histogram(ms(1_000)), clock.clone());
    let permit = breaker.try_acquire().unwrap();
    clock.advance(ms(3));
    permit.success();
    for asked in [
        Config::builder().threshold(100).build().unwrap(),
        with_histogram(ms(5_000)),
    ] {
        let refused = breaker.reconfigure(asked).unwrap_err();
        assert_eq!(refused.key(), Some("histogram_ms"), "{refused}");
        assert!(refused.to_string().contains("restart"), "{refused}");
    }
    assert_eq!(breaker.config().histogram(), Some(ms(1_000)));
    // What may change live keeps the histogram and what it holds.
    let lower = Config::builder()
        .threshold(3)
        .histogram(ms(1_000))
        .build()
        .unwrap();
    breaker.reconfigure(lower).unwrap();
    assert_eq!(
        breaker.metrics().call_durations.unwrap().successful.count,
        1
    );
    let plain = Breaker::new("plain-fixed", Config::default());
    let refused = plain.reconfigure(with_histogram(ms(10))).unwrap_err();
    assert_eq!(refused.key(), Some("histogram_ms"));
}

#[test]
fn the_rule_refuses_zero_and_more_than_a_day() {
    for bad in [0, Config::MAX_HISTOGRAM_MS + 1] {
        let err = Config::builder().histogram(ms(bad)).build().unwrap_err();
        assert_eq!(err.key(), "histogram_ms", "{err}");
        assert!(
            err.to_string().contains("`histogram_ms` must be 1 to"),
            "{err}"
        );
    }
    let day = Config::builder()
        .histogram(ms(Config::MAX_HISTOGRAM_MS))
        .build()
        .unwrap();
    let breaker = Breaker::new("a-day", day);
    breaker.try_acquire().unwrap().success();
    let durations = breaker.metrics().call_durations.unwrap();
    assert_eq!(durations.bounds().last(), Some(&ms(100_000_000)));
    assert_eq!(durations.bucket_labels().count(), 26);
}
