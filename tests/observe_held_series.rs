//! A held breaker shows in the Prometheus exposition: `breaker_held` is 1
//! while the hold refuses claims and 0 once it ends, and the holds are
//! counted by scope, as are waits capped at `max_hold_ms`.

use std::sync::Arc;
use std::time::Duration;

use breakerbox::hold::HoldScope;
use breakerbox::observe::prometheus::prometheus_client::encoding::prometheus_text;
use breakerbox::observe::prometheus::prometheus_client::registry::Registry as Metrics;
use breakerbox::observe::prometheus::BreakerCollector;
use breakerbox::{Config, ManualClock, Registry};

#[allow(dead_code)]
#[path = "support/exposition.rs"]
mod exposition;

fn scrape(metrics: &Metrics) -> exposition::Exposition {
    let mut text = String::new();
    prometheus_text::encode(&mut text, metrics).expect("encodes");
    exposition::parse(&text).unwrap_or_else(|why| panic!("{why}\n{text}"))
}

#[test]
fn a_hold_is_exported_while_it_lasts_and_counted_by_scope() {
    let clock = ManualClock::new();
    let breakers = Arc::new(Registry::with_clock(clock.clone()));
    let config = Config::builder()
        .max_hold(Duration::from_secs(60))
        .build()
        .unwrap();
    let quota = breakers.breaker("quota", &config);
    let mut metrics = Metrics::default();
    metrics.register_collector(Box::new(BreakerCollector::new(Arc::clone(&breakers))));

    let name = ("name", "quota");
    assert_eq!(scrape(&metrics).value("breaker_held", &[name]), Some(0.0));
    quota.hold(Duration::from_secs(3_600), HoldScope::Group);
    let held = scrape(&metrics);
    assert_eq!(held.value("breaker_held", &[name]), Some(1.0));
    assert_eq!(
        held.value("breaker_holds_total", &[name, ("kind", "group")]),
        Some(1.0)
    );
    assert_eq!(
        held.value("breaker_holds_total", &[name, ("kind", "key")]),
        Some(0.0)
    );
    assert_eq!(held.value("breaker_holds_capped_total", &[name]), Some(1.0));
    assert!(held.value("breaker_retry_after_seconds", &[name]).unwrap() > 59.0);

    clock.advance(Duration::from_secs(60));
    assert_eq!(scrape(&metrics).value("breaker_held", &[name]), Some(0.0));
}
