//! The breaker against a plain sequential model of the state machine (the
//! consecutive policy, probes, backoff, manual control, stale outcomes), with
//! permits held across other claims, verdicts, transitions and clock advances:
//! every shortcut the closed path takes must agree with the model after every step.
use breaker_core::{Breaker, Config, ManualClock, State};
use std::time::Duration;

mod support;
use support::{tally, Tally};

#[derive(Debug, Clone, Copy, PartialEq)]
enum S {
    Closed,
    Open,
    Half,
    FOpen,
    FClosed,
}

struct M {
    s: S,
    gen: u64,
    count: u32,
    probes: u32,
    succ: u32,
    reopen_at: u64,
    open_for: u64,
    now: u64,
    successes: u64,
    failures: u64,
    stale: u64,
    ignored: u64,
    abandoned: u64,
    opened: u64,
}

const T: u32 = 3;
const OPEN: u64 = 10_000_000; // 10 ms
const MAXO: u64 = 40_000_000;
const HOP: u32 = 2;
const STC: u32 = 2;

fn run(seed: u64) {
    let clock = ManualClock::new();
    let cfg = Config::builder()
        .threshold(T)
        .open(Duration::from_millis(10))
        .max_open(Duration::from_millis(40))
        .backoff(2.0)
        .half_open_probes(HOP)
        .successes_to_close(STC)
        .probe_timeout(Duration::from_secs(1000000))
        .build()
        .unwrap();
    let b = Breaker::with_clock("model", cfg, clock.clone());
    let mut m = M {
        s: S::Closed,
        gen: 0,
        count: 0,
        probes: 0,
        succ: 0,
        reopen_at: 0,
        open_for: OPEN,
        now: 0,
        successes: 0,
        failures: 0,
        stale: 0,
        ignored: 0,
        abandoned: 0,
        opened: 0,
    };
    let mut held: Vec<(breaker_core::Permit<'_>, u64, bool)> = Vec::new();
    let mut x = seed | 1;
    for step in 0..400 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let op = x % 20;
        match op {
            0..=5 => {
                // claim
                let p = b.try_acquire();
                let expect = match m.s {
                    S::Closed | S::FClosed => Some(false),
                    S::FOpen => None,
                    S::Open => {
                        if m.now >= m.reopen_at {
                            m.s = S::Half;
                            m.gen += 1;
                            m.probes = 1;
                            m.succ = 0;
                            Some(true)
                        } else {
                            None
                        }
                    }
                    S::Half => {
                        if m.probes < HOP {
                            m.probes += 1;
                            Some(true)
                        } else {
                            None
                        }
                    }
                };
                match (p, expect) {
                    (Ok(p), Some(probe)) => {
                        assert_eq!(p.is_probe(), probe, "seed {seed} step {step}");
                        held.push((p, m.gen, probe));
                    }
                    (Err(_), None) => {}
                    (p, e) => panic!("seed {seed} step {step}: claim {:?} model {e:?}", p.is_ok()),
                }
            }
            6..=13 if !held.is_empty() => {
                let i = (x >> 20) as usize % held.len();
                let (p, g, probe) = held.swap_remove(i);
                let v = (x >> 40) % 10;
                // 0..=3 success, 4..=6 failure, 7 ignore, 8..=9 abandon
                match v {
                    0..=3 => p.success(),
                    4..=6 => p.failure(),
                    7 => p.ignore(),
                    _ => drop(p),
                }
                if g != m.gen {
                    m.stale += 1;
                } else if probe {
                    match v {
                        0..=3 => {
                            m.successes += 1;
                            m.probes -= 1;
                            m.succ += 1;
                            if m.succ >= STC {
                                m.s = S::Closed;
                                m.gen += 1;
                                m.count = 0;
                            }
                        }
                        4..=6 => {
                            m.failures += 1;
                            m.opened += 1;
                            m.open_for = (m.open_for * 2).clamp(OPEN, MAXO);
                            m.reopen_at = m.now + m.open_for;
                            m.s = S::Open;
                            m.gen += 1;
                        }
                        7 => {
                            m.ignored += 1;
                            m.probes -= 1;
                        }
                        _ => {
                            m.abandoned += 1;
                            m.probes -= 1;
                        }
                    }
                } else {
                    let closed = m.s == S::Closed;
                    match v {
                        0..=3 => {
                            m.successes += 1;
                            if closed {
                                m.count = 0;
                            }
                        }
                        4..=6 => {
                            m.failures += 1;
                            if closed {
                                m.count += 1;
                                if m.count >= T {
                                    m.opened += 1;
                                    m.open_for = OPEN;
                                    m.reopen_at = m.now + OPEN;
                                    m.s = S::Open;
                                    m.gen += 1;
                                    m.count = 0;
                                }
                            }
                        }
                        7 => m.ignored += 1,
                        _ => m.abandoned += 1,
                    }
                }
            }
            14..=16 => {
                let d = (x >> 30) % 12_000_000;
                clock.advance(Duration::from_nanos(d));
                m.now += d;
            }
            17 => {
                // Forcing the state the breaker is in is no transition.
                b.force_open();
                if m.s != S::FOpen {
                    m.gen += 1;
                    m.count = 0;
                }
                m.s = S::FOpen;
            }
            18 => {
                b.force_closed();
                if m.s != S::FClosed {
                    m.gen += 1;
                    m.count = 0;
                }
                m.s = S::FClosed;
            }
            19 => {
                // A reset of a closed breaker keeps its generation and
                // clears its count.
                b.reset();
                if m.s != S::Closed {
                    m.gen += 1;
                }
                m.s = S::Closed;
                m.count = 0;
                m.open_for = OPEN;
            }
            _ => {}
        }
        let mt = b.metrics();
        let st = match mt.state {
            State::Closed => S::Closed,
            State::Open => S::Open,
            State::HalfOpen => S::Half,
            State::ForcedOpen => S::FOpen,
            State::ForcedClosed => S::FClosed,
        };
        let ctx = format!("seed {seed} step {step} op {op} {mt:#?}");
        assert_eq!(st, m.s, "{ctx}");
        assert_eq!(mt.generation, m.gen, "{ctx}");
        assert_eq!(
            mt.consecutive_failures,
            if m.s == S::Closed { m.count } else { 0 },
            "{ctx}"
        );
        assert_eq!(
            mt.probes_in_flight,
            if m.s == S::Half { m.probes } else { 0 },
            "{ctx}"
        );
        let modelled = Tally {
            successes: m.successes,
            failures: m.failures,
            ignored: m.ignored,
            abandoned: m.abandoned,
            stale: m.stale,
            times_opened: m.opened,
        };
        assert_eq!(tally(&mt), modelled, "{ctx}");
    }
    drop(held);
}

#[test]
fn the_breaker_agrees_with_the_model_after_every_step_of_1000_random_runs() {
    for seed in 1..1000u64 {
        run(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }
}
