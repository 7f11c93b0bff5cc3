//! What a handle says about itself (group, identity, `Debug`) and the exact
//! edges of the open deadline and the probes' lease on a manual clock: a
//! claim one nanosecond short is refused with one nanosecond left, one at the
//! deadline is admitted. (Written against survivors of `cargo mutants`.)

use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, OpenReason, State};

fn opened(open_ms: u64, probes: u32) -> (Breaker, ManualClock) {
    let clock = ManualClock::new();
    clock.set_nanos(1_000_000_000);
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_millis(open_ms))
        .half_open_probes(probes)
        .probe_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("edges", config, clock.clone());
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
    (breaker, clock)
}

#[test]
fn a_handle_names_its_group_and_knows_its_clones() {
    let a = Breaker::new("identity-a", Config::default());
    let b = Breaker::new("identity-b", Config::default());
    assert_eq!(a.group(), "identity-a");
    assert!(a.same_as(&a.clone()));
    assert!(!a.same_as(&b));
    let shown = format!("{a:?}");
    assert!(shown.contains("identity-a"), "{shown}");
}

#[test]
fn an_open_breaker_refuses_until_the_last_nanosecond_and_admits_at_the_deadline() {
    let (breaker, clock) = opened(100, 1);
    clock.advance(Duration::from_nanos(100_000_000 - 1));
    assert!(!breaker.would_admit());
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Open);
    assert_eq!(refused.retry_after(), Some(Duration::from_nanos(1)));
    clock.advance(Duration::from_nanos(1));
    assert!(breaker.would_admit());
    let probe = breaker.try_acquire().expect("due at the deadline");
    assert!(probe.is_probe());
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_full_half_open_breaker_refuses_until_the_lease_runs_out() {
    let (breaker, clock) = opened(100, 1);
    clock.advance(Duration::from_millis(100));
    let probe = breaker.try_acquire().expect("first probe");
    // Closed (0), open (1), half-open (2): the probe's generation.
    assert_eq!(probe.generation(), 2);
    assert_eq!(
        breaker.metrics().retry_after,
        Some(Duration::from_millis(50))
    );
    clock.advance(Duration::from_nanos(50_000_000 - 1));
    assert!(!breaker.would_admit());
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::HalfOpenFull);
    assert_eq!(refused.retry_after(), Some(Duration::from_nanos(1)));
    clock.advance(Duration::from_nanos(1));
    assert!(breaker.would_admit());
    let second = breaker.try_acquire().expect("the lease ran out: reclaimed");
    assert!(second.is_probe());
    probe.success(); // stale: its slot was reclaimed
    assert_eq!(breaker.state(), State::HalfOpen);
    second.success();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().probes_reclaimed, 1);
}

#[test]
fn a_half_open_breaker_with_a_free_slot_reports_no_wait() {
    let (breaker, clock) = opened(100, 2);
    assert_eq!(
        breaker.metrics().retry_after,
        Some(Duration::from_millis(100))
    );
    clock.advance(Duration::from_millis(100));
    let first = breaker.try_acquire().expect("first probe");
    assert_eq!(breaker.metrics().retry_after, None, "one slot still free");
    let second = breaker.try_acquire().expect("second probe");
    assert_eq!(
        breaker.metrics().retry_after,
        Some(Duration::from_millis(50))
    );
    assert_eq!(first.generation(), second.generation());
    first.success();
    second.success();
    let closed = breaker.try_acquire().unwrap();
    assert_eq!(closed.generation(), 3);
}

#[test]
fn a_forced_closed_breaker_feeds_its_window_and_never_trips() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .window(Duration::from_secs(10))
        .failure_rate(0.5)
        .min_calls(2)
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("forced-window", config, clock);
    breaker.force_closed();
    for _ in 0..3 {
        breaker.try_acquire().unwrap().success();
        breaker.try_acquire().unwrap().failure();
    }
    let m = breaker.metrics();
    assert_eq!(m.state, State::ForcedClosed);
    assert_eq!((m.successes, m.failures), (3, 3), "counted");
    let window = m.window.expect("a window policy");
    assert_eq!((window.calls, window.failures), (6, 3), "in the window");
    assert_eq!(m.times_opened, 0, "at its failure rate, never tripped");
}
