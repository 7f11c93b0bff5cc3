//! A trace recorded from live calls through a throttled `#[circuit_breaker]`
//! fn (`throttle`), replayed under the config that recorded it, is throttled
//! exactly as it was: the same refusals, the throttle's among them, and the
//! same transitions, over random traffic; and a trace of a dependency that
//! fails half the time, replayed under other throttles, tells what each would
//! have shed.

use std::time::Duration;

use breakerbox::testing::trace::{Outcome, Trace};
use breakerbox::testing::{replay, TestKit};
use breakerbox::{circuit_breaker, CircuitOpen, Config, OpenReason};
use proptest::prelude::*;

#[derive(Debug, PartialEq)]
enum Error {
    Down,
    Invalid,
    Open(OpenReason),
}

impl From<CircuitOpen> for Error {
    fn from(open: CircuitOpen) -> Self {
        Error::Open(open.reason())
    }
}

fn counts(e: &Error) -> bool {
    *e != Error::Invalid
}

/// The dependency takes `latency` on the kit's clock and answers `answer`.
#[circuit_breaker(group = "shed", is_failure = counts)]
fn call(kit: &TestKit, latency: Duration, answer: Result<(), Error>) -> Result<(), Error> {
    kit.advance(latency);
    answer
}

/// One call: the pause before it, how long it runs, and its answer (0 a
/// success, 1 a failure, 2 an error the classifier ignores).
type Call = (u64, u64, u8);

/// The trace of `calls` under `config`, and how many the throttle refused.
fn record(config: Config, calls: &[Call]) -> (Trace, u64) {
    let kit = TestKit::new();
    kit.registry().configure("shed", config).unwrap();
    let recorder = kit.recorder("shed", 10_000);
    let _installed = kit.install();
    let mut throttled = 0;
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
            Err(Error::Open(reason)) => {
                throttled += u64::from(reason == OpenReason::Throttled);
                recorder.sample(at, Outcome::Refused, Duration::ZERO, None);
            }
            _ => recorder.sample(at, outcome, latency, None),
        }
    }
    (recorder.trace(), throttled)
}

fn throttling(k: f64, threshold: u32) -> Config {
    Config::builder()
        .threshold(threshold)
        .open(Duration::from_millis(50))
        .throttle(k)
        .throttle_window(Duration::from_millis(500))
        .build()
        .unwrap()
}

fn calls() -> impl Strategy<Value = Vec<Call>> {
    prop::collection::vec(
        (
            0u64..20,
            0u64..5,
            prop_oneof![2 => Just(0u8), 3 => Just(1u8), 1 => Just(2u8)],
        ),
        1..200,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_throttled_trace_replayed_under_its_own_config_is_throttled_as_it_was(
        k in 1.0f64..3.0,
        threshold in 3u32..20,
        calls in calls(),
    ) {
        let config = throttling(k, threshold);
        let (trace, throttled) = record(config, &calls);
        let timeline = replay(&trace, &config);
        prop_assert_eq!(&timeline.changes, &trace.changes);
        let refused = trace.samples.iter().filter(|s| s.outcome == Outcome::Refused).count();
        prop_assert_eq!(timeline.refused, refused as u64);
        prop_assert_eq!(timeline.throttled, throttled);
    }
}

#[test]
fn replayed_with_and_without_the_throttle_a_trace_tells_what_it_would_shed() {
    // A dependency failing half the calls, in no pattern (a fixed
    // xorshift), 200 calls 5 ms apart.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let calls: Vec<Call> = (0..200)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (5, 1, (x >> 63) as u8)
        })
        .collect();
    let plain = Config::builder().threshold(1_000).build().unwrap();
    let (trace, throttled) = record(plain, &calls);
    assert_eq!(throttled, 0);
    let unthrottled = replay(&trace, &plain);
    assert_eq!((unthrottled.refused, unthrottled.throttled), (0, 0));
    // A dependency that fails half of whatever reaches it accepts half of
    // what goes: with `K` times that share below one (K = 1.5), the calls
    // going can never reach `K` times the accepts, and the throttle sheds at
    // its cap; above one (K = 3), it sheds only while a run of failures
    // weighs in a window that holds few calls.
    let hard = replay(&trace, &throttling(1.5, 1_000));
    let soft = replay(&trace, &throttling(3.0, 1_000));
    println!(
        "throttle = 1.5 sheds {} of {} calls, throttle = 3 sheds {}",
        hard.throttled, hard.calls, soft.throttled
    );
    assert_eq!(hard.refused, hard.throttled);
    assert!(hard.throttled >= 150, "{hard:?}");
    assert!(soft.throttled <= 30, "{soft:?}");
}
