//! Keyed groups in the exporters: one series set per group, never per key
//! (`breaker_keyed_*`), whose values are the group's `KeyedMetrics` (keys by
//! state, `key_capacity`, evictions, every counter summed over every key ever
//! held), the same through Prometheus and the `metrics` facade; and a registry
//! with no keyed group exports no keyed family at all.

#![cfg(all(feature = "metrics", feature = "prometheus"))]

use std::collections::BTreeMap;
use std::sync::Arc;

use breakerbox::{Config, ManualClock, Registry};

#[allow(dead_code)]
#[path = "support/exposition.rs"]
mod exposition;

#[path = "support/exporters.rs"]
mod exporters;

use exporters::{published, scraped, series, Series};

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
        (series("breaker_keyed_key_capacity", &[name]), 4.0),
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
        (series("breaker_keyed_timeouts_total", &[name]), 0.0),
        (
            series("breaker_keyed_bulkhead_rejected_total", &[name]),
            0.0,
        ),
        (series("breaker_keyed_latency_trips_total", &[name]), 0.0),
        (series("breaker_keyed_ramp_refused_total", &[name]), 0.0),
        (series("breaker_keyed_shadow_refused_total", &[name]), 0.0),
        (series("breaker_keyed_throttled_total", &[name]), 0.0),
        (series("breaker_keyed_held", &[name]), 0.0),
        (
            series("breaker_keyed_holds_total", &[name, ("kind", "key")]),
            0.0,
        ),
        (
            series("breaker_keyed_holds_total", &[name, ("kind", "group")]),
            0.0,
        ),
        (series("breaker_keyed_holds_capped_total", &[name]), 0.0),
        (series("breaker_keyed_holds_released_total", &[name]), 0.0),
        (series("breaker_keyed_hold_waits_bad_total", &[name]), 0.0),
        (series("breaker_keyed_retries_total", &[name]), 0.0),
        (
            series("breaker_keyed_retries_budget_exhausted_total", &[name]),
            0.0,
        ),
        (
            series(
                "breaker_keyed_transitions_total",
                &[name, ("from", "closed"), ("to", "open")],
            ),
            2.0,
        ),
    ]
    .into_iter()
    .chain(["successful", "failed", "reclaimed"].map(|kind| {
        (
            series("breaker_keyed_probes_total", &[name, ("kind", kind)]),
            0.0,
        )
    }))
    .chain(
        [
            ("open", "half_open"),
            ("half_open", "open"),
            ("half_open", "closed"),
            ("half_open", "half_open"),
        ]
        .map(|(from, to)| {
            let labels = [name, ("from", from), ("to", to)];
            (series("breaker_keyed_transitions_total", &labels), 0.0)
        }),
    )
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
