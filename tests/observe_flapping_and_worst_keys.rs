//! The Prometheus exporter's opt-in series: `flapping` counts each group's
//! transitions in a window on the registry's clock, and forgets them as the
//! window moves on; `worst_keys` exports at most K keys of a keyed group,
//! the worst ones, never a closed one, however many keys the group holds.

#![cfg(feature = "prometheus")]

use std::sync::Arc;
use std::time::Duration;

use breakerbox::observe::prometheus::prometheus_client::encoding::prometheus_text;
use breakerbox::observe::prometheus::prometheus_client::registry::Registry as Metrics;
use breakerbox::observe::prometheus::BreakerCollector;
use breakerbox::{Config, ManualClock, Registry};

#[allow(dead_code)]
#[path = "support/exposition.rs"]
mod exposition;

fn scrape(collector: BreakerCollector<Arc<Registry>>) -> exposition::Exposition {
    let mut metrics = Metrics::default();
    metrics.register_collector(Box::new(collector));
    let mut text = String::new();
    prometheus_text::encode(&mut text, &metrics).unwrap();
    exposition::parse(&text).unwrap_or_else(|why| panic!("{why}\n{text}"))
}

fn trips_at_once() -> Config {
    Config::builder()
        .threshold(1)
        .open(Duration::from_millis(1_000))
        .build()
        .unwrap()
}

#[test]
fn flapping_counts_the_transitions_of_the_last_window_only() {
    let clock = ManualClock::new();
    let breakers = Arc::new(Registry::with_clock(clock.clone()));
    let flappy = breakers.breaker("flappy", &trips_at_once());
    let calm = breakers.breaker("calm", &trips_at_once());
    let collector = BreakerCollector::new(Arc::clone(&breakers)).flapping(Duration::from_secs(300));
    // Three rounds of open, half-open, closed: nine transitions.
    for _ in 0..3 {
        flappy.try_acquire().unwrap().failure();
        clock.advance(Duration::from_secs(1));
        flappy.try_acquire().unwrap().success();
        clock.advance(Duration::from_secs(10));
    }
    calm.try_acquire().unwrap().success();
    let flapping = |e: &exposition::Exposition, group| {
        e.value("breaker_flapping_transitions", &[("name", group)])
    };
    let now = scrape(collector.clone());
    assert_eq!(flapping(&now, "flappy"), Some(9.0));
    assert_eq!(flapping(&now, "calm"), Some(0.0));
    assert_eq!(now.types["breaker_flapping_transitions"], "gauge");
    // One more trip four minutes on; then the first rounds leave the window.
    clock.advance(Duration::from_secs(240));
    flappy.try_acquire().unwrap().failure();
    assert_eq!(flapping(&scrape(collector.clone()), "flappy"), Some(10.0));
    clock.advance(Duration::from_secs(120));
    assert_eq!(flapping(&scrape(collector.clone()), "flappy"), Some(1.0));
    clock.advance(Duration::from_secs(300));
    assert_eq!(flapping(&scrape(collector), "flappy"), Some(0.0));
}

#[test]
fn a_collector_without_flapping_exports_no_flapping_series() {
    let breakers = Arc::new(Registry::new());
    breakers.breaker("quiet", &Config::default());
    let scraped = scrape(BreakerCollector::new(Arc::clone(&breakers)));
    assert!(!scraped.types.contains_key("breaker_flapping_transitions"));
    assert!(!scraped.types.contains_key("breaker_keyed_worst_key_state"));
}

#[test]
fn worst_keys_exports_at_most_k_keys_the_most_opened_first() {
    let clock = ManualClock::new();
    let breakers = Arc::new(Registry::with_clock(clock.clone()));
    let hosts = breakers
        .keyed::<String>("hosts", &trips_at_once(), 10_000)
        .unwrap();
    for i in 0..500 {
        hosts
            .breaker(&format!("fine{i}"))
            .try_acquire()
            .unwrap()
            .success();
    }
    for i in 0..40 {
        hosts
            .breaker(&format!("down{i:02}"))
            .try_acquire()
            .unwrap()
            .failure();
    }
    // down07 opens a second time: the worst.
    let down07 = hosts.get("down07").unwrap();
    clock.advance(Duration::from_secs(1));
    down07.try_acquire().unwrap().failure();
    let scraped = scrape(BreakerCollector::new(Arc::clone(&breakers)).worst_keys(3));
    let listed = |family: &str| -> Vec<_> {
        scraped
            .samples
            .iter()
            .filter(|s| s.name == family)
            .map(|s| (s.labels["name"].clone(), s.labels["key"].clone(), s.value))
            .collect()
    };
    let states = listed("breaker_keyed_worst_key_state");
    assert_eq!(states.len(), 3, "{states:?}");
    assert_eq!(states[0], ("hosts".into(), "down07".into(), 1.0));
    assert!(states.iter().all(|(_, key, _)| key.starts_with("down")));
    assert!(scraped
        .samples
        .iter()
        .filter(|s| s.name == "breaker_keyed_worst_key_state")
        .all(|s| s.labels["state"] == "open"));
    let opened = listed("breaker_keyed_worst_key_times_opened");
    assert_eq!(opened.len(), 3);
    assert_eq!(opened[0].2, 2.0);
    let retry = listed("breaker_keyed_worst_key_retry_after_seconds");
    assert_eq!(retry.len(), 3);
    // down07 just reopened; the others' open time is over.
    assert!(retry[0].2 > 0.0, "{retry:?}");
    assert!(
        retry[1..].iter().all(|(_, _, left)| *left == 0.0),
        "{retry:?}"
    );
    // The aggregate is still there, beside them.
    assert_eq!(
        scraped.value(
            "breaker_keyed_keys",
            &[("name", "hosts"), ("state", "open")]
        ),
        Some(40.0)
    );
}

#[test]
fn worst_keys_is_bounded_and_lists_no_closed_key() {
    let breakers = Arc::new(Registry::new());
    let hosts = breakers
        .keyed::<u64>("tenants", &trips_at_once(), 10_000)
        .unwrap();
    for i in 0..1_000 {
        hosts.breaker(&i).try_acquire().unwrap().failure();
    }
    let scraped = scrape(BreakerCollector::new(Arc::clone(&breakers)).worst_keys(1_000_000));
    let keys = scraped
        .samples
        .iter()
        .filter(|s| s.name == "breaker_keyed_worst_key_state")
        .count();
    assert_eq!(keys, breakerbox::observe::prometheus::MAX_WORST_KEYS);

    let quiet = Arc::new(Registry::new());
    let all_closed = quiet
        .keyed::<u64>("tenants", &trips_at_once(), 100)
        .unwrap();
    all_closed.breaker(&1).try_acquire().unwrap().success();
    let scraped = scrape(BreakerCollector::new(Arc::clone(&quiet)).worst_keys(10));
    assert_eq!(scraped.types["breaker_keyed_worst_key_state"], "gauge");
    assert!(!scraped
        .samples
        .iter()
        .any(|s| s.name.starts_with("breaker_keyed_worst_key")));
}
