//! The window keys of the config builder: which policy they select, their
//! defaults, and every refusal with the key it names.

use std::time::Duration;

use breaker_core::{Config, ConfigError, FailurePolicy};

#[test]
fn no_window_key_keeps_the_consecutive_policy() {
    let c = Config::builder().threshold(3).build().unwrap();
    assert_eq!(c.policy(), FailurePolicy::Consecutive { threshold: 3 });
    assert_eq!(c.rates(), None);
    assert_eq!(c.failure_rate(), None);
    assert_eq!(c.window(), None);
}

#[test]
fn window_ms_selects_the_time_window_with_documented_defaults() {
    let c = Config::builder()
        .window(Duration::from_secs(10))
        .build()
        .unwrap();
    assert!(matches!(
        c.policy(),
        FailurePolicy::TimeWindow {
            window_ms: 10_000,
            ..
        }
    ));
    assert_eq!(c.threshold(), 0);
    assert_eq!(c.window(), Some(Duration::from_secs(10)));
    assert_eq!(c.failure_rate(), Some(0.5));
    assert_eq!(c.min_calls(), Some(10));
    assert_eq!(c.slow_call(), None);
    assert_eq!(c.slow_call_rate(), None);
}

#[test]
fn window_calls_selects_the_count_window_which_judges_once_full_by_default() {
    let c = Config::builder().window_calls(20).build().unwrap();
    assert!(matches!(
        c.policy(),
        FailurePolicy::CountWindow {
            window_calls: 20,
            ..
        }
    ));
    assert_eq!(c.window_calls(), Some(20));
    assert_eq!(c.min_calls(), Some(20));
    let c = Config::builder()
        .window_calls(20)
        .min_calls(5)
        .build()
        .unwrap();
    assert_eq!(c.min_calls(), Some(5));
}

#[test]
fn slow_call_ms_alone_trips_when_every_call_in_the_window_is_slow() {
    let c = Config::builder()
        .window(Duration::from_secs(1))
        .slow_call(Duration::from_millis(200))
        .build()
        .unwrap();
    assert_eq!(c.slow_call(), Some(Duration::from_millis(200)));
    assert_eq!(c.slow_call_rate(), Some(1.0));
    let c = Config::builder()
        .window(Duration::from_secs(1))
        .slow_call(Duration::from_millis(200))
        .slow_call_rate(0.25)
        .build()
        .unwrap();
    assert_eq!(c.slow_call_rate(), Some(0.25));
}

#[test]
fn rates_outside_zero_exclusive_to_one_inclusive_are_refused() {
    let w = || Config::builder().window(Duration::from_secs(1));
    for bad in [0.0, -0.1, 1.000_001, f64::NAN, f64::INFINITY] {
        assert_eq!(
            w().failure_rate(bad).build(),
            Err(ConfigError::FailureRateOutOfRange),
            "{bad}"
        );
        assert_eq!(
            w().slow_call(Duration::from_millis(10))
                .slow_call_rate(bad)
                .build(),
            Err(ConfigError::SlowCallRateOutOfRange),
            "{bad}"
        );
    }
    for good in [f64::MIN_POSITIVE, 0.5, 1.0] {
        assert!(w().failure_rate(good).build().is_ok(), "{good}");
        assert!(
            w().slow_call(Duration::from_millis(10))
                .slow_call_rate(good)
                .build()
                .is_ok(),
            "{good}"
        );
    }
}

#[test]
fn each_refusal_names_the_key_to_fix() {
    let b = Config::builder;
    let cases: [(Result<Config, ConfigError>, ConfigError, &str); 15] = [
        (
            b().window(Duration::from_secs(1)).window_calls(10).build(),
            ConfigError::BothWindows,
            "window_calls",
        ),
        (
            b().threshold(3).window(Duration::from_secs(1)).build(),
            ConfigError::ThresholdWithWindow,
            "threshold",
        ),
        (
            b().window(Duration::from_millis(0)).build(),
            ConfigError::WindowTooShort,
            "window_ms",
        ),
        (
            b().window(Duration::from_millis(9)).build(),
            ConfigError::WindowTooShort,
            "window_ms",
        ),
        (
            b().window_calls(0).build(),
            ConfigError::ZeroWindowCalls,
            "window_calls",
        ),
        (
            b().window_calls(Config::MAX_WINDOW_CALLS + 1).build(),
            ConfigError::WindowCallsTooLarge,
            "window_calls",
        ),
        (
            b().window(Duration::from_secs(1)).min_calls(0).build(),
            ConfigError::ZeroMinCalls,
            "min_calls",
        ),
        (
            b().window_calls(10).min_calls(11).build(),
            ConfigError::MinCallsAboveWindow,
            "min_calls",
        ),
        (
            b().failure_rate(0.5).build(),
            ConfigError::FailureRateWithoutWindow,
            "failure_rate",
        ),
        (
            b().min_calls(5).build(),
            ConfigError::MinCallsWithoutWindow,
            "min_calls",
        ),
        (
            b().slow_call(Duration::from_millis(100)).build(),
            ConfigError::SlowCallWithoutWindow,
            "slow_call_ms",
        ),
        (
            b().window(Duration::from_secs(1))
                .slow_call(Duration::from_millis(0))
                .build(),
            ConfigError::ZeroSlowCall,
            "slow_call_ms",
        ),
        (
            b().window(Duration::from_secs(1))
                .slow_call_rate(0.5)
                .build(),
            ConfigError::SlowCallRateWithoutSlowCall,
            "slow_call_rate",
        ),
        (
            b().window(Duration::from_secs(1)).failure_rate(2.0).build(),
            ConfigError::FailureRateOutOfRange,
            "failure_rate",
        ),
        (
            b().window(Duration::from_secs(1))
                .slow_call(Duration::from_millis(5))
                .slow_call_rate(0.0)
                .build(),
            ConfigError::SlowCallRateOutOfRange,
            "slow_call_rate",
        ),
    ];
    for (built, error, key) in cases {
        assert_eq!(built, Err(error));
        assert_eq!(error.key(), key, "{error:?}");
        let message = error.to_string();
        assert!(message.contains(&format!("`{key}`")), "{message}");
    }
}

#[test]
fn boundary_values_are_accepted() {
    let b = Config::builder;
    assert!(b().window(Duration::from_millis(10)).build().is_ok());
    assert!(b().window(Duration::from_millis(u64::MAX)).build().is_ok());
    assert!(b().window_calls(1).build().is_ok());
    assert!(b().window_calls(Config::MAX_WINDOW_CALLS).build().is_ok());
    assert!(b().window_calls(10).min_calls(10).build().is_ok());
    assert!(b()
        .window(Duration::from_secs(1))
        .min_calls(u32::MAX)
        .build()
        .is_ok());
    assert!(b()
        .window(Duration::from_secs(1))
        .slow_call(Duration::from_millis(1))
        .build()
        .is_ok());
}

#[test]
fn a_window_config_is_built_in_a_const() {
    const C: Config = match Config::builder()
        .window_calls(100)
        .failure_rate(0.25)
        .min_calls(20)
        .slow_call(Duration::from_millis(500))
        .slow_call_rate(0.5)
        .build()
    {
        Ok(c) => c,
        Err(_) => panic!("valid"),
    };
    assert_eq!(C.failure_rate(), Some(0.25));
    assert_eq!(C.min_calls(), Some(20));
    assert_eq!(C.slow_call_rate(), Some(0.5));
}
