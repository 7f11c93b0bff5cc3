//! The OpenTelemetry instruments as the SDK's in-memory exporter receives
//! them: every series a Prometheus scrape of the same registry holds is a data
//! point, under the instrument and attributes the docs' OpenTelemetry table
//! names, with the same value, and there is nothing else; the worst keys come
//! only when asked; a group created after registration shows at the next
//! collection; and the OpenTelemetry dashboard (`dashboards/breakerbox-otel.json`)
//! reads only names and labels the instruments are stored as, in PromQL
//! promtool accepts.

#![cfg(all(feature = "otel", feature = "metrics", feature = "prometheus"))]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use breakerbox::hold::HoldScope;
use breakerbox::observe::otel::opentelemetry::metrics::MeterProvider as _;
use breakerbox::observe::otel::BreakerInstruments;
use breakerbox::{Config, ManualClock, Registry};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
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

/// One collection of `instruments` by the SDK's in-memory exporter.
fn collect(instruments: BreakerInstruments<Arc<Registry>>) -> ResourceMetrics {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_periodic_exporter(exporter.clone())
        .build();
    instruments.register(&provider.meter("breakerbox"));
    provider.force_flush().unwrap();
    let mut finished = exporter.get_finished_metrics().unwrap();
    finished.pop().expect("a collection")
}

/// Every data point of one collection of `instruments` by the SDK's in-memory exporter: every
/// data point as the Prometheus series the docs' table maps it to, and its
/// value; each instrument once.
fn collected(instruments: BreakerInstruments<Arc<Registry>>) -> BTreeMap<Series, f64> {
    let documented = documented();
    let mut all = BTreeMap::new();
    let mut instruments_seen = BTreeSet::new();
    let collection = collect(instruments);
    for metric in collection.scope_metrics().flat_map(|s| s.metrics()) {
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
        .open(Duration::from_secs(5))
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

    let throttled = Config::builder()
        .threshold(100)
        .throttle(1.0)
        .build()
        .unwrap();
    let shed = breakers.breaker("shed", &throttled);
    shed.try_acquire().unwrap().success();
    shed.try_acquire().unwrap().failure();
    assert!(shed.try_acquire().is_err(), "throttled");

    // A hold and shadow mode: their series hold counts other than 0.
    let held = breakers.breaker("held", &Config::default());
    held.hold(Duration::from_secs(30), HoldScope::Group);
    assert!(held.try_acquire().is_err(), "held");
    let shadowed = Config::builder().threshold(1).shadow(true).build().unwrap();
    let shadow = breakers.breaker("shadow", &shadowed);
    shadow.try_acquire().unwrap().failure();
    shadow
        .try_acquire()
        .expect("shadow mode refuses nothing")
        .success();

    let keyed = Config::builder()
        .threshold(1)
        .histogram(Duration::from_secs(1))
        .build()
        .unwrap();
    let hosts = breakers.keyed::<u64>("hosts", &keyed, 10).unwrap();
    hosts.breaker(&1).try_acquire().unwrap().success();
    hosts.breaker(&2).try_acquire().unwrap().failure();
    assert!(hosts.breaker(&2).try_acquire().is_err());
    hosts
        .breaker(&3)
        .hold(Duration::from_secs(30), HoldScope::Key);
    assert!(hosts.breaker(&3).try_acquire().is_err(), "a key's hold");
    // A keyed group that judges as one, open as one: its group level.
    let judged = Config::builder()
        .threshold(2)
        .systemic_share(0.5)
        .build()
        .unwrap();
    let shards = breakers.keyed::<u64>("shards", &judged, 10).unwrap();
    for shard in 0..2 {
        shards.breaker(&shard).try_acquire().unwrap().failure();
    }
    assert!(shards.breaker(&3).try_acquire().is_err());
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

/// What Prometheus's OTLP receiver stores each instrument of one collection
/// as (its default translation: dots become underscores, the unit `s` adds
/// `_seconds`, a counter `_total`), and the labels its attributes become.
fn stored_by_prometheus(collection: &ResourceMetrics) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut names, mut labels) = (BTreeSet::new(), BTreeSet::from(["job".to_owned()]));
    for metric in collection.scope_metrics().flat_map(|s| s.metrics()) {
        let mut name = metric.name().replace('.', "_");
        if metric.unit() == "s" {
            name.push_str("_seconds");
        }
        let attributes: Vec<String> = match metric.data() {
            AggregatedMetrics::U64(MetricData::Sum(sum)) => {
                name.push_str("_total");
                let p = sum.data_points().next();
                p.into_iter()
                    .flat_map(|p| p.attributes())
                    .map(|kv| kv.key.to_string())
                    .collect()
            }
            AggregatedMetrics::F64(MetricData::Sum(sum)) => {
                name.push_str("_total");
                let p = sum.data_points().next();
                p.into_iter()
                    .flat_map(|p| p.attributes())
                    .map(|kv| kv.key.to_string())
                    .collect()
            }
            AggregatedMetrics::F64(MetricData::Gauge(gauge)) => {
                let p = gauge.data_points().next();
                p.into_iter()
                    .flat_map(|p| p.attributes())
                    .map(|kv| kv.key.to_string())
                    .collect()
            }
            other => panic!("{}: {other:?}", metric.name()),
        };
        labels.extend(attributes.iter().map(|key| key.replace('.', "_")));
        names.insert(name);
    }
    (names, labels)
}

/// Every query and template variable query of the OpenTelemetry dashboard.
fn otel_dashboard_queries() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/dashboards/breakerbox-otel.json"
    );
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let panels = dashboard["panels"].as_array().unwrap();
    let mut queries: Vec<String> = panels
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap())
        .map(|t| t["expr"].as_str().unwrap().to_owned())
        .collect();
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        if let Some(query) = variable["query"]["query"].as_str() {
            queries.push(query.to_owned());
        }
    }
    queries
}

/// The metric names (`breaker_*`) and the label names a PromQL query reads:
/// those of its selectors, its `by (..)` clauses and `label_values(.., label)`.
fn read_by(query: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut names = BTreeSet::new();
    let mut rest = query;
    while let Some(at) = rest.find("breaker_") {
        let tail = &rest[at..];
        let end = tail.find(|c| !word(c)).unwrap_or(tail.len());
        if !rest[..at].ends_with(word) {
            names.insert(tail[..end].to_owned());
        }
        rest = &tail[end..];
    }
    let mut labels = BTreeSet::new();
    for selector in query.split('{').skip(1) {
        let selector = &selector[..selector.find('}').unwrap()];
        for matcher in selector.split(',') {
            let label = matcher.split(['=', '!']).next().unwrap().trim();
            labels.insert(label.to_owned());
        }
    }
    for clause in query.split("by (").skip(1) {
        let clause = &clause[..clause.find(')').unwrap()];
        labels.extend(clause.split(',').map(|label| label.trim().to_owned()));
    }
    if let Some(args) = query.strip_prefix("label_values(") {
        let label = args.trim_end_matches(')').rsplit(',').next().unwrap();
        labels.insert(label.trim().to_owned());
    }
    (names, labels)
}

#[test]
fn the_otel_dashboard_reads_only_series_and_labels_the_instruments_write() {
    let breakers = every_kind_of_group();
    let collection = collect(BreakerInstruments::new(Arc::clone(&breakers)).worst_keys(10));
    let (stored, stored_labels) = stored_by_prometheus(&collection);
    assert!(stored.contains("breaker_calls_total"), "{stored:?}");
    let queries = otel_dashboard_queries();
    assert!(queries.len() >= 10, "{queries:?}");
    for query in &queries {
        let (names, labels) = read_by(query);
        assert!(!names.is_empty(), "{query}");
        for name in names {
            assert!(
                stored.contains(&name),
                "{name} is not written:\n{query}\n{stored:#?}"
            );
        }
        for label in labels.into_iter().filter(|l| l != "le") {
            assert!(
                stored_labels.contains(&label),
                "{label}:\n{query}\n{stored_labels:#?}"
            );
        }
    }
}

#[test]
fn the_query_reader_finds_whole_names_and_every_label() {
    let (names, labels) = read_by(
        r#"sum by (a_b, c) (rate(breaker_x_total{job=~"$job", d!="1"}[5m])) / my_breaker_y"#,
    );
    assert_eq!(names, BTreeSet::from(["breaker_x_total".to_owned()]));
    let expected = ["a_b", "c", "job", "d"].map(str::to_owned);
    assert_eq!(labels, BTreeSet::from(expected));
}

#[test]
fn every_otel_dashboard_query_is_promql_promtool_accepts() {
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, query) in otel_dashboard_queries().iter().enumerate() {
        if query.starts_with("label_values(") {
            continue; // Grafana's, not PromQL.
        }
        let query = query
            .replace("$__rate_interval", "1m")
            .replace("$job", ".*")
            .replace("$name", ".*");
        let query = serde_json::to_string(&query).unwrap();
        rules.push_str(&format!(
            "      - record: dashboard:query{i}\n        expr: {query}\n"
        ));
    }
    let file = std::env::temp_dir().join(format!(
        "breakerbox-otel-dashboard-{}.yml",
        std::process::id()
    ));
    std::fs::write(&file, rules).unwrap();
    let output = std::process::Command::new("promtool")
        .args(["check", "rules", file.to_str().unwrap()])
        .output();
    let _ = std::fs::remove_file(&file);
    match output {
        Ok(output) => assert!(
            output.status.success(),
            "promtool check rules (the OpenTelemetry dashboard's queries):\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(e) if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) => {
            panic!("promtool is required under CI (apt-get install prometheus): {e}")
        }
        Err(e) => eprintln!("promtool not run ({e}); install the `prometheus` package to run it"),
    }
}
