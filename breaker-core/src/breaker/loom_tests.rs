//! The state word under loom's model checker: claims, verdicts, trips, probe
//! admission, lease reclaim, manual control and the fleet's opens, raced by two or three threads
//! through the public handle (so through `claim`, `settle` and `apply`), with
//! loom's atomics and mutex in `crate::sync`. Time comes from a [`ManualClock`]
//! that only the model's own steps move.
//!
//! Run (a separate target dir: the cfg changes every crate's hash):
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=/work/target-loom cargo test -p breaker-core --release --lib loom_`

use std::time::Duration;

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

use crate::fleet::FleetControl;
use crate::{Breaker, Config, ManualClock, OpenReason, State};

/// Every model: all interleavings with at most `PREEMPTIONS` forced switches,
/// which keeps each model to seconds while covering the races that matter
/// (each needs one or two preemptions).
const PREEMPTIONS: usize = 3;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(PREEMPTIONS);
    builder.check(f);
}

/// Open, with the open duration over: the next claim is the first probe.
fn due_breaker(config: Config) -> (Breaker, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("loom", config, clock.clone());
    for _ in 0..config.threshold() {
        breaker.try_acquire().expect("closed").failure();
    }
    assert_eq!(breaker.state(), State::Open);
    clock.advance(Duration::from_nanos(config.open_nanos()));
    (breaker, clock)
}

fn config(half_open_probes: u32) -> Config {
    Config::builder()
        .threshold(1)
        .open(Duration::from_millis(10))
        .half_open_probes(half_open_probes)
        .probe_timeout(Duration::from_millis(100))
        .build()
        .expect("valid")
}

/// Two claims race for the one probe slot of a due breaker while the probe is
/// held: exactly one is admitted (and is the probe); the other is refused as
/// "half-open and full". When the probe ends, no slot is left taken.
#[test]
fn loom_exactly_one_probe_is_admitted_with_one_slot() {
    model(|| {
        let (breaker, _clock) = due_breaker(config(1));
        let breaker = Arc::new(breaker);
        let admitted = Arc::new(AtomicUsize::new(0));
        let claimed = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (breaker, admitted, claimed) =
                    (breaker.clone(), admitted.clone(), claimed.clone());
                thread::spawn(move || {
                    let claim = breaker.try_acquire();
                    claimed.fetch_add(1, SeqCst);
                    match claim {
                        Ok(permit) => {
                            assert!(permit.is_probe(), "admitted while half-open: a probe");
                            admitted.fetch_add(1, SeqCst);
                            // Hold the probe until both claims are in.
                            while claimed.load(SeqCst) < 2 {
                                thread::yield_now();
                            }
                            permit.success();
                        }
                        Err(refused) => {
                            assert_eq!(refused.reason(), OpenReason::HalfOpenFull);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(admitted.load(SeqCst), 1, "one probe slot, one probe");
        let m = breaker.metrics();
        assert_eq!(m.state, State::Closed, "the probe succeeded");
        assert_eq!(m.probes_in_flight, 0);
        assert_eq!((m.probes_succeeded, m.rejected), (1, 1));
        // No slot leaked: a claim now is admitted.
        drop(breaker.try_acquire().expect("closed again"));
    });
}

/// A failure claimed on a closed breaker races a reset (manual control). A
/// reset of a closed breaker is no transition, so the failure is never lost
/// to it: counted once, as a failure, it trips; the breaker ends open when
/// the reset came first, and closed in the next generation when the reset
/// came after the trip.
#[test]
fn loom_a_failure_racing_a_reset_of_a_closed_breaker_is_kept() {
    model(|| {
        let clock = ManualClock::new();
        let breaker = Arc::new(Breaker::with_clock("loom", config(1), clock));
        let failing = {
            let breaker = breaker.clone();
            thread::spawn(move || {
                let permit = breaker.try_acquire().expect("closed, or reset to closed");
                let generation = permit.generation();
                permit.failure();
                generation
            })
        };
        let resetting = {
            let breaker = breaker.clone();
            thread::spawn(move || breaker.reset())
        };
        let claimed_in = failing.join().unwrap();
        resetting.join().unwrap();
        let m = breaker.metrics();
        assert_eq!(
            claimed_in, 0,
            "a reset of a closed breaker keeps its generation"
        );
        assert_eq!((m.failures, m.stale), (1, 0), "the failure kept: {m:?}");
        assert_eq!(m.times_opened, 1, "{m:?}");
        let expected = match m.state {
            State::Open => 1,
            State::Closed => 2,
            _ => panic!("{m:?}"),
        };
        assert_eq!(m.generation, expected, "{m:?}");
    });
}

/// The probe's lease runs out while it is still out: a later claim reclaims
/// the slot (a new half-open generation), and the old probe's verdict is then
/// stale and cannot close the new episode. Whatever the interleaving, once
/// every permit has ended no slot is held, the breaker is not left half-open
/// with nothing in flight, and every admitted call's verdict is counted once.
#[test]
fn loom_a_reclaimed_lease_leaks_no_slot_and_its_old_probe_is_stale() {
    model(|| {
        let (breaker, clock) = due_breaker(config(1));
        let breaker = Arc::new(breaker);
        let admitted = Arc::new(AtomicUsize::new(0));
        let first = {
            let (breaker, admitted) = (breaker.clone(), admitted.clone());
            thread::spawn(move || {
                if let Ok(probe) = breaker.try_acquire() {
                    admitted.fetch_add(1, SeqCst);
                    probe.success();
                }
            })
        };
        let late = {
            let (breaker, admitted) = (breaker.clone(), admitted.clone());
            thread::spawn(move || {
                // Past the lease of a probe admitted before this line.
                clock.advance(Duration::from_millis(101));
                if let Ok(permit) = breaker.try_acquire() {
                    admitted.fetch_add(1, SeqCst);
                    permit.failure();
                }
            })
        };
        first.join().unwrap();
        late.join().unwrap();
        let m = breaker.metrics();
        assert_eq!(m.probes_in_flight, 0, "a slot leaked: {m:?}");
        assert_ne!(
            m.state,
            State::HalfOpen,
            "half-open, nothing in flight: {m:?}"
        );
        // One failure before the race opened the breaker.
        assert_eq!(
            m.successes + (m.failures - 1) + m.stale,
            admitted.load(SeqCst) as u64,
            "every verdict counted once: {m:?}"
        );
        if m.probes_reclaimed == 1 {
            assert_eq!(m.stale, 1, "the old probe's success is stale: {m:?}");
            assert_eq!(m.state, State::Open, "the new probe failed: {m:?}");
        }
    });
}

/// A trip (under the transition lock) races a manual force-open: whichever
/// runs first, the breaker ends forced open (the person's word is the last),
/// the failed call counts once (as a failure, stale, or never admitted), and
/// no lock or slot is left held: forced closed, it admits.
#[test]
fn loom_a_trip_racing_manual_control_ends_as_the_person_set_it() {
    model(|| {
        let clock = ManualClock::new();
        let breaker = Arc::new(Breaker::with_clock("loom", config(1), clock));
        let tripping = {
            let breaker = breaker.clone();
            thread::spawn(move || {
                if let Ok(permit) = breaker.try_acquire() {
                    permit.failure();
                }
            })
        };
        breaker.force_open();
        tripping.join().unwrap();
        let m = breaker.metrics();
        assert_eq!(m.state, State::ForcedOpen, "{m:?}");
        assert_eq!(m.failures + m.stale + m.rejected, 1, "{m:?}");
        breaker.force_closed();
        drop(breaker.try_acquire().expect("forced closed admits"));
    });
}

/// A fleet open races a local trip (a failed call on a closed breaker): the
/// trip is a transition under the lock, the fleet open another. Whatever the
/// order, the breaker ends open by the fleet (a trip after the fleet open
/// would belong to a generation the breaker left), in one generation per open,
/// and the failed call counts once: as a failure, stale, or refused.
#[test]
fn loom_a_fleet_open_racing_a_local_trip_ends_open_by_the_fleet() {
    model(|| {
        let clock = ManualClock::new();
        let breaker = Arc::new(Breaker::with_clock("loom", config(1), clock));
        let tripping = {
            let breaker = breaker.clone();
            thread::spawn(move || {
                if let Ok(permit) = breaker.try_acquire() {
                    permit.failure();
                }
            })
        };
        assert!(breaker.fleet_open(Duration::from_millis(10)));
        tripping.join().unwrap();
        let m = breaker.metrics();
        assert_eq!(m.state, State::Open, "{m:?}");
        assert_eq!(m.failures + m.stale + m.rejected, 1, "{m:?}");
        assert_eq!(
            m.generation, m.times_opened,
            "one generation per open: {m:?}"
        );
        assert_eq!(
            breaker.try_acquire().unwrap_err().reason(),
            OpenReason::Fleet,
            "the fleet's open is the last: {m:?}"
        );
    });
}

/// A fleet open races a probe of a due breaker (admission, then its verdict,
/// success or failure). The fleet's open always stands at the end: a probe
/// admitted before it is stale, a probe that closed or reopened first is
/// overtaken, a claim after it is refused (as open, or, reading the local
/// word with the fleet's deadline, as plainly open). No probe slot is left
/// held, and every claim counts once.
#[test]
fn loom_a_fleet_open_racing_a_probe_leaks_no_slot_and_stands() {
    for succeeds in [true, false] {
        model(move || {
            let (breaker, _clock) = due_breaker(config(1));
            let breaker = Arc::new(breaker);
            let probing = {
                let breaker = breaker.clone();
                thread::spawn(move || match breaker.try_acquire() {
                    Ok(probe) if succeeds => probe.success(),
                    Ok(probe) => probe.failure(),
                    // The fleet's deadline is written before its word: a claim
                    // may read the old (local) word with the new deadline, and
                    // be refused as plainly open. Refused either way.
                    Err(refused) => assert!(
                        matches!(refused.reason(), OpenReason::Fleet | OpenReason::Open),
                        "{refused:?}"
                    ),
                })
            };
            assert!(breaker.fleet_open(Duration::from_millis(10)));
            probing.join().unwrap();
            let m = breaker.metrics();
            assert_eq!(m.state, State::Open, "{m:?}");
            assert_eq!(m.probes_in_flight, 0, "a slot leaked: {m:?}");
            // One failure before the race tripped the breaker.
            let verdicts = m.successes + (m.failures - 1) + m.stale + m.rejected;
            assert_eq!(verdicts, 1, "the claim counted once: {m:?}");
            assert_eq!(
                breaker.try_acquire().unwrap_err().reason(),
                OpenReason::Fleet,
                "{m:?}"
            );
        });
    }
}

/// A fleet agent that could not hold a due breaker reopens it while the
/// breaker's own probe ends. A probe that closed the breaker first keeps it
/// closed (the reopen leaves it); a reopen first makes the probe stale and
/// stands. Never both: a close the agent did not see is never overridden.
#[test]
fn loom_a_fleet_reopen_racing_a_probe_never_reopens_a_closed_breaker() {
    model(|| {
        let (breaker, _clock) = due_breaker(config(1));
        let breaker = Arc::new(breaker);
        let probing = {
            let breaker = breaker.clone();
            thread::spawn(move || {
                if let Ok(probe) = breaker.try_acquire() {
                    probe.success();
                }
            })
        };
        let reopened = breaker.fleet_reopen(Duration::from_millis(10));
        probing.join().unwrap();
        let m = breaker.metrics();
        if reopened {
            assert_eq!(m.state, State::Open, "{m:?}");
            assert_eq!(m.successes, 0, "a probe's close was overridden: {m:?}");
            assert_eq!(
                breaker.try_acquire().unwrap_err().reason(),
                OpenReason::Fleet
            );
        } else {
            assert_eq!((m.state, m.successes), (State::Closed, 1), "{m:?}");
        }
        assert_eq!(m.probes_in_flight, 0, "a slot leaked: {m:?}");
    });
}

/// A fleet agent withdraws the fleet's open (its own close was taken) while
/// the breaker, its open run out, probes and fails. The release closes only
/// the fleet's open word: released first, the call is admitted closed and
/// trips; probing first, the release leaves the half-open or the new open
/// alone. The breaker always ends open on its own evidence, and the failure
/// is counted once.
#[test]
fn loom_a_fleet_release_racing_a_failed_probe_never_closes_the_local_trip() {
    model(|| {
        let clock = ManualClock::new();
        let breaker = Arc::new(Breaker::with_clock("loom", config(1), clock));
        assert!(breaker.fleet_open(Duration::ZERO));
        let probing = {
            let breaker = breaker.clone();
            thread::spawn(move || breaker.try_acquire().expect("due or closed").failure())
        };
        breaker.fleet_release();
        probing.join().unwrap();
        let m = breaker.metrics();
        assert_eq!(m.state, State::Open, "{m:?}");
        assert_eq!((m.failures, m.stale), (1, 0), "{m:?}");
        assert!(!breaker.is_fleet_open(), "{m:?}");
        assert_eq!(m.probes_in_flight, 0, "a slot leaked: {m:?}");
    });
}
