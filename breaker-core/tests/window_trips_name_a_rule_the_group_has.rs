//! A window trip is told with the rule that tripped it, also while other
//! threads keep recording into the window: a group with no slow-call rule
//! never trips by `SlowCallRate`.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use breaker_core::{Breaker, Config, Event, ManualClock, TransitionReason, TripCause};

#[test]
fn racing_verdicts_on_a_count_window_without_a_slow_rule_trip_only_by_failure_rate() {
    let config = Config::builder()
        .window_calls(20)
        .min_calls(10)
        .failure_rate(0.4)
        .open(Duration::from_secs(3600))
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("racing-window-cause", config, ManualClock::new());
    let causes = Arc::new(Mutex::new(Vec::new()));
    let sink = causes.clone();
    breaker
        .subscribe(move |event: &Event| {
            if let Event::Transition(t) = event {
                if let TransitionReason::Tripped(cause) = t.reason {
                    sink.lock().unwrap().push(cause);
                }
            }
        })
        .detach();
    // Eight threads at a 45% failure mix against a 40% threshold: the window
    // trips again and again, each time with other threads recording into it;
    // whoever finds it open resets it.
    thread::scope(|s| {
        for t in 0..8u64 {
            let breaker = &breaker;
            s.spawn(move || {
                for i in 0..20_000u64 {
                    match breaker.try_acquire() {
                        Ok(permit) if (i * 7 + t) % 20 < 9 => permit.failure(),
                        Ok(permit) => permit.success(),
                        Err(_) => breaker.reset(),
                    }
                }
            });
        }
    });
    let causes = causes.lock().unwrap();
    assert!(
        causes.len() >= 100,
        "only {} trips: the race did not run",
        causes.len()
    );
    let wrong = causes
        .iter()
        .filter(|&&c| c != TripCause::FailureRate)
        .count();
    assert_eq!(
        wrong,
        0,
        "{wrong} of {} trips named a rule the group does not have",
        causes.len()
    );
    assert_eq!(breaker.metrics().times_opened, causes.len() as u64);
}
