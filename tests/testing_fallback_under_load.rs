//! A fallback driven under load by `testing::FallbackLoad`: every call of the
//! load is made, at the concurrency asked, and answered by the fallback of an
//! open circuit; and the refusal answered by a fallback allocates nothing once
//! the call site made its first call, on one thread and on every thread of a
//! concurrent load. Allocations are counted by the counting global allocator
//! of `tests/support`, per thread. Latency figures are printed, never asserted.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use breakerbox::testing::{FallbackLoad, TestKit};
use breakerbox::{circuit_breaker, State};
use support::{allocations_during, poll_ready, AppError, CountingAlloc, CLOCK, REG};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

fn cached_quote(sku: u32) -> Result<u64, AppError> {
    Ok(u64::from(sku))
}

fn cached_flag(_: bool) -> Result<u64, AppError> {
    Ok(0)
}

async fn cached_quote_async(sku: u32) -> Result<u64, AppError> {
    Ok(u64::from(sku))
}

/// Production-shaped: no `registry = ..`, so a kit's registry while one is
/// installed.
#[circuit_breaker(group = "quotes", threshold = 3, fallback = cached_quote)]
fn quote(sku: u32) -> Result<u64, AppError> {
    Ok(u64::from(sku) * 100)
}

#[circuit_breaker(group = "quotes-async", threshold = 3, fallback = cached_quote_async)]
async fn quote_async(sku: u32) -> Result<u64, AppError> {
    Ok(u64::from(sku) * 100)
}

/// Tripped by real failures in a registry of the test's own.
#[circuit_breaker(
    group = "quotes-tripped",
    threshold = 3,
    open_ms = 60_000,
    registry = &REG,
    fallback = cached_flag
)]
fn quote_tripped(fail: bool) -> Result<u64, AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(1)
    }
}

const CALLS: usize = 10_000;

fn rejected(kit: &TestKit, group: &str) -> u64 {
    kit.registry().get(group).unwrap().metrics().rejected
}

#[test]
fn a_forced_open_refusal_answered_by_its_fallback_allocates_nothing_after_the_first() {
    let kit = TestKit::new();
    kit.force_open("quotes");
    kit.force_open("quotes-async");
    let _installed = kit.install();
    let first = allocations_during(|| {
        assert_eq!(quote(7), Ok(7));
        assert_eq!(poll_ready(quote_async(7)), Ok(7));
    });
    assert!(first > 0, "the first calls register both groups");
    let later = allocations_during(|| {
        for sku in 0..CALLS as u32 {
            assert_eq!(quote(sku), Ok(u64::from(sku)));
            assert_eq!(poll_ready(quote_async(sku)), Ok(u64::from(sku)));
        }
    });
    assert_eq!(later, 0, "allocations in {CALLS} refusals of each kind");
    assert_eq!(rejected(&kit, "quotes"), 1 + CALLS as u64);
    assert_eq!(rejected(&kit, "quotes-async"), 1 + CALLS as u64);
}

#[test]
fn a_tripped_refusal_answered_by_its_fallback_allocates_nothing_after_the_first() {
    for _ in 0..3 {
        let _ = quote_tripped(true);
    }
    assert_eq!(REG.get("quotes-tripped").unwrap().state(), State::Open);
    assert_eq!(quote_tripped(false), Ok(0)); // the fallback's value
    let n = allocations_during(|| {
        for _ in 0..CALLS {
            assert_eq!(quote_tripped(false), Ok(0));
        }
    });
    assert_eq!(n, 0);
    let m = REG.get("quotes-tripped").unwrap().metrics();
    assert_eq!((m.state, m.rejected), (State::Open, 1 + CALLS as u64));
    CLOCK.advance(Duration::from_secs(60));
    assert_eq!(quote_tripped(false), Ok(1)); // a probe closes it again
}

#[test]
fn concurrent_refusals_answered_by_the_fallback_allocate_nothing_after_each_threads_first() {
    let kit = TestKit::new();
    kit.force_open("quotes");
    // The group is made (and its declaration taken, under the registry's
    // write lock) by a first call before the load, as a service's first
    // request makes it: a thread that found another's first call holding
    // that lock would park, and a thread's first park allocates in
    // parking_lot, not in the breaker.
    assert_eq!(kit.run(|| quote(3)), Ok(3));
    let allocated = AtomicU64::new(0);
    let per_thread = CALLS / 8;
    let report = FallbackLoad::new(8, CALLS).kit(&kit).run(|| {
        // A thread's first call creates the group or its thread-local state:
        // counted apart.
        thread_local!(static MADE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
        let nth = MADE.with(|n| n.replace(n.get() + 1));
        let n = allocations_during(|| assert_eq!(quote(3), Ok(3)));
        if nth > 0 {
            allocated.fetch_add(n, Ordering::Relaxed);
        }
    });
    println!("sync fallback under load (debug build): {report}");
    assert_eq!((report.calls, report.concurrency), (CALLS, 8));
    assert_eq!(
        allocated.into_inner(),
        0,
        "{per_thread} calls on each of 8 threads"
    );
    assert_eq!(rejected(&kit, "quotes"), 1 + CALLS as u64);
}

#[test]
fn the_load_runs_its_threads_at_once_with_the_kit_installed_in_each() {
    let kit = TestKit::new();
    kit.force_open("quotes");
    // Each call waits until all four are in flight: only a load that runs its
    // four threads at once gets past it.
    let arrived = Arc::new((Mutex::new(0usize), Condvar::new()));
    let report = FallbackLoad::new(4, 4).kit(&kit).run(|| {
        let (count, all_in) = &*arrived;
        let mut count = count.lock().unwrap();
        *count += 1;
        all_in.notify_all();
        let (count, waited) = all_in
            .wait_timeout_while(count, Duration::from_secs(30), |n| *n < 4)
            .unwrap();
        assert!(
            !waited.timed_out(),
            "only {} of 4 calls ran at once",
            *count
        );
        drop(count);
        assert_eq!(quote(5), Ok(5)); // the kit's forced group: the fallback's value
    });
    assert_eq!(report.calls, 4);
    assert_eq!(rejected(&kit, "quotes"), 4);
    assert!(breakerbox::registry().get("quotes").is_none());
}

#[test]
fn a_panicking_call_fails_the_load_after_every_thread_ended() {
    let made = AtomicU64::new(0);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        FallbackLoad::new(3, 30).run(|| {
            if made.fetch_add(1, Ordering::Relaxed) == 10 {
                panic!("the fallback failed");
            }
        })
    }));
    let payload = outcome.expect_err("the call's panic reaches the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"the fallback failed"));
    // The two other threads ran their shares to the end; the third stopped
    // at its panic.
    assert!((21..=30).contains(&made.into_inner()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_tasks_are_in_flight_at_once_and_all_get_the_fallbacks_value() {
    let kit = TestKit::new();
    kit.force_open("quotes-async");
    // Each task's first call waits at a barrier of 10,000: only a load whose
    // tasks are all in flight at once gets past it.
    // A task makes its next call once its last one ended, so the first
    // 10,000 calls started are one per task.
    let barrier = Arc::new(tokio::sync::Barrier::new(CALLS));
    let started = Arc::new(AtomicU64::new(0));
    let answered = Arc::new(AtomicU64::new(0));
    let (b, s, a) = (barrier.clone(), started.clone(), answered.clone());
    let load = FallbackLoad::new(CALLS, 3 * CALLS)
        .kit(&kit)
        .run_async(move || {
            let (barrier, answered) = (b.clone(), a.clone());
            let first = s.fetch_add(1, Ordering::Relaxed) < CALLS as u64;
            async move {
                if first {
                    barrier.wait().await;
                }
                assert_eq!(quote_async(9).await, Ok(9));
                answered.fetch_add(1, Ordering::Relaxed);
            }
        });
    let report = tokio::time::timeout(Duration::from_secs(60), load)
        .await
        .expect("the 10,000 tasks never were all in flight at once");
    println!("async fallback under load (debug build): {report}");
    assert_eq!((report.calls, report.concurrency), (3 * CALLS, CALLS));
    assert_eq!(answered.load(Ordering::Relaxed), 3 * CALLS as u64);
    assert_eq!(rejected(&kit, "quotes-async"), 3 * CALLS as u64);
}
