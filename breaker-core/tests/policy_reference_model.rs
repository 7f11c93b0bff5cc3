//! Each failure policy against a plain, obviously correct model: a `Vec` of every
//! outcome since the last transition, filtered afresh on every step. Random
//! sequences of outcomes, ignored errors and clock advances go through both; the
//! state and the window's counts must agree after every step.

use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, State};
use proptest::prelude::*;

const OPEN_MS: u64 = 500;

#[derive(Clone, Copy, Debug)]
enum Policy {
    Consecutive { threshold: u32 },
    Time { window_ms: u64, rates: Rates },
    Count { window_calls: u32, rates: Rates },
}

#[derive(Clone, Copy, Debug)]
struct Rates {
    failure_rate: f64,
    min_calls: u32,
    slow: Option<(u64, f64)>,
}

impl Policy {
    fn config(&self) -> Config {
        let b = Config::builder().open(Duration::from_millis(OPEN_MS));
        let (b, rates) = match *self {
            Policy::Consecutive { threshold } => return b.threshold(threshold).build().unwrap(),
            Policy::Time { window_ms, rates } => {
                (b.window(Duration::from_millis(window_ms)), rates)
            }
            Policy::Count {
                window_calls,
                rates,
            } => (b.window_calls(window_calls), rates),
        };
        let b = b
            .failure_rate(rates.failure_rate)
            .min_calls(rates.min_calls);
        let b = match rates.slow {
            Some((ms, rate)) => b.slow_call(Duration::from_millis(ms)).slow_call_rate(rate),
            None => b,
        };
        b.build().unwrap()
    }
}

#[derive(Clone, Copy, Debug)]
struct Recorded {
    at_nanos: u64,
    failed: bool,
    took_nanos: u64,
}

/// The reference: every outcome since the last transition, judged from scratch.
struct Model {
    policy: Policy,
    outcomes: Vec<Recorded>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    calls: u64,
    failures: u64,
    slow: u64,
}

impl Model {
    /// The outcomes the window holds at `now`, as the docs define it: a time
    /// window of ten buckets holds the outcomes whose bucket (`at / (window/10)`)
    /// is one of the last ten at `now`; a count window the last `window_calls`.
    fn window(&self, now: u64) -> Vec<Recorded> {
        match self.policy {
            Policy::Consecutive { .. } => Vec::new(),
            Policy::Time { window_ms, .. } => {
                let bucket = window_ms * 1_000_000 / 10;
                self.outcomes
                    .iter()
                    .filter(|o| now / bucket - o.at_nanos / bucket < 10)
                    .copied()
                    .collect()
            }
            Policy::Count { window_calls, .. } => {
                let skip = self.outcomes.len().saturating_sub(window_calls as usize);
                self.outcomes[skip..].to_vec()
            }
        }
    }

    fn counts(&self, now: u64) -> Counts {
        let rates = match self.policy {
            Policy::Consecutive { .. } => return Counts::default(),
            Policy::Time { rates, .. } | Policy::Count { rates, .. } => rates,
        };
        let window = self.window(now);
        Counts {
            calls: window.len() as u64,
            failures: window.iter().filter(|o| o.failed).count() as u64,
            slow: match rates.slow {
                Some((ms, _)) => window
                    .iter()
                    .filter(|o| o.took_nanos > ms * 1_000_000)
                    .count() as u64,
                None => 0,
            },
        }
    }

    fn consecutive_failures(&self) -> usize {
        self.outcomes.iter().rev().take_while(|o| o.failed).count()
    }

    /// Records an outcome; returns whether the policy trips.
    fn record(&mut self, now: u64, failed: bool, took_nanos: u64) -> bool {
        self.outcomes.push(Recorded {
            at_nanos: now,
            failed,
            took_nanos,
        });
        let rates = match self.policy {
            Policy::Consecutive { threshold } => {
                return self.consecutive_failures() >= threshold as usize
            }
            Policy::Time { rates, .. } | Policy::Count { rates, .. } => rates,
        };
        let c = self.counts(now);
        if c.calls == 0 || c.calls < u64::from(rates.min_calls) {
            return false;
        }
        let calls = c.calls as f64;
        c.failures as f64 / calls >= rates.failure_rate
            || rates
                .slow
                .is_some_and(|(_, rate)| c.slow as f64 / calls >= rate)
    }
}

#[derive(Clone, Copy, Debug)]
enum Step {
    /// A call that takes `took_ms` on the breaker's clock, then succeeds or fails.
    Call { failed: bool, took_ms: u64 },
    /// A call whose error the classifier ignores.
    Ignored,
    /// Time passes with no call.
    Advance { ms: u64 },
}

fn rates() -> impl Strategy<Value = Rates> {
    (
        0.05f64..=1.0,
        1u32..8,
        proptest::option::of((1u64..40, 0.05f64..=1.0)),
    )
        .prop_map(|(failure_rate, min_calls, slow)| Rates {
            failure_rate,
            min_calls,
            slow,
        })
}

fn policy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        (1u32..6).prop_map(|threshold| Policy::Consecutive { threshold }),
        (prop::sample::select(vec![10u64, 100, 250, 1_000]), rates())
            .prop_map(|(window_ms, rates)| Policy::Time { window_ms, rates }),
        (1u32..12, rates()).prop_map(|(window_calls, mut rates)| {
            rates.min_calls = rates.min_calls.min(window_calls);
            Policy::Count {
                window_calls,
                rates,
            }
        }),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (any::<bool>(), prop_oneof![3 => 0u64..5, 1 => 0u64..60])
            .prop_map(|(failed, took_ms)| Step::Call { failed, took_ms }),
        1 => Just(Step::Ignored),
        2 => prop_oneof![0u64..20, 0u64..1_500].prop_map(|ms| Step::Advance { ms }),
    ]
}

fn run(policy: Policy, steps: &[Step]) -> Result<(), TestCaseError> {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("model", policy.config(), clock.clone());
    let mut model = Model {
        policy,
        outcomes: Vec::new(),
    };
    let now = || breaker_core::Clock::now_nanos(&clock);
    for (i, step) in steps.iter().enumerate() {
        match *step {
            Step::Call { failed, took_ms } => {
                let permit = breaker.try_acquire().expect("the model keeps it closed");
                let started = now();
                clock.advance(Duration::from_millis(took_ms));
                if failed {
                    permit.failure();
                } else {
                    permit.success();
                }
                let tripped = model.record(now(), failed, now() - started);
                if tripped {
                    prop_assert_eq!(breaker.state(), State::Open, "step {}: {:?}", i, step);
                    // Through half-open back to closed: a new generation.
                    clock.advance(Duration::from_millis(OPEN_MS));
                    breaker.try_acquire().expect("the probe").success();
                    prop_assert_eq!(breaker.state(), State::Closed);
                    model.outcomes.clear();
                }
            }
            Step::Ignored => breaker.try_acquire().expect("closed").ignore(),
            Step::Advance { ms } => clock.advance(Duration::from_millis(ms)),
        }
        prop_assert_eq!(breaker.state(), State::Closed, "step {}: {:?}", i, step);
        let metrics = breaker.metrics();
        match policy {
            Policy::Consecutive { .. } => {
                prop_assert_eq!(
                    metrics.consecutive_failures as usize,
                    model.consecutive_failures(),
                    "step {}",
                    i
                );
                prop_assert_eq!(metrics.window, None);
            }
            _ => {
                let w = metrics.window.expect("a window policy");
                let expected = model.counts(now());
                prop_assert_eq!(
                    Counts {
                        calls: w.calls,
                        failures: w.failures,
                        slow: w.slow_calls
                    },
                    expected,
                    "step {}: {:?}",
                    i,
                    step
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    #[test]
    fn every_policy_agrees_with_its_reference_model(
        policy in policy(),
        steps in prop::collection::vec(step(), 1..150),
    ) {
        run(policy, &steps)?;
    }
}

/// The model itself is checked on the scripted case the issue names, so a
/// model that agreed with a wrong breaker would still be caught here.
#[test]
fn the_model_tells_apart_scattered_failures_like_the_breaker() {
    let window = Policy::Time {
        window_ms: 60_000,
        rates: Rates {
            failure_rate: 0.5,
            min_calls: 5,
            slow: None,
        },
    };
    let mut consecutive = Model {
        policy: Policy::Consecutive { threshold: 5 },
        outcomes: Vec::new(),
    };
    let mut windowed = Model {
        policy: window,
        outcomes: Vec::new(),
    };
    let script = [true, true, true, true, false, true, true, true, true];
    let tripped_c: Vec<bool> = script
        .iter()
        .map(|&f| consecutive.record(0, f, 0))
        .collect();
    let tripped_w: Vec<bool> = script.iter().map(|&f| windowed.record(0, f, 0)).collect();
    assert!(tripped_c.iter().all(|t| !t));
    assert_eq!(tripped_w.iter().position(|&t| t), Some(4));
}
