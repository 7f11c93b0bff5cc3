//! The window policies allocate their memory once, with the breaker: recording
//! outcomes, tripping, probing, closing again and reading metrics allocate
//! nothing. (A breaker's event state, its transition counts and delivery queue,
//! is allocated by its first transition, once, so that an idle breaker stays
//! small; the test starts after one.)

use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, State};

mod support;
use support::{allocations_during, CountingAlloc};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

fn exercise(breaker: &Breaker, clock: &ManualClock) {
    for round in 0..50u64 {
        // Closed: successes, slow calls, failures until it trips.
        for i in 0..200u64 {
            let Ok(permit) = breaker.try_acquire() else {
                break;
            };
            clock.advance(Duration::from_millis(i % 7));
            if (i + round) % 3 == 0 {
                permit.failure();
            } else {
                permit.success();
            }
            let _ = breaker.metrics().window;
        }
        breaker.try_acquire().map(|p| p.ignore()).ok();
        // Open, then a probe that closes it: a new, empty window.
        clock.advance(Duration::from_secs(120));
        if let Ok(probe) = breaker.try_acquire() {
            probe.success();
        }
    }
}

#[test]
fn recording_tripping_and_closing_under_a_window_allocate_nothing() {
    let configs = [
        Config::builder()
            .window(Duration::from_secs(2))
            .failure_rate(0.3)
            .min_calls(20),
        Config::builder()
            .window(Duration::from_secs(2))
            .slow_call(Duration::from_millis(2))
            .slow_call_rate(0.5),
        Config::builder().window_calls(30).failure_rate(0.3),
        Config::builder()
            .window_calls(30)
            .slow_call(Duration::from_millis(2))
            .slow_call_rate(0.5),
    ];
    for config in configs {
        let clock = ManualClock::new();
        let breaker = Breaker::with_clock("no-alloc", config.build().unwrap(), clock.clone());
        // The first outcome of a thread may take its per-thread counter slot,
        // and the first transition allocates the breaker's event state.
        breaker.try_acquire().unwrap().success();
        breaker.force_open();
        breaker.reset();
        let allocations = allocations_during(|| exercise(&breaker, &clock));
        assert_eq!(allocations, 0, "{:?}", breaker.config().policy());
        assert!(
            breaker.metrics().times_opened > 0,
            "the run must trip: {:?}",
            breaker.config().policy()
        );
        assert_ne!(breaker.state(), State::ForcedOpen);
    }
}
