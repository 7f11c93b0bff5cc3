//! `latency_trips` counts the p99 rule's trips that opened the
//! breaker: verdicts that race to it and all find the window over the bound
//! open it once, and count once.

use std::sync::Barrier;
use std::thread;
use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, State};

#[test]
fn four_racing_slow_calls_count_one_latency_trip_for_the_one_open() {
    let config = Config::builder()
        .window_calls(100)
        .min_calls(1)
        .latency_p99(Duration::from_millis(100))
        .open(Duration::from_secs(3600))
        .build()
        .unwrap();
    for round in 0..200 {
        let clock = ManualClock::new();
        let breaker = Breaker::with_clock("racing-latency-trips", config, clock.clone());
        let barrier = Barrier::new(4);
        thread::scope(|s| {
            for t in 0..4 {
                let (breaker, barrier, clock) = (&breaker, &barrier, &clock);
                s.spawn(move || {
                    let permit = breaker.try_acquire().expect("a fresh breaker admits");
                    barrier.wait();
                    if t == 0 {
                        // Every call in flight now takes a second: slow.
                        clock.advance(Duration::from_secs(1));
                    }
                    barrier.wait();
                    permit.success();
                });
            }
        });
        let m = breaker.metrics();
        assert_eq!(m.state, State::Open, "round {round}");
        assert_eq!(m.times_opened, 1, "round {round}");
        assert_eq!(
            m.latency_trips, m.times_opened,
            "round {round}: latency trips counted past the one open"
        );
    }
}
