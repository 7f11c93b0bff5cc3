//! The attribute writes durations as `_ms` integer literals and takes
//! `jitter`; the breaker it makes holds them as `Duration`s and a share.

mod support;

use std::time::Duration;

use breakerbox::circuit_breaker;
use support::{AppError, REG};

#[circuit_breaker(
    group = "jittered_attribute",
    registry = &REG,
    threshold = 1,
    open_ms = 1500,
    max_open_ms = 60000,
    probe_timeout_ms = 250,
    jitter = 0.25
)]
fn fetch() -> Result<(), AppError> {
    Err(AppError::Down)
}

#[test]
fn the_attribute_sets_durations_in_milliseconds_and_the_jitter() {
    let _ = fetch();
    let breaker = REG.get("jittered_attribute").unwrap();
    let config = breaker.config();
    assert_eq!(config.open(), Duration::from_millis(1500));
    assert_eq!(config.max_open(), Duration::from_secs(60));
    assert_eq!(config.probe_timeout(), Duration::from_millis(250));
    assert_eq!(config.jitter(), 0.25);
    let open = breaker.metrics().retry_after.expect("tripped");
    assert!(
        open >= Duration::from_millis(1125) && open <= Duration::from_millis(1875),
        "{open:?}"
    );
}
