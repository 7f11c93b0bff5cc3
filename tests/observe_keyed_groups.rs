//! Keyed groups in the exporters: one series set per group, never per key
//! (`breaker_keyed_*`), whose values are the group's `KeyedMetrics` (keys by
//! state, `max_keys`, evictions, counts summed over every key ever held),
//! the same through Prometheus and the `metrics` facade; and a registry with no
//! keyed group exports no keyed family at all.

#![cfg(all(feature = "metrics", feature = "prometheus"))]

use std::collections::BTreeMap;
use std::sync::Arc;

use breaker::observe::metrics::publish;
use breaker::observe::prometheus::prometheus_client::encoding::prometheus_text;
use breaker::observe::prometheus::prometheus_client::registry::Registry as Metrics;
use breaker::observe::prometheus::BreakerCollector;
use breaker::{Config, ManualClock, Registry};
use metrics_util::debugging::{DebugValue, DebuggingRecorder};

#[allow(dead_code)]
#[path = "support/exposition.rs"]
mod exposition;

type Series = (String, BTreeMap<String, String>);

fn series(name: &str, labels: &[(&str, &str)]) -> Series {
    let labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (name.to_owned(), labels)
}

fn scraped(breakers: &Arc<Registry>) -> BTreeMap<Series, f64> {
    let mut metrics = Metrics::default();
    metrics.register_collector(Box::new(BreakerCollector::new(Arc::clone(breakers))));
    let mut text = String::new();
    prometheus_text::encode(&mut text, &metrics).unwrap();
    exposition::parse(&text)
        .unwrap_or_else(|why| panic!("{why}\n{text}"))
        .samples
        .into_iter()
        .map(|s| ((s.name, s.labels), s.value))
        .collect()
}

fn published(breakers: &Registry) -> BTreeMap<Series, f64> {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || publish(breakers));
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _unit, description, value)| {
            let key = key.key();
            assert!(description.is_some(), "{} is not described", key.name());
            let labels = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            let value = match value {
                DebugValue::Counter(count) => count as f64,
                DebugValue::Gauge(level) => level.0,
                DebugValue::Histogram(_) => panic!("{} is a histogram", key.name()),
            };
            ((key.name().to_owned(), labels), value)
        })
        .collect()
}

fn keyed_only(all: BTreeMap<Series, f64>) -> BTreeMap<Series, f64> {
    all.into_iter()
        .filter(|((name, _), _)| name.starts_with("breaker_keyed_"))
        .collect()
}

#[test]
fn a_keyed_group_is_exported_as_one_aggregate_by_both_exporters() {
    let breakers = Arc::new(Registry::with_clock(ManualClock::new()));
    let strict = Config::builder().threshold(1).build().unwrap();
    let hosts = breakers.keyed::<String>("hosts", &strict, 4).unwrap();
    // Two keys open, then enough new keys to evict idle ones.
    for host in ["down-1", "down-2"] {
        hosts.breaker(host).try_acquire().unwrap().failure();
    }
    for i in 0..20 {
        hosts
            .breaker(&format!("up-{i}"))
            .try_acquire()
            .unwrap()
            .success();
    }
    assert!(hosts.breaker("down-1").try_acquire().is_err());
    let m = hosts.metrics();
    assert!(m.evictions > 0, "the group evicted");

    let scrape = keyed_only(scraped(&breakers));
    let name = ("name", "hosts");
    let want: BTreeMap<Series, f64> = [
        (
            series("breaker_keyed_keys", &[name, ("state", "closed")]),
            (m.keys - 2) as f64,
        ),
        (
            series("breaker_keyed_keys", &[name, ("state", "open")]),
            2.0,
        ),
        (
            series("breaker_keyed_keys", &[name, ("state", "half_open")]),
            0.0,
        ),
        (series("breaker_keyed_max_keys", &[name]), 4.0),
        (
            series("breaker_keyed_evictions_total", &[name]),
            m.evictions as f64,
        ),
        (
            series("breaker_keyed_calls_total", &[name, ("kind", "successful")]),
            20.0,
        ),
        (
            series("breaker_keyed_calls_total", &[name, ("kind", "failed")]),
            2.0,
        ),
        (
            series("breaker_keyed_calls_total", &[name, ("kind", "ignored")]),
            0.0,
        ),
        (
            series(
                "breaker_keyed_calls_total",
                &[name, ("kind", "not_permitted")],
            ),
            1.0,
        ),
        (
            series("breaker_keyed_calls_total", &[name, ("kind", "abandoned")]),
            0.0,
        ),
        (
            series("breaker_keyed_calls_total", &[name, ("kind", "stale")]),
            0.0,
        ),
        (series("breaker_keyed_opened_total", &[name]), 2.0),
    ]
    .into_iter()
    .collect();
    assert_eq!(scrape, want, "one aggregate per group, no per-key series");
    assert_eq!(
        keyed_only(published(&breakers)),
        want,
        "the facade publishes the same"
    );
}

#[test]
fn a_registry_without_keyed_groups_exports_no_keyed_family() {
    let breakers = Arc::new(Registry::with_clock(ManualClock::new()));
    breakers.breaker("plain", &Config::default());
    assert!(keyed_only(scraped(&breakers)).is_empty());
    assert!(keyed_only(published(&breakers)).is_empty());
}
