//! A `log` backend that panics must not stall a breaker's events: the
//! transition is queued and delivered before its log line is written. It used
//! to be logged first, so a panicking logger left that generation never
//! queued, and every later event of the breaker waited for it.
//!
//! `log` allows one logger per process, so this test has its own binary.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use breaker_core::{Breaker, Config, Event, ManualClock, State};

/// A logger that panics on every warning (a trip, a failed probe) and lets
/// the rest through.
struct PanicsOnWarn;

impl log::Log for PanicsOnWarn {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }

    fn log(&self, record: &log::Record) {
        if record.level() == log::Level::Warn {
            panic!("log backend failed: {}", record.args());
        }
    }

    fn flush(&self) {}
}

#[test]
fn a_panicking_logger_delays_no_transition_event() {
    log::set_logger(&PanicsOnWarn).unwrap();
    log::set_max_level(log::LevelFilter::Trace);

    let config = Config::builder().threshold(1).build().unwrap();
    let breaker = Breaker::with_clock("ledger", config, ManualClock::new());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let _subscription = breaker.subscribe(move |event| {
        if let Event::Transition(t) = event {
            sink.lock().unwrap().push((t.from, t.to));
        }
    });

    // The trip is logged as a warning: the logger's panic reaches the caller.
    let permit = breaker.try_acquire().unwrap();
    let tripped = catch_unwind(AssertUnwindSafe(|| permit.failure()));
    assert!(tripped.is_err(), "the logger panicked on the trip");
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(
        *seen.lock().unwrap(),
        [(State::Closed, State::Open)],
        "the trip was delivered before its log line"
    );

    // The next transitions (logged at info) are delivered, in order.
    breaker.force_open();
    breaker.reset();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::Closed, State::Open),
            (State::Open, State::ForcedOpen),
            (State::ForcedOpen, State::Closed),
        ]
    );
}
