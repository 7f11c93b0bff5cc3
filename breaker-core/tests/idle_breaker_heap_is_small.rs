//! An idle breaker holds a few hundred bytes of heap, and one grows only with
//! the threads that count in it: measured with a counting allocator.
//!
//! The bound is 640 bytes, the budget of a breaker per key: the breaker's
//! one `Arc` allocation (the counts, padded to the state word's line pair, then
//! the word's line pair and two more holding the config inline, the deadlines,
//! the event hub and the guards). Any growth fails here.

use breaker_core::{Breaker, Config};

mod support;

use support::{net_bytes_here, CountingAlloc};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Heap bytes that `make` leaves behind, counted on this thread only: the
/// test harness's own thread may allocate meanwhile.
fn live_after<T>(make: impl FnOnce() -> T) -> (T, isize) {
    let before = net_bytes_here();
    let value = make();
    (value, net_bytes_here() - before)
}

#[test]
fn an_idle_breaker_holds_at_most_640_bytes_and_grows_a_cell_per_counting_thread() {
    let config = Config::builder().threshold(3).build().unwrap();
    // Interns the name once; with feature `trace`, the list of live breakers
    // grows its room for a hundred and keeps it (its share is apart from the
    // breaker's).
    let _warm = (0..101)
        .map(|_| Breaker::new("heap", config))
        .collect::<Vec<_>>()
        .pop();
    let make = || {
        live_after(|| {
            (0..100)
                .map(|_| Breaker::new("heap", config))
                .collect::<Vec<_>>()
        })
    };
    // The smallest of three rounds: a breaker's own bytes are in each, a
    // one-off growth of a shared table (the interner's, the live list's) in
    // one at most.
    let (_, first) = make();
    let (_, second) = make();
    let (breakers, bytes) = make();
    let vec_bytes = (100 * size_of::<Breaker>()) as isize;
    let least = first.min(second).min(bytes);
    let per_breaker = (least - vec_bytes) / 100;
    println!("heap per idle breaker: {per_breaker} B");
    assert!(per_breaker <= 640, "{per_breaker} B per idle breaker");

    // This thread counts in one breaker: one table of cells, of a few cells at most
    // (slots are dense; this test's threads are few).
    let b = &breakers[0];
    let ((), grown) = live_after(|| b.try_acquire().unwrap().success());
    println!("heap after one thread's first call: +{grown} B");
    assert!(grown > 0 && grown <= 4 * 128, "+{grown} B for one thread");
    // A second call by the same thread allocates nothing.
    let ((), again) = live_after(|| b.try_acquire().unwrap().success());
    assert_eq!(again, 0);
    // Dropping breakers gives everything back.
    let (_, freed) = live_after(|| drop(breakers));
    assert!(-freed >= least + grown, "{freed} B freed");
}
