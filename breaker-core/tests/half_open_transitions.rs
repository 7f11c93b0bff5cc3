//! Half-open: entered lazily by a claim at `opened_at + open_for`, limited probes,
//! closing after `successes_to_close`, reopening with backoff on a probe failure.
mod support;

use std::time::Duration;

use breaker_core::{Config, OpenReason, State};
use support::{config, manual, ms, trip};

fn cfg() -> breaker_core::ConfigBuilder {
    Config::builder().threshold(1).open(Duration::from_secs(1))
}

#[test]
fn a_claim_one_nanosecond_before_open_for_is_refused_and_at_open_for_is_the_probe() {
    let (breaker, clock) = manual(cfg().build().unwrap());
    clock.set_nanos(5_000);
    trip(&breaker);
    clock.set_nanos(5_000 + 1_000_000_000 - 1);
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.retry_after(), Some(Duration::from_nanos(1)));
    assert_eq!(breaker.state(), State::Open);
    clock.set_nanos(5_000 + 1_000_000_000);
    let probe = breaker.try_acquire().expect("admitted at exactly open_for");
    assert!(probe.is_probe());
    assert_eq!(breaker.state(), State::HalfOpen);
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn half_open_admits_at_most_half_open_probes_at_once() {
    let (breaker, clock) = manual(cfg().half_open_probes(2).build().unwrap());
    trip(&breaker);
    clock.advance(ms(1_000));
    let a = breaker.try_acquire().unwrap();
    let b = breaker.try_acquire().unwrap();
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::HalfOpenFull);
    assert_eq!(breaker.metrics().probes_in_flight, 2);
    a.ignore(); // frees its slot without moving anything
    assert_eq!(breaker.state(), State::HalfOpen);
    let c = breaker
        .try_acquire()
        .expect("a freed slot admits the next probe");
    b.success();
    assert_eq!(breaker.state(), State::Closed);
    c.success(); // a probe of the finished episode: stale
    assert_eq!(breaker.metrics().stale, 1);
}

#[test]
fn successes_to_close_probe_successes_close_the_circuit() {
    let (breaker, clock) = manual(cfg().successes_to_close(3).build().unwrap());
    trip(&breaker);
    clock.advance(ms(1_000));
    assert_eq!(breaker.state(), State::Open, "nothing moves until a claim");
    for _ in 0..2 {
        breaker.try_acquire().unwrap().success();
        assert_eq!(breaker.state(), State::HalfOpen);
    }
    breaker.try_acquire().unwrap().success();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().probes_succeeded, 3);
}

#[test]
fn a_failed_probe_reopens_at_once_with_the_open_duration_grown_by_backoff_up_to_the_cap() {
    let (breaker, clock) = manual(
        cfg()
            .backoff(2.0)
            .max_open(Duration::from_secs(3))
            .build()
            .unwrap(),
    );
    trip(&breaker);
    let mut expected = [2_000u64, 3_000, 3_000].into_iter();
    clock.advance(ms(1_000));
    for _ in 0..3 {
        let probe = breaker.try_acquire().unwrap();
        probe.failure();
        assert_eq!(breaker.state(), State::Open);
        let open_for = expected.next().unwrap();
        let refused = breaker.try_acquire().unwrap_err();
        assert_eq!(
            refused.retry_after(),
            Some(ms(open_for)),
            "reopened with opened_at = now"
        );
        clock.advance(ms(open_for - 1));
        assert!(breaker.try_acquire().is_err());
        clock.advance(ms(1));
    }
    let m = breaker.metrics();
    assert_eq!(m.probes_failed, 3);
    assert_eq!(m.times_opened, 4);
}

#[test]
fn closing_resets_the_open_duration_to_the_base() {
    let (breaker, clock) = manual(cfg().backoff(4.0).build().unwrap());
    trip(&breaker);
    clock.advance(ms(1_000));
    breaker.try_acquire().unwrap().failure(); // open for 4 s now
    clock.advance(ms(4_000));
    breaker.try_acquire().unwrap().success();
    assert_eq!(breaker.state(), State::Closed);
    trip(&breaker);
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.retry_after(), Some(ms(1_000)));
}

#[test]
fn closing_resets_the_failure_policy() {
    let (breaker, clock) = manual(config(3, 1_000));
    trip(&breaker);
    clock.advance(ms(1_000));
    breaker.try_acquire().unwrap().success();
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(
        breaker.state(),
        State::Closed,
        "the count starts again from zero"
    );
}
