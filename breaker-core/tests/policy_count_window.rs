//! The count window policy: the rate over the last `window_calls` outcomes, a
//! real ring that forgets the oldest outcome one at a time, judged on every outcome.

use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, State};

mod support;
use support::{outcomes, window};

fn counted(window_calls: u32, rate: f64, min_calls: Option<u32>) -> Breaker {
    let mut builder = Config::builder()
        .window_calls(window_calls)
        .failure_rate(rate);
    if let Some(min) = min_calls {
        builder = builder.min_calls(min);
    }
    Breaker::with_clock("cw", builder.build().unwrap(), ManualClock::new())
}

#[test]
fn a_window_that_fills_with_a_success_decides_at_once() {
    let b = counted(4, 0.5, None);
    outcomes(&b, "FFS");
    assert_eq!(b.state(), State::Closed, "3 of the 4 outcomes needed");
    outcomes(&b, "S");
    assert_eq!(
        b.state(),
        State::Open,
        "2 of 4 failed: the 4th outcome decides"
    );

    let b = counted(4, 0.5, None);
    outcomes(&b, "FSSS");
    assert_eq!(b.state(), State::Closed, "1 of 4 is below the rate");
}

#[test]
fn the_ring_forgets_the_oldest_outcome_one_at_a_time() {
    let b = counted(4, 0.75, None);
    outcomes(&b, "FFSS"); // 2 of 4
    assert_eq!(b.state(), State::Closed);
    outcomes(&b, "F"); // the first F leaves: F S S F = 2 of 4
    assert_eq!(window(&b).failures, 2);
    assert_eq!(b.state(), State::Closed);
    outcomes(&b, "F"); // the second F leaves: S S F F = 2 of 4
    assert_eq!(window(&b).failures, 2);
    assert_eq!(b.state(), State::Closed);
    outcomes(&b, "F"); // S F F F = 3 of 4
    assert_eq!(b.state(), State::Open);
}

#[test]
fn a_ring_full_of_old_successes_keeps_them_however_old() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .window_calls(3)
        .failure_rate(0.6)
        .build()
        .unwrap();
    let b = Breaker::with_clock("cw", config, clock.clone());
    outcomes(&b, "SS");
    clock.advance(Duration::from_secs(365 * 24 * 3600));
    outcomes(&b, "F");
    assert_eq!(window(&b).calls, 3);
    assert_eq!(
        b.state(),
        State::Closed,
        "1 of 3: a count window does not age"
    );
}

#[test]
fn min_calls_below_the_window_size_judges_a_partly_filled_ring() {
    let b = counted(100, 0.5, Some(4));
    outcomes(&b, "FFS");
    assert_eq!(b.state(), State::Closed);
    outcomes(&b, "F");
    assert_eq!(b.state(), State::Open);
    assert_eq!(window(&b).calls, 0, "the new generation starts empty");
}

#[test]
fn ignored_errors_take_no_place_in_the_ring() {
    let b = counted(2, 1.0, None);
    outcomes(&b, "FIIIIIIIIII");
    assert_eq!(window(&b).calls, 1);
    outcomes(&b, "F");
    assert_eq!(b.state(), State::Open);
}

#[test]
fn a_window_of_one_trips_on_the_first_failure_at_rate_one() {
    let b = counted(1, 1.0, None);
    outcomes(&b, "SSSS");
    assert_eq!(b.state(), State::Closed);
    outcomes(&b, "F");
    assert_eq!(b.state(), State::Open);
}
