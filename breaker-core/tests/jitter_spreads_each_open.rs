//! `jitter`: each open lasts a uniformly random share of its (backed-off,
//! capped) duration, drawn once per trip, repeatable under a seeded clock, and
//! told exactly by `retry_after`.
mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, State};
use support::trip;

const OPEN: Duration = Duration::from_secs(10);

fn jittered(jitter: f64) -> Config {
    Config::builder()
        .threshold(1)
        .open(OPEN)
        .backoff(1.0)
        .jitter(jitter)
        .build()
        .unwrap()
}

/// How long each of `trips` opens of `breaker` lasted, by `retry_after` at
/// the trip; each open is waited out and closed by a successful probe.
fn open_durations(breaker: &Breaker, clock: &ManualClock, trips: usize) -> Vec<Duration> {
    (0..trips)
        .map(|_| {
            trip(breaker);
            let lasts = breaker.metrics().retry_after.expect("open");
            clock.advance(lasts);
            breaker.try_acquire().expect("the probe").success();
            assert_eq!(breaker.state(), State::Closed);
            lasts
        })
        .collect()
}

fn seeded(seed: u64, config: Config) -> (Breaker, ManualClock) {
    let clock = ManualClock::new().with_jitter_seed(seed);
    (Breaker::with_clock("search", config, clock.clone()), clock)
}

#[test]
fn every_open_lasts_between_eighty_and_a_hundred_and_twenty_per_cent() {
    let (breaker, clock) = seeded(0, jittered(0.2));
    let durations = open_durations(&breaker, &clock, 500);
    let (low, high) = (OPEN * 8 / 10, OPEN * 12 / 10);
    for d in &durations {
        assert!(*d >= low && *d <= high, "{d:?}");
    }
    // Spread over the range, not bunched: some in each fifth of it.
    let fifth = (high - low) / 5;
    for part in 0..5 {
        let from = low + fifth * part;
        assert!(
            durations.iter().any(|d| *d >= from && *d < from + fifth),
            "no open in fifth {part}"
        );
    }
    let distinct: BTreeSet<_> = durations.iter().collect();
    assert!(distinct.len() > 450, "{} distinct of 500", distinct.len());
}

#[test]
fn the_same_seed_draws_the_same_opens_and_another_seed_others() {
    let run = |seed| {
        let (breaker, clock) = seeded(seed, jittered(0.3));
        open_durations(&breaker, &clock, 50)
    };
    assert_eq!(run(0), run(0));
    assert_eq!(run(9), run(9));
    assert_ne!(run(0), run(9));
}

#[test]
fn retry_after_tells_the_drawn_time_to_the_nanosecond() {
    let (breaker, clock) = seeded(4, jittered(0.2));
    clock.set_nanos(1_000);
    trip(&breaker);
    let lasts = breaker.metrics().retry_after.unwrap();
    assert_ne!(lasts, OPEN, "drawn, not the configured duration");
    clock.advance(lasts - Duration::from_nanos(1));
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.retry_after(), Some(Duration::from_nanos(1)));
    clock.advance(Duration::from_nanos(1));
    let probe = breaker
        .try_acquire()
        .expect("admitted when the drawn time is up");
    assert!(probe.is_probe());
}

#[test]
fn refused_claims_draw_nothing() {
    // Two breakers, same seed: one refused a thousand times between its trips.
    let (quiet, quiet_clock) = seeded(5, jittered(0.2));
    let (busy, busy_clock) = seeded(5, jittered(0.2));
    let mut quiet_opens = Vec::new();
    let mut busy_opens = Vec::new();
    for _ in 0..20 {
        trip(&quiet);
        trip(&busy);
        for _ in 0..1_000 {
            assert!(busy.try_acquire().is_err());
        }
        let (q, b) = (
            quiet.metrics().retry_after.unwrap(),
            busy.metrics().retry_after.unwrap(),
        );
        quiet_opens.push(q);
        busy_opens.push(b);
        quiet_clock.advance(q);
        busy_clock.advance(b);
        quiet.try_acquire().unwrap().success();
        busy.try_acquire().unwrap().success();
    }
    assert_eq!(quiet_opens, busy_opens);
}

#[test]
fn backoff_grows_the_duration_before_jitter() {
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(1))
        .backoff(4.0)
        .jitter(0.1)
        .build()
        .unwrap();
    let (breaker, clock) = seeded(1, config);
    for _ in 0..50 {
        trip(&breaker);
        let first = breaker.metrics().retry_after.unwrap();
        assert!(first >= Duration::from_millis(900) && first <= Duration::from_millis(1100));
        clock.advance(first);
        breaker.try_acquire().unwrap().failure();
        // 4 s, not 4 times the drawn time: jitter never compounds.
        let grown = breaker.metrics().retry_after.unwrap();
        assert!(
            grown >= Duration::from_millis(3600) && grown <= Duration::from_millis(4400),
            "{grown:?}"
        );
        assert_eq!(breaker.metrics().open_for, Some(Duration::from_secs(4)));
        clock.advance(grown);
        breaker.try_acquire().unwrap().success();
    }
}

#[test]
fn without_jitter_every_open_lasts_its_duration() {
    let (breaker, clock) = seeded(0, jittered(0.0));
    for d in open_durations(&breaker, &clock, 20) {
        assert_eq!(d, OPEN);
    }
}

#[test]
fn jitter_outside_zero_to_one_is_refused() {
    for bad in [-0.1, 1.0, 1.5, f64::NAN, f64::INFINITY] {
        let err = Config::builder().jitter(bad).build().unwrap_err();
        assert_eq!(err.key(), "jitter", "{bad}");
    }
    assert_eq!(jittered(0.2).jitter(), 0.2);
    assert_eq!(Config::DEFAULT.jitter(), 0.0);
}

#[test]
fn keys_of_one_group_that_trip_together_open_for_their_own_durations() {
    // One outage behind every key: all trip in the same instant, in the same
    // generation. Each key's open is its own draw, repeatable under the seed.
    let opens = |seed| {
        let clock = ManualClock::new().with_jitter_seed(seed);
        let registry = breaker_core::Registry::with_clock(clock);
        let hosts = registry.keyed::<u32>("hosts", &jittered(0.2), 64).unwrap();
        (0..32)
            .map(|host| {
                let breaker = hosts.breaker(&host);
                trip(&breaker);
                breaker.metrics().retry_after.expect("open")
            })
            .collect::<Vec<_>>()
    };
    let first = opens(3);
    let distinct: BTreeSet<_> = first.iter().collect();
    assert!(
        distinct.len() > 28,
        "{} distinct of 32: {first:?}",
        distinct.len()
    );
    for d in &first {
        assert!(*d >= OPEN * 8 / 10 && *d <= OPEN * 12 / 10, "{d:?}");
    }
    assert_eq!(opens(3), first, "the same seed draws the same opens");
}
