//! A hold (the server asked to wait) refuses claims at once with its own
//! reason and an honest `retry_after`, records no failure, grows no backoff,
//! keeps the later of two deadlines, composes with an open circuit, is capped
//! at `max_hold_ms`, and ends at its deadline with a spread drawn from the
//! breaker's seeded generator, one call going first.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::events::Event;
use breaker_core::keyed::KeyedGroup;
use breaker_core::{Breaker, Config, HoldScope, ManualClock, OpenReason, State};

const SEC: Duration = Duration::from_secs(1);

fn breaker(config: Config) -> (Breaker, ManualClock) {
    let clock = ManualClock::new();
    (Breaker::with_clock("quota", config, clock.clone()), clock)
}

fn retry_after(b: &Breaker) -> Duration {
    let refused = b.try_acquire().expect_err("held");
    refused.retry_after().expect("a hold tells its time left")
}

#[test]
fn a_held_breaker_refuses_as_held_until_its_deadline_and_records_no_failure() {
    let (b, clock) = breaker(Config::builder().threshold(1).build().unwrap());
    let held = b.hold(5 * SEC, HoldScope::Key);
    assert!(held >= 5 * SEC && held <= 5 * SEC + SEC / 2, "{held:?}");

    let refused = b.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Held(HoldScope::Key));
    assert_eq!(refused.retry_after(), Some(held));
    assert_eq!(b.refusal().unwrap().retry_after(), Some(held));
    assert!(!b.would_admit());
    clock.advance(2 * SEC);
    assert_eq!(retry_after(&b), held - 2 * SEC);

    let m = b.metrics();
    assert_eq!((m.state, m.failures, m.times_opened), (State::Closed, 0, 0));
    assert_eq!(m.held.unwrap().remaining, held - 2 * SEC);
    assert_eq!(m.retry_after, Some(held - 2 * SEC));
    assert_eq!(m.rejected, 2);

    clock.set_nanos(held.as_nanos() as u64 - 1);
    assert!(b.try_acquire().is_err(), "1 ns before the deadline");
    clock.set_nanos(held.as_nanos() as u64);
    b.try_acquire().expect("admitted at the deadline").success();
    assert!(b.held().is_none());
    assert_eq!(b.metrics().generation, 0, "a hold starts no generation");
}

#[test]
fn overlapping_holds_keep_the_later_deadline() {
    let (b, clock) = breaker(Config::default());
    let long = b.hold(10 * SEC, HoldScope::Group);
    let kept = b.hold(SEC, HoldScope::Key);
    assert_eq!(kept, long, "the shorter hold keeps the longer one");
    assert_eq!(
        b.try_acquire().unwrap_err().reason(),
        OpenReason::Held(HoldScope::Group)
    );
    clock.advance(5 * SEC);
    let longer = b.hold(20 * SEC, HoldScope::Key);
    assert!(longer >= 20 * SEC);
    assert_eq!(retry_after(&b), longer);
    let counts = b.metrics().holds;
    assert_eq!((counts.key, counts.group), (2, 1));
}

#[test]
fn a_hold_over_an_open_circuit_refuses_until_the_later_end_and_the_open_still_probes() {
    let config = Config::builder()
        .threshold(1)
        .open(10 * SEC)
        .backoff(2.0)
        .build()
        .unwrap();
    let (b, clock) = breaker(config);
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), State::Open);
    let open_for = b.metrics().open_for;

    // A hold that ends first: the open's end governs.
    b.hold(2 * SEC, HoldScope::Key);
    let refused = b.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Held(HoldScope::Key));
    assert_eq!(refused.retry_after(), Some(10 * SEC));
    clock.advance(3 * SEC);
    let refused = b.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Open, "the hold is over");
    assert_eq!(refused.retry_after(), Some(7 * SEC));

    // A hold past the open's end: it governs, then the claim is the probe.
    let held = b.hold(30 * SEC, HoldScope::Key);
    clock.advance(8 * SEC);
    assert_eq!(retry_after(&b), held - 8 * SEC);
    clock.advance(held - 8 * SEC);
    let probe = b.try_acquire().expect("the hold ended: the probe goes");
    assert!(probe.is_probe());
    assert_eq!(b.state(), State::HalfOpen);
    assert_eq!(b.metrics().open_for, open_for, "no backoff grown");
    probe.success();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn a_probe_answered_with_a_wait_frees_its_slot_without_growing_the_backoff() {
    let config = Config::builder()
        .threshold(1)
        .open(SEC)
        .backoff(2.0)
        .build()
        .unwrap();
    let (b, clock) = breaker(config);
    b.try_acquire().unwrap().failure();
    clock.advance(SEC);
    let probe = b.try_acquire().unwrap();
    let held = probe.hold(5 * SEC, HoldScope::Key);
    let m = b.metrics();
    assert_eq!(m.state, State::HalfOpen);
    assert_eq!((m.probes_in_flight, m.probes_failed, m.ignored), (0, 0, 1));
    assert_eq!(m.open_for, Some(SEC), "backoff untouched");
    assert_eq!(retry_after(&b), held);
    clock.advance(held);
    let probe = b.try_acquire().expect("the next probe, after the hold");
    assert!(probe.is_probe());
    probe.success();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn a_wait_past_max_hold_is_capped_and_counted_never_an_error() {
    let config = Config::builder().max_hold(60 * SEC).build().unwrap();
    let (b, clock) = breaker(config);
    let held = b.hold(Duration::from_secs(100 * 3_600), HoldScope::Key);
    assert_eq!(held, 60 * SEC, "the spread stays within max_hold too");
    assert_eq!(b.metrics().holds.capped, 1);
    let huge = b.hold(Duration::MAX, HoldScope::Key);
    assert!(huge <= 60 * SEC);
    clock.advance(60 * SEC);
    b.try_acquire().expect("never past max_hold").success();
}

#[test]
fn max_hold_takes_whole_seconds_within_its_range() {
    for bad in [0, 999, 1_500, 65_535_001, u64::MAX] {
        let err = Config::builder()
            .max_hold(Duration::from_millis(bad))
            .build()
            .unwrap_err();
        assert_eq!(err.key(), "max_hold_ms", "{bad}");
    }
    assert_eq!(Config::DEFAULT.max_hold(), Duration::from_secs(3_600));
}

#[test]
fn the_release_spread_is_seeded_and_stays_within_a_tenth_of_the_hold() {
    let draws = |seed: u64| -> Vec<Duration> {
        let clock = ManualClock::new().with_jitter_seed(seed);
        let b = Breaker::with_clock("spread", Config::default(), clock.clone());
        (0..32)
            .map(|_| {
                let held = b.hold(10 * SEC, HoldScope::Key);
                clock.advance(held);
                b.try_acquire().unwrap().success();
                held
            })
            .collect()
    };
    let first = draws(7);
    assert_eq!(first, draws(7), "the same seed draws the same ends");
    assert_ne!(first, draws(8));
    assert!(
        first.iter().all(|d| *d >= 10 * SEC && *d <= 11 * SEC),
        "{first:?}"
    );
    let distinct: std::collections::BTreeSet<_> = first.iter().collect();
    assert!(distinct.len() > 16, "spread, not in step: {first:?}");
}

#[test]
fn manual_control_and_release_by_hand_end_a_hold_and_are_told() {
    let (b, _clock) = breaker(Config::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let _s = b.subscribe(move |e: &Event| match e {
        Event::Held(h) => sink.lock().unwrap().push(format!("held {}", h.scope)),
        Event::Released(r) => sink.lock().unwrap().push(format!("released {}", r.by_hand)),
        _ => {}
    });
    b.hold(SEC, HoldScope::Key);
    assert!(b.release_hold());
    assert!(!b.release_hold(), "nothing left to release");
    b.try_acquire().expect("released").success();
    b.hold(SEC, HoldScope::Group);
    b.force_closed();
    b.try_acquire().expect("forced closed admits").success();
    b.reset();
    b.try_acquire().expect("reset").success();
    assert_eq!(
        seen.lock().unwrap()[..],
        ["held key", "released true", "held group", "released true"]
    );
    assert_eq!(b.metrics().holds.released, 2);
}

#[test]
fn a_deadline_release_is_told_when_the_first_call_after_it_answers() {
    let (b, clock) = breaker(Config::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let _s = b.subscribe(move |e: &Event| {
        if let Event::Released(r) = e {
            sink.lock().unwrap().push(r.by_hand);
        }
    });
    let held = b.hold(SEC, HoldScope::Key);
    clock.advance(held);
    assert!(b.held().is_none(), "over at its deadline, before any claim");
    b.try_acquire().unwrap().success();
    b.try_acquire().unwrap().success();
    assert_eq!(seen.lock().unwrap()[..], [false]);
}

#[test]
fn shadow_mode_admits_what_a_hold_refuses_and_counts_it() {
    let (b, _clock) = breaker(Config::builder().shadow(true).build().unwrap());
    b.hold(SEC, HoldScope::Key);
    b.try_acquire()
        .expect("shadow mode refuses nothing")
        .success();
    let m = b.metrics();
    assert_eq!((m.shadow_refused, m.rejected, m.successes), (1, 0, 1));
}

#[test]
fn a_key_hold_holds_its_key_and_a_group_hold_every_key_new_ones_included() {
    let clock = ManualClock::new();
    let registry = breaker_core::Registry::with_clock(clock.clone());
    let tenants: KeyedGroup<String> = registry.keyed("llm", &Config::default(), 100).unwrap();
    tenants.breaker("a").hold(5 * SEC, HoldScope::Key);
    assert!(tenants.breaker("a").try_acquire().is_err());
    tenants
        .breaker("b")
        .try_acquire()
        .expect("another key")
        .success();

    let held = tenants.hold(10 * SEC);
    for key in ["a", "b", "made-after-the-hold"] {
        let refused = tenants.breaker(key).try_acquire().unwrap_err();
        assert_eq!(
            refused.reason(),
            OpenReason::Held(HoldScope::Group),
            "{key}"
        );
        assert_eq!(refused.retry_after(), Some(held), "{key}");
    }
    assert_eq!(tenants.metrics().held, 3);
    clock.advance(held);
    for key in ["a", "b", "c"] {
        tenants.breaker(key).try_acquire().expect(key).success();
    }
    assert_eq!(tenants.metrics().held, 0);
    assert_eq!(tenants.metrics().failures, 0);
}

#[test]
fn at_the_end_of_a_hold_one_call_goes_first_and_the_rest_wait_for_its_answer() {
    let config = Config::builder().probe_timeout(10 * SEC).build().unwrap();
    let (b, clock) = breaker(config);
    let held = b.hold(5 * SEC, HoldScope::Group);
    clock.advance(held);

    // The first claim past the deadline goes; every other one waits for it.
    let first = b.try_acquire().expect("the call that ends the hold");
    for _ in 0..100 {
        let refused = b.try_acquire().unwrap_err();
        assert_eq!(refused.reason(), OpenReason::Held(HoldScope::Group));
        assert!(refused.retry_after().unwrap() <= 10 * SEC);
    }
    // Its answer is another wait: held again, the others still refused.
    let again = first.hold(5 * SEC, HoldScope::Group);
    assert!(again >= 5 * SEC);
    assert_eq!(retry_after(&b), again);
    clock.advance(again);

    // This time it succeeds: the hold ends for everyone.
    b.try_acquire()
        .expect("the next call that ends the hold")
        .success();
    for _ in 0..10 {
        b.try_acquire().expect("released").success();
    }
    let m = b.metrics();
    assert_eq!((m.failures, m.successes, m.ignored), (0, 11, 1));
    assert_eq!(m.rejected, 101);
    assert!(m.held.is_none());
}

#[test]
fn a_call_that_ends_a_hold_and_is_abandoned_or_overruns_its_lease_frees_the_next() {
    let config = Config::builder().probe_timeout(10 * SEC).build().unwrap();
    let (b, clock) = breaker(config);
    clock.advance(b.hold(SEC, HoldScope::Key));
    drop(b.try_acquire().expect("goes first"));
    b.try_acquire()
        .expect("an abandoned call ends the hold")
        .success();

    clock.advance(b.hold(SEC, HoldScope::Key));
    let hung = b.try_acquire().expect("goes first");
    assert!(b.try_acquire().is_err());
    clock.advance(10 * SEC);
    let next = b.try_acquire().expect("past its lease, another goes");
    assert!(b.try_acquire().is_err(), "and only one");
    next.success();
    hung.success();
    b.try_acquire().expect("released").success();
}

#[test]
fn a_group_hold_tells_each_key_held_as_a_breakers_own_hold_does() {
    let clock = ManualClock::new();
    let registry = breaker_core::Registry::with_clock(clock.clone());
    let tenants: KeyedGroup<String> = registry.keyed("llm-told", &Config::default(), 100).unwrap();
    let (a, b) = (tenants.breaker("a"), tenants.breaker("b"));
    let told = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&told);
    let _registry_subscription = registry.subscribe(move |event| {
        if let Event::Held(held) = event {
            seen.lock().unwrap().push(*held);
        }
    });
    let own = Arc::new(Mutex::new(0));
    let counted = Arc::clone(&own);
    let _key_subscription = a.subscribe(move |event| {
        if matches!(event, Event::Held(_)) {
            *counted.lock().unwrap() += 1;
        }
    });

    let held = tenants.hold(2 * 3_600 * SEC);
    let told = told.lock().unwrap();
    assert_eq!(told.len(), 2, "one per key: {told:?}");
    for event in told.iter() {
        assert_eq!(
            (
                event.group,
                event.scope,
                event.asked,
                event.retry_after,
                event.capped
            ),
            ("llm-told", HoldScope::Group, 2 * 3_600 * SEC, held, true)
        );
    }
    assert_eq!(*own.lock().unwrap(), 1, "the key's own subscriber");
    for key in [&a, &b] {
        let holds = key.metrics().holds;
        assert_eq!((holds.group, holds.capped), (1, 1));
    }
}
