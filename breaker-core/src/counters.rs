//! Event counters that every call touches, kept per thread so that no two threads
//! ever write one cache line and no count needs an atomic read-modify-write.
//!
//! Each thread that counts takes a small process-wide slot number (dense: the
//! lowest free one). A breaker holds no cells until a thread counts in it; then it
//! allocates a table of cache-padded cells indexed by slot, large enough for that
//! slot, and grows it (doubling) when a thread with a higher slot arrives. So an
//! idle breaker costs a few words, and a busy one a cell per slot up to the highest
//! slot that counted in it: at most one per thread alive at once, since slots are
//! reused lowest first.
//!
//! Only the thread owning a slot writes its cell (a relaxed load and store). A
//! table that was outgrown is kept, not copied: a count that raced with the growth
//! lands in the old table, which the sums still read, so nothing is lost and
//! nothing is counted twice. A slot is handed to another thread only after its
//! owner exited, through a mutex, so the new owner continues from the exact count.
//! A thread with no slot (one past [`MAX_THREADS`], or one whose thread-local
//! storage is being torn down) counts in a shared overflow cell with a real
//! read-modify-write: slower, never lost.
//!
//! The count of the common case is a thread-local read, one compare with the
//! table's size, one load of the table's address and one `inc` of memory.

// Under loom every count takes the shared cell (see `bump`): the slots go unused.
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
    /// Trips of the latency window.
    LatencyTrips,
}

const EVENTS: usize = Counter::LatencyTrips as usize + 1;
// A cell of every count stays within its line pair.
const _: () = assert!(EVENTS * 8 <= 128);
/// Threads that count without contention; more threads still count, on a shared cell.
pub(crate) const MAX_THREADS: usize = 4096;

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
    /// Counts of threads without a slot.
    overflow: OnceLock<Box<Cell>>,
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
            overflow: OnceLock::new(),
        }
    }

    /// Counts one `event` for the calling thread.
    #[inline(always)]
    pub(crate) fn bump(&self, event: Counter) {
        // Loom runs its threads on one thread of the process, which share the
        // thread-locals that give a thread its slot: there every count is a
        // read-modify-write of the shared cell. (The slots' own model names
        // them: `loom_tests`.)
        #[cfg(loom)]
        return self.bump_shared(event);
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
            } else {
                self.bump_slow(event);
            }
        }
    }

    /// Counts for a thread without a cell in the current table: one with no slot
    /// yet, one whose slot is past the table's end, or one with no slot at all.
    #[cold]
    #[inline(never)]
    fn bump_slow(&self, event: Counter) {
        let mut slot = SLOT.get();
        if slot == UNASSIGNED {
            slot = assign_slot();
        }
        if (slot as usize) < MAX_THREADS {
            return increment(self.grow_to(slot as usize), event);
        }
        self.bump_shared(event);
    }

    /// Counts in the shared overflow cell, with a real read-modify-write.
    fn bump_shared(&self, event: Counter) {
        let overflow = self.overflow.get_or_init(|| Box::new(Cell::new()));
        let count = &overflow.counts[event as usize];
        let _ = count.fetch_update(Relaxed, Relaxed, |n| Some(n.saturating_add(1)));
    }

    /// The calling thread's cell for `slot`, growing the table to hold it.
    fn grow_to(&self, slot: usize) -> &Cell {
        let mut tables = self.tables.lock();
        let size = self.size.load(Acquire);
        let cells = if slot * CELL_BYTES < size {
            self.cells.load(Acquire)
        } else {
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

    /// Sums every thread's cell in every table, and the overflow.
    pub(crate) fn totals(&self) -> Totals {
        let mut totals = [0u64; EVENTS];
        for table in self.tables.lock().iter() {
            // SAFETY: tables live until `self` is dropped; cells are atomics.
            unsafe { table.as_ref() }
                .iter()
                .for_each(|cell| cell.add_to(&mut totals));
        }
        if let Some(overflow) = self.overflow.get() {
            overflow.add_to(&mut totals);
        }
        Totals(totals)
    }

    /// Heap bytes the cell tables hold.
    #[cfg(all(test, not(loom)))]
    fn table_bytes(&self) -> usize {
        self.tables
            .lock()
            .iter()
            .map(|t| t.len() * CELL_BYTES)
            .sum()
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
    /// `SLOT * CELL_BYTES` while `SLOT < MAX_THREADS`, else `NO_OFFSET`.
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
        if (slot as usize) < MAX_THREADS {
            OFFSET.set(slot * CELL_BYTES as u32);
        }
        slot
    } else {
        // Thread-local storage is being torn down: give the slot straight back.
        if (slot as usize) < MAX_THREADS {
            FREE.lock().push(Reverse(slot));
        }
        SLOT.set(RETIRED);
        RETIRED
    }
}

#[cfg(all(test, loom))]
#[path = "counters_loom_tests.rs"]
mod loom_tests;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn counts_from_many_threads_sum_exactly() {
        let counters = Arc::new(Counters::new());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let counters = Arc::clone(&counters);
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        counters.bump(Counter::Failures);
                    }
                    counters.bump(Counter::Stale);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let totals = counters.totals();
        assert_eq!(totals.get(Counter::Failures), 80_000);
        assert_eq!(totals.get(Counter::Stale), 8);
        assert_eq!(totals.get(Counter::Successes), 0);
    }

    #[test]
    fn ninety_six_threads_at_once_count_exactly() {
        let threads = 96;
        let counters = Arc::new(Counters::new());
        let all_counting = Arc::new(std::sync::Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (counters, all_counting) = (Arc::clone(&counters), Arc::clone(&all_counting));
                std::thread::spawn(move || {
                    counters.bump(Counter::Failures);
                    all_counting.wait(); // every thread holds its own slot at once
                    for _ in 0..999 {
                        counters.bump(Counter::Failures);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(
            counters.totals().get(Counter::Failures),
            1_000 * threads as u64
        );
    }

    #[test]
    fn a_thread_alternating_between_counters_counts_in_each_exactly() {
        let (a, b) = (Counters::new(), Counters::new());
        for _ in 0..1_000 {
            a.bump(Counter::Failures);
            b.bump(Counter::Failures);
            b.bump(Counter::Successes);
            b.bump(Counter::Successes);
        }
        assert_eq!(a.totals().get(Counter::Failures), 1_000);
        assert_eq!(a.totals().get(Counter::Successes), 0);
        assert_eq!(b.totals().get(Counter::Failures), 1_000);
        assert_eq!(b.totals().get(Counter::Successes), 2_000);
    }

    #[test]
    fn counters_created_where_dropped_ones_lived_start_from_zero() {
        for _ in 0..100 {
            let c = Box::new(Counters::new());
            c.bump(Counter::Failures);
            assert_eq!(c.totals().get(Counter::Failures), 1);
        }
    }

    #[test]
    fn threads_joining_and_leaving_while_tables_grow_count_exactly() {
        // Waves of threads start and exit while others count, so slots are handed
        // back and reused, and tables grow under counts in flight.
        let counters = Arc::new(Counters::new());
        let mut expected = 0u64;
        let mut running = Vec::new();
        for wave in 0..12u64 {
            for t in 0..(8 + wave * 3) {
                let c = Arc::clone(&counters);
                let n = 500 + 37 * t;
                expected += n;
                running.push(std::thread::spawn(move || {
                    for _ in 0..n {
                        c.bump(Counter::Successes);
                    }
                }));
            }
            // Join half of what runs: the rest keep counting into the next wave.
            let keep = running.split_off(running.len() / 2);
            for t in running {
                t.join().unwrap();
            }
            running = keep;
        }
        for t in running {
            t.join().unwrap();
        }
        assert_eq!(counters.totals().get(Counter::Successes), expected);
        assert_eq!(counters.totals().get(Counter::Failures), 0);
    }

    #[test]
    fn an_untouched_breaker_holds_no_table_and_one_thread_one_cell_row() {
        let counters = Counters::new();
        assert_eq!(counters.table_bytes(), 0);
        std::thread::scope(|s| {
            s.spawn(|| counters.bump(Counter::Successes));
        });
        let slot = 1 + NEXT.load(Relaxed) as usize; // an upper bound of any slot yet
        assert!(counters.table_bytes() <= slot.next_power_of_two() * CELL_BYTES);
        assert_eq!(counters.totals().get(Counter::Successes), 1);
    }

    #[test]
    fn a_reused_slot_continues_from_the_exited_threads_count() {
        let counters = Arc::new(Counters::new());
        for _ in 0..50 {
            let c = Arc::clone(&counters);
            std::thread::spawn(move || c.bump(Counter::Successes))
                .join()
                .unwrap();
        }
        assert_eq!(counters.totals().get(Counter::Successes), 50);
    }
}
