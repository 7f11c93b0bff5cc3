//! A protected call allocates nothing once its call site has made its first call:
//! closed, open and half-open, through the permit API, `call`, `call_async` and the
//! attribute, sync and async. Counted exactly by a counting global allocator that
//! counts only the calling thread's allocations, so tests running beside each other
//! never see each other's.

mod support;

use std::time::Duration;

use breakerbox::{circuit_breaker, Breaker, CallError, Config, ManualClock, Registry, State};
use support::{allocations_during, poll_ready, trip, AppError, CountingAlloc, CLOCK, REG};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

const CALLS: usize = 1_000;
const OPEN_MS: u64 = 60_000;

fn config() -> Config {
    Config::builder()
        .threshold(3)
        .open(Duration::from_millis(OPEN_MS))
        .build()
        .unwrap()
}

fn ok() -> Result<u32, AppError> {
    Ok(1)
}

fn down() -> Result<u32, AppError> {
    Err(AppError::Down)
}

#[test]
fn the_counter_sees_allocations_and_a_first_call_of_a_new_group_allocates() {
    assert_eq!(allocations_during(|| drop(Box::new(7u64))), 1);
    let registry = Registry::new();
    let first = allocations_during(|| {
        let breaker = registry.breaker("alloc-first", &config());
        breaker.try_acquire().unwrap().success();
    });
    assert!(first > 0, "registering a group allocates its breaker");
}

#[test]
fn closed_calls_allocate_nothing_through_the_permit_call_and_call_async() {
    let registry = Registry::new();
    let breaker = registry.breaker("alloc-closed", &config());
    breaker.try_acquire().unwrap().success(); // this thread's first count

    let n = allocations_during(|| {
        for i in 0..CALLS {
            let permit = breaker.try_acquire().unwrap();
            let result = if i % 10 == 9 { down() } else { ok() };
            permit.record(&result);
            let _ = breaker.call(ok);
            let _ = poll_ready(breaker.call_async(async { ok() }));
        }
    });
    assert_eq!(n, 0);
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn open_refusals_allocate_nothing_sync_and_async() {
    let breaker = Breaker::new("alloc-open", config());
    trip(&breaker, 3);
    let n = allocations_during(|| {
        for _ in 0..CALLS {
            assert!(breaker.try_acquire().is_err());
            assert!(matches!(breaker.call(ok), Err(CallError::Open(_))));
            let refused = poll_ready(breaker.call_async(async { ok() }));
            assert!(matches!(refused, Err(CallError::Open(_))));
        }
    });
    assert_eq!(n, 0);
}

#[test]
fn half_open_probes_refusals_and_whole_cycles_allocate_nothing() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("alloc-half-open", config(), clock.clone());
    let open_for = Duration::from_millis(OPEN_MS);
    // One cycle first: every path below has run once on this thread.
    trip(&breaker, 3);
    clock.advance(open_for);
    breaker.try_acquire().unwrap().success();

    let n = allocations_during(|| {
        for _ in 0..CALLS / 10 {
            trip(&breaker, 3);
            assert!(breaker.try_acquire().is_err()); // open
            clock.advance(open_for);
            let probe = breaker.try_acquire().unwrap(); // open -> half-open
            assert!(probe.is_probe());
            assert!(breaker.try_acquire().is_err()); // half-open, slot taken
            let _ = poll_ready(breaker.call_async(async { ok() })); // refused too
            probe.failure(); // reopens, with a longer open duration
            breaker.reset();
            trip(&breaker, 3);
            clock.advance(open_for);
            let _ = poll_ready(breaker.call_async(async { ok() })); // an async probe closes it
            assert_eq!(breaker.state(), State::Closed);
        }
    });
    assert_eq!(n, 0);
}

#[circuit_breaker(group = "alloc-attr", threshold = 3, open_ms = 60_000, registry = &REG)]
fn guarded(fail: bool) -> Result<u32, AppError> {
    if fail {
        down()
    } else {
        ok()
    }
}

#[circuit_breaker(group = "alloc-attr-async", threshold = 3, open_ms = 60_000, registry = &REG)]
async fn guarded_async(fail: bool) -> Result<u32, AppError> {
    if fail {
        down()
    } else {
        ok()
    }
}

fn cached(_: bool) -> Result<u32, AppError> {
    Ok(0)
}

#[circuit_breaker(
    group = "alloc-attr-fallback",
    threshold = 3,
    open_ms = 60_000,
    registry = &REG,
    fallback = cached
)]
fn guarded_with_fallback(fail: bool) -> Result<u32, AppError> {
    if fail {
        down()
    } else {
        ok()
    }
}

/// Closed calls, a trip, open refusals, a probe that closes: the whole life of a
/// circuit behind the attribute, `cycles` times.
fn attribute_cycles(cycles: usize) {
    let open_for = Duration::from_millis(OPEN_MS);
    for _ in 0..cycles {
        for _ in 0..10 {
            assert_eq!(guarded(false), Ok(1));
            assert_eq!(poll_ready(guarded_async(false)), Ok(1));
            assert_eq!(guarded_with_fallback(false), Ok(1));
        }
        for _ in 0..3 {
            let _ = guarded(true);
            let _ = poll_ready(guarded_async(true));
            let _ = guarded_with_fallback(true);
        }
        assert!(guarded(false).unwrap_err().is_open());
        assert!(poll_ready(guarded_async(false)).unwrap_err().is_open());
        assert_eq!(guarded_with_fallback(false), Ok(0)); // the fallback's value
        CLOCK.advance(open_for);
        assert_eq!(guarded(false), Ok(1)); // probe
        assert_eq!(poll_ready(guarded_async(false)), Ok(1)); // probe
        assert_eq!(guarded_with_fallback(false), Ok(1)); // probe
    }
}

#[test]
fn attribute_calls_allocate_nothing_after_their_sites_first_call() {
    let first = allocations_during(|| attribute_cycles(1));
    assert!(first > 0, "the first calls register three groups");
    let later = allocations_during(|| attribute_cycles(CALLS / 10));
    assert_eq!(later, 0);
    for group in ["alloc-attr", "alloc-attr-async", "alloc-attr-fallback"] {
        let m = REG.get(group).unwrap().metrics();
        assert_eq!(m.state, State::Closed);
        assert_eq!(m.times_opened, 1 + CALLS as u64 / 10, "{group}");
    }
}
