//! Every series the shipped Grafana dashboard and alerting rules
//! (`dashboards/` at the workspace root) name is one the exporters write: a
//! registry with every kind of group, scraped through breakerbox's collector
//! (flapping and worst keys on, as the dashboard asks) beside a running fleet
//! agent's collector, and the names found are compared with the names in the
//! dashboard's queries, the rules and the rules' test series. A renamed
//! family fails here instead of leaving an empty panel.

#![cfg(feature = "prometheus")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use breaker_fleet::{AgentConfig, FleetAgent, MemoryStore};
use breakerbox::clock::MonotonicClock;
use breakerbox::observe::prometheus::prometheus_client::encoding::text;
use breakerbox::observe::prometheus::prometheus_client::registry::Registry as Metrics;
use breakerbox::observe::prometheus::BreakerCollector;
use breakerbox::Config;

fn dashboards() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../dashboards")
}

/// Every `breaker_*` name in `text`.
fn names_in(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("breaker_") {
        let before = rest[..at].chars().next_back();
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            names.insert(tail[..end].to_owned());
        }
        rest = &tail[end..];
    }
    names
}

/// The names the dashboard's queries and template variables read.
fn dashboard_names() -> BTreeSet<String> {
    let text = std::fs::read_to_string(dashboards().join("breakerbox.json")).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut queries = String::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            queries += target["expr"].as_str().unwrap();
            queries += "\n";
        }
    }
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        queries += variable["definition"].as_str().unwrap_or("");
        queries += "\n";
    }
    names_in(&queries)
}

/// The names in a rules file, its comments left out.
fn rule_names(file: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(dashboards().join(file)).unwrap();
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .map(|line| format!("{line}\n"))
        .collect();
    names_in(&code)
}

/// The sample names of one scrape of breakerbox's collector (with the
/// dashboard's options) and of a fleet agent's collector.
fn exported() -> BTreeSet<String> {
    let registry = breakerbox::registry();
    let window = Config::builder()
        .window_calls(10)
        .min_calls(1)
        .latency_p99(Duration::from_millis(1_000))
        .max_concurrent(4)
        .histogram(Duration::from_millis(1_000))
        .build()
        .unwrap();
    registry
        .breaker("dashboard-window", &window)
        .try_acquire()
        .unwrap()
        .success();
    let throttled = Config::builder().throttle(2.0).build().unwrap();
    registry.breaker("dashboard-throttled", &throttled);
    // A keyed group that also judges as one exports its group level.
    let timed = Config::builder()
        .histogram(Duration::from_millis(1_000))
        .systemic_share(0.5)
        .build()
        .unwrap();
    let keyed = registry
        .keyed::<u64>("dashboard-keyed", &timed, 10)
        .unwrap();
    keyed.breaker(&7).force_open();
    let agent = FleetAgent::spawn(
        MemoryStore::new(MonotonicClock),
        registry,
        AgentConfig::new("dashboards-test"),
    );
    // The staleness series appears once the agent reached its store.
    let deadline = Instant::now() + Duration::from_secs(30);
    while agent.stats().stale_for.is_none() {
        assert!(
            Instant::now() < deadline,
            "the agent never reached its store"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut metrics = Metrics::default();
    metrics.register_collector(Box::new(
        BreakerCollector::new(registry)
            .flapping(Duration::from_secs(300))
            .worst_keys(10),
    ));
    metrics.register_collector(Box::new(agent.collector()));
    let mut exposition = String::new();
    text::encode(&mut exposition, &metrics).unwrap();
    exposition
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| line[..line.find(['{', ' ']).unwrap()].to_owned())
        .collect()
}

#[test]
fn every_series_the_dashboard_and_alerts_read_is_exported() {
    let exported = exported();
    let dashboard = dashboard_names();
    let rules = rule_names("alerts.yml");
    let rule_tests = rule_names("alerts.test.yml");
    // What the dashboard is about: a state timeline, rejections, probes,
    // flapping, latency, the keyed worst keys and held circuits.
    for name in [
        "breaker_held",
        "breaker_holds_total",
        "breaker_state",
        "breaker_calls_total",
        "breaker_probes_total",
        "breaker_flapping_transitions",
        "breaker_latency_p99_seconds",
        "breaker_calls_seconds_bucket",
        "breaker_keyed_worst_key_state",
    ] {
        assert!(
            dashboard.contains(name),
            "the dashboard does not read {name}"
        );
    }
    assert!(
        rules.contains("breaker_fleet_store_stale_seconds"),
        "{rules:?}"
    );
    for (what, names) in [
        ("the dashboard", &dashboard),
        ("alerts.yml", &rules),
        ("alerts.test.yml", &rule_tests),
    ] {
        let unknown: Vec<_> = names.difference(&exported).collect();
        assert!(
            unknown.is_empty(),
            "{what} reads series no exporter writes: {unknown:?}\nexported: {exported:?}"
        );
    }
    // Every series the rules' tests feed in is one a rule reads.
    assert!(rule_tests.is_subset(&rules), "{rule_tests:?} / {rules:?}");
}

#[test]
fn the_name_scan_finds_whole_names_only() {
    let found =
        names_in(r#"rate(breaker_calls_total{kind="x"}[1m]) / my_breaker_x + breaker_state"#);
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        ["breaker_calls_total", "breaker_state"]
    );
}
