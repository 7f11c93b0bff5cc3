//! The latency trip (`latency_p99_ms`): a window of fixed-size latency
//! histograms, one per bucket, that trips when the window's p99 is above the
//! bound.
//!
//! It rides on the failure policy's window: a time window's buckets are a tenth
//! of `window_ms`, a count window's a tenth of `window_calls` calls (so the view
//! moves a tenth at a time, and holds between `window_calls` calls and a tenth
//! more, and a call more a bucket for each thread that raced the one filling
//! it). Nothing is allocated per call and nothing is locked; each bucket is
//! about 1 KiB, taken once when the breaker is made.

use std::time::Duration;

use crossbeam_utils::CachePadded;

use super::rule::is_later_generation;
use crate::clock::{duration_to_nanos, millis_to_nanos};
use crate::config::{Config, FailurePolicy};
use crate::sync::{AtomicU32, AtomicU64, Ordering::*};

/// Buckets in the window, as the failure policy's time window has.
const BUCKETS: usize = Config::WINDOW_BUCKETS as usize;
/// Buckets kept: a count window judges its ten full buckets and the one being
/// filled, so it always holds at least `window_calls` calls once it has seen
/// them (and at most a tenth more, and a call a bucket for each thread that
/// raced the call filling it).
const SLOTS: usize = BUCKETS + 1;
/// Latencies are binned in units of 2^10 ns (1.024 µs): a shift of the
/// nanos, where whole microseconds would take a division on every call.
const UNIT_SHIFT: u32 = 10;
/// Sub-bins per power of two: bins are at most 1/8 of their lower bound wide.
const SUB_BITS: u32 = 3;
/// Below this many units each unit has its own bin.
const LINEAR: u64 = 1 << (SUB_BITS + 1);
/// The highest power of two with its own bins: 2^31 units, about 37 minutes.
const TOP_EXP: u32 = 31;
/// Bins per histogram: 16 exact ones, then 8 per power of two from 2^4 to 2^31 units.
pub(crate) const BINS: usize = LINEAR as usize + ((TOP_EXP - SUB_BITS) << SUB_BITS) as usize;

/// The bin of a latency of `nanos`: below [`LINEAR`] units, one a unit; from
/// a power of two `2^e` of units on, eight sub-bins starting at `(e - 2) * 8`,
/// so the index is the top four bits of the units after the power's bins.
#[inline(always)]
fn bin(nanos: u64) -> usize {
    let units = nanos >> UNIT_SHIFT;
    if units < LINEAR {
        return units as usize;
    }
    let shift = 63 - SUB_BITS - units.leading_zeros();
    // Past 2^(TOP_EXP + 1) units the index only grows: the last bin holds them.
    (((shift as usize) << SUB_BITS) + (units >> shift) as usize).min(BINS - 1)
}

/// The first nanosecond past bin `index`: an upper bound of every latency in
/// it, but for the last bin, which also holds every latency past its end
/// (2^42 ns, about 73 minutes).
fn bin_end_nanos(index: usize) -> u64 {
    let index = index as u64;
    let shift = (index >> SUB_BITS).saturating_sub(1);
    ((index - (shift << SUB_BITS) + 1) << shift) << UNIT_SHIFT
}

/// Stamp bits that hold a bucket's position. Positions compare modulo
/// 2^POS_BITS, as later when less than half of that ahead: at ten calls a
/// bucket, 2^39 positions are 5.5 * 10^12 calls; at 1 ms a bucket, 17 years of
/// clock. Each take of a bucket keeps `bad_until`, the one position kept
/// apart from the buckets, near the window's
/// ([`LatencyWindow::keep_bad_until_near`]).
const POS_BITS: u32 = 40;
const POS_MASK: u64 = (1 << POS_BITS) - 1;
/// Generation bits a stamp carries above its position: a tag, so that a
/// claim's compare-and-swap cannot succeed on a bucket another generation
/// re-stamped with the same position meanwhile, and so that the common call
/// ([`LatencyWindow::add_unjudged`]) knows its bucket's generation from the
/// stamp alone. Two generations with one tag are 2^23 transitions apart: the
/// common call could mistake one for the other only after a call stayed in
/// flight that long, or after a count window saw exactly a multiple of 2^23
/// transitions and no closed call between. Then the calls it adds, a bucket's
/// at most, count in no window. The top bit stays clear, so no stamp is
/// [`RESETTING`] or [`NEVER`].
const TAG_MASK: u64 = (1 << (63 - POS_BITS)) - 1;
/// A bucket being emptied: its counts are not to be touched.
const RESETTING: u64 = u64::MAX;
/// A bucket never written.
const NEVER: u64 = u64::MAX - 1;
/// Calls in the high 32 bits of a tally (plus the window's
/// [`bias`](LatencyWindow::bias)), calls over the bound in the low 32.
const CALL: u64 = 1 << 32;
/// A time window's bucket stops counting at 2^31 calls, far from the 2^32
/// that would carry out of the tally, whatever the number of adds in flight.
const BUCKET_CAP: u64 = 1 << 31;
/// Words of a bucket's bitmap of bins that may hold a count.
const TOUCHED_WORDS: usize = BINS.div_ceil(64);

fn stamp(position: u64, generation: u64) -> u64 {
    ((generation & TAG_MASK) << POS_BITS) | position
}

fn position_of(stamp: u64) -> u64 {
    stamp & POS_MASK
}

/// Whether position `a` is later than `b`, positions wrapping at [`POS_BITS`].
#[inline(always)]
fn is_later_position(a: u64, b: u64) -> bool {
    // `a - b` modulo 2^POS_BITS is in 1..2^(POS_BITS - 1) exactly when, shifted
    // to the top of the word, it is above zero as a signed number.
    ((a.wrapping_sub(b) << (64 - POS_BITS)) as i64) > 0
}

/// How far position `newer` is past `older` (0 when it is not past it).
fn distance(newer: u64, older: u64) -> u64 {
    if is_later_position(newer, older) {
        newer.wrapping_sub(older) & POS_MASK
    } else {
        0
    }
}

/// One bucket's counts, alone on its cache lines: the calls of the current
/// position are added here by every thread, the older buckets only read.
struct Bucket {
    /// [`stamp`] of the counts below, [`RESETTING`] or [`NEVER`].
    stamp: AtomicU64,
    /// The generation the counts belong to, whole: written while the stamp
    /// reads [`RESETTING`], published by the stamp's store.
    generation: AtomicU64,
    /// Calls and calls over the bound: one add records both.
    tally: AtomicU64,
    /// A bit per bin that may hold a count: set by the add that finds its bin
    /// empty, so that emptying the bucket zeroes only the bins a call took.
    touched: [AtomicU64; TOUCHED_WORDS],
    /// The latency histogram of the bucket's calls.
    bins: [AtomicU32; BINS],
}

impl Bucket {
    fn new() -> Self {
        Bucket {
            stamp: AtomicU64::new(NEVER),
            generation: AtomicU64::new(0),
            tally: AtomicU64::new(0),
            touched: std::array::from_fn(|_| AtomicU64::new(0)),
            bins: std::array::from_fn(|_| AtomicU32::new(0)),
        }
    }

    /// Adds a call to bin `bin`, noting the bin when it was empty.
    #[inline]
    fn add_to_bin(&self, bin: usize) {
        if self.bins[bin].fetch_add(1, Relaxed) == 0 {
            self.touched[bin / 64].fetch_or(1 << (bin % 64), Relaxed);
        }
    }

    /// Takes the bucket, found stamped `seen`, for `generation` and the
    /// stamp `mine`: empties it to the window's `bias`, holding it
    /// [`RESETTING`] meanwhile, with a call's tally and bin in it if one is
    /// given. `false` when another call changed the stamp first.
    #[inline(always)]
    fn take(
        &self,
        seen: u64,
        generation: u64,
        mine: u64,
        bias: u64,
        call: Option<(u64, usize)>,
    ) -> bool {
        if self
            .stamp
            .compare_exchange(seen, RESETTING, Acquire, Relaxed)
            .is_err()
        {
            return false;
        }
        self.empty_bins();
        match call {
            Some((delta, bin)) => {
                self.tally.store(bias + delta, Relaxed);
                self.add_to_bin(bin);
            }
            None => self.tally.store(bias, Relaxed),
        }
        self.generation.store(generation, Relaxed);
        self.stamp.store(mine, Release);
        true
    }

    /// Zeroes every bin a call took; the caller holds the bucket
    /// ([`RESETTING`]).
    fn empty_bins(&self) {
        for (word, touched) in self.touched.iter().enumerate() {
            let mut bits = touched.swap(0, Relaxed);
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.bins[word * 64 + bit].store(0, Relaxed);
            }
        }
    }
}

/// The position a call took in the window ([`LatencyWindow::add_unjudged`])
/// and the bucket it lives in: what [`LatencyWindow::record_taken`] records
/// the call at, and a count window's cursor holds. A call reads its position
/// once, so it is handed on, never read again.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Taken {
    position: u64,
    slot: usize,
}

/// How a bucket's position is read.
#[derive(Clone, Copy, Debug)]
enum Span {
    /// A tenth of `window_ms`, in nanos.
    Time(u64),
    /// A tenth of `window_calls`, rounded up, in calls: the calls that fill
    /// a bucket and move the window's [`cursor`](LatencyWindow::cursor) on.
    Calls(u64),
}

/// Bits of a count window's cursor that hold the slot of its position.
const SLOT_BITS: u32 = 4;
const _: () = assert!(SLOTS <= 1 << SLOT_BITS);

/// The latency window of one breaker: no lock, a call is a few relaxed atomic
/// adds to its bucket.
///
/// A bucket's position is the time since the clock's origin in bucket widths,
/// or, for a count window, the buckets the window has filled, in any
/// generation ([`cursor`](Self::cursor)). Position `p` lives in bucket
/// `p % SLOTS`; at position `p` a bucket counts when its generation is the
/// current one and its position is one of the `depth` up to `p` (a later one
/// is the clock stepping back: it counts, as current). The first call of a new
/// position in a bucket finds an older stamp, claims the bucket by swapping in
/// [`RESETTING`], zeroes the bins a call took, writes its own call and
/// publishes the new stamp; calls racing with it wait for those stores. In a
/// count window the call that fills a bucket takes the next one so, empty,
/// unless a call got there first. A call of an earlier generation than its
/// bucket's is dropped.
///
/// As in the time window, a thread stalled between reading a bucket's stamp
/// and adding to it, for as long as the bucket takes to be claimed for a new
/// position, adds its call there (and the bins may then hold one call fewer or
/// more than the tally; the p99 is ranked among the bins' own calls).
///
/// The verdict: the window's p99 by nearest rank (the `ceil(0.99 n)`-th
/// smallest latency) is above the bound exactly when more than `n / 100` calls
/// are, so only the counts of calls and of calls over the bound are summed,
/// and only when a call could trip: a call over the bound, or any call while a
/// bucket the window counts holds one ([`bad_until`](Self::bad_until)). A
/// call under the bound in a window without one can only keep it under.
pub(crate) struct LatencyWindow {
    /// Tunable live ([`retune`](Self::retune)): relaxed, read per record.
    bound_nanos: AtomicU64,
    min_calls: AtomicU64,
    span: Span,
    /// The latest generation a call was recorded for: calls of an older one
    /// are dropped. Written once a generation.
    generation: AtomicU64,
    /// The first position at which no bucket holding a call over the bound
    /// counts any more (the latest such bucket's position plus the depth).
    /// Only moves on: marked by calls over the bound, and brought up to the
    /// window's position by the take of each first-slot bucket
    /// ([`keep_bad_until_near`](Self::keep_bad_until_near)).
    bad_until: AtomicU64,
    /// A count window's position and its slot (`position << SLOT_BITS |
    /// slot`): read by every call, written only by the call that fills the
    /// bucket at it, which moves it on. The slot rides along so that no call
    /// divides by [`SLOTS`].
    cursor: CachePadded<AtomicU64>,
    /// What an empty bucket's tally holds: 0 in a time window. In a count
    /// window, enough calls that the call that fills a bucket finds the
    /// tally's top bit set, as a time window's call finds it at
    /// [`BUCKET_CAP`]: so one test of the add's result sends both to
    /// [`at_limit`](Self::at_limit), and the common call reads nothing more.
    bias: u64,
    buckets: Box<[CachePadded<Bucket>; SLOTS]>,
}

impl std::fmt::Debug for LatencyWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencyWindow")
            .field("bound_nanos", &self.bound_nanos)
            .field("span", &self.span)
            .finish_non_exhaustive()
    }
}

/// What the window holds: its calls, those over the bound, and the p99 the
/// histogram places.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LatencyCounts {
    pub(crate) calls: u64,
    pub(crate) over: u64,
    /// Upper bound of the bin holding the p99 (nearest rank); `None` when empty.
    pub(crate) p99: Option<Duration>,
}

impl LatencyWindow {
    /// The window `config` asks for; `None` without `latency_p99_ms`.
    pub(crate) fn new(config: &Config) -> Option<Self> {
        let bound = config.latency_p99()?;
        let (span, min_calls) = match config.policy() {
            FailurePolicy::TimeWindow { window_ms, rates } => (
                Span::Time((millis_to_nanos(window_ms) / BUCKETS as u64).max(1)),
                rates.min_calls,
            ),
            FailurePolicy::CountWindow {
                window_calls,
                rates,
            } => (
                Span::Calls(u64::from(window_calls).div_ceil(BUCKETS as u64).max(1)),
                rates.min_calls,
            ),
            // The builder refuses `latency_p99_ms` without a window.
            _ => return None,
        };
        Some(LatencyWindow {
            bound_nanos: AtomicU64::new(duration_to_nanos(bound)),
            min_calls: AtomicU64::new(u64::from(min_calls)),
            span,
            generation: AtomicU64::new(0),
            bad_until: AtomicU64::new(0),
            cursor: CachePadded::new(AtomicU64::new(0)),
            bias: match span {
                Span::Time(_) => 0,
                Span::Calls(calls) => (BUCKET_CAP - (calls - 1)) << 32,
            },
            buckets: Box::new(std::array::from_fn(|_| CachePadded::new(Bucket::new()))),
        })
    }

    /// Takes `config`'s bound and `min_calls` from the next call on; what the
    /// window holds stays (its span is fixed: a live change keeps the window).
    pub(crate) fn retune(&self, config: &Config) {
        if let Some(bound) = config.latency_p99() {
            self.bound_nanos.store(duration_to_nanos(bound), Relaxed);
        }
        if let Some(min_calls) = config.min_calls() {
            self.min_calls.store(u64::from(min_calls), Relaxed);
        }
    }

    /// How many buckets back the window reaches: a time window's ten (as the
    /// failure policy's), a count window's ten full ones and the current one.
    fn depth(&self) -> u64 {
        match self.span {
            Span::Time(_) => BUCKETS as u64,
            Span::Calls(_) => SLOTS as u64,
        }
    }

    /// Records a call of `generation` that took `nanos`, settled at `now`;
    /// returns whether the window's p99 is now above the bound.
    #[inline(always)]
    pub(crate) fn record(&self, generation: u64, now: u64, nanos: u64) -> bool {
        match self.add_unjudged(generation, now, nanos) {
            Ok(()) => false,
            Err(taken) => self.record_taken(generation, taken, nanos),
        }
    }

    /// The common call of [`record`](Self::record): one under the bound, into
    /// the bucket of its position and generation, while no bucket the window
    /// counts holds a call over the bound. It is two adds here, and cannot
    /// trip the window. Every other call is left to
    /// [`record_taken`](Self::record_taken), with the position it took.
    #[inline(always)]
    pub(crate) fn add_unjudged(&self, generation: u64, now: u64, nanos: u64) -> Result<(), Taken> {
        match self.span {
            Span::Time(width) => {
                let position = (now / width) & POS_MASK;
                let slot = (position % SLOTS as u64) as usize;
                self.add_unjudged_at(generation, Taken { position, slot }, nanos)
            }
            Span::Calls(_) => self.add_unjudged_calls(generation, nanos),
        }
    }

    /// [`add_unjudged`](Self::add_unjudged) of a count window's call, for a
    /// caller that knows the window counts calls: at the cursor.
    #[inline(always)]
    pub(crate) fn add_unjudged_calls(&self, generation: u64, nanos: u64) -> Result<(), Taken> {
        self.add_unjudged_at(generation, self.cursor(), nanos)
    }

    /// [`add_unjudged`](Self::add_unjudged) at `taken`.
    #[inline(always)]
    fn add_unjudged_at(&self, generation: u64, taken: Taken, nanos: u64) -> Result<(), Taken> {
        let Taken { position, slot } = taken;
        let bucket = &self.buckets[slot];
        if nanos <= self.bound_nanos.load(Relaxed)
            && bucket.stamp.load(Acquire) == stamp(position, generation)
            && !is_later_position(self.bad_until.load(Relaxed), position)
        {
            // A call of a generation older than the window's latest may add
            // here too: its bucket is one no later generation counts.
            let before = bucket.tally.fetch_add(CALL, Relaxed);
            if (before as i64) >= 0 {
                bucket.add_to_bin(bin(nanos));
            } else {
                self.at_limit(generation, taken, before, nanos);
            }
            return Ok(());
        }
        Err(taken)
    }

    /// A call added to a bucket's tally that found it at its limit (the
    /// tally `before` it has its top bit set): a count window's call that
    /// fills its bucket (or runs past it, while the one that filled it has
    /// yet to move the cursor) goes in and moves the cursor on; a time
    /// window's bucket stops counting at [`BUCKET_CAP`], far from the 2^32
    /// that would carry out of the tally, whatever the number of adds in
    /// flight.
    #[cold]
    #[inline(never)]
    fn at_limit(&self, generation: u64, taken: Taken, before: u64, nanos: u64) {
        let bucket = &self.buckets[taken.slot];
        if self.calls_of(before) >= BUCKET_CAP {
            bucket.tally.fetch_sub(CALL, Relaxed);
            return;
        }
        bucket.add_to_bin(bin(nanos));
        self.filled(generation, taken);
    }

    /// The calls a tally holds, without the window's [`bias`](Self::bias).
    fn calls_of(&self, tally: u64) -> u64 {
        (tally.wrapping_sub(self.bias)) >> 32
    }

    /// A count window's position and slot, as its cursor holds them.
    #[inline(always)]
    fn cursor(&self) -> Taken {
        let cursor = self.cursor.load(Relaxed);
        Taken {
            position: cursor >> SLOT_BITS,
            slot: (cursor & ((1 << SLOT_BITS) - 1)) as usize,
        }
    }

    /// Moves a count window's cursor past `taken`, whose bucket a call of
    /// `generation` just filled, unless a call did already or the cursor is
    /// elsewhere (a call that read it long ago, and added to a bucket the
    /// window took for a later position since). The call that moves it takes
    /// the next bucket for its position, so that the calls there find it
    /// ready: one call a bucket leaves the common way, not two.
    #[inline(always)]
    fn filled(&self, generation: u64, taken: Taken) {
        if !matches!(self.span, Span::Calls(_)) {
            return;
        }
        let Taken { position, slot } = taken;
        let next = Taken {
            position: (position + 1) & POS_MASK,
            slot: if slot + 1 == SLOTS { 0 } else { slot + 1 },
        };
        // Relaxed: a call reads the bucket at the cursor by its stamp
        // (acquire), and the cursor orders nothing else.
        if self
            .cursor
            .compare_exchange(
                position << SLOT_BITS | slot as u64,
                next.position << SLOT_BITS | next.slot as u64,
                Relaxed,
                Relaxed,
            )
            .is_ok()
        {
            let bucket = &self.buckets[next.slot];
            let seen = bucket.stamp.load(Acquire);
            let theirs = bucket.generation.load(Relaxed);
            if self.may_take(seen, theirs, generation, next.position) {
                let mine = stamp(next.position, generation);
                bucket.take(seen, generation, mine, self.bias, None);
            }
            if next.slot == 0 {
                self.keep_bad_until_near(next.position);
            }
        }
    }

    /// Whether the call that filled a bucket of `generation` takes the next
    /// one, at `position`, stamped `seen` for generation `theirs`: a bucket
    /// never written, of an earlier generation, or of this one at an earlier
    /// position. A bucket another call is taking ([`RESETTING`]: one that
    /// read the cursor as this call moved it) is left to that call, as are a
    /// later position's and a later generation's.
    fn may_take(&self, seen: u64, theirs: u64, generation: u64, position: u64) -> bool {
        seen != RESETTING
            && (seen == NEVER
                || (theirs == generation && is_later_position(position, position_of(seen)))
                || (theirs != generation && is_later_generation(generation, theirs)))
    }

    /// [`record`](Self::record) of a call that
    /// [`add_unjudged`](Self::add_unjudged) left: one the window must judge,
    /// or whose bucket must be claimed first, at the position it took.
    #[inline(never)]
    pub(crate) fn record_taken(&self, generation: u64, taken: Taken, nanos: u64) -> bool {
        let Taken { position, slot } = taken;
        let latest = self.generation.load(Relaxed);
        if latest != generation && !self.enter(generation, latest) {
            return false;
        }
        let over = nanos > self.bound_nanos.load(Relaxed);
        let Some(current) = self.add(slot, generation, position, over, bin(nanos)) else {
            return false;
        };
        // Judged before a call that fills its bucket takes the next, which
        // holds the oldest bucket this call's window counts.
        let tripped = (over || is_later_position(self.bad_until.load(Relaxed), position))
            && self.judge(generation, position, slot, current);
        if let Span::Calls(calls) = self.span {
            if self.calls_of(current) >= calls {
                self.filled(generation, taken);
            }
        }
        tripped
    }

    /// Whether a call of `generation` counts, the window's latest being
    /// `latest`: not when it is older; a later one becomes the latest.
    #[cold]
    #[inline(never)]
    fn enter(&self, generation: u64, mut latest: u64) -> bool {
        while is_later_generation(generation, latest) {
            match self
                .generation
                .compare_exchange_weak(latest, generation, Relaxed, Relaxed)
            {
                Ok(_) => return true,
                Err(seen) => latest = seen,
            }
        }
        latest == generation
    }

    /// The verdict of a call that could trip: the window's calls and calls
    /// over the bound, `current` (the tally of bucket `slot`) and the others.
    fn judge(&self, generation: u64, position: u64, slot: usize, current: u64) -> bool {
        let (mut calls, mut over) = (self.calls_of(current), current & (CALL - 1));
        for (i, bucket) in self.buckets.iter().enumerate() {
            if i == slot {
                continue;
            }
            if let Some(tally) = self.live_tally(bucket, generation, position) {
                calls += self.calls_of(tally);
                over += tally & (CALL - 1);
            }
        }
        // Nearest rank: p99 is the ceil(0.99 n)-th smallest latency, which is
        // above the bound exactly when more than n / 100 calls are.
        calls >= self.min_calls.load(Relaxed) && over.saturating_mul(100) > calls
    }

    /// The tally of `bucket` when the window at `position` counts it for
    /// `generation`.
    fn live_tally(&self, bucket: &Bucket, generation: u64, position: u64) -> Option<u64> {
        let seen = bucket.stamp.load(Acquire);
        if seen == RESETTING || seen == NEVER {
            return None;
        }
        // Expired: `depth` positions or more before this one. A later
        // position is the clock stepping back, and counts.
        if distance(position, position_of(seen)) >= self.depth() {
            return None;
        }
        if bucket.generation.load(Relaxed) != generation {
            return None;
        }
        Some(bucket.tally.load(Relaxed))
    }

    /// Adds a call (`over` the bound or not, latency in bin `bin`) to bucket
    /// `slot` at `position`; returns the bucket's tally with it, `None` when
    /// the call was too old to count.
    fn add(
        &self,
        slot: usize,
        generation: u64,
        position: u64,
        over: bool,
        bin: usize,
    ) -> Option<u64> {
        let bucket = &self.buckets[slot];
        let mine = stamp(position, generation);
        let delta = CALL | u64::from(over);
        let mut spins = 0u32;
        loop {
            let seen = bucket.stamp.load(Acquire);
            let theirs = bucket.generation.load(Relaxed);
            // The bucket of this position, or, the clock having stepped back,
            // of a later one: add here.
            if theirs == generation
                && (seen == mine
                    || (seen != RESETTING
                        && seen != NEVER
                        && is_later_position(position_of(seen), position)))
            {
                let tally = bucket.tally.fetch_add(delta, Relaxed);
                if self.calls_of(tally) >= BUCKET_CAP {
                    bucket.tally.fetch_sub(delta, Relaxed);
                    return Some(tally);
                }
                bucket.add_to_bin(bin);
                if over {
                    self.mark_bad(position_of(seen));
                }
                return Some(tally + delta);
            }
            if seen == RESETTING {
                // Another call is emptying this bucket: a few stores away.
                spins += 1;
                if spins < 64 && !cfg!(loom) {
                    std::hint::spin_loop();
                } else {
                    yield_now();
                }
                continue;
            }
            // An earlier position of this generation, or an earlier
            // generation: claim the bucket. A later generation's bucket: this
            // call is stale, drop it.
            if seen != NEVER && theirs != generation && !is_later_generation(generation, theirs) {
                return None;
            }
            if bucket.take(seen, generation, mine, self.bias, Some((delta, bin))) {
                if slot == 0 {
                    self.keep_bad_until_near(position);
                }
                if over {
                    self.mark_bad(position);
                }
                return Some(self.bias + delta);
            }
        }
    }

    /// Notes a call over the bound in the bucket of `position`: every call is
    /// judged while that bucket counts.
    fn mark_bad(&self, position: u64) {
        let until = position.wrapping_add(self.depth()) & POS_MASK;
        let mut seen = self.bad_until.load(Relaxed);
        while is_later_position(until, seen) {
            match self
                .bad_until
                .compare_exchange_weak(seen, until, Relaxed, Relaxed)
            {
                Ok(_) => return,
                Err(now) => seen = now,
            }
        }
    }

    /// Moves [`bad_until`](Self::bad_until) up to `position`, a bucket's
    /// just taken, when it is behind. Positions compare modulo 2^POS_BITS, so
    /// a `bad_until` left half the positions behind would read as ahead and
    /// send every call to be judged; run at each take of the first slot, this
    /// keeps it near. One that reads as more than a quarter of the positions
    /// ahead is such a one too: a mark is the window's depth ahead at most,
    /// or a clock's step back more, and those are kept. A compare-and-swap,
    /// so that a call over the bound marking it meanwhile keeps its mark.
    /// Calls at earlier positions, still in flight, are judged: slower,
    /// never wrong.
    fn keep_bad_until_near(&self, position: u64) {
        let seen = self.bad_until.load(Relaxed);
        let ahead = distance(seen, position);
        if ahead == 0 || ahead > 1 << (POS_BITS - 2) {
            let _ = self
                .bad_until
                .compare_exchange(seen, position, Relaxed, Relaxed);
        }
    }

    /// What the window holds for `generation` at `now`. Pure.
    pub(crate) fn counts(&self, generation: u64, now: u64) -> LatencyCounts {
        let position = match self.span {
            Span::Time(width) => (now / width) & POS_MASK,
            // The bucket the next call goes to: the call that filled the one
            // before it took it, for none so far.
            Span::Calls(_) => self.cursor().position,
        };
        let mut counts = LatencyCounts {
            calls: 0,
            over: 0,
            p99: None,
        };
        let mut bins = [0u64; BINS];
        for bucket in self.buckets.iter() {
            let Some(tally) = self.live_tally(bucket, generation, position) else {
                continue;
            };
            counts.calls += self.calls_of(tally);
            counts.over += tally & (CALL - 1);
            for (sum, n) in bins.iter_mut().zip(bucket.bins.iter()) {
                *sum += u64::from(n.load(Relaxed));
            }
        }
        // Ranked among the bins' own calls: a call racing a bucket's claim
        // may be in one and not the other.
        let binned: u64 = bins.iter().sum();
        if counts.calls > 0 && binned > 0 {
            let rank = (binned * 99).div_ceil(100);
            let mut seen = 0;
            let index = bins
                .iter()
                .position(|n| {
                    seen += n;
                    seen >= rank
                })
                .unwrap_or(BINS - 1);
            counts.p99 = Some(Duration::from_nanos(bin_end_nanos(index)));
        }
        counts
    }
}

/// Gives the thread emptying a bucket the processor (and, under loom, lets the
/// model schedule it).
fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_at_most_an_eighth_of_their_lower_bound_wide() {
        let unit = 1u64 << UNIT_SHIFT;
        let mut last = 0;
        // Every unit of the linear bins, then each power of two's eight
        // sub-bins at their first unit and their last.
        for units in (0..LINEAR).chain((4..=TOP_EXP).flat_map(|e| {
            let base = 1u64 << e;
            (0..8).flat_map(move |s| {
                let start = base + s * (base >> 3);
                [start, start + (base >> 3) - 1]
            })
        })) {
            for nanos in [units * unit, units * unit + unit - 1] {
                let index = bin(nanos);
                assert!(index >= last, "bins grow with latency");
                assert!(index < BINS);
                last = index;
                let end = bin_end_nanos(index);
                assert!(end > nanos, "{nanos} ns below its bin's end {end}");
                if index > 0 {
                    assert!(bin_end_nanos(index - 1) <= nanos, "{nanos} ns: bin {index}");
                }
                if units >= LINEAR {
                    assert!((end - nanos) * 8 <= nanos, "{nanos} ns: end {end}");
                }
            }
        }
        assert_eq!(bin(u64::MAX), BINS - 1);
        assert_eq!(bin((1 << (TOP_EXP + 1)) * unit), BINS - 1);
        assert_eq!(bin((1 << (TOP_EXP + 1)) * unit - 1), BINS - 1);
        assert_eq!(bin_end_nanos(BINS - 1), (1 << (TOP_EXP + 1)) * unit);
    }

    #[test]
    fn a_position_is_later_up_to_half_the_positions_ahead_across_the_wrap() {
        let half = 1u64 << (POS_BITS - 1);
        for (a, b, later) in [
            (1, 0, true),
            (0, 0, false),
            (0, 1, false),
            (half - 1, 0, true),
            (half, 0, false),
            (half + 1, 0, false),
            (0, POS_MASK, true),
            (5, POS_MASK - 4, true),
            (POS_MASK - 4, 5, false),
            (POS_MASK, 0, false),
        ] {
            assert_eq!(is_later_position(a, b), later, "{a} after {b}");
        }
    }

    #[test]
    fn a_time_window_forgets_buckets_older_than_the_window() {
        let config = Config::builder()
            .window_duration(Duration::from_secs(1))
            .min_calls(1)
            .latency_p99(Duration::from_millis(10))
            .build()
            .unwrap();
        let window = LatencyWindow::new(&config).unwrap();
        let ms = 1_000_000;
        assert!(
            window.record(0, 0, 20 * ms),
            "one slow call of one: p99 slow"
        );
        let later = 1_000 * ms;
        assert_eq!(window.counts(0, later).calls, 0, "a whole window later");
        assert!(!window.record(0, later, ms));
    }

    const MS: u64 = 1_000_000;

    fn count_window(window_calls: u32, min_calls: u32) -> LatencyWindow {
        let config = Config::builder()
            .window_calls(window_calls)
            .min_calls(min_calls)
            .latency_p99(Duration::from_millis(10))
            .build()
            .unwrap();
        LatencyWindow::new(&config).unwrap()
    }

    #[test]
    fn the_fast_call_that_completes_min_calls_among_slow_ones_trips() {
        let window = count_window(100, 4);
        assert!(!window.record(0, 0, 20 * MS), "one call of four");
        assert!(!window.record(0, 0, MS));
        assert!(!window.record(0, 0, MS), "three calls, under min_calls");
        assert!(
            window.record(0, 0, MS),
            "the fourth, under the bound, judges one slow call in four"
        );
    }

    #[test]
    fn fast_calls_in_a_window_without_slow_ones_never_trip_and_are_all_counted() {
        let window = count_window(100, 1);
        for _ in 0..1_000 {
            assert!(!window.record(0, 0, MS));
        }
        let counts = window.counts(0, 0);
        assert_eq!(
            (counts.over, counts.p99),
            // 1 ms is 976 units: the bin [960, 1,024) units.
            (0, Some(Duration::from_nanos(1_024 << UNIT_SHIFT)))
        );
        assert!(
            (100..=110).contains(&counts.calls),
            "the last 100 to 110 calls: {}",
            counts.calls
        );
    }

    #[test]
    fn a_bucket_taken_for_a_new_position_forgets_its_old_bins() {
        // Buckets of 10 calls: the call that fills the 11th bucket takes the
        // first again, for the calls after it.
        let window = count_window(100, 100);
        for _ in 0..10 {
            window.record(0, 0, 5_000 * MS);
        }
        for _ in 0..110 {
            window.record(0, 0, MS);
        }
        let counts = window.counts(0, 0);
        assert_eq!((counts.calls, counts.over), (100, 0));
        assert_eq!(
            counts.p99,
            Some(Duration::from_nanos(1_024 << UNIT_SHIFT)),
            "the slow calls' bins are empty"
        );
    }

    #[test]
    fn a_later_generation_starts_empty_and_an_older_ones_calls_are_dropped() {
        let window = count_window(10, 1);
        assert!(window.record(3, 0, 20 * MS));
        assert_eq!(window.counts(4, 0).calls, 0, "a new generation is empty");
        assert!(!window.record(4, 0, MS));
        assert!(!window.record(3, 0, 20 * MS), "a stale call counts nowhere");
        let counts = window.counts(4, 0);
        assert_eq!((counts.calls, counts.over), (1, 0));
    }

    #[test]
    fn a_count_windows_bucket_takes_its_calls_and_the_next_one_the_rest() {
        // Buckets of 10 calls.
        let window = count_window(100, 1);
        for _ in 0..25 {
            assert!(!window.record(0, 0, MS));
        }
        let Taken { position, slot } = window.cursor();
        assert_eq!((position, slot), (2, 2));
        let calls = |slot: usize| window.calls_of(window.buckets[slot].tally.load(Relaxed));
        assert_eq!((calls(0), calls(1), calls(2)), (10, 10, 5));
        // Eleven buckets later the cursor is back at the first slot, which
        // the call that filled the eleventh took, empty, for the next call:
        // the window holds the ten full buckets before it.
        for _ in 25..110 {
            window.record(0, 0, MS);
        }
        let Taken { position, slot } = window.cursor();
        assert_eq!((position, slot), (11, 0));
        assert_eq!(calls(0), 0);
        assert_eq!(window.counts(0, 0).calls, 100);
        window.record(0, 0, MS);
        assert_eq!((calls(0), window.counts(0, 0).calls), (1, 101));
    }

    #[test]
    fn the_call_that_fills_a_bucket_leaves_the_next_to_a_call_taking_it() {
        // Buckets of 10 calls; nine calls in the first.
        let window = count_window(100, 1);
        for _ in 0..9 {
            window.record(0, 0, MS);
        }
        // A call that read the cursor as the filler moved it is taking the
        // next bucket: its stamp held, its call in the tally.
        let next = &window.buckets[1];
        next.stamp.store(RESETTING, Relaxed);
        next.tally.store(window.bias + CALL, Relaxed);
        window.record(0, 0, MS);
        assert_eq!(
            window.cursor().position,
            1,
            "the tenth call filled the first bucket"
        );
        assert_eq!(
            next.stamp.load(Relaxed),
            RESETTING,
            "left to the call taking it"
        );
        assert_eq!(
            window.calls_of(next.tally.load(Relaxed)),
            1,
            "its call kept"
        );
    }

    #[test]
    fn a_window_far_past_its_last_slow_call_keeps_calls_on_the_common_way() {
        // Positions compare modulo 2^POS_BITS: a window half the positions
        // past its last mark would read the mark as ahead and judge every
        // call. One call a bucket, from far along, past a first slot.
        let window = count_window(10, 1);
        let far = (1u64 << (POS_BITS - 1)) + 3;
        window
            .cursor
            .store((far << SLOT_BITS) | (far % SLOTS as u64), Relaxed);
        for _ in 0..SLOTS {
            assert!(!window.record(0, 0, MS));
        }
        let position = window.cursor().position;
        assert_eq!(position, far + SLOTS as u64);
        assert!(!is_later_position(window.bad_until.load(Relaxed), position));
    }

    #[test]
    fn racing_threads_fill_a_count_windows_buckets_and_lose_no_call() {
        // Buckets of 2,000 calls, ten of them for the threads' 20,000 calls:
        // the window holds every one.
        let window = count_window(20_000, 1);
        const THREADS: u64 = 4;
        const CALLS: u64 = 5_000;
        std::thread::scope(|s| {
            for _ in 0..THREADS {
                let window = &window;
                s.spawn(move || {
                    for _ in 0..CALLS {
                        window.record(0, 0, MS);
                    }
                });
            }
        });
        assert_eq!(window.counts(0, 0).calls, THREADS * CALLS);
        // A bucket the cursor left holds its 2,000 calls, and at most a call
        // of each other thread racing the one that filled it.
        let Taken { position, .. } = window.cursor();
        assert!((9..=10).contains(&position), "{position}");
        for bucket in &window.buckets[..position as usize] {
            let calls = window.calls_of(bucket.tally.load(Relaxed));
            assert!((2_000..2_000 + THREADS).contains(&calls), "{calls}");
        }
    }

    #[test]
    fn racing_threads_lose_no_call() {
        // A time window of 10 s: every call at one instant lands in one bucket.
        let config = Config::builder()
            .window_duration(Duration::from_secs(10))
            .min_calls(1)
            .latency_p99(Duration::from_millis(10))
            .build()
            .unwrap();
        let window = LatencyWindow::new(&config).unwrap();
        const THREADS: u64 = 4;
        const CALLS: u64 = 20_000;
        let halfway = std::sync::Barrier::new(THREADS as usize);
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let (window, halfway) = (&window, &halfway);
                s.spawn(move || {
                    // Half way the threads move on together to epoch 11, whose
                    // bucket is epoch 0's: they race to empty it and to add.
                    for n in 0..CALLS {
                        if n == CALLS / 2 {
                            halfway.wait();
                        }
                        let now = if n < CALLS / 2 { 0 } else { 11_000 * MS };
                        window.record(0, now, if n % 2 == t % 2 { MS } else { 2 * MS });
                    }
                });
            }
        });
        let counts = window.counts(0, 11_000 * MS);
        assert_eq!(counts.calls, THREADS * CALLS / 2);
        assert_eq!(counts.over, 0);
        // 2 ms is 1,953 units: the bin [1,920, 2,048) units.
        assert_eq!(counts.p99, Some(Duration::from_nanos(2_048 << UNIT_SHIFT)));
    }
}

/// The bucket protocol under loom's model checker.
/// Run with `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p breaker-core --release --lib loom_`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    const MS: u64 = 1_000_000;

    fn window() -> Arc<LatencyWindow> {
        let config = Config::builder()
            .window_duration(Duration::from_millis(10))
            .min_calls(1)
            .latency_p99(Duration::from_millis(10))
            .build()
            .unwrap();
        Arc::new(LatencyWindow::new(&config).unwrap())
    }

    #[test]
    fn loom_two_calls_racing_a_bucket_rollover_are_both_kept_and_old_bins_go() {
        loom::model(|| {
            let w = window();
            // Position 0 holds a slow call; both threads record at position 11,
            // which lives in the same bucket and must empty it first.
            assert!(w.record(0, 0, 20 * MS));
            let handles: Vec<_> = (0..2)
                .map(|i| {
                    let w = Arc::clone(&w);
                    loom::thread::spawn(move || w.record(0, 11 * MS, (1 + i) * MS))
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            let c = w.counts(0, 11 * MS);
            assert_eq!((c.calls, c.over), (2, 0));
            assert_eq!(c.p99, Some(Duration::from_nanos(2_048 << UNIT_SHIFT)));
        });
    }

    #[test]
    fn loom_calls_racing_to_fill_a_count_windows_bucket_move_the_cursor_once() {
        // Bounded as the breaker's models are: a call waiting out another's
        // claim of a bucket spins, and unbounded preemption lets it spin on.
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(|| {
            // Two calls a bucket: the first call takes bucket 0, and the two
            // threads race to fill it, move the cursor and take bucket 1.
            let config = Config::builder()
                .window_calls(20)
                .min_calls(1)
                .latency_p99(Duration::from_millis(10))
                .build()
                .unwrap();
            let w = Arc::new(LatencyWindow::new(&config).unwrap());
            assert!(!w.record(0, 0, MS));
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let w = Arc::clone(&w);
                    loom::thread::spawn(move || w.record(0, 0, MS))
                })
                .collect();
            for h in handles {
                assert!(!h.join().unwrap());
            }
            let Taken { position, slot } = w.cursor();
            assert_eq!((position, slot), (1, 1), "moved once");
            assert_eq!(position_of(w.buckets[1].stamp.load(Acquire)), 1);
            // Every call in a tally and a bin (read without `counts`, whose
            // reading of every bin takes loom past its bound of branches).
            let tally = |b: usize| w.buckets[b].tally.load(Relaxed);
            let binned = |b: usize| w.buckets[b].bins[bin(MS)].load(Relaxed);
            assert_eq!(
                w.calls_of(tally(0)) + w.calls_of(tally(1)),
                3,
                "no call lost"
            );
            assert_eq!(binned(0) + binned(1), 3);
            assert_eq!(tally(0) & (CALL - 1), 0);
        });
    }

    #[test]
    fn loom_a_stale_generation_racing_a_new_one_never_mixes_in() {
        loom::model(|| {
            let w = window();
            let old = {
                let w = Arc::clone(&w);
                loom::thread::spawn(move || w.record(4, MS, 20 * MS))
            };
            w.record(5, MS, MS);
            old.join().unwrap();
            let c = w.counts(5, MS);
            assert_eq!((c.calls, c.over), (1, 0));
        });
    }
}
