//! The `metrics` facade exporter: `publish` gives a recorder the figures of the
//! registry's snapshot, under the names and labels the Prometheus exporter uses,
//! with the same values; counters are set, not added to, and a group created
//! since the last publish is in the next.

#![cfg(all(feature = "metrics", feature = "prometheus"))]

use std::sync::Arc;
use std::time::Duration;

use breakerbox::observe::metrics::publish;
use breakerbox::{Config, ManualClock, Registry};
use metrics_util::debugging::{DebugValue, DebuggingRecorder};

#[allow(dead_code)]
#[path = "support/exposition.rs"]
mod exposition;

#[path = "support/exporters.rs"]
mod exporters;

use exporters::{published, scraped, series};

#[test]
fn publish_gives_a_recorder_what_prometheus_scrapes() {
    let clock = ManualClock::new();
    let breakers = Arc::new(Registry::with_clock(clock.clone()));
    let tripping = Config::builder()
        .threshold(2)
        .open(Duration::from_secs(5))
        .build()
        .unwrap();
    let search = breakers.breaker("search", &tripping);
    search.try_acquire().unwrap().success();
    search.try_acquire().unwrap().failure();
    search.try_acquire().unwrap().failure();
    assert!(search.try_acquire().is_err());
    clock.advance(Duration::from_secs(2));

    let windowed = Config::builder()
        .window_calls(10)
        .min_calls(3)
        .slow_call(Duration::from_millis(100))
        .histogram(Duration::from_secs(1))
        .build()
        .unwrap();
    let geo = breakers.breaker("geo \"eu\"", &windowed);
    geo.try_acquire().unwrap().success();
    geo.try_acquire().unwrap().failure();
    let slow = geo.try_acquire().unwrap();
    clock.advance(Duration::from_millis(150));
    slow.success();
    breakers.breaker("quiet", &windowed); // a window with nothing in it

    let published = published(&breakers);
    let scraped = scraped(&breakers);

    // Every series Prometheus has, the recorder has, with the same value.
    for (series, value) in &scraped {
        assert_eq!(published.get(series), Some(value), "{series:?}");
    }
    // And no other series: the rates of the window below `min_calls` (the
    // empty one) read -1 in both.
    let extra: Vec<_> = published
        .iter()
        .filter(|(series, _)| !scraped.contains_key(*series))
        .collect();
    assert!(extra.is_empty(), "{extra:#?}");
    for rate in ["breaker_failure_rate", "breaker_slow_call_rate"] {
        let quiet = series(rate, &[("name", "quiet")]);
        assert_eq!((published[&quiet], scraped[&quiet]), (-1.0, -1.0), "{rate}");
    }

    // And the values are the snapshot's.
    let m = breakers.snapshot();
    let search = m.group("search").unwrap();
    let calls = |group, kind| series("breaker_calls_total", &[("name", group), ("kind", kind)]);
    assert_eq!(
        published[&calls("search", "failed")],
        search.failures as f64
    );
    assert_eq!(published[&calls("search", "not_permitted")], 1.0);
    let retry = series("breaker_retry_after_seconds", &[("name", "search")]);
    let left = Duration::from_millis(5_000 - 2_000 - 150);
    assert_eq!(search.retry_after, Some(left));
    assert_eq!(published[&retry], left.as_secs_f64());
    let geo = series("breaker_slow_call_rate", &[("name", "geo \"eu\"")]);
    assert_eq!(published[&geo], 1.0 / 3.0);
}

#[test]
fn publishing_twice_sets_the_counters_instead_of_adding_to_them() {
    let breakers = Registry::new();
    let search = breakers.breaker("search", &Config::default());
    for _ in 0..3 {
        search.try_acquire().unwrap().success();
    }
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        publish(&breakers);
        publish(&breakers);
    });
    let ok = series(
        "breaker_calls_total",
        &[("name", "search"), ("kind", "successful")],
    );
    let counted = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .find(|(key, ..)| {
            let key = key.key();
            let labels = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            (key.name().to_owned(), labels) == ok
        })
        .map(|(.., value)| value);
    assert_eq!(counted, Some(DebugValue::Counter(3)));
}

#[test]
fn a_group_created_since_the_last_publish_is_in_the_next() {
    let breakers = Registry::new();
    breakers.breaker("early", &Config::default());
    let before = published(&breakers);
    breakers.breaker("late", &Config::default());
    let after = published(&breakers);

    let state = |group| series("breaker_state", &[("name", group), ("state", "closed")]);
    assert_eq!(before.get(&state("late")), None);
    assert_eq!(after.get(&state("late")), Some(&1.0));
    assert_eq!(after.get(&state("early")), Some(&1.0));
}

#[test]
fn a_rate_below_min_calls_reads_minus_one_in_both_exporters_as_in_resilience4j() {
    let breakers = Arc::new(Registry::new());
    let config = Config::builder()
        .window_calls(20)
        .min_calls(10)
        .failure_rate(0.5)
        .slow_call(Duration::from_secs(60))
        .build()
        .unwrap();
    let orders = breakers.breaker("orders", &config);
    let failure_rate = series("breaker_failure_rate", &[("name", "orders")]);
    let slow_call_rate = series("breaker_slow_call_rate", &[("name", "orders")]);
    let both = |rate| (published(&breakers)[rate], scraped(&breakers)[rate]);

    // One failure among the first calls is not a failure rate of 1.
    orders.try_acquire().unwrap().failure();
    assert_eq!(both(&failure_rate), (-1.0, -1.0));
    assert_eq!(both(&slow_call_rate), (-1.0, -1.0));
    for _ in 0..8 {
        orders.try_acquire().unwrap().success();
    }
    assert_eq!(both(&failure_rate), (-1.0, -1.0), "9 of 10");

    // From `min_calls` outcomes on, the rate is the window's.
    orders.try_acquire().unwrap().success();
    assert_eq!(both(&failure_rate), (0.1, 0.1));
    assert_eq!(both(&slow_call_rate), (0.0, 0.0));
}
