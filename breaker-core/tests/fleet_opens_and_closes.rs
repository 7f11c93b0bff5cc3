//! What a fleet agent does to a local breaker (`fleet_open`, `fleet_close`,
//! `fleet_release`, `fleet_hold`, `fleet_reopen`), through the public handle
//! on a manual clock: refusals that say "fleet" with a real `retry_after`, the
//! lazy half-open and its probe slots, the backoff, the events, and the
//! user's hand that wins.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::fleet::FleetControl;
use breaker_core::{
    Breaker, Config, Event, ManualClock, OpenReason, Registry, State, TransitionReason,
};
use support::{fail, manual, ms, trip};

fn probes(n: u32) -> Config {
    Config::builder()
        .threshold(2)
        .open(Duration::from_secs(1))
        .backoff(2.0)
        .max_open(Duration::from_secs(60))
        .half_open_probes(n)
        .build()
        .unwrap()
}

#[test]
fn a_fleet_open_refuses_with_the_fleet_reason_and_the_time_left() {
    let (b, clock) = manual(probes(1));
    assert!(b.fleet_open(ms(20_000)));
    assert_eq!(b.state(), State::Open);
    let refused = b.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Fleet);
    assert_eq!(refused.retry_after(), Some(ms(20_000)));
    assert_eq!(
        refused.to_string(),
        "circuit `test` is open across the fleet; retry after 20s"
    );
    clock.advance(ms(15_000));
    let refused = b.refusal().expect("still open");
    assert_eq!(
        (refused.reason(), refused.retry_after()),
        (OpenReason::Fleet, Some(ms(5_000)))
    );
    assert_eq!(b.metrics().retry_after, Some(ms(5_000)));
    assert_eq!(b.metrics().rejected, 1, "asking is not refusing");
}

#[test]
fn a_due_fleet_open_probes_with_its_slots_as_a_local_trip_does() {
    let (b, clock) = manual(probes(2));
    b.fleet_open(ms(3_000));
    clock.advance(ms(2_999));
    assert!(!b.would_admit(), "one nanosecond short is refused");
    clock.advance(ms(1));
    assert!(b.would_admit());
    assert_eq!(b.state(), State::Open, "asking moves nothing");
    let first = b.try_acquire().expect("the first probe");
    let second = b.try_acquire().expect("the second slot");
    assert!(first.is_probe() && second.is_probe());
    let full = b.try_acquire().unwrap_err();
    assert_eq!(full.reason(), OpenReason::HalfOpenFull);
    first.success();
    second.success();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn a_probe_that_fails_after_a_fleet_open_reopens_with_the_fleet_time_grown() {
    let (b, clock) = manual(probes(1));
    // The fleet's open has grown to 8 s elsewhere; the local base is 1 s.
    b.fleet_open(ms(8_000));
    clock.advance(ms(8_000));
    b.try_acquire().expect("probe").failure();
    let m = b.metrics();
    assert_eq!(m.state, State::Open);
    assert_eq!(m.open_for, Some(ms(16_000)), "grown from the fleet's 8 s");
    let refused = b.try_acquire().unwrap_err();
    assert_eq!(
        refused.reason(),
        OpenReason::Open,
        "this reopen is local evidence"
    );
}

#[test]
fn a_fleet_open_during_a_local_episode_keeps_the_longer_backoff() {
    let (b, clock) = manual(probes(1));
    trip(&b);
    clock.advance(ms(1_000));
    b.try_acquire().unwrap().failure(); // local backoff: 2 s
    assert_eq!(b.metrics().open_for, Some(ms(2_000)));
    b.fleet_open(ms(1_500));
    // The local end (2 s) stands: the fleet's shorter open does not move it.
    clock.advance(ms(1_500));
    assert!(b.try_acquire().is_err());
    clock.advance(ms(500));
    b.try_acquire().unwrap().failure();
    assert_eq!(
        b.metrics().open_for,
        Some(ms(4_000)),
        "grown from the local 2 s, not the fleet's 1.5 s"
    );
    // A new episode from closed starts again from the fleet's time.
    b.fleet_close();
    b.fleet_open(ms(1_200));
    clock.advance(ms(1_200));
    b.try_acquire().unwrap().failure();
    assert_eq!(b.metrics().open_for, Some(ms(2_400)));
}

#[test]
fn a_fleet_open_starts_a_generation_and_makes_calls_in_flight_stale() {
    let (b, _clock) = manual(probes(1));
    let before = b.metrics().generation;
    let slow = b.try_acquire().unwrap();
    fail(&b); // one failure of two
    assert!(b.fleet_open(ms(1_000)));
    assert_eq!(b.metrics().generation, before + 1);
    slow.success();
    let m = b.metrics();
    assert_eq!((m.stale, m.consecutive_failures), (1, 0));
    assert_eq!(m.times_opened, 1);
    assert_eq!(
        m.transitions.get(State::Closed, State::Open),
        1,
        "counted as any open"
    );
}

#[test]
fn a_fleet_close_closes_open_and_half_open_breakers_with_a_fresh_policy() {
    let (b, clock) = manual(probes(1));
    trip(&b);
    assert!(b.fleet_close());
    assert_eq!(b.state(), State::Closed);
    assert!(!b.fleet_close(), "closed already: nothing to do");
    fail(&b);
    assert_eq!(b.state(), State::Closed, "the count started again");

    fail(&b);
    clock.advance(ms(1_000));
    let probe = b.try_acquire().unwrap();
    assert_eq!(b.state(), State::HalfOpen);
    assert!(b.fleet_close());
    probe.failure();
    let m = b.metrics();
    assert_eq!(m.state, State::Closed, "the late probe is stale");
    assert_eq!((m.stale, m.probes_failed), (1, 0));
}

#[test]
fn a_fleet_release_closes_only_an_open_the_fleet_made() {
    let (b, clock) = manual(probes(1));
    assert!(b.fleet_open(ms(20_000)));
    assert!(b.is_fleet_open());
    assert!(b.fleet_release());
    assert_eq!(b.state(), State::Closed);
    assert!(!b.is_fleet_open());

    trip(&b);
    assert!(!b.is_fleet_open(), "its own trip");
    assert!(!b.fleet_release());
    assert_eq!(b.try_acquire().unwrap_err().reason(), OpenReason::Open);

    // The fleet's open ran out and a probe of its own is under way.
    assert!(b.fleet_open(ms(1_000)));
    clock.advance(ms(1_000));
    let probe = b.try_acquire().unwrap();
    assert!(!b.fleet_release(), "half-open: the probe decides");
    probe.success();
    assert_eq!(b.metrics().stale, 0, "the probe was not made stale");
    assert_eq!(b.state(), State::Closed);

    b.force_open();
    assert!(!b.fleet_release());
    assert_eq!(b.state(), State::ForcedOpen);
}

/// The fleet's release of its open races this instance's probe: the open
/// ran out, a call probes and fails. Whichever comes first, the breaker ends
/// open on its own evidence: a failure seen here is never closed by the
/// fleet's withdrawal of an open it no longer holds.
#[test]
fn a_fleet_release_racing_a_failed_probe_never_closes_the_local_trip() {
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(1))
        .build()
        .unwrap();
    // The window is a few instructions wide: many rounds, for at most 5 s.
    support::within_10s(move || {
        let started = std::time::Instant::now();
        for _ in 0..20_000 {
            if started.elapsed() > Duration::from_secs(5) {
                break;
            }
            let (b, _clock) = manual(config);
            assert!(b.fleet_open(Duration::ZERO));
            let b = Arc::new(b);
            let start = Arc::new(std::sync::Barrier::new(2));
            let probing = {
                let (b, start) = (b.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    b.try_acquire().unwrap().failure();
                })
            };
            start.wait();
            b.fleet_release();
            probing.join().unwrap();
            let refused = b.try_acquire().unwrap_err();
            assert_eq!(refused.reason(), OpenReason::Open, "{:?}", b.metrics());
        }
    });
}

#[test]
fn a_breaker_forced_by_hand_is_left_alone_by_the_fleet() {
    let (b, _clock) = manual(probes(1));
    b.force_closed();
    assert!(!b.fleet_open(ms(1_000)));
    assert!(!b.fleet_hold(ms(1_000)));
    assert_eq!(b.state(), State::ForcedClosed);
    assert!(!b.fleet_reopen(ms(1_000)));
    b.force_open();
    assert!(!b.fleet_close());
    assert!(!b.fleet_reopen(ms(1_000)));
    assert_eq!(b.state(), State::ForcedOpen);
    assert_eq!(
        b.try_acquire().unwrap_err().reason(),
        OpenReason::ForcedOpen
    );
}

#[test]
fn a_fleet_hold_keeps_refusing_past_the_end_and_zero_lets_the_probe_go() {
    let (b, clock) = manual(probes(1));
    b.fleet_open(ms(1_000));
    let generation = b.metrics().generation;
    assert!(
        b.fleet_hold(ms(1_200)),
        "past the fleet's end, for the lease"
    );
    clock.advance(ms(1_000));
    let refused = b.try_acquire().unwrap_err();
    assert_eq!(
        (refused.reason(), refused.retry_after()),
        (OpenReason::Fleet, Some(ms(200)))
    );
    // Another instance won the lease: hold on until it reports.
    assert!(b.fleet_hold(ms(10_000)));
    clock.advance(ms(9_000));
    assert!(!b.would_admit());
    // Now it is ours.
    assert!(b.fleet_hold(Duration::ZERO));
    assert_eq!(b.metrics().generation, generation, "no transition");
    assert!(b.try_acquire().unwrap().is_probe());
}

#[test]
fn a_fleet_hold_does_not_push_an_end_already_reached() {
    let (b, clock) = manual(probes(1));
    trip(&b); // a local trip, 1 s
    assert!(b.fleet_hold(ms(5_000)), "well ahead of its end");
    clock.advance(ms(5_000) - Duration::from_micros(500));
    assert!(
        !b.fleet_hold(ms(5_000)),
        "within a millisecond of its end: a claim may be probing"
    );
    assert_eq!(
        b.try_acquire().unwrap_err().reason(),
        OpenReason::Open,
        "a local trip's refusals keep their reason"
    );
    clock.advance(ms(1));
    assert!(!b.fleet_hold(ms(5_000)), "past it");
    assert!(b.try_acquire().unwrap().is_probe());
    assert!(!b.fleet_hold(ms(5_000)), "half-open: nothing to hold");
}

#[test]
fn subscribers_are_told_the_fleet_transitions_with_their_reason_and_time() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let _subscription = registry.subscribe(move |e: &Event| {
        if let Event::Transition(t) = e {
            sink.lock().unwrap().push(*t);
        }
    });
    let b: Breaker = registry.breaker("db", &probes(1));
    b.fleet_open(ms(7_000));
    b.fleet_hold(ms(9_000));
    b.fleet_close();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "a hold is no transition: {seen:?}");
    let (open, close) = (seen[0], seen[1]);
    assert_eq!(
        (open.from, open.to, open.reason, open.generation),
        (State::Closed, State::Open, TransitionReason::FleetOpen, 1)
    );
    assert_eq!(
        (open.open_for, open.retry_after),
        (Some(ms(7_000)), Some(ms(7_000)))
    );
    assert_eq!(
        (close.from, close.to, close.reason, close.generation),
        (State::Open, State::Closed, TransitionReason::FleetClose, 2)
    );
    assert_eq!(close.open_for, None);
    assert_eq!(TransitionReason::FleetOpen.as_str(), "fleet_open");
    assert_eq!(TransitionReason::FleetClose.as_str(), "fleet_close");
}

#[test]
fn open_times_near_the_end_of_time_saturate() {
    let (b, clock) = manual(probes(1));
    assert!(b.fleet_open(Duration::MAX));
    clock.advance(Duration::from_secs(3_600 * 24 * 365));
    assert_eq!(
        b.try_acquire().unwrap_err().reason(),
        OpenReason::Fleet,
        "open for ever"
    );
    assert!(b.fleet_hold(Duration::ZERO));
    assert!(b.try_acquire().unwrap().is_probe());
}

#[test]
fn a_fleet_open_never_shortens_a_local_open_that_ends_later() {
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(60))
        .build()
        .unwrap();
    let (b, _clock) = manual(config);
    trip(&b);
    assert_eq!(b.refusal().unwrap().retry_after(), Some(ms(60_000)));
    // The fleet says ten seconds: this instance's own evidence says a minute.
    assert!(b.fleet_open(ms(10_000)));
    let refused = b.refusal().unwrap();
    assert_eq!(refused.reason(), OpenReason::Fleet);
    assert_eq!(refused.retry_after(), Some(ms(60_000)));
    // A fleet open that ends later than the local one moves the end out.
    assert!(b.fleet_open(ms(90_000)));
    assert_eq!(b.refusal().unwrap().retry_after(), Some(ms(90_000)));
}

#[test]
fn a_fleet_reopen_refuses_again_what_was_open_or_probing_and_leaves_a_closed_breaker() {
    let (b, clock) = manual(probes(1));
    assert!(!b.fleet_reopen(ms(1_000)), "closed: left closed");
    assert_eq!(b.state(), State::Closed);
    trip(&b); // a local trip, 1 s
    clock.advance(ms(1_000));
    // Half-open, its probe out: the fleet refuses again; the probe is stale.
    let probe = b.try_acquire().unwrap();
    assert!(probe.is_probe());
    assert!(b.fleet_reopen(ms(3_000)));
    probe.success();
    let refused = b.try_acquire().unwrap_err();
    assert_eq!(
        (refused.reason(), refused.retry_after()),
        (OpenReason::Fleet, Some(ms(3_000)))
    );
    assert_eq!(b.metrics().stale, 1);
    // Open past its end (too late to hold): opens anew by the fleet.
    clock.advance(ms(3_000));
    assert!(b.fleet_reopen(ms(2_000)));
    assert_eq!(b.refusal().unwrap().retry_after(), Some(ms(2_000)));
    // A probe that closed it first: the reopen leaves it closed.
    clock.advance(ms(2_000));
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), State::Closed);
    assert!(!b.fleet_reopen(ms(2_000)));
    assert!(b.try_acquire().is_ok());
}
