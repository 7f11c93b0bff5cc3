//! The registry: one breaker per group, inspection, manual control by name,
//! explicit config winning over declarations, and conflicts reported.
use std::sync::{Arc, Barrier};
use std::time::Duration;

use breaker_core::{registry, Config, ConfigSource, ManualClock, Registry, State};

fn threshold(n: u32) -> Config {
    Config::builder().threshold(n).build().unwrap()
}

#[test]
fn sixteen_threads_racing_on_a_new_group_get_one_breaker() {
    for _ in 0..50 {
        let registry = Arc::new(Registry::new());
        let barrier = Arc::new(Barrier::new(16));
        let handles: Vec<_> = (0..16)
            .map(|_| {
                let (registry, barrier) = (Arc::clone(&registry), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    let b = registry.breaker("race", &Config::default());
                    b.try_acquire().unwrap().success();
                    b
                })
            })
            .collect();
        let breakers: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(breakers.iter().all(|b| b.same_as(&breakers[0])));
        assert_eq!(registry.groups(), vec!["race"]);
        assert_eq!(registry.snapshot().group("race").unwrap().successes, 16);
    }
}

#[test]
fn lookup_list_and_snapshot_see_every_group_sorted() {
    let registry = Registry::new();
    assert!(registry.get("payments").is_none());
    registry.breaker("search", &Config::default());
    registry.breaker("payments", &Config::default());
    assert_eq!(registry.groups(), vec!["payments", "search"]);
    let names: Vec<_> = registry.breakers().iter().map(|b| b.group()).collect();
    assert_eq!(names, vec!["payments", "search"]);
    let snapshot = registry.snapshot();
    assert_eq!(snapshot.len(), 2);
    assert_eq!(snapshot[0].group, "payments");
    let table = snapshot.to_string();
    assert_eq!(
        table.lines().count(),
        3,
        "a header and one row per group:\n{table}"
    );
}

#[test]
fn manual_control_by_name_reaches_the_breaker_and_unknown_names_are_errors() {
    let registry = Registry::new();
    let search = registry.breaker("search", &Config::default());
    registry.force_open("search").unwrap();
    assert_eq!(search.state(), State::ForcedOpen);
    registry.force_closed("search").unwrap();
    assert_eq!(search.state(), State::ForcedClosed);
    registry.reset("search").unwrap();
    assert_eq!(search.state(), State::Closed);
    let err = registry.force_open("serach").unwrap_err();
    assert_eq!(
        err.to_string(),
        "no breaker for group `serach` in this registry"
    );
}

#[test]
fn config_set_explicitly_before_first_use_wins_over_the_declared_config() {
    let registry = Registry::new();
    registry.configure("search", threshold(1)).unwrap();
    let b = registry.breaker("search", &threshold(9));
    assert_eq!(b.config().threshold(), 1);
    assert!(
        registry.conflicts().is_empty(),
        "explicit config is not a conflict"
    );
    let err = registry.configure("search", threshold(2)).unwrap_err();
    assert!(err.to_string().contains("already in use"));
}

#[test]
fn two_call_sites_declaring_different_configs_are_a_reported_conflict_and_the_first_holds() {
    let registry = Registry::new();
    let first = registry.breaker("search", &threshold(3));
    let second = registry.breaker("search", &threshold(5));
    assert!(first.same_as(&second), "never two breakers for one group");
    assert_eq!(
        second.config().threshold(),
        3,
        "the first declaration holds"
    );
    let conflicts = registry.conflicts();
    assert_eq!(conflicts.len(), 1);
    let c = &conflicts[0];
    assert_eq!(c.group, "search");
    assert_eq!(c.source, ConfigSource::Declared);
    assert_eq!(c.holding.threshold(), 3);
    assert_eq!(c.ignored.threshold(), 5);
    assert!(c
        .to_string()
        .contains("group `search` declared with two configs"));
    registry.breaker("search", &threshold(5));
    assert_eq!(
        registry.conflicts().len(),
        1,
        "each conflict is reported once"
    );
    registry.breaker("search", &threshold(3));
    assert_eq!(
        registry.conflicts().len(),
        1,
        "the same config again is no conflict"
    );
}

#[test]
fn with_clock_gives_every_breaker_the_registrys_clock() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_millis(50))
        .build()
        .unwrap();
    let a = registry.breaker("a", &config);
    let b = registry.breaker("b", &config);
    a.try_acquire().unwrap().failure();
    b.try_acquire().unwrap().failure();
    clock.advance(std::time::Duration::from_millis(50));
    assert!(a.would_admit() && b.would_admit());
}

#[test]
fn the_process_wide_registry_is_one_registry() {
    let a = registry().breaker("registry-groups-global", &Config::default());
    let b = registry().get("registry-groups-global").unwrap();
    assert!(a.same_as(&b));
    assert!(std::ptr::eq(registry(), registry()));
    assert!(
        Registry::new().get("registry-groups-global").is_none(),
        "a new registry shares no group with the process-wide one"
    );
}

#[test]
fn breaker_or_default_uses_the_explicit_config_or_the_defaults() {
    let registry = Registry::new();
    registry.configure("explicit", threshold(2)).unwrap();
    assert_eq!(
        registry.breaker_or_default("explicit").config().threshold(),
        2
    );
    assert_eq!(
        registry.breaker_or_default("plain").config(),
        &Config::default()
    );
}

#[test]
fn a_declaration_after_the_group_was_created_with_defaults_is_a_reported_conflict() {
    let registry = Registry::new();
    // An ops tool forces the group open at start-up, before any call site ran.
    registry.breaker_or_default("search");
    registry.force_open("search").unwrap();
    let b = registry.breaker("search", &threshold(2));
    assert_eq!(
        b.config(),
        &Config::default(),
        "the breaker keeps its config"
    );
    let conflicts = registry.conflicts();
    assert_eq!(
        conflicts.len(),
        1,
        "the declaration was not applied: say so"
    );
    assert_eq!(conflicts[0].source, ConfigSource::Default);
    assert_eq!(conflicts[0].ignored.threshold(), 2);
    // A declaration equal to the defaults is no conflict.
    let other = Registry::new();
    other.breaker_or_default("plain");
    other.breaker("plain", &Config::default());
    assert!(other.conflicts().is_empty());
}
