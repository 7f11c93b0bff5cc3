//! Event counters that every call touches, kept per thread so that no two threads
//! ever write one cache line and no count needs an atomic read-modify-write.
//!
//! Each thread that touches a breaker takes a small process-wide slot number; a
//! breaker holds a row of cache-padded cells indexed by it, allocated a segment at a
//! time on first use. Only the thread owning a slot writes its cell (a relaxed load
//! and store), readers sum every cell. A slot is handed to another thread only after
//! its owner exited, through a mutex, so the new owner continues from the exact
//! count. A thread with no slot (one past [`MAX_THREADS`], or one whose thread-local
//! storage is being torn down) counts in a shared overflow cell with a real
//! read-modify-write: slower, never lost.
//!
//! The first segment lives inline in the breaker, so a count by one of the first
//! [`SEGMENT`] threads is a thread-local read, one bounds check and a relaxed load
//! and store into the breaker's own memory: no pointer to chase, nothing to
//! initialise, and no cost for a thread that alternates between breakers.

use std::cell::Cell as StdCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

/// What a counter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Event {
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
}

const EVENTS: usize = Event::Opened as usize + 1;
/// Threads per segment of cells; the first segment is inline.
pub(crate) const SEGMENT: usize = 32;
const SEGMENTS: usize = 128;
/// Threads that count without contention; more threads still count, on a shared cell.
pub(crate) const MAX_THREADS: usize = SEGMENT * SEGMENTS;

const UNASSIGNED: u32 = u32::MAX;
const RETIRED: u32 = u32::MAX - 1;
const NO_OFFSET: u32 = u32::MAX;

struct Cell {
    counts: [AtomicU64; EVENTS],
}

impl Cell {
    const fn new() -> Self {
        Cell {
            counts: [const { AtomicU64::new(0) }; EVENTS],
        }
    }
}

type Padded = CachePadded<Cell>;

struct Segment {
    cells: [Padded; SEGMENT],
}

/// One breaker's counters.
pub(crate) struct Counters {
    /// The cells of slots `0..SEGMENT`, inline: the hot path.
    first: [Padded; SEGMENT],
    /// Segment `i` holds slots `(i + 1) * SEGMENT..`, allocated on first use.
    rest: [OnceLock<Box<Segment>>; SEGMENTS - 1],
    overflow: Padded,
}

/// A sum of every event, taken cell by cell: exact once the counting threads are quiet.
pub(crate) struct Totals([u64; EVENTS]);

impl Totals {
    pub(crate) fn get(&self, event: Event) -> u64 {
        self.0[event as usize]
    }
}

impl Counters {
    pub(crate) fn new() -> Self {
        Counters {
            first: [const { CachePadded::new(Cell::new()) }; SEGMENT],
            rest: [const { OnceLock::new() }; SEGMENTS - 1],
            overflow: CachePadded::new(Cell::new()),
        }
    }

    /// Counts one `event` for the calling thread.
    #[inline(always)]
    pub(crate) fn bump(&self, event: Event) {
        // A thread without a cell in the inline row reads an offset far out of
        // range, so one bounds check sends everything but the common case to the
        // slow path. The offset is kept in bytes: no multiply on this path.
        let offset = FIRST_OFFSET.get() as usize;
        if offset < size_of_val(&self.first) {
            // SAFETY: `FIRST_OFFSET` is only ever set to `slot * size_of::<Padded>()`
            // with `slot < SEGMENT`, or to `NO_OFFSET` (out of range). In range,
            // it is the start of element `slot` of `first`: in bounds and aligned.
            let cell = unsafe { &*self.first.as_ptr().byte_add(offset) };
            increment(cell, event);
        } else {
            self.bump_rest(event);
        }
    }

    /// Counts for a thread whose slot is past the first segment, or not yet assigned.
    #[cold]
    #[inline(never)]
    fn bump_rest(&self, event: Event) {
        let slot = SLOT.get();
        if (slot as usize) < MAX_THREADS {
            increment(self.cell(slot as usize), event);
        } else {
            self.bump_slow(slot, event);
        }
    }

    fn cell(&self, slot: usize) -> &Cell {
        match slot.checked_sub(SEGMENT) {
            None => &self.first[slot],
            Some(past) => {
                let segment = self.rest[past / SEGMENT].get_or_init(new_segment);
                &segment.cells[past % SEGMENT]
            }
        }
    }

    #[cold]
    fn bump_slow(&self, slot: u32, event: Event) {
        if slot == UNASSIGNED {
            let slot = assign_slot();
            if (slot as usize) < MAX_THREADS {
                return increment(self.cell(slot as usize), event);
            }
        }
        let count = &self.overflow.counts[event as usize];
        let _ = count.fetch_update(Relaxed, Relaxed, |n| Some(n.saturating_add(1)));
    }

    /// Sums every thread's cell and the overflow.
    pub(crate) fn totals(&self) -> Totals {
        let mut totals = [0u64; EVENTS];
        let mut add = |cell: &Cell| {
            for (total, count) in totals.iter_mut().zip(&cell.counts) {
                *total = total.saturating_add(count.load(Relaxed));
            }
        };
        self.first.iter().for_each(|cell| add(cell));
        for segment in self.rest.iter().filter_map(OnceLock::get) {
            segment.cells.iter().for_each(|cell| add(cell));
        }
        add(&self.overflow);
        Totals(totals)
    }
}

/// Adds one to `event` in `cell`, which only the calling thread writes: a relaxed
/// load and store is an exact increment, and compiles to one non-atomic `inc` of
/// memory. It wraps instead of saturating, and may: a cell takes 2^64 events to
/// wrap, 584 years at one a nanosecond. (A saturating add would cost
/// instructions on every call; the sums across cells do saturate.)
#[inline(always)]
fn increment(cell: &Cell, event: Event) {
    let count = &cell.counts[event as usize];
    count.store(count.load(Relaxed).wrapping_add(1), Relaxed);
}

fn new_segment() -> Box<Segment> {
    Box::new(Segment {
        cells: [const { CachePadded::new(Cell::new()) }; SEGMENT],
    })
}

thread_local! {
    /// This thread's slot, `UNASSIGNED` before its first count, `RETIRED` once its
    /// slot was handed back during thread exit. No destructor: readable to the end.
    static SLOT: StdCell<u32> = const { StdCell::new(UNASSIGNED) };
    /// Where this thread's cell starts in a breaker's inline row, in bytes:
    /// `SLOT * size_of::<Padded>()` while `SLOT < SEGMENT`, else `NO_OFFSET`.
    static FIRST_OFFSET: StdCell<u32> = const { StdCell::new(NO_OFFSET) };
    /// Hands the slot back when the thread exits.
    static GUARD: SlotGuard = const { SlotGuard(StdCell::new(UNASSIGNED)) };
}

struct SlotGuard(StdCell<u32>);

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let slot = self.0.get();
        let _ = SLOT.try_with(|s| s.set(RETIRED));
        let _ = FIRST_OFFSET.try_with(|o| o.set(NO_OFFSET));
        if slot != UNASSIGNED {
            FREE.lock().push(Reverse(slot));
        }
    }
}

/// Slots handed back by exited threads; the lowest is reused first so slots stay dense.
static FREE: Mutex<BinaryHeap<Reverse<u32>>> = Mutex::new(BinaryHeap::new());
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
        if (slot as usize) < SEGMENT {
            FIRST_OFFSET.set(slot * size_of::<Padded>() as u32);
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

#[cfg(test)]
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
                        counters.bump(Event::Failures);
                    }
                    counters.bump(Event::Stale);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let totals = counters.totals();
        assert_eq!(totals.get(Event::Failures), 80_000);
        assert_eq!(totals.get(Event::Stale), 8);
        assert_eq!(totals.get(Event::Successes), 0);
    }

    #[test]
    fn threads_past_the_inline_segment_count_exactly_too() {
        let threads = 3 * SEGMENT;
        let counters = Arc::new(Counters::new());
        let all_counting = Arc::new(std::sync::Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (counters, all_counting) = (Arc::clone(&counters), Arc::clone(&all_counting));
                std::thread::spawn(move || {
                    counters.bump(Event::Failures);
                    all_counting.wait(); // every thread holds its own slot at once
                    for _ in 0..999 {
                        counters.bump(Event::Failures);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(
            counters.totals().get(Event::Failures),
            1_000 * threads as u64
        );
    }

    #[test]
    fn a_thread_alternating_between_counters_counts_in_each_exactly() {
        let (a, b) = (Counters::new(), Counters::new());
        for _ in 0..1_000 {
            a.bump(Event::Failures);
            b.bump(Event::Failures);
            b.bump(Event::Successes);
            b.bump(Event::Successes);
        }
        assert_eq!(a.totals().get(Event::Failures), 1_000);
        assert_eq!(a.totals().get(Event::Successes), 0);
        assert_eq!(b.totals().get(Event::Failures), 1_000);
        assert_eq!(b.totals().get(Event::Successes), 2_000);
    }

    #[test]
    fn counters_created_where_dropped_ones_lived_start_from_zero() {
        for _ in 0..100 {
            let c = Box::new(Counters::new());
            c.bump(Event::Failures);
            assert_eq!(c.totals().get(Event::Failures), 1);
        }
    }

    #[test]
    fn a_reused_slot_continues_from_the_exited_threads_count() {
        let counters = Arc::new(Counters::new());
        for _ in 0..50 {
            let c = Arc::clone(&counters);
            std::thread::spawn(move || c.bump(Event::Successes))
                .join()
                .unwrap();
        }
        assert_eq!(counters.totals().get(Event::Successes), 50);
    }
}
