//! The latency trip (`latency_p99_ms`): a window of fixed-size latency
//! histograms, one per bucket, that trips when the window's p99 is above the
//! bound.
//!
//! It rides on the failure policy's window: a time window's buckets are a tenth
//! of `window_ms`, a count window's a tenth of `window_calls` calls (so the view
//! moves a tenth at a time, and holds between `window_calls` calls and a tenth
//! more). Nothing is allocated per call; each bucket is about
//! 1 KiB, taken once when the breaker is made.

use std::time::Duration;

use parking_lot::Mutex;

use crate::clock::{duration_to_nanos, millis_to_nanos};
use crate::config::{Config, FailurePolicy};
use crate::sync::{AtomicU64, Ordering::Relaxed};

/// Buckets in the window, as the failure policy's time window has.
const BUCKETS: usize = Config::WINDOW_BUCKETS as usize;
/// Buckets kept: a count window judges its ten full buckets and the one being
/// filled, so it always holds at least `window_calls` calls once it has seen
/// them (and at most a tenth more).
const SLOTS: usize = BUCKETS + 1;
/// Sub-bins per power of two: bins are at most 1/8 of their lower bound wide.
const SUB_BITS: u32 = 3;
/// Below this many microseconds each microsecond has its own bin.
const LINEAR: u64 = 1 << (SUB_BITS + 1);
/// The highest power of two with its own bins: 2^31 µs, about 36 minutes.
const TOP_EXP: u32 = 31;
/// Bins per histogram: 16 exact ones, then 8 per power of two from 2^4 to 2^31 µs.
pub(crate) const BINS: usize = LINEAR as usize + ((TOP_EXP - SUB_BITS) << SUB_BITS) as usize;

/// The bin of a latency of `nanos`.
fn bin(nanos: u64) -> usize {
    let micros = nanos / 1_000;
    if micros < LINEAR {
        return micros as usize;
    }
    let exp = 63 - micros.leading_zeros(); // >= SUB_BITS + 1
    if exp > TOP_EXP {
        return BINS - 1;
    }
    let sub = (micros >> (exp - SUB_BITS)) & ((1 << SUB_BITS) - 1);
    LINEAR as usize + (((exp - SUB_BITS - 1) << SUB_BITS) as usize) + sub as usize
}

/// The first microsecond past bin `index`: an upper bound of every latency in it.
fn bin_end_micros(index: usize) -> u64 {
    if (index as u64) < LINEAR {
        return index as u64 + 1;
    }
    let past = index as u64 - LINEAR;
    let exp = (past >> SUB_BITS) as u32 + SUB_BITS + 1;
    let sub = past & ((1 << SUB_BITS) - 1);
    let width = 1u64 << (exp - SUB_BITS);
    (1u64 << exp) + (sub + 1) * width
}

#[derive(Clone, Copy)]
struct Bucket {
    /// Its position plus one (time since the epoch in buckets, or calls in
    /// buckets); 0: never written.
    stamp: u64,
    calls: u32,
    /// Calls that took longer than the bound.
    over: u32,
    bins: [u32; BINS],
}

const EMPTY: Bucket = Bucket {
    stamp: 0,
    calls: 0,
    over: 0,
    bins: [0; BINS],
};

struct Ring {
    generation: u64,
    /// Calls recorded in this generation (count windows place by it).
    seq: u64,
    buckets: [Bucket; SLOTS],
}

/// How a bucket's position is read.
#[derive(Clone, Copy, Debug)]
enum Span {
    /// A tenth of `window_ms`, in nanos.
    Time(u64),
    /// A tenth of `window_calls`, rounded up, in calls.
    Calls(u64),
}

/// The latency window of one breaker.
pub(crate) struct LatencyWindow {
    /// Tunable live ([`retune`](Self::retune)): relaxed, read per record.
    bound_nanos: AtomicU64,
    min_calls: AtomicU64,
    span: Span,
    ring: Mutex<Box<Ring>>,
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
                Span::Calls(u64::from(window_calls).div_ceil(BUCKETS as u64)),
                rates.min_calls,
            ),
            // The builder refuses `latency_p99_ms` without a window.
            _ => return None,
        };
        Some(LatencyWindow {
            bound_nanos: AtomicU64::new(duration_to_nanos(bound)),
            min_calls: AtomicU64::new(u64::from(min_calls)),
            span,
            ring: Mutex::new(Box::new(Ring {
                generation: 0,
                seq: 0,
                buckets: [EMPTY; SLOTS],
            })),
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
    pub(crate) fn record(&self, generation: u64, now: u64, nanos: u64) -> bool {
        let mut ring = self.ring.lock();
        if generation < ring.generation {
            return false;
        }
        if generation > ring.generation {
            ring.generation = generation;
            ring.seq = 0;
            ring.buckets = [EMPTY; SLOTS];
        }
        let position = match self.span {
            Span::Time(width) => now / width,
            Span::Calls(width) => ring.seq / width,
        };
        ring.seq += 1;
        let bucket = &mut ring.buckets[(position % SLOTS as u64) as usize];
        if bucket.stamp != position + 1 {
            *bucket = EMPTY;
            bucket.stamp = position + 1;
        }
        bucket.calls = bucket.calls.saturating_add(1);
        bucket.over = bucket
            .over
            .saturating_add(u32::from(nanos > self.bound_nanos.load(Relaxed)));
        let slot = &mut bucket.bins[bin(nanos)];
        *slot = slot.saturating_add(1);
        let (calls, over) = live(&ring, position, self.depth()).fold((0u64, 0u64), |(c, o), b| {
            (c + u64::from(b.calls), o + u64::from(b.over))
        });
        // Nearest rank: p99 is the ceil(0.99 n)-th smallest latency, which is
        // above the bound exactly when more than n / 100 calls are.
        calls >= self.min_calls.load(Relaxed) && over.saturating_mul(100) > calls
    }

    /// What the window holds for `generation` at `now`. Pure.
    pub(crate) fn counts(&self, generation: u64, now: u64) -> LatencyCounts {
        let ring = self.ring.lock();
        let mut counts = LatencyCounts {
            calls: 0,
            over: 0,
            p99: None,
        };
        if ring.generation != generation {
            return counts;
        }
        let position = match self.span {
            Span::Time(width) => now / width,
            // The newest bucket: the one the last call went to.
            Span::Calls(width) => ring.seq.saturating_sub(1) / width,
        };
        let mut bins = [0u64; BINS];
        for bucket in live(&ring, position, self.depth()) {
            counts.calls += u64::from(bucket.calls);
            counts.over += u64::from(bucket.over);
            for (sum, n) in bins.iter_mut().zip(bucket.bins.iter()) {
                *sum += u64::from(*n);
            }
        }
        if counts.calls > 0 {
            let rank = (counts.calls * 99).div_ceil(100);
            let mut seen = 0;
            let index = bins
                .iter()
                .position(|n| {
                    seen += n;
                    seen >= rank
                })
                .unwrap_or(BINS - 1);
            counts.p99 = Some(Duration::from_micros(bin_end_micros(index)));
        }
        counts
    }
}

/// The buckets of the window ending at `position`, `depth` buckets deep.
fn live(ring: &Ring, position: u64, depth: u64) -> impl Iterator<Item = &Bucket> {
    ring.buckets.iter().filter(move |b| {
        b.stamp != 0 && b.stamp - 1 <= position && position - (b.stamp - 1) < depth
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_at_most_an_eighth_of_their_lower_bound_wide() {
        let mut last = 0;
        for micros in (0..LINEAR).chain((4..=TOP_EXP).flat_map(|e| {
            let base = 1u64 << e;
            (0..8).map(move |s| base + s * (base >> 3))
        })) {
            let index = bin(micros * 1_000);
            assert!(index >= last, "bins grow with latency");
            last = index;
            let end = bin_end_micros(index);
            assert!(end > micros, "{micros} µs below its bin's end {end}");
            if micros >= LINEAR {
                assert!((end - micros) * 8 <= micros, "{micros} µs: end {end}");
            }
        }
        assert_eq!(bin(u64::MAX), BINS - 1);
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
}
