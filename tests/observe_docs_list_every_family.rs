//! The series tables in the docs of `breakerbox::observe` list exactly the
//! families the exporters write: a registry with every kind of group (a window
//! with slow calls and the latency rule, a bulkhead, a keyed group, one that
//! judges as one) is scraped
//! and published, and the family names found are the tables' rows.

#![cfg(all(feature = "metrics", feature = "prometheus"))]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use breakerbox::{Config, Registry};

#[allow(dead_code)]
#[path = "support/exposition.rs"]
mod exposition;

#[allow(dead_code)]
#[path = "support/exporters.rs"]
mod exporters;

/// The first column of every row of the docs' series tables: those both
/// exporters write (`false`), or those of the "Opt-in series" section (`true`).
fn documented(opt_in: bool) -> BTreeSet<String> {
    let docs = include_str!("../src/observe/mod.rs");
    let (always, asked) = docs.split_once("//! # Opt-in series").unwrap();
    let asked = asked.split("\n//! #").next().unwrap();
    (if opt_in { asked } else { always })
        .lines()
        .filter_map(|line| line.strip_prefix("//! | `breaker_"))
        .map(|rest| format!("breaker_{}", &rest[..rest.find('`').unwrap()]))
        .collect()
}

/// A registry in which every family has a series.
fn every_kind_of_group() -> Arc<Registry> {
    let breakers = Arc::new(Registry::new());
    let window = Config::builder()
        .window_calls(10)
        .min_calls(1)
        .latency_p99(Duration::from_secs(1))
        .max_concurrent(4)
        .histogram(Duration::from_secs(1))
        .build()
        .unwrap();
    let b = breakers.breaker("window", &window);
    b.try_acquire().unwrap().success();
    breakers.breaker("consecutive", &Config::default());
    let throttled = Config::builder().throttle(2.0).build().unwrap();
    breakers.breaker("throttled", &throttled);
    let timed = Config::builder()
        .histogram(Duration::from_secs(1))
        .build()
        .unwrap();
    let keyed = breakers.keyed::<u64>("keyed", &timed, 10).unwrap();
    keyed.breaker(&7).try_acquire().unwrap().success();
    // A keyed group that judges as one exports its group level too.
    let judged = Config::builder().systemic_share(0.5).build().unwrap();
    let judged = breakers.keyed::<u64>("judged", &judged, 10).unwrap();
    judged.breaker(&7).try_acquire().unwrap().success();
    breakers
}

#[test]
fn the_docs_tables_list_every_family_the_prometheus_exporter_writes() {
    let scraped: BTreeSet<String> = exporters::scraped(&every_kind_of_group())
        .into_keys()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(documented(false), scraped);
}

#[test]
fn the_opt_in_table_lists_every_family_the_collector_writes_when_asked() {
    let breakers = every_kind_of_group();
    let timed = Config::builder()
        .histogram(Duration::from_secs(1))
        .build()
        .unwrap();
    breakers
        .keyed::<u64>("keyed", &timed, 10)
        .unwrap()
        .breaker(&8)
        .force_open();
    let scraped: BTreeSet<String> = exporters::scraped_opt_in(&breakers)
        .into_keys()
        .map(|(name, _)| name)
        .filter(|name| !documented(false).contains(name))
        .collect();
    assert_eq!(documented(true), scraped);
}

#[test]
fn the_docs_tables_list_every_family_the_metrics_exporter_publishes() {
    let published: BTreeSet<String> = exporters::published(&every_kind_of_group())
        .into_keys()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(documented(false), published);
}
