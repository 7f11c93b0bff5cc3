//! A live reload while 4 threads call: no count is lost, and no breaker ends
//! in a state that none of the configurations applied could have led to.
#![cfg(feature = "config")]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use breakerbox::config_file::Settings;
use breakerbox::{circuit_breaker, CircuitOpen, ManualClock, Registry, State};

#[derive(Debug)]
enum Error {
    Open,
    Failed,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

#[circuit_breaker(group = "reload", threshold = 3, open_ms = 2, registry = reg)]
fn counted(reg: &Registry, fail: bool) -> Result<(), Error> {
    if fail {
        Err(Error::Failed)
    } else {
        Ok(())
    }
}

#[circuit_breaker(group = "reload-window", window_calls = 8, min_calls = 4, open_ms = 2, registry = reg)]
fn windowed(reg: &Registry, fail: bool) -> Result<(), Error> {
    if fail {
        Err(Error::Failed)
    } else {
        Ok(())
    }
}

const CALLS: u64 = 20_000;
const RELOADS: u64 = 200;
/// The largest threshold either configuration gives `reload`.
const MAX_THRESHOLD: u32 = 6;

/// Per group: calls that ran (Ok or Err from the fn) and calls refused.
#[derive(Default)]
struct Tally {
    ran: AtomicU64,
    refused: AtomicU64,
}

impl Tally {
    fn add(&self, result: Result<(), Error>) {
        match result {
            Ok(()) | Err(Error::Failed) => self.ran.fetch_add(1, Relaxed),
            Err(Error::Open) => self.refused.fetch_add(1, Relaxed),
        };
    }
}

#[test]
fn reloading_during_four_threads_of_calls_loses_no_count_and_reaches_no_impossible_state() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let a = Settings::from_toml_str(
        "[groups.reload]\nthreshold = 2\nopen_ms = 1\nhalf_open_probes = 2\nsuccesses_to_close = 2\n\
         [groups.reload-window]\nopen_ms = 1\n",
        "a.toml",
    )
    .unwrap();
    let b = Settings::from_toml_str(
        "[groups.reload]\nthreshold = 6\nopen_ms = 3\n[groups.reload-window]\nopen_ms = 3\nbackoff = 1\n",
        "b.toml",
    )
    .unwrap();
    let tallies = [Tally::default(), Tally::default()];
    let done = AtomicBool::new(false);
    let reloads = AtomicU64::new(0);
    let attempts = AtomicU64::new(0);

    std::thread::scope(|s| {
        let workers: Vec<_> = (0..4u64)
            .map(|t| {
                let (registry, tallies, clock) = (&registry, &tallies, &clock);
                let (reloads, attempts) = (&reloads, &attempts);
                s.spawn(move || {
                    let mut i = 0u64;
                    // At least CALLS each, and on until the reloads are many.
                    while i < CALLS || reloads.load(Relaxed) < RELOADS {
                        if i % 16 == 0 {
                            // Time passes, so that open circuits probe and close.
                            clock.advance(Duration::from_millis(1));
                        }
                        // Bursts of 16 failures per group, offset per thread.
                        let fail = (i / 32 + t) % 3 == 0;
                        if i % 2 == 0 {
                            tallies[0].add(counted(registry, fail));
                        } else {
                            tallies[1].add(windowed(registry, fail));
                        }
                        i += 1;
                    }
                    attempts.fetch_add(i, Relaxed);
                })
            })
            .collect();
        s.spawn(|| {
            let mut generations = [0u64; 2];
            while !done.load(Relaxed) {
                let settings = if reloads.load(Relaxed) % 2 == 0 {
                    &a
                } else {
                    &b
                };
                settings
                    .apply(&registry)
                    .expect("both configurations are valid live");
                reloads.fetch_add(1, Relaxed);
                clock.advance(Duration::from_millis(1));
                for (i, group) in ["reload", "reload-window"].into_iter().enumerate() {
                    if let Some(breaker) = registry.get(group) {
                        let generation = breaker.metrics().generation;
                        assert!(
                            generation >= generations[i],
                            "the generation never goes back"
                        );
                        generations[i] = generation;
                    }
                }
                std::thread::yield_now();
            }
        });
        for worker in workers {
            worker.join().unwrap();
        }
        done.store(true, Relaxed);
    });

    assert!(
        reloads.load(Relaxed) >= RELOADS,
        "the reloads overlapped the calls"
    );
    let mut total = 0;
    for (tally, group) in tallies.iter().zip(["reload", "reload-window"]) {
        let m = registry.get(group).unwrap().metrics();
        let ran = tally.ran.load(Relaxed);
        let refused = tally.refused.load(Relaxed);
        total += ran + refused;
        assert_eq!(m.calls, ran, "{group}: every call that ran is counted once");
        assert_eq!(m.successes + m.failures + m.stale, ran, "{group}");
        assert_eq!(
            m.rejected, refused,
            "{group}: every refusal is counted once"
        );
        assert_eq!(m.probes_in_flight, 0, "{group}: every permit was settled");
        assert!(m.times_opened > 10, "{group}: the breaker cycled");
        assert!(m.probes_succeeded > 10, "{group}: and closed again");
        assert!(
            matches!(m.state, State::Closed | State::Open | State::HalfOpen),
            "{group}: never forced"
        );
    }
    assert_eq!(
        total,
        attempts.load(Relaxed),
        "every attempt ran or was refused"
    );
    let reload = registry.get("reload").unwrap().metrics();
    if reload.state == State::Closed {
        assert!(reload.consecutive_failures < MAX_THRESHOLD);
    }

    // The last configuration applied is the one in force, and judges.
    a.apply(&registry).unwrap();
    registry.reset("reload").unwrap();
    counted(&registry, true).unwrap_err();
    assert_eq!(registry.get("reload").unwrap().state(), State::Closed);
    counted(&registry, true).unwrap_err();
    assert_eq!(
        registry.get("reload").unwrap().state(),
        State::Open,
        "a.toml's threshold = 2"
    );
}
