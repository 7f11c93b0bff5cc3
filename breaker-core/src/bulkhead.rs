//! The bulkhead: a cap on the calls of one group in flight at once
//! (`max_concurrent`), and the [`BulkheadSlot`] an admitted call holds until it ends.
//!
//! It stands outside the breaker: a call takes a slot first, then claims its
//! permit, so probes count against the cap like any call, and a refusal here
//! never reaches the breaker's state.

use crate::sync::{AtomicU32, Ordering::*};
use std::num::NonZeroU32;

/// The slots of one group.
#[derive(Debug)]
pub(crate) struct Bulkhead {
    in_flight: AtomicU32,
    /// Never zero (the rules refuse it), so an `Option<Bulkhead>` is as small
    /// as a `Bulkhead`.
    cap: NonZeroU32,
}

impl Bulkhead {
    pub(crate) fn new(cap: NonZeroU32) -> Self {
        Bulkhead {
            in_flight: AtomicU32::new(0),
            cap,
        }
    }

    /// Takes a slot if one is free. A compare-and-swap, not an add that is
    /// undone on refusal: a transient over-count would refuse a caller while a
    /// slot was free.
    #[inline]
    pub(crate) fn try_enter(&self) -> Option<BulkheadSlot<'_>> {
        let mut current = self.in_flight.load(Relaxed);
        loop {
            if current >= self.cap.get() {
                return None;
            }
            match self
                .in_flight
                .compare_exchange_weak(current, current + 1, Acquire, Relaxed)
            {
                Ok(_) => return Some(BulkheadSlot { held: Some(self) }),
                Err(seen) => current = seen,
            }
        }
    }

    /// Gives back a place taken by [`try_enter`](Self::try_enter) whose slot
    /// was [kept](BulkheadSlot::keep).
    pub(crate) fn leave(&self) {
        self.in_flight.fetch_sub(1, Release);
    }

    /// Calls in flight now.
    pub(crate) fn in_flight(&self) -> u32 {
        self.in_flight.load(Relaxed)
    }
}

/// A place in a group's bulkhead, held by one call until it is dropped: on
/// return, `?`, panic or a cancelled future alike. From a group without
/// `max_concurrent` it holds nothing and dropping it does nothing.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Breaker, Config, OpenReason};
///
/// let breaker = Breaker::new("pool", Config::builder().max_concurrent(1).build()?);
/// let first = breaker.enter_bulkhead()?;
/// assert_eq!(breaker.enter_bulkhead().unwrap_err().reason(), OpenReason::BulkheadFull);
/// drop(first);
/// assert!(breaker.enter_bulkhead().is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "the slot is freed when dropped: hold it for the whole call"]
#[derive(Debug)]
pub struct BulkheadSlot<'a> {
    held: Option<&'a Bulkhead>,
}

impl BulkheadSlot<'_> {
    /// The slot of a group without a bulkhead.
    pub(crate) const fn free() -> Self {
        BulkheadSlot { held: None }
    }

    /// Whether this slot holds a place (its group has a bulkhead); the place
    /// stays taken.
    pub(crate) fn keep(self) -> bool {
        std::mem::ManuallyDrop::new(self).held.is_some()
    }
}

impl Drop for BulkheadSlot<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(bulkhead) = self.held {
            bulkhead.in_flight.fetch_sub(1, Release);
        }
    }
}

/// The bulkhead under loom's model checker: two callers race for its one
/// place while a third holds nothing; the cap is never exceeded, a refused
/// caller found the place taken, and every way out gives the place back.
/// Run with `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p breaker-core --release --lib loom_`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::atomic::AtomicUsize;
    use loom::sync::Arc;

    #[test]
    fn loom_racing_callers_never_exceed_the_cap_and_free_every_place() {
        loom::model(|| {
            let bulkhead = Arc::new(Bulkhead::new(NonZeroU32::new(1).unwrap()));
            let inside = Arc::new(AtomicUsize::new(0));
            let caller = |bulkhead: Arc<Bulkhead>, inside: Arc<AtomicUsize>| {
                move || match bulkhead.try_enter() {
                    Some(slot) => {
                        let now = inside.fetch_add(1, SeqCst) + 1;
                        assert_eq!(now, 1, "two callers inside a bulkhead of one");
                        inside.fetch_sub(1, SeqCst);
                        drop(slot);
                        true
                    }
                    None => false,
                }
            };
            let other = loom::thread::spawn(caller(Arc::clone(&bulkhead), Arc::clone(&inside)));
            let here = caller(Arc::clone(&bulkhead), Arc::clone(&inside))();
            let there = other.join().unwrap();
            assert!(here || there, "a free bulkhead admits");
            assert_eq!(bulkhead.in_flight(), 0, "every place is given back");
        });
    }
}
