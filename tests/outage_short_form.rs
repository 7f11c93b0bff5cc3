//! The outage bench's harness at a small scale, breakerbox's tower layer only:
//! a real HTTP server on 127.0.0.1 fails or hangs for two seconds under an
//! open-loop load. What must hold on any machine, however slow: the requests
//! that reach a dead or hanging server stay within what the policy lets
//! through, the ramp admits no more than its curve after the heal, and every
//! caller is answered. No assertion reads a duration.

#![cfg(all(feature = "tower", feature = "tokio"))]

#[path = "../benches/outage/harness.rs"]
mod harness;
#[path = "../benches/outage/layer.rs"]
mod layer;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::metrics::Metrics;
use breakerbox::{Breaker, Config};
use harness::{Answer, Contender, Run, Scale, Scenario, Target};

const SCALE: Scale = Scale {
    rate: 100,
    warm: Duration::from_millis(500),
    outage: Duration::from_secs(2),
    after: Duration::from_millis(1500),
    timeout: Duration::from_millis(200),
    service: Duration::from_millis(2),
};

const OPEN: Duration = Duration::from_millis(200);
const WINDOW_CALLS: u32 = 20;

/// A count window of 20 calls that trips at half of them failing: the window
/// full of successes, the tenth failure trips.
fn config() -> breakerbox::ConfigBuilder {
    Config::builder()
        .window_calls(WINDOW_CALLS)
        .failure_rate(0.5)
        .open(OPEN)
}

const FAILURES_TO_TRIP: u64 = WINDOW_CALLS as u64 / 2;

/// Runs `scenario` through a fresh breaker's layer: the run and the breaker's
/// metrics at its end.
fn run_through(scenario: Scenario, config: Config, scale: &Scale) -> (Run, Metrics) {
    let breaker = Arc::new(Mutex::new(None::<Breaker>));
    let keep = breaker.clone();
    let make = move |target: Target| -> Contender {
        let made = Breaker::new("outage short form", config);
        let contender = layer::contender(target, &made, scale.timeout, None);
        *keep.lock().unwrap() = Some(made);
        contender
    };
    let run = harness::run(scenario, scale, &make, None);
    let metrics = breaker.lock().unwrap().as_ref().unwrap().metrics();
    (run, metrics)
}

/// Every caller got an answer from the contender itself (its own timeout at
/// the latest), none had to be given up by the harness.
fn every_caller_answered(run: &Run) {
    assert_eq!(
        run.calls.len() as u64,
        run.scale.calls(),
        "one record per call"
    );
    let unanswered = run
        .calls
        .iter()
        .filter(|c| c.answer == Answer::Unanswered)
        .count();
    assert_eq!(unanswered, 0, "callers left without an answer");
}

/// The requests that reached the server during the outage: each one is a
/// failure the window needed to trip, a call admitted before a trip whose
/// outcome came after it (stale), or a probe of an open period.
fn reaches_no_more_than_the_policy(run: &Run, m: &Metrics) {
    let f = run.figures();
    let bound = FAILURES_TO_TRIP + m.stale + m.times_opened;
    println!(
        "{:?}: {} of {} offered reached the server (bound {bound}: {} stale, {} opens)",
        run.scenario, f.reached, f.offered, m.stale, m.times_opened
    );
    assert!(m.times_opened >= 1, "the outage trips the breaker");
    assert!(
        f.reached as u64 <= bound,
        "{} requests reached the server, more than the policy's {bound}",
        f.reached
    );
    let periods = (SCALE.outage.as_secs_f64() / OPEN.as_secs_f64()).ceil() as u64;
    assert!(
        m.times_opened <= periods + 1,
        "at most one open period per open duration: {} opens",
        m.times_opened
    );
    assert!(
        f.reached < f.offered / 2,
        "the breaker kept most calls away"
    );
}

#[test]
fn a_dead_server_receives_no_more_than_the_policy_lets_through() {
    let (run, m) = run_through(Scenario::Fail, config().build().unwrap(), &SCALE);
    every_caller_answered(&run);
    reaches_no_more_than_the_policy(&run, &m);
}

#[test]
fn a_hanging_server_receives_no_more_than_the_policy_lets_through() {
    let (run, m) = run_through(Scenario::Hang, config().build().unwrap(), &SCALE);
    every_caller_answered(&run);
    reaches_no_more_than_the_policy(&run, &m);
    assert!(
        run.calls.iter().any(|c| c.answer == Answer::TimedOut),
        "the hanging server's calls end at their own timeout"
    );
}

#[test]
fn without_a_breaker_every_call_reaches_the_dead_server() {
    let make = |target: Target| -> Contender {
        Arc::new(move || {
            let get = target.get(SCALE.timeout);
            Box::pin(async move {
                match get.await {
                    Ok(status) => Answer::of_status(status),
                    Err(_) => Answer::Failed,
                }
            })
        })
    };
    let run = harness::run(Scenario::Fail, &SCALE, &make, None);
    every_caller_answered(&run);
    let f = run.figures();
    assert_eq!(f.reached, f.offered, "nothing holds a call back");
    assert!(
        f.reached as u64 > 2 * (FAILURES_TO_TRIP + 20),
        "{}",
        f.reached
    );
}

#[test]
fn after_the_heal_the_ramp_admits_no_more_than_its_curve() {
    let ramp = Duration::from_secs(1);
    let scale = Scale {
        after: Duration::from_secs(2),
        ..SCALE
    };
    // A constant open duration: the circuit closes soon after the heal.
    let config = config().backoff(1.0).ramp(ramp).build().unwrap();
    let (run, _) = run_through(Scenario::Fail, config, &scale);
    every_caller_answered(&run);
    // The probe whose success closed the circuit ended before it was recorded,
    // so the curve computed from its recorded end admits at most what the
    // breaker's own curve does.
    let closed = run
        .calls
        .iter()
        .filter(|c| c.start >= scale.heal() && c.answer == Answer::Success)
        .map(|c| c.end)
        .min_by(f64::total_cmp)
        .expect("the circuit closes after the heal");
    let during: Vec<_> = run
        .calls
        .iter()
        .filter(|c| c.start >= closed && c.start < closed + ramp.as_secs_f64())
        .collect();
    let admitted = during.iter().filter(|c| c.answer.admitted()).count() as f64;
    let curve: f64 = during
        .iter()
        .map(|c| (c.start - closed) / ramp.as_secs_f64())
        .sum();
    let n = during.len() as f64;
    println!("ramp: {admitted} of {n} calls admitted, the curve's share {curve:.1}");
    assert!(n > 0.0, "calls were offered during the ramp");
    // Within one of the curve, plus a tenth of the calls for the time between
    // the close and the probe's recorded end.
    assert!(
        admitted <= curve + 1.0 + 0.1 * n,
        "{admitted} admitted, the curve allows {curve:.1}"
    );
    assert!(
        during.iter().any(|c| c.answer == Answer::Ramping),
        "the ramp held calls back"
    );
}
