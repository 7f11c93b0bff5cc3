//! A trace recorded from live calls through a plain `#[circuit_breaker]` fn,
//! replayed under the config that recorded it, gives the recorded transitions
//! at the recorded times: over random configs and random traffic (a fixed,
//! small number of cases per run). A trace survives its JSON Lines file.

use std::time::Duration;

use breakerbox::testing::trace::{Outcome, Trace};
use breakerbox::testing::{replay, TestKit};
use breakerbox::{circuit_breaker, CircuitOpen, Config};
use proptest::prelude::*;

#[derive(Debug, PartialEq)]
enum Error {
    Down,
    Invalid,
    Open,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

fn counts(e: &Error) -> bool {
    *e != Error::Invalid
}

/// The dependency takes `latency` on the kit's clock and answers `answer`.
#[circuit_breaker(group = "replayed", is_failure = counts)]
fn call(kit: &TestKit, latency: Duration, answer: Result<(), Error>) -> Result<(), Error> {
    kit.advance(latency);
    answer
}

/// One call: the pause before it, how long it runs, and its answer (0 a
/// success, 1 a failure, 2 an error the classifier ignores).
type Call = (u64, u64, u8);

fn record(config: Config, calls: &[Call]) -> Trace {
    let kit = TestKit::new();
    kit.registry().configure("replayed", config).unwrap();
    let recorder = kit.recorder("replayed", 10_000);
    let _installed = kit.install();
    for &(pause, latency, answer) in calls {
        kit.advance(Duration::from_millis(pause));
        let at = recorder.elapsed();
        let latency = Duration::from_millis(latency);
        let (answer, outcome) = match answer {
            0 => (Ok(()), Outcome::Success),
            1 => (Err(Error::Down), Outcome::Failure),
            _ => (Err(Error::Invalid), Outcome::Ignored),
        };
        match call(&kit, latency, answer) {
            Err(Error::Open) => recorder.sample(at, Outcome::Refused, Duration::ZERO, None),
            _ => recorder.sample(at, outcome, latency, None),
        }
    }
    recorder.trace()
}

fn config() -> impl Strategy<Value = Config> {
    (1u32..4, 1u64..60, 1u32..3, 0u8..3).prop_map(|(threshold, open_ms, to_close, backoff)| {
        Config::builder()
            .threshold(threshold)
            .open(Duration::from_millis(open_ms))
            .successes_to_close(to_close)
            .backoff(1.0 + f64::from(backoff) / 2.0)
            .max_open(Duration::from_millis(200))
            .build()
            .unwrap()
    })
}

fn calls() -> impl Strategy<Value = Vec<Call>> {
    prop::collection::vec(
        (
            0u64..40,
            0u64..15,
            prop_oneof![3 => Just(0u8), 3 => Just(1u8), 1 => Just(2u8)],
        ),
        1..120,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_trace_replayed_under_its_own_config_gives_its_transitions(config in config(), calls in calls()) {
        let trace = record(config, &calls);
        let timeline = replay(&trace, &config);
        prop_assert_eq!(&timeline.changes, &trace.changes);
        let refused = trace.samples.iter().filter(|s| s.outcome == Outcome::Refused).count();
        prop_assert_eq!(timeline.refused, refused as u64);
        prop_assert_eq!(timeline.calls, calls.len() as u64);

        let mut file = Vec::new();
        trace.write_jsonl(&mut file).unwrap();
        prop_assert_eq!(Trace::read_jsonl(&file[..]).unwrap(), trace);
    }
}

#[test]
fn the_same_trace_under_a_stricter_config_trips_sooner_and_refuses_more() {
    let lenient = Config::builder()
        .threshold(4)
        .open(Duration::from_millis(50))
        .build()
        .unwrap();
    let strict = Config::builder()
        .threshold(2)
        .open(Duration::from_millis(50))
        .build()
        .unwrap();
    // Failures in pairs between successes, then an outage.
    let mut calls: Vec<Call> = [0u8, 1, 1, 0, 1, 1, 0]
        .iter()
        .map(|&a| (10, 1, a))
        .collect();
    calls.extend((0..6).map(|_| (10, 1, 1)));
    let trace = record(lenient, &calls);
    let (live, stricter) = (replay(&trace, &lenient), replay(&trace, &strict));
    assert_eq!(live.changes, trace.changes);
    assert_eq!(
        live.changes[0].step,
        "closed -> open (tripped by consecutive_failures)"
    );
    assert!(stricter.changes[0].at < live.changes[0].at);
    assert!(stricter.refused > live.refused);
    assert!(stricter.time_open > live.time_open);
}

#[test]
fn a_line_that_is_no_trace_is_refused_with_its_number() {
    let text = "{\"trace\":\"breakerbox\",\"version\":1,\"group\":\"g\"}\n{\"at_ns\":1,\"outcome\":\"maybe\",\"latency_ns\":0}\n";
    let err = Trace::read_jsonl(text.as_bytes()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("trace line 2: neither a `transition` nor an `outcome`"),
        "{err}"
    );
    let err = Trace::read_jsonl("{\"at_ns\":1}".as_bytes()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("trace line 1: the first line must be"),
        "{err}"
    );
}

#[test]
fn a_full_recorder_keeps_its_capacity_and_counts_the_rest() {
    let kit = TestKit::new();
    let recorder = kit.recorder("replayed", 3);
    for i in 0..5 {
        recorder.sample(
            Duration::from_millis(i),
            Outcome::Success,
            Duration::ZERO,
            None,
        );
    }
    assert_eq!((recorder.trace().samples.len(), recorder.dropped()), (3, 2));
}
