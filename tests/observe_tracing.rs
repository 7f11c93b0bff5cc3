//! `breakerbox::observe::tracing`: one structured `tracing` event per transition
//! and per conflict, with the fields its docs list, caught by a test subscriber.

#![cfg(feature = "tracing")]

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::{Config, ManualClock, Registry};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Level, Metadata};

/// One event as the subscriber saw it: level, target, and every field as text.
#[derive(Debug)]
struct Seen {
    level: Level,
    target: String,
    fields: BTreeMap<String, String>,
}

impl Seen {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// A `tracing` subscriber that keeps every event; spans are not expected.
#[derive(Clone, Default)]
struct Collect(Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
}

impl tracing::Subscriber for Collect {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        panic!("no span is opened")
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(Seen {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            fields,
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[test]
fn each_transition_is_one_event_with_its_fields() {
    let collect = Collect::default();
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let _traced = breakerbox::observe::tracing::subscribe(&registry);
    tracing::subscriber::with_default(collect.clone(), || {
        let config = Config::builder()
            .threshold(1)
            .open(Duration::from_millis(1_500))
            .build()
            .unwrap();
        let db = registry.breaker("db", &config);
        db.try_acquire().unwrap().failure(); // trip
        clock.advance(Duration::from_millis(1_500));
        db.try_acquire().unwrap().success(); // open_elapsed, then probes_succeeded
        db.force_open();
        registry.breaker("db", &Config::default()); // a conflict
    });

    let seen = collect.0.lock().unwrap();
    let kinds: Vec<_> = seen.iter().map(|s| s.field("reason")).collect();
    assert_eq!(
        kinds,
        [
            Some("tripped"),
            Some("open_elapsed"),
            Some("probes_succeeded"),
            Some("forced_open"),
            None
        ]
    );
    assert!(seen.iter().all(|s| s.target == "breakerbox"));

    let trip = &seen[0];
    assert_eq!(trip.level, Level::WARN);
    assert_eq!(trip.field("group"), Some("db"));
    assert_eq!(trip.field("from"), Some("closed"));
    assert_eq!(trip.field("to"), Some("open"));
    assert_eq!(trip.field("cause"), Some("consecutive_failures"));
    assert_eq!(trip.field("generation"), Some("1"));
    assert_eq!(trip.field("open_for_ms"), Some("1500"));
    assert_eq!(trip.field("retry_after_ms"), Some("1500"));
    assert_eq!(trip.field("message"), Some("circuit transition"));

    let half_open = &seen[1];
    assert_eq!(half_open.level, Level::INFO);
    assert_eq!(half_open.field("to"), Some("half_open"));
    assert_eq!(half_open.field("generation"), Some("2"));
    // Fields with no value for this transition are left out, not zero.
    for absent in ["key", "cause", "probes", "open_for_ms", "retry_after_ms"] {
        assert_eq!(half_open.field(absent), None, "{absent}");
    }
    assert_eq!(seen[3].level, Level::WARN);
    assert_eq!(seen[3].field("to"), Some("forced_open"));

    let conflict = &seen[4];
    assert_eq!(conflict.level, Level::WARN);
    assert_eq!(conflict.field("group"), Some("db"));
    assert_eq!(conflict.field("source"), Some("declared"));
    assert!(conflict.field("message").unwrap().contains("two configs"));
}

#[test]
fn dropping_the_subscription_stops_the_events() {
    let collect = Collect::default();
    let registry = Registry::new();
    let traced = breakerbox::observe::tracing::subscribe(&registry);
    tracing::subscriber::with_default(collect.clone(), || {
        let db = registry.breaker("db", &Config::default());
        db.force_open();
        drop(traced);
        db.reset();
    });
    assert_eq!(collect.0.lock().unwrap().len(), 1);
}

#[test]
fn a_keyed_groups_transitions_carry_the_key() {
    let collect = Collect::default();
    let registry = Registry::with_clock(ManualClock::new());
    let hosts = registry
        .keyed::<String>(
            "upstream",
            &Config::builder().threshold(1).build().unwrap(),
            100,
        )
        .unwrap();
    hosts.breaker("held.example"); // held before the subscription
    let _traced = breakerbox::observe::tracing::subscribe(&registry);
    tracing::subscriber::with_default(collect.clone(), || {
        hosts.breaker("a.example").try_acquire().unwrap().failure();
        hosts.breaker("held.example").force_open();
    });
    let seen = collect.0.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].level, Level::WARN);
    assert_eq!(seen[0].field("group"), Some("upstream"));
    assert_eq!(seen[0].field("key"), Some("a.example"));
    assert_eq!(seen[0].field("reason"), Some("tripped"));
    assert_eq!(seen[0].field("to"), Some("open"));
    assert_eq!(seen[1].field("key"), Some("held.example"));
    assert_eq!(seen[1].field("to"), Some("forced_open"));
}

#[test]
fn a_spent_retry_budget_is_one_warning_with_the_group_and_the_retry() {
    use breakerbox::{Retry, RetryPolicy};

    let collect = Collect::default();
    let registry = Registry::with_clock(ManualClock::new());
    let _traced = breakerbox::observe::tracing::subscribe(&registry);
    tracing::subscriber::with_default(collect.clone(), || {
        let api = registry.breaker("api", &Config::default());
        // No floor and a 10% share: a lone first attempt earns no retry.
        let retry = Retry::new(RetryPolicy::new(2).budget(0.1, 0));
        let _ = api.call_retrying(&retry, || Err::<(), _>(String::from("busy")));
    });
    let seen = collect.0.lock().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].level, Level::WARN);
    assert_eq!(seen[0].field("group"), Some("api"));
    assert_eq!(seen[0].field("retry"), Some("1"));
    assert!(seen[0].field("message").unwrap().contains("retry budget"));
}
