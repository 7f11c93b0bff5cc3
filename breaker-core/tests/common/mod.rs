//! Helpers shared by the core's integration tests.
#![allow(dead_code)]

use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock};

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
        .open_ms(open_ms)
        .build()
        .expect("valid test config")
}
