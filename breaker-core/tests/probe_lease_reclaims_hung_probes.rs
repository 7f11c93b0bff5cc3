//! A probe that hangs loses its slot after `probe_timeout`; its late outcome is stale.
mod support;

use breaker_core::{Config, OpenReason, State};
use std::time::Duration;
use support::{manual, ms, trip};

fn cfg() -> Config {
    Config::builder()
        .threshold(1)
        .open(Duration::from_millis(100))
        .probe_timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

#[test]
fn the_default_probe_timeout_is_thirty_seconds() {
    assert_eq!(Config::default().probe_timeout(), ms(30_000));
}

#[test]
fn a_hung_probe_holds_its_slot_until_the_lease_runs_out_then_loses_it() {
    let (breaker, clock) = manual(cfg());
    trip(&breaker);
    clock.advance(ms(100));
    let hung = breaker.try_acquire().unwrap();
    clock.advance(ms(4_999));
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::HalfOpenFull);
    assert_eq!(refused.retry_after(), Some(ms(1)));
    clock.advance(ms(1));
    let fresh = breaker
        .try_acquire()
        .expect("the lease ran out: the slot is reclaimed");
    assert_eq!(breaker.metrics().probes_reclaimed, 1);
    hung.success();
    assert_eq!(
        breaker.state(),
        State::HalfOpen,
        "the hung probe's late success is stale"
    );
    assert_eq!(breaker.metrics().stale, 1);
    fresh.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_hung_probes_late_failure_does_not_reopen() {
    let (breaker, clock) = manual(cfg());
    trip(&breaker);
    clock.advance(ms(100));
    let hung = breaker.try_acquire().unwrap();
    clock.advance(ms(5_000));
    let fresh = breaker.try_acquire().unwrap();
    hung.failure();
    assert_eq!(breaker.state(), State::HalfOpen);
    fresh.success();
    assert_eq!(breaker.state(), State::Closed);
}
