//! Event counters that every call touches, kept per thread so that no two threads
//! ever write one cache line and no count needs an atomic read-modify-write, in
//! memory that does not grow with the threads that ever counted.
//!
//! Each thread that counts takes a small process-wide slot number (dense: the
//! lowest free one). A thread whose slot is below [`OWN_CELLS`] owns a cell in
//! each breaker it counts in: a breaker holds no cells until such a thread
//! counts in it; then it allocates a table of cache-padded cells indexed by slot,
//! large enough for that slot, and grows it (doubling) when a thread with a
//! higher slot arrives, up to `OWN_CELLS` cells. Every other thread (a slot past
//! them, or none) counts in one of [`SHARED_CELLS`] shared cells, the slot
//! modulo their number, allocated on first use, with a real read-modify-write:
//! slower, never lost. So an idle breaker costs a few words, and a busy one at
//! most `2 * OWN_CELLS - 1 + SHARED_CELLS` cells (the outgrown tables included)
//! however many threads counted in it.
//!
//! Only the thread owning a slot writes its own cell (a relaxed load and store).
//! A table that was outgrown is kept, not copied: a count that raced with the
//! growth lands in the old table, which the sums still read, so nothing is lost
//! and nothing is counted twice. A slot is handed to another thread only after
//! its owner exited, through a mutex, so the new owner continues from the exact
//! count.
//!
//! The count of the common case is a thread-local read, one compare with the
//! table's size, one load of the table's address and one `inc` of memory.

// Under loom every count takes a shared cell (see `bump`): the slots go unused.
#![cfg_attr(loom, allow(dead_code))]

use std::cell::Cell as StdCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ptr::NonNull;
// The slot numbers are process-wide statics, std's and parking_lot's (loom's
// cannot be const); everything of one breaker's counters goes through
// `crate::sync`, so loom models the table's growth and a slot's hand-off.
use std::sync::atomic::AtomicU32;

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicPtr, AtomicU64, AtomicUsize, Mutex, OnceLock, Ordering::*};

/// What a counter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Counter {
    Successes,
    Failures,
    Ignored,
    Rejected,
    Abandoned,
    Stale,
    ProbesSucceeded,
    ProbesFailed,
    ProbesReclaimed,
    Opened,
    /// Calls that ran past `timeout_ms`.
    Timeouts,
    /// Calls the bulkhead refused.
    BulkheadRejected,
    /// Trips of the p99 rule (`latency_p99_ms`) that opened the breaker.
    LatencyTrips,
    /// Claims a traffic ramp refused.
    RampRefused,
    /// Claims shadow mode admitted that the breaker would have refused.
    ShadowRefused,
}

const EVENTS: usize = Counter::ShadowRefused as usize + 1;
// A cell of every count stays within its line pair.
const _: () = assert!(EVENTS * 8 <= 128);
/// Thread slots that own a cell in each breaker (a power of two): the threads
/// that count with a plain store. Each owned cell costs a breaker that a thread
/// of that slot counted in 128 bytes.
pub(crate) const OWN_CELLS: usize = 8;
/// Cells shared by every other thread, by slot modulo their number (a power of
/// two), counted with an atomic add: 1 KiB for a breaker such a thread counted
/// in, whatever the number of threads. (Under loom every count takes cell 0.)
#[cfg(not(loom))]
pub(crate) const SHARED_CELLS: usize = 8;
#[cfg(loom)]
pub(crate) const SHARED_CELLS: usize = 1;
const _: () = assert!(OWN_CELLS.is_power_of_two() && SHARED_CELLS.is_power_of_two());

const UNASSIGNED: u32 = u32::MAX;
const RETIRED: u32 = u32::MAX - 1;
const NO_OFFSET: u32 = u32::MAX;

struct Cell {
    counts: [AtomicU64; EVENTS],
}

impl Cell {
    fn new() -> Self {
        Cell {
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    fn add_to(&self, totals: &mut [u64; EVENTS]) {
        for (total, count) in totals.iter_mut().zip(&self.counts) {
            *total = total.saturating_add(count.load(Relaxed));
        }
    }
}

type Padded = CachePadded<Cell>;
const CELL_BYTES: usize = size_of::<Padded>();

/// One breaker's counters.
pub(crate) struct Counters {
    /// The size of the current table in bytes: a thread whose cell offset is below
    /// it counts there. Written after `cells` (release), read before it (acquire),
    /// so a reader never pairs a size with a smaller table.
    size: AtomicUsize,
    /// The current table's first cell (dangling while `size` is 0).
    cells: AtomicPtr<Padded>,
    /// Every table allocated, the current one last; freed on drop. Growth holds it.
    tables: Mutex<Vec<NonNull<[Padded]>>>,
    /// Counts of threads without a cell of their own (see [`SHARED_CELLS`]).
    shared: OnceLock<Box<[Padded; SHARED_CELLS]>>,
}

// SAFETY: the tables are plain heap memory of atomics owned by `Counters` and freed
// only in `drop`; every access through the raw pointers is an atomic operation.
unsafe impl Send for Counters {}
// SAFETY: as above.
unsafe impl Sync for Counters {}

/// A sum of every event, taken cell by cell: exact once the counting threads are quiet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Totals([u64; EVENTS]);

impl Totals {
    pub(crate) fn get(&self, event: Counter) -> u64 {
        self.0[event as usize]
    }
}

impl Counters {
    pub(crate) fn new() -> Self {
        Counters {
            size: AtomicUsize::new(0),
            cells: AtomicPtr::new(NonNull::dangling().as_ptr()),
            tables: Mutex::new(Vec::new()),
            shared: OnceLock::new(),
        }
    }

    /// Counts one `event` for the calling thread.
    #[inline(always)]
    pub(crate) fn bump(&self, event: Counter) {
        self.bump_then(event, ());
    }

    /// [`bump`](Self::bump), then `value`. A caller that returns what this
    /// returns reaches the slow path by a tail call, so its common path needs
    /// no stack frame for it.
    #[inline(always)]
    pub(crate) fn bump_then<T>(&self, event: Counter, value: T) -> T {
        // Loom runs its threads on one thread of the process, which share the
        // thread-locals that give a thread its slot: there every count is a
        // read-modify-write of the shared cell. (The slots' own model names
        // them: `loom_tests`.)
        #[cfg(loom)]
        {
            self.bump_shared(0, event);
            value
        }
        // A thread without a cell in the current table reads an offset out of
        // range, so one compare sends everything but the common case to the slow
        // path. The offset is kept in bytes: no multiply on this path.
        #[cfg(not(loom))]
        {
            let offset = OFFSET.get() as usize;
            if offset < self.size.load(Acquire) {
                let cells = self.cells.load(Acquire);
                // SAFETY: `OFFSET` is only ever `slot * CELL_BYTES` or
                // `NO_OFFSET`, and `cells` points at a live table of at least
                // `size` bytes (see `size`): element `slot` of it, in bounds and
                // aligned. Tables are freed only on drop.
                let cell = unsafe { &*cells.byte_add(offset) };
                increment(cell, event);
                value
            } else {
                self.bump_slow_then(event, value)
            }
        }
    }

    /// [`bump_slow`](Self::bump_slow), then `value`.
    #[cfg(not(loom))]
    #[cold]
    #[inline(never)]
    fn bump_slow_then<T>(&self, event: Counter, value: T) -> T {
        self.bump_slow(event);
        value
    }

    /// Counts for a thread without a cell in the current table: one with no slot
    /// yet, one whose slot is past the table's end, or one without a cell of its
    /// own (a slot past [`OWN_CELLS`], or none at all).
    #[cold]
    #[inline(never)]
    fn bump_slow(&self, event: Counter) {
        let mut slot = SLOT.get();
        if slot == UNASSIGNED {
            slot = assign_slot();
        }
        if (slot as usize) < OWN_CELLS {
            return increment(self.grow_to(slot as usize), event);
        }
        self.bump_shared(slot as usize, event);
    }

    /// Counts in the shared cell of `slot`, with a real read-modify-write. It
    /// wraps, as [`increment`] does (2^64 events a cell).
    fn bump_shared(&self, slot: usize, event: Counter) {
        let shared = self
            .shared
            .get_or_init(|| Box::new(std::array::from_fn(|_| CachePadded::new(Cell::new()))));
        shared[slot % SHARED_CELLS].counts[event as usize].fetch_add(1, Relaxed);
    }

    /// The calling thread's cell for `slot`, growing the table to hold it.
    fn grow_to(&self, slot: usize) -> &Cell {
        let mut tables = self.tables.lock();
        let size = self.size.load(Acquire);
        let cells = if slot * CELL_BYTES < size {
            self.cells.load(Acquire)
        } else {
            // `slot` < OWN_CELLS, a power of two: the table never passes it.
            let len = (slot + 1).next_power_of_two().max(2 * size / CELL_BYTES);
            let table: Box<[Padded]> = (0..len).map(|_| CachePadded::new(Cell::new())).collect();
            let table = NonNull::from(Box::leak(table));
            tables.push(table);
            let cells = table.as_ptr() as *mut Padded;
            self.cells.store(cells, Release);
            self.size.store(len * CELL_BYTES, Release);
            cells
        };
        // SAFETY: `slot` is below the current table's length, checked or just made
        // so, and the table lives until `self` is dropped.
        unsafe { &*cells.add(slot) }
    }

    /// Sums every thread's cell in every table, and the shared cells.
    pub(crate) fn totals(&self) -> Totals {
        let mut totals = [0u64; EVENTS];
        for table in self.tables.lock().iter() {
            // SAFETY: tables live until `self` is dropped; cells are atomics.
            unsafe { table.as_ref() }
                .iter()
                .for_each(|cell| cell.add_to(&mut totals));
        }
        if let Some(shared) = self.shared.get() {
            shared.iter().for_each(|cell| cell.add_to(&mut totals));
        }
        Totals(totals)
    }

    /// Heap bytes the cells hold: the tables and the shared cells.
    #[cfg(all(test, not(loom)))]
    fn cell_bytes(&self) -> usize {
        let tables: usize = self.tables.lock().iter().map(|t| t.len()).sum();
        let shared = self.shared.get().map_or(0, |s| s.len());
        (tables + shared) * CELL_BYTES
    }
}

impl Drop for Counters {
    fn drop(&mut self) {
        for table in self.tables.lock().drain(..) {
            // SAFETY: made by `Box::leak` in `grow_to`, freed once, here.
            drop(unsafe { Box::from_raw(table.as_ptr()) });
        }
    }
}

/// Adds one to `event` in `cell`, which only the calling thread writes: a relaxed
/// load and store is an exact increment, and compiles to one non-atomic `inc` of
/// memory. It wraps instead of saturating, and may: a cell takes 2^64 events to
/// wrap, 584 years at one a nanosecond. (A saturating add would cost
/// instructions on every call; the sums across cells do saturate.)
#[inline(always)]
fn increment(cell: &Cell, event: Counter) {
    let count = &cell.counts[event as usize];
    count.store(count.load(Relaxed).wrapping_add(1), Relaxed);
}

thread_local! {
    /// This thread's slot, `UNASSIGNED` before its first count, `RETIRED` once its
    /// slot was handed back during thread exit. No destructor: readable to the end.
    static SLOT: StdCell<u32> = const { StdCell::new(UNASSIGNED) };
    /// Where this thread's cell starts in a breaker's table, in bytes:
    /// `SLOT * CELL_BYTES` while `SLOT < OWN_CELLS`, else `NO_OFFSET`.
    static OFFSET: StdCell<u32> = const { StdCell::new(NO_OFFSET) };
    /// Hands the slot back when the thread exits.
    static GUARD: SlotGuard = const { SlotGuard(StdCell::new(UNASSIGNED)) };
}

struct SlotGuard(StdCell<u32>);

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let slot = self.0.get();
        let _ = SLOT.try_with(|s| s.set(RETIRED));
        let _ = OFFSET.try_with(|o| o.set(NO_OFFSET));
        if slot != UNASSIGNED {
            FREE.lock().push(Reverse(slot));
        }
    }
}

/// Slots handed back by exited threads; the lowest is reused first so slots stay dense.
static FREE: parking_lot::Mutex<BinaryHeap<Reverse<u32>>> =
    parking_lot::Mutex::new(BinaryHeap::new());
static NEXT: AtomicU32 = AtomicU32::new(0);

#[cold]
fn assign_slot() -> u32 {
    let slot = match FREE.lock().pop() {
        Some(Reverse(slot)) => slot,
        None => NEXT
            .fetch_update(Relaxed, Relaxed, |n| n.checked_add(1))
            .unwrap_or(RETIRED)
            .min(RETIRED),
    };
    let guarded = GUARD.try_with(|g| g.0.set(slot)).is_ok();
    if guarded {
        SLOT.set(slot);
        if (slot as usize) < OWN_CELLS {
            OFFSET.set(slot * CELL_BYTES as u32);
        }
        slot
    } else {
        // Thread-local storage is being torn down: give the slot straight back.
        if slot < RETIRED {
            FREE.lock().push(Reverse(slot));
        }
        SLOT.set(RETIRED);
        RETIRED
    }
}

#[cfg(all(test, loom))]
mod loom_tests;

#[cfg(all(test, not(loom)))]
mod tests;
