//! `timeout_ms` and `max_concurrent` from a file or a variable are refused at
//! load time for a group whose `#[circuit_breaker]` does not name the key (the
//! attribute builds the deadline and the bulkhead only into fns that name
//! them), and enforced where it does.
#![cfg(feature = "config")]

use std::future::pending;
use std::sync::LazyLock;
use std::time::Duration;

use breakerbox::config_file::{ErrorKind, Settings};
use breakerbox::{circuit_breaker, CircuitOpen, Registry, TimedOut};

#[derive(Debug, PartialEq)]
enum Failed {
    Open,
    TimedOut,
}

impl From<CircuitOpen> for Failed {
    fn from(_: CircuitOpen) -> Self {
        Failed::Open
    }
}

impl From<TimedOut> for Failed {
    fn from(_: TimedOut) -> Self {
        Failed::TimedOut
    }
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

#[circuit_breaker(group = "lookup", threshold = 3, registry = &REGISTRY)]
async fn lookup() -> Result<(), Failed> {
    Ok(())
}

#[circuit_breaker(group = "report", registry = &REGISTRY)]
fn report() -> Result<(), Failed> {
    Ok(())
}

#[circuit_breaker(group = "fetch", timeout_ms = 60_000, registry = &REGISTRY)]
async fn fetch(hang: bool) -> Result<(), Failed> {
    if hang {
        pending::<()>().await;
    }
    Ok(())
}

fn refused(toml: &str) -> String {
    let err = Settings::from_toml_str(toml, "unenforced.toml")
        .unwrap()
        .apply(&Registry::new())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unenforced, "{err}");
    err.to_string()
}

#[test]
fn a_deadline_for_a_group_whose_attribute_names_none_is_refused_at_load_time() {
    let message = refused("[groups.lookup]\ntimeout_ms = 50\n");
    for part in [
        "group `lookup`: `timeout_ms = 50` (`unenforced.toml` line 2, [groups.lookup]) would \
         never be enforced",
        "(in `config_file_refuses_keys_the_attribute_does_not_enforce`) does not name \
         `timeout_ms`",
        "add `timeout_ms = ..` to the attribute",
    ] {
        assert!(message.contains(part), "missing {part:?} in: {message}");
    }
}

#[test]
fn a_bulkhead_for_a_group_whose_attribute_names_none_is_refused_at_load_time() {
    let message = refused("[groups.report]\nmax_concurrent = 1\n");
    assert!(
        message.contains("`max_concurrent = 1` (`unenforced.toml` line 2, [groups.report])"),
        "{message}"
    );
    assert!(message.contains("the bulkhead"), "{message}");
    let err = Settings::new()
        .with_env([("BREAKER_GROUPS__REPORT__MAX_CONCURRENT", "1")])
        .unwrap()
        .apply(&Registry::new())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unenforced);
    assert!(
        err.to_string()
            .contains("variable `BREAKER_GROUPS__REPORT__MAX_CONCURRENT`"),
        "{err}"
    );
}

#[test]
fn a_default_deadline_is_refused_while_an_attribute_of_the_program_names_none() {
    let message = refused("[defaults]\ntimeout_ms = 50\n");
    assert!(
        message.contains("`timeout_ms = 50` (`unenforced.toml` line 2, [defaults])"),
        "{message}"
    );
}

#[test]
fn a_refused_file_applies_nothing() {
    let registry = Registry::new();
    let file = "[groups.lookup]\nopen_ms = 1_000\n[groups.report]\nmax_concurrent = 1\n";
    let settings = Settings::from_toml_str(file, "unenforced.toml").unwrap();
    assert!(settings.apply(&registry).is_err());
    assert!(registry.overrides().is_empty());
    assert!(registry.get("lookup").is_none());
}

#[tokio::test(start_paused = true)]
async fn a_deadline_the_attribute_names_takes_the_file_s_value_and_is_enforced() {
    Settings::from_toml_str("[groups.fetch]\ntimeout_ms = 50\n", "enforced.toml")
        .unwrap()
        .apply(&REGISTRY)
        .unwrap();
    let started = tokio::time::Instant::now();
    assert_eq!(fetch(true).await, Err(Failed::TimedOut));
    assert_eq!(started.elapsed(), Duration::from_millis(50));
    let breaker = REGISTRY.get("fetch").unwrap();
    assert_eq!(breaker.config().timeout(), Some(Duration::from_millis(50)));
    assert_eq!(fetch(false).await, Ok(()));
    let _ = (lookup().await, report());
}
