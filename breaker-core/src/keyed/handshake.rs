//! The handshake between a call that finds a key and a sweep that would evict it,
//! without a lock on the call's side: each entry's [`Mark`].
//!
//! A sweep may evict an entry only while the map's handle is its only one. A call
//! takes its handle (a read-modify-write of the handle count, as `Arc::clone`) and
//! then reads the mark; the sweep marks the entry [`EVICTING`] and then reads the
//! handle count. A sequentially consistent fence between each side's two steps
//! means at least one of them sees the other (the store-buffering pattern): the
//! call sees the mark and gives its handle back, or the sweep sees the handle and
//! keeps the entry. So no call ever runs on a breaker the map has let go of.
//! Modelled under loom in `loom_tests`.

use crate::sync::{fence, AtomicU8, Ordering::*};

/// Not used since a sweep last passed: the sweep may evict it.
const IDLE: u8 = 0;
/// Used since a sweep last passed: spared once (the CLOCK algorithm's bit).
const USED: u8 = 1;
/// A sweep is evicting it, unless a handle turns up.
const EVICTING: u8 = 2;

/// An entry's place in the eviction handshake and its second-chance bit.
pub(super) struct Mark(AtomicU8);

impl Mark {
    /// A new entry's mark: used.
    pub(super) fn new() -> Self {
        Mark(AtomicU8::new(USED))
    }

    /// The handle `clone` takes, unless a sweep is evicting the entry (the handle
    /// is then dropped: the caller looks again under the group's writer lock).
    /// `touch` records the use for the sweep's second chance.
    #[inline]
    pub(super) fn hand_out<H>(&self, clone: impl FnOnce() -> H, touch: bool) -> Option<H> {
        let handle = clone();
        fence(SeqCst);
        let mark = self.0.load(Relaxed);
        if mark == USED {
            return Some(handle);
        }
        self.hand_out_unmarked(mark, handle, touch)
    }

    #[cold]
    fn hand_out_unmarked<H>(&self, mark: u8, handle: H, touch: bool) -> Option<H> {
        if mark == EVICTING {
            return None;
        }
        if touch {
            // Lost only to a sweep that marked the entry meanwhile: that sweep
            // sees this handle and keeps the entry, marked used; or sees it
            // already given back, once this call is over and its counts are
            // released to the fold.
            let _ = self.0.compare_exchange(IDLE, USED, Relaxed, Relaxed);
        }
        Some(handle)
    }

    /// A sweep passing the entry: `true` if it was used since the last pass
    /// (and is now idle: spared this once).
    pub(super) fn spare(&self) -> bool {
        self.0
            .compare_exchange(USED, IDLE, Relaxed, Relaxed)
            .is_ok()
    }

    /// A sweep evicting an idle entry: [`Evicting`] if `handles` (read after
    /// the mark is set) says the map's handle is the only one and `evictable`
    /// agrees; the entry must then leave the map, and stays [`EVICTING`] for
    /// the callers that still find it once [`Evicting::done`] says it left.
    /// `None`: the entry stays, marked used. Run by one sweep at a time (the
    /// group's writer lock).
    pub(super) fn evict(
        &self,
        handles: impl FnOnce() -> usize,
        evictable: impl FnOnce() -> bool,
    ) -> Option<Evicting<'_>> {
        if self
            .0
            .compare_exchange(IDLE, EVICTING, Relaxed, Relaxed)
            .is_err()
        {
            return None;
        }
        // From here, whatever ends this without `done` (a `false`, or a panic
        // in `evictable`, the fold or the removal, which run the user's clock,
        // `Hash` and `Eq`) marks the entry used: it stays, callable.
        let evicting = Evicting(self);
        fence(SeqCst);
        if handles() == 1 {
            // The last holder's drop released its writes (counts, a trip); see
            // them before reading the state and the counts.
            fence(Acquire);
            if evictable() {
                return Some(evicting);
            }
        }
        None
    }
}

/// An entry a sweep decided to evict: [`done`](Self::done) once it has left
/// the map; dropped before that (the removal panicked), the entry stays.
pub(super) struct Evicting<'a>(&'a Mark);

impl Evicting<'_> {
    /// The entry has left the map: it stays [`EVICTING`] for good.
    pub(super) fn done(self) {
        std::mem::forget(self);
    }
}

impl Drop for Evicting<'_> {
    fn drop(&mut self) {
        self.0 .0.store(USED, Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
impl Mark {
    /// As a sweep between its mark and its decision.
    pub(super) fn set_evicting(&self) {
        self.0.store(EVICTING, SeqCst);
    }

    /// As a sweep that decided to keep the entry.
    pub(super) fn set_used(&self) {
        self.0.store(USED, SeqCst);
    }
}

/// The handshake under loom: calls racing a sweep for one entry, the handle
/// count modelled as `Arc`'s (a relaxed increment to take one, a release
/// decrement to give one back) and the breaker's counts as one relaxed counter
/// that a call bumps while it holds its handle.
///
/// Run with the other models: `RUSTFLAGS="--cfg loom" cargo test -p breaker-core --release --lib loom_`.
#[cfg(all(test, loom))]
mod loom_tests {
    use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
    use loom::sync::Arc;
    use loom::thread;

    use super::Mark;

    /// An entry: its mark, its breaker's handle count (the map holds one) and
    /// its breaker's calls.
    struct Key {
        mark: Mark,
        handles: AtomicUsize,
        calls: AtomicU64,
    }

    fn idle_entry() -> Arc<Key> {
        let entry = Key {
            mark: Mark::new(),
            handles: AtomicUsize::new(1),
            calls: AtomicU64::new(0),
        };
        // A sweep already passed it once: idle, evictable.
        assert!(entry.mark.spare());
        Arc::new(entry)
    }

    /// One call: counted on the breaker if the mark handed it the handle, which
    /// it gives back after the call. Whether it ran.
    fn call(entry: &Key, touch: bool) -> bool {
        let handed = entry
            .mark
            .hand_out(|| entry.handles.fetch_add(1, Relaxed), touch);
        if handed.is_some() {
            entry.calls.fetch_add(1, Relaxed);
        }
        entry.handles.fetch_sub(1, Release);
        handed.is_some()
    }

    /// One sweep's pass at the entry: the calls it folded into the group's sums
    /// if it evicted the entry.
    fn sweep(entry: &Key) -> Option<u64> {
        let evicting = entry.mark.evict(|| entry.handles.load(Relaxed), || true)?;
        let calls = entry.calls.load(Relaxed);
        evicting.done();
        Some(calls)
    }

    fn model(f: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(f);
    }

    /// A call and a sweep race for an idle entry: if the sweep evicts it, the
    /// counts it folds hold the call, or the call never ran (it was turned
    /// away, to look again under the writer lock). No count is lost.
    #[test]
    fn loom_a_call_racing_an_eviction_is_folded_or_looks_again() {
        for touch in [true, false] {
            model(move || {
                let entry = idle_entry();
                let caller = {
                    let entry = Arc::clone(&entry);
                    thread::spawn(move || call(&entry, touch))
                };
                let folded = sweep(&entry);
                let called = caller.join().unwrap();
                match folded {
                    Some(calls) => assert_eq!(calls, called as u64, "a call lost to an eviction"),
                    // Kept: the next sweep passes it once more before it may go.
                    None => assert!(entry.mark.spare()),
                }
            });
        }
    }

    /// Two calls and a sweep: an eviction folds every call that ran.
    #[test]
    fn loom_two_calls_and_a_sweep_never_lose_a_call_to_an_eviction() {
        model(|| {
            let entry = idle_entry();
            let callers: Vec<_> = (0..2)
                .map(|_| {
                    let entry = Arc::clone(&entry);
                    thread::spawn(move || call(&entry, true))
                })
                .collect();
            let folded = sweep(&entry);
            let called = callers
                .into_iter()
                .map(|c| c.join().unwrap() as u64)
                .sum::<u64>();
            if let Some(calls) = folded {
                assert_eq!(calls, called, "a call lost to an eviction");
            }
        });
    }
}
