//! `breaker_calls_seconds` as Prometheus scrapes it: a histogram family by
//! `name` and `kind` with cumulative `le` buckets, `_sum` and `_count`, for the
//! groups that set `histogram_ms` only; a keyed group's in
//! `breaker_keyed_calls_seconds`, whose series do not grow with its keys; and
//! the key set from the attribute and from a configuration file.

#![cfg(feature = "prometheus")]

mod support;

use std::sync::Arc;
use std::time::Duration;

use breakerbox::observe::prometheus::prometheus_client::encoding::prometheus_text;
use breakerbox::observe::prometheus::prometheus_client::registry::Registry as Metrics;
use breakerbox::observe::prometheus::BreakerCollector;
use breakerbox::{circuit_breaker, Config, ManualClock, Registry};
use support::{AppError, CLOCK, REG};

#[allow(dead_code)]
#[path = "support/exposition.rs"]
mod exposition;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn scrape(breakers: &Arc<Registry>) -> exposition::Exposition {
    let mut metrics = Metrics::default();
    metrics.register_collector(Box::new(BreakerCollector::new(Arc::clone(breakers))));
    let mut text = String::new();
    prometheus_text::encode(&mut text, &metrics).unwrap();
    exposition::parse(&text).unwrap_or_else(|why| panic!("{why}\n{text}"))
}

#[test]
fn a_group_with_histogram_ms_is_scraped_as_a_histogram_by_kind() {
    let clock = ManualClock::new();
    let breakers = Arc::new(Registry::with_clock(clock.clone()));
    let config = Config::builder()
        .threshold(10)
        .histogram(ms(100))
        .build()
        .unwrap();
    let search = breakers.breaker("search", &config);
    for (took, ok) in [(2, true), (30, true), (400, false)] {
        let permit = search.try_acquire().unwrap();
        clock.advance(ms(took));
        if ok {
            permit.success();
        } else {
            permit.failure();
        }
    }
    breakers.breaker("untimed", &Config::default());

    let scraped = scrape(&breakers);
    assert_eq!(
        scraped
            .types
            .get("breaker_calls_seconds")
            .map(String::as_str),
        Some("histogram")
    );
    let bucket = |kind, le| {
        let labels = [("name", "search"), ("kind", kind), ("le", le)];
        scraped.value("breaker_calls_seconds_bucket", &labels)
    };
    // Cumulative, as Prometheus's buckets are.
    assert_eq!(bucket("successful", "0.001"), Some(0.0));
    assert_eq!(bucket("successful", "0.0025"), Some(1.0));
    assert_eq!(bucket("successful", "0.05"), Some(2.0));
    assert_eq!(bucket("successful", "0.1"), Some(2.0));
    assert_eq!(bucket("successful", "+Inf"), Some(2.0));
    assert_eq!(bucket("failed", "0.1"), Some(0.0));
    assert_eq!(bucket("failed", "+Inf"), Some(1.0));
    assert_eq!(bucket("ignored", "+Inf"), Some(0.0));
    assert_eq!(
        bucket("successful", "0.25"),
        None,
        "the buckets end at 100 ms"
    );
    let of = |name, kind| scraped.value(name, &[("name", "search"), ("kind", kind)]);
    assert_eq!(of("breaker_calls_seconds_count", "successful"), Some(2.0));
    assert_eq!(of("breaker_calls_seconds_sum", "successful"), Some(0.032));
    assert_eq!(of("breaker_calls_seconds_sum", "failed"), Some(0.4));
    // 3 kinds of 8 buckets, a sum and a count each; none for the other group.
    let series: Vec<_> = scraped
        .samples
        .iter()
        .filter(|s| s.name.starts_with("breaker_calls_seconds"))
        .collect();
    assert_eq!(series.len(), 3 * (8 + 2));
    assert!(series.iter().all(|s| s.labels["name"] == "search"));
}

#[test]
fn a_registry_without_histograms_writes_no_histogram_family() {
    let breakers = Arc::new(Registry::new());
    breakers
        .breaker("plain", &Config::default())
        .call(|| Ok::<_, ()>(1))
        .unwrap();
    let scraped = scrape(&breakers);
    assert!(!scraped.types.contains_key("breaker_calls_seconds"));
    assert!(scraped
        .samples
        .iter()
        .all(|s| !s.name.contains("calls_seconds")));
}

#[test]
fn a_keyed_group_s_histogram_has_the_same_series_for_ten_keys_or_a_thousand() {
    let clock = ManualClock::new();
    let breakers = Arc::new(Registry::with_clock(clock.clone()));
    let config = Config::builder().histogram(ms(10)).build().unwrap();
    let hosts = breakers.keyed::<u64>("hosts", &config, 10_000).unwrap();
    let count = |scraped: &exposition::Exposition| {
        scraped
            .samples
            .iter()
            .filter(|s| s.name.starts_with("breaker_keyed_calls_seconds"))
            .count()
    };
    let mut seen = Vec::new();
    for keys in [10u64, 1_000] {
        for key in 0..keys {
            let breaker = hosts.breaker(&key);
            let permit = breaker.try_acquire().unwrap();
            clock.advance(ms(1));
            permit.success();
        }
        let scraped = scrape(&breakers);
        seen.push(count(&scraped));
        let total = [("name", "hosts"), ("kind", "successful")];
        let calls = scraped.value("breaker_keyed_calls_seconds_count", &total);
        assert_eq!(
            calls,
            Some((10 + if keys == 1_000 { 1_000 } else { 0 }) as f64)
        );
    }
    // 3 kinds of 5 buckets (1 to 10 ms, +Inf), a sum and a count each.
    assert_eq!(seen, [21, 21]);
    assert!(!scrape(&breakers)
        .samples
        .iter()
        .any(|s| s.name.starts_with("breaker_calls_seconds")));
}

#[circuit_breaker(group = "timed_attribute", registry = &REG, threshold = 5, histogram_ms = 2500)]
fn lookup() -> Result<u32, AppError> {
    CLOCK.advance(Duration::from_millis(700));
    Ok(7)
}

#[test]
fn the_attribute_sets_histogram_ms() {
    assert_eq!(lookup().unwrap(), 7);
    let breaker = REG.get("timed_attribute").unwrap();
    assert_eq!(breaker.config().histogram(), Some(ms(2_500)));
    let durations = breaker.metrics().call_durations.unwrap();
    assert_eq!(durations.bounds().last(), Some(&ms(2_500)));
    assert_eq!(durations.successful.sum, ms(700));
}

#[cfg(feature = "config")]
#[test]
fn a_file_and_a_variable_set_histogram_ms_and_the_rule_judges_them() {
    use breakerbox::config_file::{ErrorKind, Patch, Settings};

    let text = "[defaults]\nhistogram_ms = \"10s\"\n[groups.search]\nhistogram_ms = 250\n";
    let settings = Settings::from_toml_str(text, "app.toml")
        .unwrap()
        .with_env([("BREAKER_GROUPS__USERS__HISTOGRAM_MS", "1000")])
        .unwrap();
    let histogram = |group| {
        let resolved = settings.resolve(group, &Patch::new()).unwrap();
        resolved.config.histogram()
    };
    assert_eq!(histogram("search"), Some(ms(250)));
    assert_eq!(histogram("users"), Some(ms(1_000)));
    assert_eq!(histogram("other"), Some(ms(10_000)));
    let err = Settings::from_toml_str("[defaults]\nhistogram_ms = 0\n", "app.toml").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(
        err.to_string()
            .contains("`histogram_ms` must be 1 to 86400000"),
        "{err}"
    );
}
