//! The traffic ramp after a close (`ramp_ms`): the share of calls admitted
//! rises linearly from none to all over the ramp, by an exact credit; refusals
//! say `Ramping` with an honest `retry_after`; a trip during the ramp backs off
//! like a failed probe, a completed ramp resets that; keyed keys ramp apart; a
//! live change applies from the next close.
mod support;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use breaker_core::fleet::FleetControl;
use breaker_core::{
    Breaker, Clock, Config, ConfigError, Event, ManualClock, OpenReason, Registry, State,
    TransitionReason,
};
use support::{manual, ms};

const OPEN_MS: u64 = 1_000;
const RAMP_MS: u64 = 10_000;

fn ramped() -> Config {
    Config::builder()
        .threshold(3)
        .open(Duration::from_millis(OPEN_MS))
        .backoff(2.0)
        .ramp(Duration::from_millis(RAMP_MS))
        .build()
        .unwrap()
}

/// Trips `breaker`, waits out the open duration and closes it with one probe:
/// the ramp starts at the clock's reading then.
fn trip_and_heal(breaker: &Breaker, clock: &ManualClock) {
    while breaker.state() == State::Closed {
        breaker.try_acquire().unwrap().failure();
    }
    clock.advance(breaker.metrics().retry_after.unwrap());
    breaker.try_acquire().expect("the probe").success();
    assert_eq!(breaker.state(), State::Closed);
}

/// `calls` claims at the clock's reading; the admitted ones succeed.
fn claim(breaker: &Breaker, calls: u64) -> u64 {
    let mut admitted = 0;
    for _ in 0..calls {
        match breaker.try_acquire() {
            Ok(permit) => {
                admitted += 1;
                permit.success();
            }
            Err(refused) => assert_eq!(refused.reason(), OpenReason::Ramping),
        }
    }
    admitted
}

#[test]
fn every_slice_of_the_ramp_admits_the_curves_share_to_within_one_call() {
    let (breaker, clock) = manual(ramped());
    trip_and_heal(&breaker, &clock);
    // Twenty slices of half a second, 1000 claims in each, at the slice's
    // middle: the curve's share there is (k + 0.5) / 20.
    let mut admitted_total = 0;
    let mut refused_total = 0;
    clock.advance(ms(250));
    for slice in 0..20u64 {
        let admitted = claim(&breaker, 1_000);
        let expected = (2 * slice + 1) * 1_000 / 40;
        assert!(
            admitted.abs_diff(expected) <= 1,
            "slice {slice}: {admitted} admitted, the curve says {expected}"
        );
        admitted_total += admitted;
        refused_total += 1_000 - admitted;
        clock.advance(ms(500));
    }
    // Past the ramp's length: every call.
    assert_eq!(claim(&breaker, 1_000), 1_000);
    let m = breaker.metrics();
    assert_eq!(m.ramp_refused, refused_total);
    assert_eq!(
        m.rejected, refused_total,
        "the ramp refused every claim refused"
    );
    assert_eq!(m.successes, admitted_total + 1_000 + 1);
    assert_eq!(m.ramp, None);
    assert_eq!(m.admitted_share(), 1.0);
}

#[test]
fn without_a_ramp_the_close_admits_every_call_at_once() {
    let config = Config::builder()
        .threshold(3)
        .open(Duration::from_millis(OPEN_MS))
        .build()
        .unwrap();
    let (breaker, clock) = manual(config);
    trip_and_heal(&breaker, &clock);
    assert_eq!(claim(&breaker, 1_000), 1_000);
    assert_eq!(breaker.metrics().ramp_refused, 0);
}

#[test]
fn of_any_run_of_consecutive_claims_the_count_admitted_is_within_one_of_the_curve() {
    let (breaker, clock) = manual(ramped());
    trip_and_heal(&breaker, &clock);
    // A claim every 7 ms: the share rises under the claims.
    let start = clock.now_nanos();
    let mut admitted = Vec::new();
    let mut shares = Vec::new();
    for i in 0..1_400u64 {
        let at = i * 7;
        clock.set_nanos(start + at * 1_000_000);
        shares.push(at as f64 / RAMP_MS as f64);
        admitted.push(breaker.try_acquire().map(|p| p.success()).is_ok() as u64);
    }
    for start in (0..1_400).step_by(37) {
        for len in [1, 10, 100, 500] {
            let end = (start + len).min(1_400);
            let got: u64 = admitted[start..end].iter().sum();
            let curve: f64 = shares[start..end].iter().map(|s| s.min(1.0)).sum();
            assert!(
                (got as f64 - curve).abs() <= 1.0 + 1e-6,
                "claims {start}..{end}: {got} admitted, the curve says {curve}"
            );
        }
    }
}

#[test]
fn a_refusal_says_ramping_and_waiting_its_retry_after_admits() {
    let (breaker, clock) = manual(ramped());
    trip_and_heal(&breaker, &clock);
    clock.advance(ms(1_000)); // 10%
    let refused = breaker.try_acquire().map(|p| p.success()).unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Ramping);
    assert_eq!(refused.group(), "test");
    let retry_after = refused.retry_after().expect("a ramp says when");
    // 0.1 of a call in credit; a lone claim's share must cover the other 0.9,
    // which it does from 90% of the ramp on (to the nanosecond the credit's
    // rounding allows).
    assert!(
        retry_after.abs_diff(ms(8_000)) <= Duration::from_nanos(2),
        "{retry_after:?}"
    );
    // Asking is pure, and tells the same moment.
    assert!(!breaker.would_admit());
    let asked = breaker.refusal().expect("refused");
    assert_eq!(asked.reason(), OpenReason::Ramping);
    assert_eq!(asked.retry_after(), Some(retry_after));
    assert_eq!(breaker.metrics().ramp_refused, 1);
    clock.advance(retry_after - Duration::from_nanos(1));
    assert!(!breaker.would_admit(), "one nanosecond early");
    clock.advance(Duration::from_nanos(1));
    assert!(breaker.would_admit());
    breaker
        .try_acquire()
        .expect("admitted at retry_after")
        .success();
}

#[test]
fn a_trip_during_the_ramp_reopens_with_the_backoff_of_a_failed_probe() {
    let (breaker, clock) = manual(ramped());
    trip_and_heal(&breaker, &clock);
    clock.advance(ms(5_000)); // half way
    let mut failed = 0;
    while breaker.state() == State::Closed {
        if let Ok(permit) = breaker.try_acquire() {
            permit.failure();
            failed += 1;
        }
    }
    assert_eq!(failed, 3);
    let m = breaker.metrics();
    assert_eq!(m.state, State::Open);
    // Grown by the backoff (2.0), as after a failed probe.
    assert_eq!(m.open_for, Some(ms(2 * OPEN_MS)));
    assert_eq!(m.retry_after, Some(ms(2 * OPEN_MS)));
    // And again: the next ramp's trip grows it once more.
    clock.advance(ms(2 * OPEN_MS));
    breaker.try_acquire().unwrap().success();
    clock.advance(ms(5_000));
    while breaker.state() == State::Closed {
        if let Ok(permit) = breaker.try_acquire() {
            permit.failure();
        }
    }
    assert_eq!(breaker.metrics().open_for, Some(ms(4 * OPEN_MS)));
}

#[test]
fn a_completed_ramp_resets_the_backoff() {
    let (breaker, clock) = manual(ramped());
    trip_and_heal(&breaker, &clock);
    clock.advance(ms(5_000));
    while breaker.state() == State::Closed {
        if let Ok(permit) = breaker.try_acquire() {
            permit.failure();
        }
    }
    assert_eq!(breaker.metrics().open_for, Some(ms(2 * OPEN_MS)));
    clock.advance(ms(2 * OPEN_MS));
    breaker.try_acquire().unwrap().success();
    // The ramp runs its length; the first claim after it ends it.
    clock.advance(ms(RAMP_MS));
    assert_eq!(breaker.metrics().ramp, None);
    assert_eq!(claim(&breaker, 10), 10);
    let generation = breaker.metrics().generation;
    // A trip now opens for `open_ms` again.
    for _ in 0..3 {
        breaker.try_acquire().unwrap().failure();
    }
    let m = breaker.metrics();
    assert_eq!(m.state, State::Open);
    assert_eq!(
        m.generation,
        generation + 1,
        "the ramp's end kept the generation"
    );
    assert_eq!(m.open_for, Some(ms(OPEN_MS)));
}

#[test]
fn the_ramp_judges_its_admitted_calls_in_the_same_generation_as_after_it() {
    let (breaker, clock) = manual(ramped());
    trip_and_heal(&breaker, &clock);
    clock.advance(ms(9_000));
    // Two failures during the ramp, the third after it: they add up.
    let mut failed = 0;
    while failed < 2 {
        if let Ok(permit) = breaker.try_acquire() {
            permit.failure();
            failed += 1;
        }
    }
    assert_eq!(breaker.metrics().consecutive_failures, 2);
    clock.advance(ms(1_000));
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
    // The ramp had run its length: not a failed recovery.
    assert_eq!(breaker.metrics().open_for, Some(ms(OPEN_MS)));
}

#[test]
fn the_close_tells_its_ramp_and_the_metrics_show_the_share() {
    let (breaker, clock) = manual(ramped());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let _subscription = breaker.subscribe(move |event: &Event| {
        if let Event::Transition(t) = event {
            sink.lock().unwrap().push((t.to, t.reason, t.ramp));
        }
    });
    trip_and_heal(&breaker, &clock);
    let closes: Vec<_> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(to, ..)| *to == State::Closed)
        .copied()
        .collect();
    assert_eq!(
        closes,
        [(
            State::Closed,
            TransitionReason::ProbesSucceeded,
            Some(ms(RAMP_MS))
        )]
    );
    clock.advance(ms(2_500));
    let m = breaker.metrics();
    let ramp = m.ramp.expect("ramping");
    assert_eq!(ramp.length, ms(RAMP_MS));
    assert_eq!(ramp.elapsed, ms(2_500));
    assert_eq!(ramp.remaining(), ms(7_500));
    assert_eq!(m.admitted_share(), 0.25);
    assert_eq!(m.state, State::Closed);
    // Asking changed nothing: the credit is where it was.
    assert_eq!(m.ramp_refused, 0);
}

#[test]
fn a_live_change_of_ramp_ms_applies_from_the_next_close() {
    let (breaker, clock) = manual(ramped());
    trip_and_heal(&breaker, &clock);
    clock.advance(ms(5_000));
    // Mid-ramp, the ramp is made four times shorter: this ramp keeps its curve.
    let shorter = Config::builder()
        .threshold(3)
        .open(Duration::from_millis(OPEN_MS))
        .ramp(Duration::from_millis(RAMP_MS / 4))
        .build()
        .unwrap();
    breaker.reconfigure(shorter).unwrap();
    assert_eq!(claim(&breaker, 100), 50);
    assert_eq!(breaker.metrics().ramp.unwrap().length, ms(RAMP_MS));
    // The next close ramps over the new length: half way is 1250 ms in.
    clock.advance(ms(5_000));
    trip_and_heal(&breaker, &clock);
    assert_eq!(breaker.metrics().ramp.unwrap().length, ms(RAMP_MS / 4));
    clock.advance(ms(RAMP_MS / 8));
    assert_eq!(claim(&breaker, 100), 50);
    // Taking the ramp away: the next close admits every call at once.
    breaker
        .reconfigure(
            Config::builder()
                .threshold(3)
                .open(Duration::from_millis(OPEN_MS))
                .build()
                .unwrap(),
        )
        .unwrap();
    clock.advance(ms(RAMP_MS));
    trip_and_heal(&breaker, &clock);
    assert_eq!(claim(&breaker, 100), 100);
}

#[test]
fn a_trip_after_the_ramp_ran_its_length_opens_for_open_ms_with_no_claim_between() {
    let (breaker, clock) = manual(ramped());
    trip_and_heal(&breaker, &clock);
    // Three calls admitted in the ramp's last tenth of a second...
    clock.advance(ms(RAMP_MS - 100));
    let mut late = Vec::new();
    while late.len() < 3 {
        if let Ok(permit) = breaker.try_acquire() {
            late.push(permit);
        }
    }
    // ...fail after it ended, before any claim could clear the ramping bit.
    clock.advance(ms(200));
    for permit in late {
        permit.failure();
    }
    let m = breaker.metrics();
    assert_eq!(m.state, State::Open);
    assert_eq!(
        m.open_for,
        Some(ms(OPEN_MS)),
        "the completed ramp reset the backoff"
    );
}

#[test]
fn a_fleet_close_while_the_ramp_runs_leaves_the_ramp_as_it_is() {
    let (breaker, clock) = manual(ramped());
    trip_and_heal(&breaker, &clock);
    clock.advance(ms(5_000)); // half way
    assert!(
        !breaker.fleet_close(),
        "a closed breaker has nothing to close"
    );
    assert_eq!(claim(&breaker, 100), 50, "the ramp did not start again");
}

#[test]
fn a_keyed_sweep_keeps_a_key_whose_ramp_runs() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = registry.keyed::<String>("hosts", &ramped(), 2).unwrap();
    let a = hosts.breaker("a.example");
    trip_and_heal(&a, &clock);
    drop(a);
    // New keys past `key_capacity` evict idle closed keys, the oldest first.
    for host in ["b.example", "c.example", "d.example"] {
        claim(&hosts.breaker(host), 1);
    }
    let a = hosts.breaker("a.example");
    assert!(a.metrics().ramp.is_some(), "the ramping key was evicted");
    clock.advance(ms(5_000));
    assert_eq!(claim(&a, 100), 50);
}

#[test]
fn keyed_keys_ramp_independently() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = registry.keyed::<String>("hosts", &ramped(), 100).unwrap();
    let a = hosts.breaker("a.example");
    let b = hosts.breaker("b.example");
    trip_and_heal(&a, &clock);
    clock.advance(ms(4_000));
    // b trips now and heals `open_ms` later, when a is half way.
    trip_and_heal(&b, &clock);
    // a is half way through its ramp; b has just closed; c never tripped.
    let c = hosts.breaker("c.example");
    assert_eq!(claim(&a, 100), 50);
    assert_eq!(claim(&b, 100), 0);
    assert_eq!(claim(&c, 100), 100);
    clock.advance(ms(5_000));
    assert_eq!(claim(&a, 100), 100, "a's ramp is over");
    assert_eq!(claim(&b, 100), 50);
    let group = hosts.metrics();
    assert_eq!(group.ramp_refused, 50 + 100 + 50);
}

#[test]
fn a_ramp_zero_milliseconds_long_is_refused() {
    assert_eq!(
        Config::builder().ramp(Duration::ZERO).build(),
        Err(ConfigError::ZeroRamp)
    );
    assert_eq!(ConfigError::ZeroRamp.key(), "ramp_ms");
}

#[test]
fn racing_threads_take_exactly_the_credit_the_curve_gives() {
    const THREADS: u64 = 4;
    const CLAIMS: u64 = 25_000;
    let (breaker, clock) = manual(ramped());
    trip_and_heal(&breaker, &clock);
    clock.advance(ms(3_000)); // 30%
    let admitted = AtomicU64::new(0);
    let barrier = Barrier::new(THREADS as usize);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                barrier.wait();
                for _ in 0..CLAIMS {
                    if let Ok(permit) = breaker.try_acquire() {
                        admitted.fetch_add(1, Relaxed);
                        permit.success();
                    }
                }
            });
        }
    });
    // 30% of 100 000 claims, whatever the interleaving: the credit is one
    // read-modify-write per claim, so none is lost or taken twice.
    let admitted = admitted.load(Relaxed);
    assert!(admitted.abs_diff(30_000) <= 1, "{admitted} admitted");
    let m = breaker.metrics();
    assert_eq!(m.ramp_refused, THREADS * CLAIMS - admitted);
}
