//! What both exporters publish for a registry, as series (a name and its sorted
//! labels) with their values: scraped through Prometheus's text format (read by
//! the strict reader in `exposition.rs`) and recorded through the `metrics`
//! facade. Shared by the exporter tests, which compare the two.

use std::collections::BTreeMap;
use std::sync::Arc;

use breakerbox::observe::metrics::publish;
use breakerbox::observe::prometheus::prometheus_client::encoding::prometheus_text;
use breakerbox::observe::prometheus::prometheus_client::registry::Registry as Metrics;
use breakerbox::observe::prometheus::BreakerCollector;
use breakerbox::Registry;
use metrics_util::debugging::{DebugValue, DebuggingRecorder};

use super::exposition;

/// A series: its name and its labels, sorted.
pub type Series = (String, BTreeMap<String, String>);

/// The series `name` with `labels`.
pub fn series(name: &str, labels: &[(&str, &str)]) -> Series {
    let labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (name.to_owned(), labels)
}

/// Every series a Prometheus scrape of `breakers` holds, and its value.
pub fn scraped(breakers: &Arc<Registry>) -> BTreeMap<Series, f64> {
    scrape(BreakerCollector::new(Arc::clone(breakers)))
}

/// As [`scraped`], with the opt-in series on: flapping over 5 minutes, and
/// each keyed group's 10 worst keys.
#[allow(dead_code)] // Read by one of the tests that include this file.
pub fn scraped_opt_in(breakers: &Arc<Registry>) -> BTreeMap<Series, f64> {
    let collector = BreakerCollector::new(Arc::clone(breakers))
        .flapping(std::time::Duration::from_secs(300))
        .worst_keys(10);
    scrape(collector)
}

fn scrape(collector: BreakerCollector<Arc<Registry>>) -> BTreeMap<Series, f64> {
    let mut metrics = Metrics::default();
    metrics.register_collector(Box::new(collector));
    let mut text = String::new();
    prometheus_text::encode(&mut text, &metrics).unwrap();
    exposition::parse(&text)
        .unwrap_or_else(|why| panic!("{why}\n{text}"))
        .samples
        .into_iter()
        .map(|s| ((s.name, s.labels), s.value))
        .collect()
}

/// What `publish(breakers)` tells a recorder: every series and its value
/// (counters as `f64` too); each name must be described.
pub fn published(breakers: &Registry) -> BTreeMap<Series, f64> {
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
