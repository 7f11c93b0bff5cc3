//! A retried fn whose retry is refused carries the refusal on its span, as
//! a fn whose first claim is refused does.

#![cfg(feature = "otel")]

use std::sync::LazyLock;
use std::time::Duration;

use breakerbox::clock::Clock;
use breakerbox::observe::span;
use breakerbox::{circuit_breaker, CircuitOpen, ManualClock, Registry};

#[path = "support/spans.rs"]
mod spans;

use spans::exported;

/// A manual clock during whose waits an operator forces the group open.
struct OperatorClock(ManualClock);

impl Clock for OperatorClock {
    fn now_nanos(&self) -> u64 {
        self.0.now_nanos()
    }

    fn sleep(&self, d: Duration) {
        self.0.advance(d);
        REG.force_open("spans-retried").unwrap();
    }
}

static REG: LazyLock<Registry> =
    LazyLock::new(|| Registry::with_clock(OperatorClock(ManualClock::new())));

#[derive(Debug)]
enum AppError {
    Down,
    Open,
}

impl From<CircuitOpen> for AppError {
    fn from(_: CircuitOpen) -> Self {
        AppError::Open
    }
}

// The first attempt fails; the group is forced open during the wait: the
// retry's claim is refused.
#[circuit_breaker(group = "spans-retried", threshold = 5, open_ms = 60000, retry = 2,
    idempotent = true, registry = &REG)]
fn flaky() -> Result<u32, AppError> {
    Err(AppError::Down)
}

#[test]
fn a_refused_retry_is_recorded_on_the_span() {
    span::record_calls_of("spans-retried", true);
    let spans = exported(|| {
        tracing::info_span!("retried").in_scope(|| {
            assert!(matches!(flaky(), Err(AppError::Open)));
        });
    });
    let fields = &spans["retried"];
    assert_eq!(fields["breaker.group"], "spans-retried");
    assert_eq!(fields["breaker.outcome"], "refused");
    assert_eq!(fields["breaker.reason"], "forced_open");
}
