//! After its first call, an annotated fn reaches its breaker through its per-site
//! static: calls allocate nothing and create no second breaker.
//!
//! This file has its own global allocator that counts allocations on the test's
//! thread only, so the test harness's other threads do not disturb the count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use breaker::{circuit_breaker, CallError};

struct CountingAlloc;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to `System` unchanged; only counts.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

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
    let before = allocations();
    for n in 0..10_000 {
        let _ = hot(n);
    }
    let after = allocations();
    assert_eq!(after - before, 0, "allocations in 10 000 guarded calls");
    let m = breaker::registry().get("hot-path").unwrap().metrics();
    assert_eq!(m.calls, 10_001);
    assert_eq!(
        breaker::registry()
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

fn run_ready<F: std::future::Future>(future: F) -> F::Output {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::pin!(future).poll(&mut cx) {
        std::task::Poll::Ready(out) => out,
        std::task::Poll::Pending => panic!("the body never waits"),
    }
}

#[test]
fn async_calls_after_the_first_allocate_nothing() {
    let _ = run_ready(hot_async(1));
    let before = allocations();
    for n in 0..10_000 {
        let _ = run_ready(hot_async(n));
    }
    assert_eq!(
        allocations() - before,
        0,
        "allocations in 10 000 guarded polls"
    );
}

#[test]
fn the_counting_allocator_does_count() {
    let before = allocations();
    let v = std::hint::black_box(vec![1u8; 64]);
    assert!(allocations() > before, "a Vec allocation must be seen");
    drop(v);
}
