//! The one counting allocator of the workspace's tests and benches, included
//! by path (`#[path = ".../counting_alloc.rs"] mod counting_alloc;`) by the
//! core's and the facade's test supports and by `benches/heap.rs`.
//!
//! [`CountingAlloc`] forwards every call to the system allocator and counts
//! three things: the allocations each thread makes (alloc, alloc_zeroed,
//! realloc) and the bytes each thread allocated less those it freed, so tests
//! running beside each other (and the test harness's own thread) never see
//! each other's, and the bytes live in the whole process. A test binary installs it with
//! `#[global_allocator] static ALLOCATOR: CountingAlloc = CountingAlloc;`.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering::SeqCst};

/// See the module docs.
pub struct CountingAlloc;

thread_local! {
    /// Allocations (alloc, alloc_zeroed, realloc) made by this thread.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    /// Bytes this thread allocated less the bytes it freed.
    static NET_HERE: Cell<isize> = const { Cell::new(0) };
}

/// Bytes live in the process.
static LIVE: AtomicIsize = AtomicIsize::new(0);

fn count_one() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

fn count_bytes(bytes: isize) {
    LIVE.fetch_add(bytes, SeqCst);
    let _ = NET_HERE.try_with(|n| n.set(n.get() + bytes));
}

// SAFETY: every method forwards to `System` unchanged; counting touches only a
// const thread-local without a destructor (which never allocates) and an atomic.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        count_bytes(layout.size() as isize);
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        count_bytes(layout.size() as isize);
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        count_bytes(new_size as isize - layout.size() as isize);
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count_bytes(-(layout.size() as isize));
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// How many times `f` allocated on this thread (with [`CountingAlloc`]
/// installed).
pub fn allocations_during(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// Bytes live in the process now (with [`CountingAlloc`] installed).
pub fn live_bytes() -> isize {
    LIVE.load(SeqCst)
}

/// Bytes this thread allocated less the bytes it freed, since it started
/// (with [`CountingAlloc`] installed): what a test that makes and drops
/// everything on its own thread holds, whatever other threads do meanwhile.
pub fn net_bytes_here() -> isize {
    NET_HERE.with(Cell::get)
}
