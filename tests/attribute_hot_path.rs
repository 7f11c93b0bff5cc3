//! After its first call, an annotated fn reaches its breaker through its per-site
//! static: calls allocate nothing and create no second breaker.
//!
//! The global allocator here counts allocations on the test's thread only, so the
//! test harness's other threads do not disturb the count.

mod support;

use breakerbox::{circuit_breaker, CallError};
use support::{allocations_during, poll_ready, CountingAlloc};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

#[circuit_breaker(group = "hot-path", threshold = 1_000_000)]
fn hot(n: u64) -> Result<u64, CallError<u64>> {
    if n % 3 == 0 {
        Err(CallError::Inner(n))
    } else {
        Ok(n)
    }
}

#[test]
fn calls_after_the_first_allocate_nothing() {
    let _ = hot(1); // first call: creates the breaker, interns the group, takes a counter slot
    let n = allocations_during(|| {
        for n in 0..10_000 {
            let _ = hot(n);
        }
    });
    assert_eq!(n, 0, "allocations in 10 000 guarded calls");
    let m = breakerbox::registry().get("hot-path").unwrap().metrics();
    assert_eq!(m.calls, 10_001);
    assert_eq!(
        breakerbox::registry()
            .groups()
            .iter()
            .filter(|g| **g == "hot-path")
            .count(),
        1
    );
}

#[circuit_breaker(group = "hot-path-async", threshold = 1_000_000)]
async fn hot_async(n: u64) -> Result<u64, CallError<u64>> {
    if n % 3 == 0 {
        Err(CallError::Inner(n))
    } else {
        Ok(n)
    }
}

#[test]
fn async_calls_after_the_first_allocate_nothing() {
    let _ = poll_ready(hot_async(1));
    let n = allocations_during(|| {
        for n in 0..10_000 {
            let _ = poll_ready(hot_async(n));
        }
    });
    assert_eq!(n, 0, "allocations in 10 000 guarded polls");
}

#[test]
fn the_counting_allocator_does_count() {
    let n = allocations_during(|| drop(std::hint::black_box(vec![1u8; 64])));
    assert!(n > 0, "a Vec allocation must be seen");
}
