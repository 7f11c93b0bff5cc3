//! The time window: outcomes of the last `window_ms` in bucket-long slices on
//! atomics, emptied by a change of generation (see [`super::rule`]).
//!
//! One narrow exception to "a late outcome of an older generation is dropped": a
//! thread stalled between reading a bucket's stamp and adding to it, for as long as
//! the bucket takes to be claimed by a new slice or generation, adds one outcome
//! there. It takes a stall of a tenth of the window at the least; the stale check
//! at the verdict happens before it.
//!
//! Time stepping back counts as zero elapsed, as everywhere in the crate: an
//! outcome whose bucket already holds a later slice of its generation is added
//! there, one whose bucket holds a later slice of an older generation claims it
//! for that later slice (a bucket's slice never goes back), and a bucket of a
//! later slice than the reading counts as current.
//!
//! A success judges nothing while no bucket the window counts holds a failure or
//! a slow call: with rates above zero such a window holds, whatever `min_calls`
//! says, so the success is added to its bucket and the other buckets go unread.
//! The window knows it from one word that only failures and slow calls write
//! ([`TimeWindow::bad_until`]).

use crossbeam_utils::CachePadded;

use super::rule::{Counts, Outcome, Rule};
use crate::clock::{millis_to_nanos, monotonic_coarse, ClockSource};
use crate::config::Config;
use crate::state::GEN_MASK;
use crate::sync::{AtomicU64, Ordering::*};

const BUCKETS: usize = Config::WINDOW_BUCKETS as usize;
/// The bits of [`TimeWindow::hot`] that hold a bucket's slot.
const SLOT_BITS: u32 = 4;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
const _: () = assert!(BUCKETS as u64 <= SLOT_MASK);
/// Buckets at least this long place outcomes by the coarse clock.
const COARSE_BUCKET_NANOS: u64 = 100_000_000;
/// A bucket being emptied for a new epoch: its counts are not to be touched.
/// Never a real stamp: the top bit of a stamp's epoch field is never set.
const RESETTING: u64 = u64::MAX;

/// How a bucket stamp packs an epoch (a bucket-long slice of time since the
/// clock's origin) above a generation tag.
///
/// The epoch takes the bits the largest epoch a `u64` clock can reach needs, plus
/// one that stays clear (so no stamp is [`RESETTING`]); the generation tag takes
/// the rest: 18 bits for 1 ms buckets (the shortest: `window_ms >= 10` is
/// validated), 28 for 1 s buckets. The tag only makes a stamp change with the
/// generation, so a claim's compare-and-swap cannot succeed on a bucket another
/// generation re-stamped with the same epoch meanwhile; which generation a
/// bucket counts for is its full [`Bucket::generation`], never the tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamps {
    gen_bits: u32,
    gen_mask: u64,
}

impl Stamps {
    fn for_bucket(bucket_nanos: u64) -> Stamps {
        let max_epoch = u64::MAX / bucket_nanos;
        let epoch_bits = (u64::BITS - max_epoch.leading_zeros() + 1).min(u64::BITS - 1);
        let gen_bits = u64::BITS - epoch_bits;
        Stamps {
            gen_bits,
            gen_mask: (1 << gen_bits) - 1,
        }
    }

    fn gen_mask(self) -> u64 {
        self.gen_mask
    }

    fn make(self, epoch: u64, generation: u64) -> u64 {
        (epoch << self.gen_bits) | (generation & self.gen_mask())
    }

    fn epoch(self, stamp: u64) -> u64 {
        stamp >> self.gen_bits
    }
}

/// Whether generation `a` is later than `b`. Generations are the state word's,
/// which wraps at [`GEN_MASK`]: of two less than half that range apart, the one
/// ahead is the later (2^34 transitions apart: half a year at a thousand a second).
fn is_later(a: u64, b: u64) -> bool {
    let ahead = a.wrapping_sub(b) & GEN_MASK;
    ahead != 0 && ahead <= GEN_MASK / 2
}

/// One bucket, alone on its cache line: the outcomes of the current epoch are
/// added here by every thread, while the nine older buckets are only read.
#[derive(Debug)]
struct Bucket {
    /// The stamp ([`Stamps`]) of the counts below, or [`RESETTING`].
    stamp: AtomicU64,
    /// The generation the counts belong to, whole: written with the counts
    /// while the stamp reads [`RESETTING`], published by the stamp's store.
    generation: AtomicU64,
    /// Outcomes in the high 32 bits, failures in the low 32: one add records both.
    tally: AtomicU64,
    /// Slow calls; written only by slow outcomes.
    slow: AtomicU64,
}

const CALL: u64 = 1 << 32;
/// A bucket stops counting at 2^31 outcomes, far from the 2^32 that would carry
/// out of the tally, whatever the number of adds in flight.
const BUCKET_CAP: u64 = 1 << 31;

fn tally_counts(tally: u64) -> (u64, u64) {
    (tally >> 32, tally & (CALL - 1))
}

/// Outcomes of the last `window`, in [`BUCKETS`] buckets of `window / 10`.
///
/// Time is cut into *epochs* of one bucket width, counted from the clock's origin;
/// epoch `e` lives in bucket `e % 10`. At epoch `now_e`, a bucket counts when its
/// generation is the current one and its epoch is not before `now_e - 9`, so an
/// outcome counts for at least nine tenths of the window and never for a whole one.
/// (An epoch after `now_e` is the clock stepping back: it counts, as current.)
///
/// Recording into the current bucket is a few loads and one relaxed atomic add
/// (two for a slow call); no lock. The first outcome of a new epoch in a bucket finds
/// an older stamp, claims the bucket by swapping in [`RESETTING`], writes its own
/// counts over the old ones and publishes the new stamp; outcomes racing with it
/// wait for those four stores. Outcomes of an earlier generation than the bucket's
/// are dropped; an outcome whose bucket holds a later epoch of its own generation
/// (the clock stepped back, or its thread read the clock a window ago) is added
/// there. A bucket counts at most 2^31 outcomes; later ones in the same bucket
/// are dropped.
///
/// A failure or slow call also raises [`bad_until`](Self::bad_until) past the
/// last epoch its bucket counts in; a success of an epoch at or after it finds
/// nothing to judge and only adds, to the bucket [`hot`](Self::hot) names when
/// that is its epoch's and generation's.
#[derive(Debug)]
pub(crate) struct TimeWindow {
    rule: Rule,
    /// The start, in clock nanos, of the first epoch at which no bucket holding
    /// a failure or slow call, of any generation, counts any more: the latest
    /// such bucket's epoch plus [`BUCKETS`], times the bucket's width
    /// (saturating). Only grows; written only by failures and slow calls, so
    /// the successes that read it share its line without writing it. A clock
    /// stepped back far behind a failure keeps it ahead, and every outcome
    /// judged in full, until the clock passes it again. `u64::MAX` for a rule
    /// whose rates could trip a window without failures (a rate of zero,
    /// which the config never validates): then every success is judged.
    bad_until: AtomicU64,
    /// The start, in clock nanos, of the latest epoch a bucket was claimed
    /// for, above that bucket's slot (`start << SLOT_BITS | slot`): the bucket
    /// a success of that epoch finds without dividing the clock. Only grows;
    /// written by claims, once a bucket and epoch, after the claim's stores
    /// (not at all for an epoch that starts past `u64::MAX >> SLOT_BITS`, 36
    /// years after the origin: its successes go the whole way).
    hot: AtomicU64,
    /// Place outcomes by the monotonic clock's coarse reading: see
    /// [`TimeWindow::now`].
    coarse: bool,
    bucket_nanos: u64,
    stamps: Stamps,
    buckets: [CachePadded<Bucket>; BUCKETS],
}

impl TimeWindow {
    /// The window of the last `window_ms` judged by `rule`, on a breaker whose
    /// clock is the default monotonic one when `monotonic` (the one clock with
    /// a coarse reading of its own).
    pub(crate) fn new(window_ms: u64, rule: Rule, monotonic: bool) -> Self {
        // `window_ms >= 10` is validated, so a bucket is at least 1 ms long.
        let bucket_nanos = (millis_to_nanos(window_ms) / BUCKETS as u64).max(1);
        // A rule that trips without failures is one no config validates (nor
        // any retuning, which takes validated configs only).
        let bad_until = if rule.trips_without_failures() {
            u64::MAX
        } else {
            0
        };
        let coarse = monotonic && !rule.judges_slowness() && bucket_nanos >= COARSE_BUCKET_NANOS;
        TimeWindow {
            rule,
            bad_until: AtomicU64::new(bad_until),
            // Epoch 0 in slot 0, which generation 0 holds empty: the same as
            // a claim of it.
            hot: AtomicU64::new(0),
            coarse,
            bucket_nanos,
            stamps: Stamps::for_bucket(bucket_nanos),
            buckets: std::array::from_fn(|_| {
                CachePadded::new(Bucket {
                    stamp: AtomicU64::new(0),
                    generation: AtomicU64::new(0),
                    tally: AtomicU64::new(0),
                    slow: AtomicU64::new(0),
                })
            }),
        }
    }

    pub(crate) fn rule(&self) -> &Rule {
        &self.rule
    }

    /// Whether no bucket that counts at `now` holds a failure or a slow call,
    /// of any generation: one load, no bucket read. Pure.
    #[inline]
    pub(crate) fn holds_no_failure(&self, now: u64) -> bool {
        now >= self.bad_until.load(Relaxed)
    }

    /// How long one bucket is (nanos): a tenth of the window.
    pub(crate) fn bucket_nanos(&self) -> u64 {
        self.bucket_nanos
    }

    /// The time to place an outcome (or judge the window) at, on `clock`, the
    /// breaker's. Buckets of 100 ms or more, when no call is timed, take [the
    /// coarse reading](crate#the-coarse-reading) of the default monotonic
    /// clock: late by at most a tick, a few per cent of such a bucket, so an
    /// outcome may be placed and expire a tick early. Timed calls need the
    /// precise reading anyway, and place by it; custom clocks have one reading.
    #[inline]
    pub(crate) fn now(&self, clock: &ClockSource) -> u64 {
        if self.coarse {
            monotonic_coarse()
        } else {
            clock.now()
        }
    }

    /// Records `outcome` at `now` for `generation`; returns whether the window trips.
    #[inline]
    pub(crate) fn record(&self, generation: u64, now: u64, outcome: Outcome) -> bool {
        if !outcome.failed && !outcome.slow {
            return self.record_success(generation, now);
        }
        self.record_judged(generation, now, outcome)
    }

    /// [`record`](Self::record) of a success that is neither failed nor slow.
    ///
    /// While no bucket the window counts holds a failure or a slow call, the
    /// window holds with this success too, whatever the count of calls: when
    /// `now` falls in the epoch of [`hot`](Self::hot) and its bucket belongs to
    /// `generation`, one add records it, with no division of the clock. Any
    /// other success is placed and judged the whole way.
    #[inline]
    fn record_success(&self, generation: u64, now: u64) -> bool {
        let hot = self.hot.load(Acquire);
        let start = hot >> SLOT_BITS;
        if now.wrapping_sub(start) < self.bucket_nanos && start >= self.bad_until.load(Relaxed) {
            if let Some(bucket) = self.buckets.get((hot & SLOT_MASK) as usize) {
                // Acquire: a generation stored by a claim comes with the counts
                // it emptied, so the add lands after them.
                if bucket.generation.load(Acquire) == generation {
                    if bucket.tally.fetch_add(CALL, Relaxed) >> 32 >= BUCKET_CAP {
                        bucket.tally.fetch_sub(CALL, Relaxed);
                    }
                    return false;
                }
            }
        }
        let success = Outcome {
            failed: false,
            slow: false,
        };
        self.record_judged(generation, now, success)
    }

    /// [`record`](Self::record) of an outcome the window must judge: add it,
    /// then sum the other buckets.
    #[inline(never)]
    fn record_judged(&self, generation: u64, now: u64, outcome: Outcome) -> bool {
        let epoch = now / self.bucket_nanos;
        let slot = (epoch % BUCKETS as u64) as usize;
        let Some(current) = self.add(slot, generation, epoch, outcome) else {
            return false;
        };
        let others = self.sum(generation, epoch, Some(slot));
        self.rule.trips(Counts {
            calls: others.calls.saturating_add(current.calls),
            failures: others.failures.saturating_add(current.failures),
            slow: others.slow.saturating_add(current.slow),
        })
    }

    /// What the window holds at `now` for `generation`. Pure.
    pub(crate) fn counts(&self, generation: u64, now: u64) -> Counts {
        self.sum(generation, now / self.bucket_nanos, None)
    }

    /// Adds `outcome` to bucket `slot`, of `epoch`, and returns what the bucket
    /// holds with it; `None` when the outcome was too old to count.
    fn add(&self, slot: usize, generation: u64, epoch: u64, outcome: Outcome) -> Option<Counts> {
        let bucket = &self.buckets[slot];
        let mine = self.stamps.make(epoch, generation);
        let delta = CALL | u64::from(outcome.failed);
        let mut spins = 0u32;
        loop {
            let seen = bucket.stamp.load(Acquire);
            let theirs = bucket.generation.load(Relaxed);
            // The bucket of this epoch, or, the clock having stepped back, of a
            // later one (time stepping back counts as zero elapsed): add here.
            if theirs == generation
                && (seen == mine || (seen != RESETTING && self.stamps.epoch(seen) > epoch))
            {
                let mut tally = bucket.tally.fetch_add(delta, Relaxed);
                if tally >> 32 >= BUCKET_CAP {
                    bucket.tally.fetch_sub(delta, Relaxed);
                } else {
                    tally += delta;
                    if outcome.slow {
                        bucket.slow.fetch_add(1, Relaxed);
                    }
                    if outcome.failed || outcome.slow {
                        self.mark_bad(self.stamps.epoch(seen).max(epoch));
                    }
                }
                let (calls, failures) = tally_counts(tally);
                let slow = if self.rule.judges_slowness() {
                    bucket.slow.load(Relaxed)
                } else {
                    0
                };
                return Some(Counts {
                    calls,
                    failures,
                    slow,
                });
            }
            if seen == RESETTING {
                // Another outcome is emptying this bucket: four stores away.
                spins += 1;
                if spins < 64 && !cfg!(loom) {
                    std::hint::spin_loop();
                } else {
                    yield_now();
                }
                continue;
            }
            // An earlier epoch of this generation, or an earlier generation:
            // claim the bucket. A later generation's bucket: this outcome is
            // stale, drop it.
            if theirs != generation && !is_later(generation, theirs) {
                return None;
            }
            if bucket
                .stamp
                .compare_exchange(seen, RESETTING, Acquire, Relaxed)
                .is_ok()
            {
                // A bucket's epoch never goes back: an older generation's
                // later epoch (the clock stepped back) is this outcome's too.
                let epoch = self.stamps.epoch(seen).max(epoch);
                bucket.tally.store(delta, Relaxed);
                bucket.slow.store(u64::from(outcome.slow), Relaxed);
                // Release: whoever reads this generation sees the counts above.
                bucket.generation.store(generation, Release);
                bucket
                    .stamp
                    .store(self.stamps.make(epoch, generation), Release);
                if outcome.failed || outcome.slow {
                    self.mark_bad(epoch);
                }
                // Successes of this epoch find the bucket by `hot` from now on.
                let start = epoch * self.bucket_nanos;
                if start <= u64::MAX >> SLOT_BITS {
                    self.hot
                        .fetch_max(start << SLOT_BITS | slot as u64, Release);
                }
                return Some(Counts {
                    calls: 1,
                    failures: u64::from(outcome.failed),
                    slow: u64::from(outcome.slow),
                });
            }
        }
    }

    /// Notes a failure or slow call added to the bucket of `epoch`: no success
    /// goes unjudged while that bucket counts.
    fn mark_bad(&self, epoch: u64) {
        let until = epoch
            .saturating_add(BUCKETS as u64)
            .saturating_mul(self.bucket_nanos);
        self.bad_until.fetch_max(until, Relaxed);
    }

    /// The counts of the buckets in the window at `epoch`, but for `skip`.
    fn sum(&self, generation: u64, epoch: u64, skip: Option<usize>) -> Counts {
        let stamps = self.stamps;
        let mut counts = Counts::default();
        for (slot, bucket) in self.buckets.iter().enumerate() {
            if Some(slot) == skip {
                continue;
            }
            let stamp = bucket.stamp.load(Acquire);
            if stamp == RESETTING {
                continue;
            }
            // Expired: nine epochs or more before this one. A later epoch is
            // the clock stepping back, and counts.
            let stamp_epoch = stamps.epoch(stamp);
            if stamp_epoch <= epoch && epoch - stamp_epoch >= BUCKETS as u64 {
                continue;
            }
            if bucket.generation.load(Relaxed) != generation {
                continue;
            }
            let (calls, failures) = tally_counts(bucket.tally.load(Relaxed));
            counts.calls += calls;
            counts.failures += failures;
            counts.slow += bucket.slow.load(Relaxed);
        }
        counts
    }
}

/// The last `window_calls` outcomes of the current generation, in a ring.
/// Gives the thread emptying a bucket the processor (and, under loom, lets the
/// model schedule it).
fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

#[cfg(test)]
mod tests;
