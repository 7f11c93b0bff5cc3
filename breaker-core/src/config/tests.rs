//! The builder's defaults and checks.

use std::time::Duration;

use super::*;

#[test]
fn defaults_are_documented_values() {
    let c = Config::default();
    assert_eq!(c.threshold(), 5);
    assert_eq!(c.open_duration(), Duration::from_secs(30));
    assert_eq!(c.half_open_probes(), 1);
    assert_eq!(c.successes_to_close(), 1);
    assert_eq!(c.backoff(), 2.0);
    assert_eq!(c.max_open_duration(), Duration::from_secs(300));
    assert_eq!(c.probe_timeout(), Duration::from_secs(30));
}

#[test]
fn invalid_values_are_typed_errors_not_panics() {
    let b = Config::builder;
    assert_eq!(b().threshold(0).build(), Err(ConfigError::ZeroThreshold));
    assert_eq!(
        b().threshold(Config::MAX_THRESHOLD + 1).build(),
        Err(ConfigError::ThresholdTooLarge)
    );
    assert_eq!(b().open_ms(0).build(), Err(ConfigError::ZeroOpen));
    assert_eq!(
        b().half_open_probes(0).build(),
        Err(ConfigError::ZeroProbes)
    );
    assert_eq!(
        b().half_open_probes(Config::MAX_PROBES + 1).build(),
        Err(ConfigError::TooManyProbes)
    );
    assert_eq!(
        b().successes_to_close(0).build(),
        Err(ConfigError::ZeroSuccesses)
    );
    assert_eq!(
        b().successes_to_close(Config::MAX_PROBES + 1).build(),
        Err(ConfigError::TooManySuccesses)
    );
    assert_eq!(b().backoff(0.5).build(), Err(ConfigError::BackoffBelowOne));
    assert_eq!(
        b().backoff(f64::NAN).build(),
        Err(ConfigError::BackoffNotFinite)
    );
    assert_eq!(
        b().backoff(f64::INFINITY).build(),
        Err(ConfigError::BackoffNotFinite)
    );
    assert_eq!(
        b().open_ms(10_000).max_open_ms(9_999).build(),
        Err(ConfigError::MaxOpenBelowOpen)
    );
    assert_eq!(
        b().probe_timeout_ms(0).build(),
        Err(ConfigError::ZeroProbeTimeout)
    );
}

#[test]
fn long_open_without_a_cap_is_not_cut_short_by_the_default_cap() {
    let c = Config::builder().open_ms(600_000).build().unwrap();
    assert_eq!(c.max_open_duration(), Duration::from_secs(600));
}

#[test]
fn backoff_grows_to_the_cap_and_saturates_near_u64_max() {
    let c = Config::builder()
        .open_ms(1_000)
        .backoff(3.0)
        .max_open_ms(5_000)
        .build()
        .unwrap();
    assert_eq!(c.grown_open_nanos(1_000_000_000), 3_000_000_000);
    assert_eq!(c.grown_open_nanos(3_000_000_000), 5_000_000_000);
    let huge = Config::builder().open_ms(u64::MAX).build().unwrap();
    assert_eq!(huge.grown_open_nanos(huge.open_nanos()), u64::MAX);
}
