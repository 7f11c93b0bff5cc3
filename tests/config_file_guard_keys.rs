//! The file and the environment set `timeout_ms`, `max_concurrent` and
//! `latency_p99_ms` like any other key, and refuse their bad values.
#![cfg(feature = "config")]

use std::time::Duration;

use breakerbox::config_file::{Patch, Settings};

#[test]
fn the_file_and_the_environment_set_the_guard_keys() {
    let settings = Settings::from_toml_str(
        "[groups.search]\nwindow_ms = 10_000\nlatency_p99_ms = 800\nmax_concurrent = 32\n",
        "guards.toml",
    )
    .unwrap()
    .with_env([("BREAKER_GROUPS__SEARCH__TIMEOUT_MS", "2000")])
    .unwrap();
    let search = settings.resolve("search", &Patch::new()).unwrap().config;
    assert_eq!(search.latency_p99(), Some(Duration::from_millis(800)));
    assert_eq!(search.max_concurrent(), Some(32));
    assert_eq!(search.timeout(), Some(Duration::from_millis(2_000)));
}

#[test]
fn zero_guard_values_are_refused_where_they_stand() {
    for key in ["timeout_ms", "max_concurrent", "latency_p99_ms"] {
        let err = Settings::from_toml_str(&format!("[defaults]\n{key} = 0\n"), "zero.toml")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("`{key}` must be at least 1")),
            "{err}"
        );
    }
}

#[test]
fn a_latency_bound_without_any_window_is_refused_for_its_group() {
    let settings =
        Settings::from_toml_str("[groups.g]\nlatency_p99_ms = 100\n", "lat.toml").unwrap();
    let err = settings
        .resolve("g", &Patch::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("`latency_p99_ms` needs a window"), "{err}");
}
