//! The OpenTelemetry instruments as the SDK's in-memory exporter receives
//! them: every series a Prometheus scrape of the same registry holds is a data
//! point, under the instrument and attributes the docs' OpenTelemetry table
//! names, with the same value, and there is nothing else; the worst keys come
//! only when asked; and a group created after registration shows at the next
//! collection.

#![cfg(all(feature = "otel", feature = "metrics", feature = "prometheus"))]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use breakerbox::observe::otel::opentelemetry::metrics::MeterProvider as _;
use breakerbox::observe::otel::BreakerInstruments;
use breakerbox::{Config, ManualClock, Registry};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};

#[allow(dead_code)]
#[path = "support/exposition.rs"]
mod exposition;

#[allow(dead_code)]
#[path = "support/exporters.rs"]
mod exporters;

use exporters::{scraped, scraped_opt_in, Series};

/// The rows of the docs' OpenTelemetry table: each Prometheus series (a
/// histogram's `_bucket`, `_sum` and `_count` apart) by its instrument.
fn documented() -> BTreeMap<String, String> {
    let docs = include_str!("../src/observe/mod.rs");
    let (_, otel) = docs.split_once("//! # OpenTelemetry").unwrap();
    otel.lines()
        .filter_map(|line| line.strip_prefix("//! | `breaker_"))
        .map(|row| {
            let cells: Vec<&str> = row.split(" | ").collect();
            let prometheus = format!("breaker_{}", cells[0].trim_end_matches('`'));
            (cells[1].trim_matches('`').to_owned(), prometheus)
        })
        .collect()
}

/// The Prometheus label of an attribute of the instrument `instrument`.
fn label(instrument: &str, attribute: &str) -> String {
    match attribute {
        "resilience.pipeline.name" => "name",
        "resilience.circuit_breaker.state" if instrument.ends_with("transitions") => "to",
        "resilience.circuit_breaker.state" => "state",
        "resilience.circuit_breaker.previous_state" => "from",
        "resilience.circuit_breaker.probe.result" | "resilience.circuit_breaker.call.result" => {
            "kind"
        }
        "resilience.circuit_breaker.partition" => "key",
        "le" => "le",
        other => panic!("{instrument}: attribute {other} is not in the docs' table"),
    }
    .to_owned()
}

/// One collection of `instruments` by the SDK's in-memory exporter: every
/// data point as the Prometheus series the docs' table maps it to, and its
/// value; each instrument once.
fn collected(instruments: BreakerInstruments<Arc<Registry>>) -> BTreeMap<Series, f64> {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_periodic_exporter(exporter.clone())
        .build();
    instruments.register(&provider.meter("breakerbox"));
    provider.force_flush().unwrap();
    let documented = documented();
    let mut all = BTreeMap::new();
    let mut instruments_seen = BTreeSet::new();
    let finished = exporter.get_finished_metrics().unwrap();
    let last = finished.last().expect("a collection");
    for metric in last.scope_metrics().flat_map(|s| s.metrics()) {
        let name = metric.name();
        assert!(instruments_seen.insert(name.to_owned()), "{name} twice");
        let prometheus = documented
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in the docs' table"));
        let mut point = |attributes: &mut dyn Iterator<Item = &opentelemetry::KeyValue>,
                         value: f64| {
            let labels = attributes
                .map(|kv| (label(name, kv.key.as_str()), kv.value.as_str().into_owned()))
                .collect();
            let series = (prometheus.clone(), labels);
            assert!(
                all.insert(series, value).is_none(),
                "{name}: a series twice"
            );
        };
        match metric.data() {
            AggregatedMetrics::U64(MetricData::Sum(sum)) => {
                assert!(sum.is_monotonic(), "{name}");
                for p in sum.data_points() {
                    point(&mut p.attributes(), p.value() as f64);
                }
            }
            AggregatedMetrics::F64(MetricData::Sum(sum)) => {
                assert!(sum.is_monotonic(), "{name}");
                for p in sum.data_points() {
                    point(&mut p.attributes(), p.value());
                }
            }
            AggregatedMetrics::F64(MetricData::Gauge(gauge)) => {
                for p in gauge.data_points() {
                    point(&mut p.attributes(), p.value());
                }
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    all
}

/// A registry in which every family has series with something in them: a
/// tripped breaker past its open duration, a window with slow calls, the
/// latency rule, a bulkhead and a histogram, an empty window, and a keyed
/// group with an open key.
fn every_kind_of_group() -> Arc<Registry> {
    let clock = ManualClock::new();
    let breakers = Arc::new(Registry::with_clock(clock.clone()));
    let tripping = Config::builder()
        .threshold(2)
        .open_duration(Duration::from_secs(5))
        .build()
        .unwrap();
    let search = breakers.breaker("search", &tripping);
    search.try_acquire().unwrap().success();
    search.try_acquire().unwrap().failure();
    search.try_acquire().unwrap().failure();
    assert!(search.try_acquire().is_err());

    let windowed = Config::builder()
        .window_calls(10)
        .min_calls(3)
        .slow_call(Duration::from_millis(100))
        .latency_p99(Duration::from_secs(1))
        .max_concurrent(4)
        .histogram(Duration::from_secs(1))
        .build()
        .unwrap();
    let geo = breakers.breaker("geo \"eu\"", &windowed);
    geo.try_acquire().unwrap().success();
    geo.try_acquire().unwrap().failure();
    let slow = geo.try_acquire().unwrap();
    clock.advance(Duration::from_millis(150));
    slow.success();
    breakers.breaker("quiet", &windowed);

    let keyed = Config::builder()
        .threshold(1)
        .histogram(Duration::from_secs(1))
        .build()
        .unwrap();
    let hosts = breakers.keyed::<u64>("hosts", &keyed, 10).unwrap();
    hosts.breaker(&1).try_acquire().unwrap().success();
    hosts.breaker(&2).try_acquire().unwrap().failure();
    assert!(hosts.breaker(&2).try_acquire().is_err());
    clock.advance(Duration::from_secs(1));
    breakers
}

#[test]
fn the_sdk_collects_every_series_prometheus_scrapes_with_its_value() {
    let breakers = every_kind_of_group();
    let collected = collected(BreakerInstruments::new(Arc::clone(&breakers)));
    let scraped = scraped(&breakers);
    assert!(scraped.len() > 100, "{}", scraped.len());
    let missing: Vec<_> = scraped
        .iter()
        .filter(|(series, value)| collected.get(*series) != Some(value))
        .map(|(series, value)| (series, value, collected.get(series)))
        .collect();
    assert!(missing.is_empty(), "{missing:#?}");
    let extra: Vec<_> = collected
        .keys()
        .filter(|series| !scraped.contains_key(*series))
        .collect();
    assert!(extra.is_empty(), "{extra:#?}");
}

#[test]
fn the_worst_keys_are_collected_only_when_asked_as_prometheus_scrapes_them() {
    let breakers = every_kind_of_group();
    let worst = |series: &Series| series.0.starts_with("breaker_keyed_worst_key_");
    let without = collected(BreakerInstruments::new(Arc::clone(&breakers)));
    assert!(!without.keys().any(worst));

    let with = collected(BreakerInstruments::new(Arc::clone(&breakers)).worst_keys(10));
    let collected: BTreeMap<_, _> = with.into_iter().filter(|(s, _)| worst(s)).collect();
    let scraped: BTreeMap<_, _> = scraped_opt_in(&breakers)
        .into_iter()
        .filter(|(s, _)| worst(s))
        .collect();
    assert_eq!(collected.len(), 3, "{collected:#?}");
    assert_eq!(collected, scraped);
}

#[test]
fn the_docs_table_lists_every_instrument_and_no_other() {
    let breakers = every_kind_of_group();
    let collected: BTreeSet<String> =
        collected(BreakerInstruments::new(Arc::clone(&breakers)).worst_keys(10))
            .into_keys()
            .map(|(prometheus, _)| prometheus)
            .collect();
    let documented: BTreeSet<String> = documented().into_values().collect();
    assert_eq!(collected, documented);
}

#[test]
fn a_group_created_after_registration_shows_at_the_next_collection() {
    let breakers = Arc::new(Registry::new());
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_periodic_exporter(exporter.clone())
        .build();
    BreakerInstruments::new(Arc::clone(&breakers)).register(&provider.meter("breakerbox"));
    breakers
        .breaker("late", &Config::default())
        .call(|| Ok::<_, ()>(()))
        .unwrap();
    provider.force_flush().unwrap();
    let finished = exporter.get_finished_metrics().unwrap();
    let calls = finished
        .last()
        .unwrap()
        .scope_metrics()
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == "breaker.calls")
        .expect("breaker.calls");
    let AggregatedMetrics::U64(MetricData::Sum(sum)) = calls.data() else {
        panic!("{:?}", calls.data());
    };
    let successful = sum.data_points().find(|p| {
        p.attributes()
            .any(|kv| kv.key.as_str().ends_with("call.result") && kv.value.as_str() == "successful")
    });
    assert_eq!(successful.map(|p| p.value()), Some(1));
}
