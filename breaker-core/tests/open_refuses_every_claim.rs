//! Open: every claim is refused with a typed `CircuitOpen`, and nothing runs.
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use breaker_core::{CallError, OpenReason, State};
use support::{config, manual, ms, trip};

#[test]
fn open_refusal_names_group_reason_and_time_left() {
    let (breaker, clock) = manual(config(2, 10_000));
    trip(&breaker);
    clock.advance(ms(2_500));
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.group(), "test");
    assert_eq!(refused.reason(), OpenReason::Open);
    assert_eq!(refused.retry_after(), Some(ms(7_500)));
    assert!(refused.to_string().contains("circuit `test` is open"));
    let as_error: &dyn std::error::Error = &refused;
    assert!(as_error.source().is_none());
}

#[test]
fn the_protected_function_never_runs_while_open() {
    let (breaker, clock) = manual(config(1, 1_000));
    let calls = AtomicUsize::new(0);
    let _ = breaker.call(|| {
        calls.fetch_add(1, Ordering::Relaxed);
        Err::<(), _>(())
    });
    for _ in 0..1_000 {
        clock.advance(Duration::from_micros(999));
        if breaker.state() != State::Open {
            break;
        }
        let r = breaker.call(|| {
            calls.fetch_add(1, Ordering::Relaxed);
            Ok::<_, ()>(())
        });
        assert!(matches!(r, Err(CallError::Open(_))) || breaker.state() != State::Open);
    }
    let m = breaker.metrics();
    assert_eq!(calls.load(Ordering::Relaxed) as u64, m.calls);
    assert!(m.rejected > 0);
}

#[test]
fn refusals_are_counted_and_change_nothing() {
    let (breaker, _clock) = manual(config(1, 1_000));
    trip(&breaker);
    let before = breaker.metrics();
    for _ in 0..10 {
        assert!(breaker.try_acquire().is_err());
    }
    let after = breaker.metrics();
    assert_eq!(after.rejected, before.rejected + 10);
    assert_eq!(after.state, State::Open);
    assert_eq!(after.generation, before.generation);
}
