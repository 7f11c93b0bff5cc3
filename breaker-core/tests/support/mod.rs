//! Helpers shared by the core's integration tests: breakers on a manual clock,
//! outcomes by the letter, the counters by name, and the counting allocator
//! (`counting_alloc.rs`, shared with the facade's tests and the heap bench).
#![allow(dead_code)]

use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, Metrics, WindowMetrics};

/// A breaker on a fresh manual clock, with the clock handle.
pub fn manual(config: Config) -> (Breaker, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("test", config, clock.clone());
    (breaker, clock)
}

/// Opens `breaker` by failing `threshold` admitted calls.
pub fn trip(breaker: &Breaker) {
    for _ in 0..breaker.config().threshold() {
        breaker
            .try_acquire()
            .expect("closed breaker admits")
            .failure();
    }
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn config(threshold: u32, open_ms: u64) -> Config {
    Config::builder()
        .threshold(threshold)
        .open(Duration::from_millis(open_ms))
        .build()
        .expect("valid test config")
}

/// One admitted call that fails.
pub fn fail(b: &Breaker) {
    b.try_acquire().expect("admitted").failure();
}

/// One admitted call that succeeds.
pub fn succeed(b: &Breaker) {
    b.try_acquire().expect("admitted").success();
}

/// One admitted call per letter: `F` fails, `S` succeeds, `I` is ignored.
pub fn outcomes(b: &Breaker, letters: &str) {
    for c in letters.chars() {
        let permit = b.try_acquire().expect("admitted");
        match c {
            'F' => permit.failure(),
            'S' => permit.success(),
            'I' => permit.ignore(),
            other => panic!("unknown outcome {other}"),
        }
    }
}

/// What a window policy's window holds now.
pub fn window(b: &Breaker) -> WindowMetrics {
    b.metrics().window.expect("a window policy")
}

/// The outcome counters of a breaker (or of a model of one), compared by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub successes: u64,
    pub failures: u64,
    pub ignored: u64,
    pub abandoned: u64,
    pub stale: u64,
    pub times_opened: u64,
}

/// The [`Tally`] of `m`.
pub fn tally(m: &Metrics) -> Tally {
    Tally {
        successes: m.successes,
        failures: m.failures,
        ignored: m.ignored,
        abandoned: m.abandoned,
        stale: m.stale,
        times_opened: m.times_opened,
    }
}

#[path = "counting_alloc.rs"]
mod counting_alloc;
#[allow(unused_imports)] // each test binary uses some of them
pub use counting_alloc::{allocations_during, live_bytes, net_bytes_here, CountingAlloc};

/// Runs `f` on a thread of its own and waits for it at most 10 s, so that a
/// deadlock fails the test instead of hanging it; a panic in `f` goes on.
pub fn within_10s(f: impl FnOnce() + Send + 'static) {
    let (done, finished) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        f();
        done.send(()).unwrap();
    });
    match finished.recv_timeout(Duration::from_secs(10)) {
        Ok(()) => worker.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(worker.join().unwrap_err())
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("deadlock: still running after 10 s")
        }
    }
}
