//! The window policies allocate their memory once, with the breaker: recording
//! outcomes, tripping, probing, closing again and reading metrics allocate nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, State};

/// Counts the allocations made by the current thread while `COUNTING` is set.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = COUNTING.try_with(|on| {
            if on.get() {
                ALLOCATIONS.with(|n| n.set(n.get() + 1));
            }
        });
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> u64 {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    f();
    COUNTING.with(|on| on.set(false));
    ALLOCATIONS.with(|n| n.get())
}

fn exercise(breaker: &Breaker, clock: &ManualClock) {
    for round in 0..50u64 {
        // Closed: successes, slow calls, failures until it trips.
        for i in 0..200u64 {
            let Ok(permit) = breaker.try_acquire() else {
                break;
            };
            clock.advance(Duration::from_millis(i % 7));
            if (i + round) % 3 == 0 {
                permit.failure();
            } else {
                permit.success();
            }
            let _ = breaker.metrics().window;
        }
        breaker.try_acquire().map(|p| p.ignore()).ok();
        // Open, then a probe that closes it: a new, empty window.
        clock.advance(Duration::from_secs(120));
        if let Ok(probe) = breaker.try_acquire() {
            probe.success();
        }
    }
}

#[test]
fn recording_tripping_and_closing_under_a_window_allocate_nothing() {
    let configs = [
        Config::builder()
            .window_ms(2_000)
            .failure_rate(0.3)
            .min_calls(20),
        Config::builder()
            .window_ms(2_000)
            .slow_call_ms(2)
            .slow_call_rate(0.5),
        Config::builder().window_calls(30).failure_rate(0.3),
        Config::builder()
            .window_calls(30)
            .slow_call_ms(2)
            .slow_call_rate(0.5),
    ];
    for config in configs {
        let clock = ManualClock::new();
        let breaker = Breaker::with_clock("no-alloc", config.build().unwrap(), clock.clone());
        // The first outcome of a thread may take its per-thread counter slot.
        breaker.try_acquire().unwrap().success();
        let allocations = allocations_during(|| exercise(&breaker, &clock));
        assert_eq!(allocations, 0, "{:?}", breaker.config().policy());
        assert!(
            breaker.metrics().times_opened > 0,
            "the run must trip: {:?}",
            breaker.config().policy()
        );
        assert_ne!(breaker.state(), State::ForcedOpen);
    }
}
