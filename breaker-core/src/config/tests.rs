//! The builder's defaults and checks.

use std::time::Duration;

use super::*;

#[test]
fn defaults_are_documented_values() {
    let c = Config::default();
    assert_eq!(c.threshold(), 5);
    assert_eq!(c.open(), Duration::from_secs(30));
    assert_eq!(c.half_open_probes(), 1);
    assert_eq!(c.successes_to_close(), 1);
    assert_eq!(c.backoff(), 1.0);
    assert_eq!(c.max_open(), Duration::from_secs(300));
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
    assert_eq!(
        b().open(Duration::from_millis(0)).build(),
        Err(ConfigError::ZeroOpen)
    );
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
        b().open(Duration::from_secs(10))
            .max_open(Duration::from_millis(9_999))
            .build(),
        Err(ConfigError::MaxOpenBelowOpen)
    );
    assert_eq!(
        b().probe_timeout(Duration::from_millis(0)).build(),
        Err(ConfigError::ZeroProbeTimeout)
    );
}

#[test]
fn long_open_without_a_cap_is_not_cut_short_by_the_default_cap() {
    let c = Config::builder()
        .open(Duration::from_secs(600))
        .build()
        .unwrap();
    assert_eq!(c.max_open(), Duration::from_secs(600));
}

#[test]
fn backoff_grows_to_the_cap_and_saturates_near_u64_max() {
    let c = Config::builder()
        .open(Duration::from_secs(1))
        .backoff(3.0)
        .max_open(Duration::from_secs(5))
        .build()
        .unwrap();
    assert_eq!(c.grown_open_nanos(1_000_000_000), 3_000_000_000);
    assert_eq!(c.grown_open_nanos(3_000_000_000), 5_000_000_000);
    let huge = Config::builder()
        .open(Duration::from_millis(u64::MAX))
        .build()
        .unwrap();
    assert_eq!(huge.grown_open_nanos(huge.open_nanos()), u64::MAX);
}

#[test]
fn durations_are_set_and_read_back_by_one_name() {
    let c = Config::builder()
        .window(Duration::from_secs(10))
        .slow_call(Duration::from_millis(250))
        .open(Duration::from_secs(5))
        .max_open(Duration::from_secs(60))
        .probe_timeout(Duration::from_secs(2))
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    assert_eq!(c.window(), Some(Duration::from_secs(10)));
    assert_eq!(c.slow_call(), Some(Duration::from_millis(250)));
    let p99 = Config::builder()
        .window_calls(100)
        .latency_p99(Duration::from_millis(40))
        .build()
        .unwrap();
    assert_eq!(p99.latency_p99(), Some(Duration::from_millis(40)));
    assert_eq!(c.open(), Duration::from_secs(5));
    assert_eq!(c.max_open(), Duration::from_secs(60));
    assert_eq!(c.probe_timeout(), Duration::from_secs(2));
    assert_eq!(c.timeout(), Some(Duration::from_millis(300)));
    let keys: Vec<_> = c.explicit_keys().collect();
    assert!(
        keys.contains(&"open_ms") && keys.contains(&"window_ms"),
        "{keys:?}"
    );
}

#[test]
fn a_part_of_a_millisecond_is_refused_naming_the_key() {
    let b = Config::builder;
    assert_eq!(
        b().open(Duration::from_micros(1_500)).build(),
        Err(ConfigError::NotWholeMillis("open_ms"))
    );
    let err = b()
        .threshold(2)
        .probe_timeout(Duration::from_nanos(1))
        .build()
        .unwrap_err();
    assert_eq!(err.key(), "probe_timeout_ms");
    assert_eq!(
        err.to_string(),
        "`probe_timeout_ms` must be a whole number of milliseconds"
    );
    // Whole milliseconds of any spelling are taken.
    assert!(b().open(Duration::from_micros(2_000)).build().is_ok());
}

#[test]
fn the_longest_duration_saturates_at_the_longest_millisecond_count() {
    let c = Config::builder()
        .open(Duration::from_millis(u64::MAX))
        .build()
        .unwrap();
    assert_eq!(c.open(), Duration::from_millis(u64::MAX));
    let c = Config::builder()
        .open(Duration::from_secs(u64::MAX))
        .build()
        .unwrap();
    assert_eq!(c.open(), Duration::from_millis(u64::MAX));
}

/// Configurations a single key's value is judged against: alone, with each
/// window (and slow calls) for the keys that tune one, and throttled for the
/// keys that tune the throttle.
fn bases() -> [breaker_rules::Values; 5] {
    use breaker_rules::Values;
    [
        Values::EMPTY,
        // A window without a slow-call rule: `latency_p99_ms` is one.
        Values {
            window_calls: Some(100),
            ..Values::EMPTY
        },
        Values {
            window_calls: Some(100),
            slow_call_ms: Some(1_000),
            ..Values::EMPTY
        },
        Values {
            window_ms: Some(10_000),
            slow_call_ms: Some(1_000),
            ..Values::EMPTY
        },
        Values {
            throttle: Some(2.0),
            ..Values::EMPTY
        },
    ]
}

fn config_of(values: &breaker_rules::Values) -> Option<Config> {
    breaker_rules::check(values).ok().map(|checked| Config {
        checked,
        explicit: values.set_keys(),
    })
}

#[test]
fn every_key_changes_what_the_breaker_runs_with_and_reads_back() {
    use breaker_rules::{KeyValue, Ty, KEYS};
    for key in KEYS {
        let candidates = match key.ty {
            Ty::U32 => [KeyValue::U32(7), KeyValue::U32(70)],
            Ty::U64 => [KeyValue::U64(7), KeyValue::U64(400_000)],
            Ty::F64 => [KeyValue::F64(0.25), KeyValue::F64(3.0)],
            Ty::Bool => [KeyValue::Bool(true), KeyValue::Bool(true)],
            Ty::Choice(words) => [KeyValue::Choice(words[1]), KeyValue::Choice(words[1])],
        };
        let mut taken = 0;
        for base in bases() {
            let Some(before) = config_of(&base) else {
                panic!("a base config is valid")
            };
            for value in candidates {
                let mut values = base;
                assert!(
                    values.set(key.name, value),
                    "`{}` takes {value:?}",
                    key.name
                );
                let Some(config) = config_of(&values) else {
                    continue;
                };
                taken += 1;
                assert_eq!(config.value(key.name), Some(value), "`{}`", key.name);
                assert_ne!(
                    config, before,
                    "`{}` = {value:?} changes nothing the breaker runs with",
                    key.name
                );
            }
        }
        assert!(taken > 0, "no value of `{}` is accepted", key.name);
    }
}

#[test]
fn a_config_read_back_key_by_key_checks_to_itself() {
    for base in bases() {
        for shadow in [false, true] {
            let values = breaker_rules::Values {
                shadow: Some(shadow),
                jitter: Some(0.1),
                ..base
            };
            let config = config_of(&values).unwrap();
            let mut again = breaker_rules::Values::EMPTY;
            for (key, value) in config.values() {
                if let Some(value) = value {
                    assert!(again.set(key, value), "{key}");
                }
            }
            assert_eq!(config_of(&again), Some(config));
        }
    }
}

#[test]
fn every_retry_key_reads_back_from_the_policy_it_built() {
    use breaker_rules::{KeyValue, RETRY_KEYS};
    let policy = crate::RetryPolicy::new(2)
        .delay(Duration::from_millis(7))
        .max_delay(Duration::from_millis(70))
        .deadline(Duration::from_secs(1))
        .budget(0.25, 3);
    let read: Vec<_> = RETRY_KEYS.iter().map(|k| policy.value(k.name)).collect();
    assert_eq!(
        read,
        [
            Some(KeyValue::U32(2)),
            Some(KeyValue::U64(7)),
            Some(KeyValue::U64(70)),
            Some(KeyValue::U64(1_000)),
            Some(KeyValue::F64(0.25)),
            Some(KeyValue::U32(3)),
        ]
    );
    assert_eq!(
        policy.explicit_keys().count(),
        RETRY_KEYS.len(),
        "each builder method marks its own key"
    );
}
