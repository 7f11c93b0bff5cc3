//! `retry_after` is a promise a caller can sleep on: on the real (coarse and
//! precise) clocks, a claim made once it has passed finds the probe slot free.

use std::time::Duration;

use breaker_core::{Breaker, Config, State};

mod support;
use support::fail;

/// On the real clock, a caller that sleeps exactly `retry_after` and claims
/// again is admitted as the probe, although the refusal compares the coarse
/// clock, up to a kernel tick behind the precise one. Real time on purpose:
/// what is pinned lives in the gap between the two clocks, which no manual
/// clock has. About 1.5 s.
#[test]
fn sleeping_retry_after_on_the_real_clock_finds_the_probe_slot_free() {
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_millis(7))
        .build()
        .unwrap();
    let mut refused_again = 0;
    for round in 0..200 {
        let breaker = Breaker::new("retry-after", config);
        fail(&breaker);
        let open = breaker.try_acquire().expect_err("open after one failure");
        let wait = open.retry_after().expect("an open breaker says when");
        assert!(wait > Duration::ZERO && wait <= Duration::from_millis(7 + 20));
        std::thread::sleep(wait);
        match breaker.try_acquire() {
            Ok(probe) => {
                assert!(probe.is_probe());
                probe.success();
                assert_eq!(breaker.state(), State::Closed);
            }
            Err(again) => {
                refused_again += 1;
                eprintln!("round {round}: slept {wait:?}, refused again: {again:?}");
            }
        };
    }
    assert_eq!(refused_again, 0, "refused after sleeping retry_after");
}

/// The same promise through `would_admit`: once `retry_after` has
/// passed, asking says yes.
#[test]
fn would_admit_agrees_once_retry_after_has_passed() {
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_millis(5))
        .build()
        .unwrap();
    for _ in 0..50 {
        let breaker = Breaker::new("would-admit", config);
        fail(&breaker);
        let wait = breaker.try_acquire().unwrap_err().retry_after().unwrap();
        std::thread::sleep(wait);
        assert!(breaker.would_admit());
    }
}
