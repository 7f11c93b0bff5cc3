//! Shadow mode (`shadow`): the breaker counts, transitions and tells events as
//! usual, admits every claim it would refuse (open, half-open and full, a
//! ramp's) and counts each in `shadow_refused`; a forced open still refuses;
//! the mode switches live, also while threads call, without losing a count.
mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::keyed::KeyedGroup;
use breaker_core::{Breaker, Config, Event, ManualClock, OpenReason, State};
use support::{manual, ms};

const OPEN_MS: u64 = 1_000;

fn config(threshold: u32, shadow: bool) -> Config {
    Config::builder()
        .threshold(threshold)
        .open(ms(OPEN_MS))
        .backoff(2.0)
        .shadow(shadow)
        .build()
        .unwrap()
}

fn shadow(threshold: u32) -> Config {
    config(threshold, true)
}

fn trip(breaker: &Breaker) {
    while breaker.state() == State::Closed {
        breaker.try_acquire().expect("closed").failure();
    }
}

#[test]
fn an_open_shadow_breaker_admits_every_claim_and_counts_each_it_would_have_refused() {
    let (breaker, _clock) = manual(shadow(2));
    assert!(breaker.is_shadow());
    trip(&breaker);
    assert_eq!(breaker.state(), State::Open);
    for i in 0..10 {
        let permit = breaker.try_acquire().expect("shadow mode refuses nothing");
        assert!(!permit.is_probe());
        if i % 2 == 0 {
            permit.success();
        } else {
            permit.failure();
        }
    }
    let m = breaker.metrics();
    assert_eq!(m.shadow_refused, 10);
    assert_eq!(m.rejected, 0);
    assert!(m.shadow);
    // The calls' outcomes count, and move nothing: still open, same generation.
    assert_eq!((m.successes, m.failures), (5, 2 + 5));
    assert_eq!(m.state, State::Open);
    assert_eq!(m.generation, 1);
    assert_eq!(m.times_opened, 1);
    assert!(breaker.refusal().is_none());
    assert!(breaker.would_admit());
}

#[test]
fn the_same_breaker_out_of_shadow_mode_refuses_those_claims() {
    let (breaker, _clock) = manual(shadow(2));
    trip(&breaker);
    breaker.set_shadow(false);
    for _ in 0..10 {
        assert!(breaker.try_acquire().is_err());
    }
    let m = breaker.metrics();
    assert_eq!((m.rejected, m.shadow_refused), (10, 0));
    assert!(!m.shadow);
}

#[test]
fn half_open_and_full_admits_the_extra_claims_as_calls_that_do_not_move_the_probe() {
    let (breaker, clock) = manual(shadow(1));
    trip(&breaker);
    clock.advance(ms(OPEN_MS));
    let probe = breaker.try_acquire().expect("the probe");
    assert!(probe.is_probe());
    assert_eq!(breaker.state(), State::HalfOpen);
    // Every slot taken: these would be refused. Their failures reopen nothing.
    for _ in 0..3 {
        let extra = breaker.try_acquire().expect("shadow mode");
        assert!(!extra.is_probe());
        extra.failure();
    }
    assert_eq!(breaker.state(), State::HalfOpen);
    assert_eq!(breaker.metrics().probes_in_flight, 1);
    assert_eq!(breaker.metrics().shadow_refused, 3);
    // The probe decides, as it would without shadow mode.
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
    let m = breaker.metrics();
    assert_eq!((m.probes_succeeded, m.probes_failed), (1, 0));
}

#[test]
fn a_shadow_breaker_opens_probes_and_closes_as_it_would_and_tells_each_transition() {
    let (breaker, clock) = manual(shadow(2));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let _subscription = breaker.subscribe(move |event: &Event| {
        if let Event::Transition(t) = event {
            log.lock().unwrap().push((t.from, t.to));
        }
    });
    trip(&breaker);
    breaker.try_acquire().unwrap().success();
    clock.advance(ms(OPEN_MS));
    let probe = breaker.try_acquire().unwrap();
    assert!(probe.is_probe());
    probe.failure();
    assert_eq!(breaker.state(), State::Open);
    // The grown open duration holds the breaker open, in shadow mode as out of it.
    clock.advance(ms(OPEN_MS));
    assert!(!breaker.try_acquire().unwrap().is_probe());
    clock.advance(ms(OPEN_MS));
    breaker.try_acquire().unwrap().success();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::Closed, State::Open),
            (State::Open, State::HalfOpen),
            (State::HalfOpen, State::Open),
            (State::Open, State::HalfOpen),
            (State::HalfOpen, State::Closed),
        ]
    );
    assert_eq!(breaker.metrics().shadow_refused, 2);
}

#[test]
fn a_forced_open_still_refuses_in_shadow_mode() {
    let (breaker, _clock) = manual(shadow(2));
    breaker.force_open();
    let Err(refused) = breaker.try_acquire() else {
        panic!("a forced open admitted a claim in shadow mode");
    };
    assert_eq!(refused.reason(), OpenReason::ForcedOpen);
    assert_eq!(
        breaker.refusal().map(|r| r.reason()),
        Some(OpenReason::ForcedOpen)
    );
    assert!(!breaker.would_admit());
    let m = breaker.metrics();
    assert_eq!((m.rejected, m.shadow_refused), (1, 0));
}

#[test]
fn a_ramp_in_shadow_mode_admits_what_its_credit_holds_back_as_ordinary_calls() {
    let config = Config::builder()
        .threshold(1)
        .open(ms(OPEN_MS))
        .ramp(Duration::from_secs(10))
        .shadow(true)
        .build()
        .unwrap();
    let (breaker, clock) = manual(config);
    trip(&breaker);
    clock.advance(ms(OPEN_MS));
    breaker.try_acquire().unwrap().success();
    assert_eq!(breaker.state(), State::Closed);
    // At the start of the ramp its credit admits nearly nothing: shadow mode
    // admits every claim, and a failure among them trips as a closed call's.
    let mut held_back = 0;
    for _ in 0..5 {
        let call = breaker.try_acquire().expect("shadow mode");
        held_back += u64::from(call.is_shadow_call());
        call.success();
    }
    let m = breaker.metrics();
    assert!(m.shadow_refused >= 4, "{m:?}");
    assert_eq!(held_back, m.shadow_refused, "each held-back call tells so");
    assert_eq!(m.ramp_refused, 0);
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn a_reload_that_changes_shadow_applies_at_once_and_one_that_keeps_it_leaves_the_live_switch() {
    let clock = ManualClock::new();
    let enforcing = config(1, false);
    let breaker = Breaker::with_clock("reloaded", enforcing, clock);
    trip(&breaker);
    assert!(breaker.try_acquire().is_err());
    breaker.reconfigure(shadow(1)).unwrap();
    assert!(breaker.try_acquire().is_ok());
    // Switched off by hand, a reload of another key keeps it off.
    breaker.set_shadow(false);
    let retuned = Config::builder()
        .threshold(1)
        .open(ms(OPEN_MS))
        .backoff(3.0)
        .shadow(true)
        .build()
        .unwrap();
    breaker.reconfigure(retuned).unwrap();
    assert!(!breaker.is_shadow());
    breaker.reconfigure(enforcing).unwrap();
    assert!(breaker.try_acquire().is_err());
    assert_eq!(breaker.state(), State::Open, "state is kept");
    assert_eq!(breaker.metrics().shadow_refused, 1);
}

#[test]
fn switching_live_while_four_threads_call_loses_no_count() {
    let (breaker, _clock) = manual(shadow(1));
    trip(&breaker);
    let admitted = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    const CALLS: u64 = 20_000;
    std::thread::scope(|s| {
        for _ in 0..4 {
            let (breaker, admitted, refused) = (&breaker, &admitted, &refused);
            s.spawn(move || {
                for _ in 0..CALLS {
                    match breaker.try_acquire() {
                        Ok(permit) => {
                            admitted.fetch_add(1, Relaxed);
                            permit.success();
                        }
                        Err(_) => {
                            refused.fetch_add(1, Relaxed);
                        }
                    }
                }
            });
        }
        s.spawn(|| {
            let mut on = false;
            while !done.load(Relaxed) {
                breaker.set_shadow(on);
                on = !on;
                std::thread::yield_now();
            }
        });
        // The switch runs until the callers are done.
        while admitted.load(Relaxed) + refused.load(Relaxed) < 4 * CALLS {
            std::thread::yield_now();
        }
        done.store(true, Relaxed);
    });
    let m = breaker.metrics();
    let (admitted, refused) = (admitted.load(Relaxed), refused.load(Relaxed));
    assert_eq!(admitted + refused, 4 * CALLS);
    assert_eq!(
        m.shadow_refused, admitted,
        "every admitted claim was one to refuse"
    );
    assert_eq!(m.rejected, refused);
    // One failure tripped; every admitted call's success is counted.
    assert_eq!((m.successes, m.failures), (admitted, 1));
    assert_eq!(m.state, State::Open);
    assert_eq!(m.generation, 1);
}

#[test]
fn a_keyed_group_switches_every_key_and_the_keys_to_come_and_one_key_alone() {
    let hosts = KeyedGroup::<String>::new("shadow-hosts", config(1, false), 100);
    trip(&hosts.breaker("a"));
    trip(&hosts.breaker("b"));
    assert!(hosts.breaker("a").try_acquire().is_err());
    hosts.set_shadow(true);
    assert!(hosts.config().shadow());
    assert!(hosts.breaker("a").try_acquire().is_ok());
    assert!(hosts.breaker("b").try_acquire().is_ok());
    let new_key = hosts.breaker("c");
    assert!(new_key.is_shadow());
    trip(&new_key);
    assert!(new_key.try_acquire().is_ok());
    // One key alone.
    hosts.breaker("b").set_shadow(false);
    assert!(hosts.breaker("b").try_acquire().is_err());
    assert!(hosts.breaker("a").try_acquire().is_ok());
    let m = hosts.metrics();
    assert_eq!((m.shadow_refused, m.rejected), (4, 2));
}

#[test]
fn a_keyed_groups_live_switch_and_a_later_reload_move_every_key_together() {
    let declared = Config::builder().threshold(1).build().unwrap();
    let hosts = KeyedGroup::<String>::new("hosts-reload", declared, 100);
    let before = hosts.breaker("before.example");
    hosts.set_shadow(true);
    let after = hosts.breaker("after.example");
    assert!(before.is_shadow() && after.is_shadow());
    // A reload that changes the threshold, its mode the declared one (off).
    let reloaded = Config::builder().threshold(2).build().unwrap();
    hosts.reconfigure(reloaded).unwrap();
    assert!(
        !before.is_shadow() && !after.is_shadow(),
        "a key held before the switch and one made after it leave shadow mode together"
    );
    assert!(!hosts.config().shadow());
    assert!(!hosts.breaker("later.example").is_shadow());
}
