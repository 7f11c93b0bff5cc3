//! Real threads racing the state machine: exact probe admission, one trip per
//! storm, exact metrics at quiescence, exact policies after manual control races
//! calls, nothing poisoned by panics.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use breaker_core::{Breaker, CallError, Config, ManualClock, State};

fn manual(config: Config) -> (Arc<Breaker>, ManualClock) {
    let clock = ManualClock::new();
    (
        Arc::new(Breaker::with_clock("race", config, clock.clone())),
        clock,
    )
}

#[test]
fn sixty_four_threads_released_after_the_open_duration_admit_exactly_half_open_probes() {
    const THREADS: usize = 64;
    for probes in [1u32, 3] {
        for _ in 0..if probes == 1 { 200 } else { 50 } {
            let config = Config::builder()
                .threshold(1)
                .open(Duration::from_secs(1))
                .half_open_probes(probes)
                .build()
                .unwrap();
            let (breaker, clock) = manual(config);
            breaker.try_acquire().unwrap().failure();
            clock.advance(Duration::from_millis(1_000));
            let reached = Arc::new(AtomicUsize::new(0));
            let barrier = Arc::new(Barrier::new(THREADS));
            let threads: Vec<_> = (0..THREADS)
                .map(|_| {
                    let (b, reached, barrier) = (
                        Arc::clone(&breaker),
                        Arc::clone(&reached),
                        Arc::clone(&barrier),
                    );
                    std::thread::spawn(move || {
                        barrier.wait();
                        let permit = b.try_acquire().ok();
                        if permit.is_some() {
                            reached.fetch_add(1, Ordering::SeqCst);
                        }
                        // Hold the probe until every thread has tried.
                        barrier.wait();
                        permit.map(|p| p.is_probe())
                    })
                })
                .collect();
            let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
            assert_eq!(reached.load(Ordering::SeqCst), probes as usize);
            assert!(results.iter().flatten().all(|is_probe| *is_probe));
            // The permits were abandoned on their threads: every slot came back.
            let m = breaker.metrics();
            assert_eq!(m.probes_in_flight, 0);
            assert_eq!(m.rejected, (THREADS - probes as usize) as u64);
        }
    }
}

#[test]
fn a_failure_storm_on_many_threads_opens_the_breaker_once() {
    for _ in 0..100 {
        let (breaker, _clock) = manual(Config::builder().threshold(3).build().unwrap());
        let barrier = Arc::new(Barrier::new(16));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (b, barrier) = (Arc::clone(&breaker), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    let permit = b.try_acquire();
                    barrier.wait();
                    if let Ok(p) = permit {
                        p.failure();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let m = breaker.metrics();
        assert_eq!(m.state, State::Open);
        assert_eq!(m.times_opened, 1, "one transition, one `opened`");
        assert_eq!(m.generation, 1);
        assert_eq!(
            m.failures + m.stale,
            16,
            "every thread was admitted, closed"
        );
    }
}

#[test]
fn every_admitted_call_is_recorded_exactly_once_after_a_random_mixed_run() {
    let (breaker, _clock, admitted) = mixed_run(
        flapping(),
        Mixed {
            force: false,
            panics: true,
        },
    );
    let m = breaker.metrics();
    assert_eq!(m.calls, admitted);
    assert!(
        m.times_opened > 0 && m.stale > 0 && m.rejected > 0,
        "the run exercised every path: {m:#?}"
    );
}

#[test]
fn a_panic_in_user_code_never_poisons_the_breaker() {
    let (breaker, _clock) = manual(Config::builder().threshold(100).build().unwrap());
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let b = Arc::clone(&breaker);
            std::thread::spawn(move || {
                let _ = b.call(|| -> Result<(), ()> { panic!("boom") });
            })
        })
        .collect();
    for t in threads {
        assert!(t.join().is_err());
    }
    assert_eq!(breaker.call(|| Ok::<_, ()>(1)), Ok(1));
    assert_eq!(breaker.metrics().failures, 4);
    assert!(!matches!(
        breaker.call(|| Ok::<_, ()>(())),
        Err(CallError::Open(_))
    ));
}

/// What a [`mixed_run`] adds to random claims and verdicts.
struct Mixed {
    /// One thread forces open, forces closed and resets as it goes.
    force: bool,
    /// Now and then a call panics in user code.
    panics: bool,
}

/// A consecutive policy that trips, reopens and reclaims probes often in a run.
fn flapping() -> Config {
    Config::builder()
        .threshold(4)
        .open(Duration::from_millis(2))
        .half_open_probes(2)
        .backoff(1.0)
        .probe_timeout(Duration::from_millis(5))
        .build()
        .unwrap()
}

/// Random claims and verdicts, raced by force open, force closed and reset.
const MANUAL_CONTROL: Mixed = Mixed {
    force: true,
    panics: false,
};

/// Four threads claim and settle at random, advance the clock, and hold permits
/// across transitions; checks, with admissions counted here and not by the
/// breaker, that every admitted call was recorded exactly once and that no probe
/// slot is left held. Returns the breaker, its clock and the admissions.
fn mixed_run(cfg: Config, mixed: Mixed) -> (Breaker, ManualClock, u64) {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("mixed", cfg, clock.clone());
    let threads: Vec<_> = (0..4u64)
        .map(|seed| {
            let (b, clock) = (breaker.clone(), clock.clone());
            std::thread::spawn(move || {
                let mut x = (seed + 11).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                let mut held = Vec::new();
                let mut admitted = 0u64;
                for _ in 0..30_000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if x % 13 == 0 {
                        clock.advance(Duration::from_millis(1));
                    }
                    if mixed.force && seed == 0 && x % 501 == 0 {
                        match (x >> 20) % 4 {
                            0 => b.force_open(),
                            1 => b.force_closed(),
                            _ => b.reset(),
                        }
                    }
                    if let Ok(p) = b.try_acquire() {
                        admitted += 1;
                        match x % 9 {
                            0..=3 => p.success(),
                            4 | 5 => p.failure(),
                            6 => p.ignore(),
                            7 => drop(p),
                            _ => held.push(p), // finished later, maybe stale
                        }
                    }
                    if held.len() > 3 {
                        let p = held.remove(0);
                        if x & 1 == 0 {
                            p.success()
                        } else {
                            p.failure()
                        }
                    }
                    if mixed.panics && x % 1_001 == 0 {
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            let _ = b.call(|| -> Result<(), ()> {
                                admitted += 1;
                                panic!("user panic")
                            });
                        }));
                    }
                }
                held.into_iter().for_each(|p| p.failure());
                admitted
            })
        })
        .collect();
    let admitted: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let m = breaker.metrics();
    assert_eq!(
        admitted,
        m.successes + m.failures + m.ignored + m.abandoned + m.stale,
        "{m:#?}"
    );
    assert_eq!(m.probes_in_flight, 0, "no path leaves a slot held: {m:#?}");
    if m.state != State::Closed {
        assert_eq!(m.consecutive_failures, 0, "{m:#?}");
    }
    (breaker, clock, admitted)
}

fn consecutive_count_is_exact(b: &Breaker) {
    b.reset();
    let t = b.config().threshold();
    for _ in 1..t {
        b.try_acquire().unwrap().failure();
    }
    assert_eq!(b.metrics().consecutive_failures, t - 1);
    b.try_acquire().unwrap().success();
    assert_eq!(b.metrics().consecutive_failures, 0);
    for _ in 1..t {
        b.try_acquire().unwrap().failure();
    }
    assert_eq!(b.state(), State::Closed);
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), State::Open);
}

#[test]
fn the_consecutive_count_is_exact_after_a_mixed_run_with_manual_control() {
    for _ in 0..5 {
        let (b, _clock, _) = mixed_run(flapping(), MANUAL_CONTROL);
        consecutive_count_is_exact(&b);
    }
}

#[test]
fn a_count_window_empties_on_reset_after_a_mixed_run_with_manual_control() {
    let cfg = Config::builder()
        .window_calls(20)
        .failure_rate(0.5)
        .open(Duration::from_millis(2))
        .half_open_probes(2)
        .probe_timeout(Duration::from_millis(5))
        .build()
        .unwrap();
    let (b, _clock, _) = mixed_run(cfg, MANUAL_CONTROL);
    b.reset();
    assert_eq!(b.metrics().window.unwrap().calls, 0);
}

#[test]
fn slow_calls_are_still_timed_after_a_mixed_run_with_manual_control() {
    let cfg = Config::builder()
        .window(Duration::from_millis(100))
        .failure_rate(0.5)
        .min_calls(5)
        .slow_call(Duration::from_millis(1))
        .slow_call_rate(0.9)
        .open(Duration::from_millis(2))
        .half_open_probes(2)
        .probe_timeout(Duration::from_millis(5))
        .build()
        .unwrap();
    let (b, clock, _) = mixed_run(cfg, MANUAL_CONTROL);
    b.reset();
    // The breaker still times its claims after all those transitions.
    for _ in 0..10 {
        let Ok(p) = b.try_acquire() else { break };
        clock.advance(Duration::from_millis(2));
        p.success();
    }
    assert_eq!(b.state(), State::Open, "{:#?}", b.metrics());
}
