//! What a breaker keeps for the keys around it: the bulkhead, the
//! call-duration histogram (their counts are per-thread counters, with the
//! others) and the group's retry budget (with, for a keyed group's key, the
//! group level it reports to). A group without these keys has a
//! `Guards` that no call touches.

use std::sync::Arc;

use crate::bulkhead::Bulkhead;
use crate::config::Config;
use crate::histogram::CallHistogram;
use crate::level::{GroupLevel, KeyCounts};
use crate::retry::RetrySlot;
use crate::sync::{AtomicPtr, Ordering::*};

#[derive(Debug)]
pub(crate) struct Guards {
    pub(crate) bulkhead: Option<Bulkhead>,
    /// `None` unless the group sets `histogram_ms` or `latency_p99_ms` (whose
    /// gauge reads it). Shared by a keyed group's keys.
    histogram: Option<Arc<CallHistogram>>,
    /// The group's retry slot: null until the group's first retried call (a
    /// group that never retries allocates nothing), or from the start a keyed
    /// group's, shared by its keys. Non-null, it is one strong count of an
    /// `Arc<RetrySlot>` (`Arc::into_raw`), given back on drop.
    retry: AtomicPtr<RetrySlot>,
    /// Whether the retry slot came from a keyed group (its keys' and its
    /// own breaker's), not made by this breaker's first retried call.
    keyed: bool,
}

impl Guards {
    /// The guards `config` asks for; the histogram is `histogram` when given
    /// (a keyed group's, for one of its keys).
    ///
    /// `retry` is a keyed group's retry slot, for one of its keys: the keys
    /// then draw on one budget.
    pub(crate) fn new(
        config: &Config,
        histogram: Option<Arc<CallHistogram>>,
        retry: Option<Arc<RetrySlot>>,
    ) -> Self {
        let histogram = histogram.or_else(|| CallHistogram::new(config, false).map(Arc::new));
        let keyed = retry.is_some();
        Guards {
            bulkhead: config
                .max_concurrent()
                .and_then(std::num::NonZeroU32::new)
                .map(Bulkhead::new),
            histogram,
            retry: AtomicPtr::new(
                retry.map_or(std::ptr::null_mut(), |slot| Arc::into_raw(slot).cast_mut()),
            ),
            keyed,
        }
    }

    /// The group's retry slot, made by the first call that asks.
    #[inline]
    pub(crate) fn retry_slot(&self) -> &RetrySlot {
        let slot = self.retry.load(Acquire);
        if slot.is_null() {
            return self.first_retry_slot();
        }
        // SAFETY: a non-null pointer here came from `Arc::into_raw` and holds
        // one strong count that only `drop` gives back, which `&self` outlives.
        unsafe { &*slot }
    }

    /// Makes the slot, or finds the one a racing call made.
    #[cold]
    #[inline(never)]
    fn first_retry_slot(&self) -> &RetrySlot {
        let made = Arc::into_raw(Arc::new(RetrySlot::default())).cast_mut();
        let slot = match self
            .retry
            .compare_exchange(std::ptr::null_mut(), made, AcqRel, Acquire)
        {
            Ok(_) => made,
            Err(theirs) => {
                // SAFETY: `made` is from `Arc::into_raw` above and was not published.
                drop(unsafe { Arc::from_raw(made) });
                theirs
            }
        };
        // SAFETY: as in `retry_slot`: published once, freed only by `drop`.
        unsafe { &*slot }
    }

    /// The group's retry slot if one was made.
    pub(crate) fn made_retry_slot(&self) -> Option<&RetrySlot> {
        let slot = self.retry.load(Acquire);
        // SAFETY: as in `retry_slot`.
        (!slot.is_null()).then(|| unsafe { &*slot })
    }

    /// Whether this breaker is a keyed group's (one of its keys, or the
    /// group's own breaker). Read on slow paths only.
    pub(crate) fn keyed(&self) -> bool {
        self.keyed
    }

    /// The group level this key reports to, if its keyed group judges as
    /// one (held in the slot the group's keys share). Read on slow paths only.
    #[inline]
    pub(crate) fn group_level(&self) -> Option<&dyn GroupLevel> {
        self.made_retry_slot().and_then(RetrySlot::level)
    }

    /// The keys of the keyed group that judges as one this breaker belongs
    /// to, as a key or as the group's own breaker. Read by transitions only.
    pub(crate) fn key_counts(&self) -> Option<&KeyCounts> {
        self.made_retry_slot().and_then(RetrySlot::keys)
    }

    /// The call-duration histogram (`histogram_ms` or `latency_p99_ms`).
    #[inline(always)]
    pub(crate) fn histogram(&self) -> Option<&CallHistogram> {
        self.histogram.as_deref()
    }
}

impl Drop for Guards {
    fn drop(&mut self) {
        // Exclusive here (`&mut self`): no other access to order against.
        let slot = self.retry.load(Relaxed);
        if !slot.is_null() {
            // SAFETY: from `Arc::into_raw` (`new` or `first_retry_slot`), the
            // one strong count this `Guards` holds; no `&self` outlives `&mut self`.
            drop(unsafe { Arc::from_raw(slot) });
        }
    }
}
