//! `Breaker::reconfigure` on a live breaker: state, generation and counts are
//! kept; thresholds judge from the next outcome, the open duration applies
//! from the next (re)open; a change of failure policy is refused.

use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, State};

fn consecutive(threshold: u32, open_ms: u64) -> Config {
    Config::builder()
        .threshold(threshold)
        .open(Duration::from_millis(open_ms))
        .backoff(1.0)
        .build()
        .unwrap()
}

fn fail(breaker: &Breaker, times: u32) {
    for _ in 0..times {
        breaker.try_acquire().unwrap().failure();
    }
}

#[test]
fn a_lower_threshold_trips_on_the_next_failure_counting_the_failures_so_far() {
    let breaker = Breaker::with_clock("db", consecutive(5, 1_000), ManualClock::new());
    fail(&breaker, 3);
    breaker.reconfigure(consecutive(2, 1_000)).unwrap();
    assert_eq!(
        breaker.state(),
        State::Closed,
        "reconfiguring judges nothing by itself"
    );
    assert_eq!(breaker.metrics().consecutive_failures, 3);
    fail(&breaker, 1);
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn a_higher_threshold_lets_the_failure_that_would_have_tripped_pass() {
    let breaker = Breaker::with_clock("db", consecutive(3, 1_000), ManualClock::new());
    fail(&breaker, 2);
    breaker.reconfigure(consecutive(5, 1_000)).unwrap();
    fail(&breaker, 2);
    assert_eq!(breaker.state(), State::Closed);
    fail(&breaker, 1);
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn an_open_circuit_keeps_its_deadline_and_the_new_open_duration_applies_from_the_next_open() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("db", consecutive(1, 1_000), clock.clone());
    fail(&breaker, 1);
    let before = breaker.metrics();
    breaker.reconfigure(consecutive(1, 5_000)).unwrap();
    let after = breaker.metrics();
    assert_eq!(
        (
            after.state,
            after.generation,
            after.failures,
            after.times_opened
        ),
        (
            before.state,
            before.generation,
            before.failures,
            before.times_opened
        )
    );
    clock.advance(Duration::from_millis(1_000));
    let probe = breaker
        .try_acquire()
        .expect("the deadline given at the trip holds");
    probe.failure();
    assert_eq!(breaker.state(), State::Open);
    clock.advance(Duration::from_millis(4_999));
    assert!(breaker.try_acquire().is_err(), "reopened for the new 5 s");
    clock.advance(Duration::from_millis(1));
    assert!(breaker.try_acquire().is_ok());
}

#[test]
fn more_probes_admit_more_claims_from_the_next_claim_of_the_same_half_open_episode() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("db", consecutive(1, 1_000), clock.clone());
    fail(&breaker, 1);
    clock.advance(Duration::from_millis(1_000));
    let first = breaker.try_acquire().unwrap();
    assert!(breaker.try_acquire().is_err(), "one probe slot");
    let generation = breaker.metrics().generation;
    let two = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(1))
        .backoff(1.0)
        .half_open_probes(2)
        .successes_to_close(2)
        .build()
        .unwrap();
    breaker.reconfigure(two).unwrap();
    let second = breaker.try_acquire().expect("a second slot now");
    assert_eq!(breaker.metrics().generation, generation);
    first.success();
    assert_eq!(breaker.state(), State::HalfOpen, "two successes close now");
    second.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_change_of_failure_policy_is_refused_and_changes_nothing() {
    let window = Config::builder().window_calls(10).build().unwrap();
    let breaker = Breaker::new("db", window);
    for (to, what) in [
        (consecutive(3, 1_000), "window to consecutive"),
        (
            Config::builder().window_calls(20).build().unwrap(),
            "window size",
        ),
        (
            Config::builder()
                .window_calls(10)
                .slow_call(Duration::from_millis(100))
                .build()
                .unwrap(),
            "slow calls judged",
        ),
    ] {
        let err = breaker.reconfigure(to).unwrap_err();
        assert_eq!(err.group(), "db", "{what}");
        assert!(err.to_string().contains("restart"), "{what}: {err}");
        assert_eq!(*breaker.config(), window, "{what}");
    }
    // The same window with other open keys, or another rate, is a live change.
    let tuned = Config::builder()
        .window_calls(10)
        .failure_rate(0.2)
        .build()
        .unwrap();
    breaker.reconfigure(tuned).unwrap();
    assert_eq!(breaker.config().failure_rate(), Some(0.2));
    let longer = Config::builder()
        .window_calls(10)
        .open(Duration::from_secs(9))
        .build()
        .unwrap();
    breaker.reconfigure(longer).unwrap();
    assert_eq!(breaker.config().open(), Duration::from_millis(9_000));

    let count = Breaker::new("api", consecutive(3, 1_000));
    assert!(count.reconfigure(window).is_err());
    assert_eq!(count.config().threshold(), 3);
}

/// The bulkhead, the window's slow-call rule and call timing are built with the
/// breaker: a live change of `max_concurrent`, `timeout_ms` or
/// `latency_p99_ms` is refused, rather than reported as applied while the old
/// values stay.
#[test]
fn a_change_of_a_key_fixed_at_construction_is_refused_and_changes_nothing() {
    let window = |build: fn(breaker_core::ConfigBuilder) -> breaker_core::ConfigBuilder| {
        build(Config::builder().window_calls(10)).build().unwrap()
    };
    let built = window(|b| {
        b.max_concurrent(2)
            .timeout(Duration::from_millis(500))
            .latency_p99(Duration::from_millis(100))
    });
    let breaker = Breaker::with_clock("db", built, ManualClock::new());
    for (to, key) in [
        (
            window(|b| {
                b.max_concurrent(1)
                    .timeout(Duration::from_millis(500))
                    .latency_p99(Duration::from_millis(100))
            }),
            "max_concurrent",
        ),
        (
            window(|b| {
                b.timeout(Duration::from_millis(500))
                    .latency_p99(Duration::from_millis(100))
            }),
            "max_concurrent",
        ),
        (
            window(|b| {
                b.max_concurrent(2)
                    .timeout(Duration::from_millis(900))
                    .latency_p99(Duration::from_millis(100))
            }),
            "timeout_ms",
        ),
        (
            window(|b| b.max_concurrent(2).latency_p99(Duration::from_millis(100))),
            "timeout_ms",
        ),
        (
            window(|b| b.max_concurrent(2).timeout(Duration::from_millis(500))),
            "latency_p99_ms",
        ),
    ] {
        assert_eq!(breaker.check_reconfigure(&to).unwrap_err().key(), Some(key));
        let err = breaker.reconfigure(to).unwrap_err();
        assert_eq!(err.key(), Some(key));
        assert_eq!(err.group(), "db");
        let message = err.to_string();
        assert!(
            message.contains(key) && message.contains("restart"),
            "{key}: {message}"
        );
        assert_eq!(*breaker.config(), built, "{key}");
    }
    // The bulkhead still holds two calls, as it was built.
    let first = breaker.enter_bulkhead().unwrap();
    let second = breaker.enter_bulkhead().unwrap();
    assert!(
        breaker.enter_bulkhead().is_err(),
        "a third call over the cap of 2"
    );
    drop((first, second));

    // The same fixed keys with other open keys is a live change.
    let longer = window(|b| {
        b.max_concurrent(2)
            .timeout(Duration::from_millis(500))
            .latency_p99(Duration::from_millis(100))
            .open(Duration::from_secs(9))
    });
    breaker.reconfigure(longer).unwrap();
    assert_eq!(breaker.config().open(), Duration::from_millis(9_000));

    // A breaker built without them refuses to gain them live.
    let plain = Breaker::new("plain", consecutive(3, 1_000));
    let capped = Config::builder()
        .threshold(3)
        .max_concurrent(1)
        .build()
        .unwrap();
    let err = plain.reconfigure(capped).unwrap_err();
    assert_eq!(err.key(), Some("max_concurrent"));
    assert!(err.to_string().contains("unset"), "{err}");
}
