//! The call-duration histogram a group keeps when it sets `histogram_ms` (or
//! `latency_p99_ms`, whose gauge it gives): fixed buckets by outcome in relaxed
//! atomics, and the [`CallDurations`] snapshot the exporters read as
//! `breaker_calls_seconds`.
//!
//! Recording a call is two relaxed `fetch_add`s (its bucket and the sum); no
//! lock, no allocation. A keyed group's keys share one histogram.

use std::time::Duration;

use crate::config::Config;
use crate::sync::{AtomicU64, Ordering::Relaxed};

/// Every bucket bound there is, in milliseconds: 1, 2.5 and 5 times each power
/// of ten from 1 ms to 10^8 ms. A group's histogram uses those up to the first
/// at or above its `histogram_ms`.
const BOUNDS_MS: [f64; 25] = [
    1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1e3, 2.5e3, 5e3, 1e4, 2.5e4, 5e4, 1e5,
    2.5e5, 5e5, 1e6, 2.5e6, 5e6, 1e7, 2.5e7, 5e7, 1e8,
];

/// The bounds in nanoseconds (each a whole number of microseconds).
const BOUNDS_NANOS: [u64; BOUNDS_MS.len()] = {
    let mut nanos = [0u64; BOUNDS_MS.len()];
    let mut i = 0;
    while i < nanos.len() {
        nanos[i] = (BOUNDS_MS[i] * 1e6) as u64;
        i += 1;
    }
    nanos
};

/// The bounds as durations.
const BOUNDS: [Duration; BOUNDS_MS.len()] = {
    let mut bounds = [Duration::ZERO; BOUNDS_MS.len()];
    let mut i = 0;
    while i < bounds.len() {
        bounds[i] = Duration::from_nanos(BOUNDS_NANOS[i]);
        i += 1;
    }
    bounds
};

/// The bounds in seconds as Prometheus writes a bucket's `le` label (the
/// shortest text of the `f64`, as `prometheus-client` writes it), `+Inf` last.
const BUCKET_LABELS: [&str; BOUNDS_MS.len() + 1] = [
    "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5",
    "10", "25", "50", "100", "250", "500", "1000", "2500", "5000", "10000", "25000", "50000",
    "100000", "+Inf",
];

/// The outcomes the histogram tells apart, as `breaker_calls_total`'s `kind`.
const KINDS: usize = 3;

/// How one call ended, for the histogram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Successful = 0,
    Failed = 1,
    Ignored = 2,
}

/// One outcome's buckets (not cumulative: each call is in one) and sum.
struct Series {
    buckets: [AtomicU64; BOUNDS_MS.len() + 1],
    /// The sum of the durations in nanoseconds, modulo 2^64: its carries are
    /// in `sum_wraps`, so the sum never wraps.
    sum_nanos: AtomicU64,
    sum_wraps: AtomicU64,
}

/// The histogram of one group (shared by a keyed group's keys).
pub(crate) struct CallHistogram {
    /// Buckets in use besides the last (`+Inf`).
    bounds: usize,
    /// A keyed group's: its keys' metrics leave it out (the group's carry it),
    /// so that summing a million keys does not read it a million times.
    pub(crate) keyed: bool,
    /// Asked for by `histogram_ms`, so shown in the metrics; a histogram kept
    /// only for the p99 gauge of `latency_p99_ms` is not.
    pub(crate) shown: bool,
    series: [Series; KINDS],
}

impl std::fmt::Debug for CallHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallHistogram")
            .field("bounds", &self.bounds)
            .finish_non_exhaustive()
    }
}

impl CallHistogram {
    /// The histogram `config` asks for: up to `histogram_ms`, or every bound
    /// for the p99 gauge of `latency_p99_ms`; `None` without either.
    pub(crate) fn new(config: &Config, keyed: bool) -> Option<Self> {
        let bounds = match config.histogram() {
            Some(max) => {
                let max_nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
                // The first bound at or above `max`: the rules keep `max` within the table.
                (BOUNDS_NANOS.partition_point(|&b| b < max_nanos) + 1).min(BOUNDS_MS.len())
            }
            None if config.latency_p99().is_some() => BOUNDS_MS.len(),
            None => return None,
        };
        Some(CallHistogram {
            bounds,
            keyed,
            shown: config.histogram().is_some(),
            series: std::array::from_fn(|_| Series {
                buckets: std::array::from_fn(|_| AtomicU64::new(0)),
                sum_nanos: AtomicU64::new(0),
                sum_wraps: AtomicU64::new(0),
            }),
        })
    }

    /// Counts a call of `kind` that took `nanos`.
    pub(crate) fn record(&self, kind: Kind, nanos: u64) {
        let series = &self.series[kind as usize];
        // A call of exactly a bound is in that bound's bucket (`le`).
        let bucket = BOUNDS_NANOS[..self.bounds].partition_point(|&b| b < nanos);
        series.buckets[bucket].fetch_add(1, Relaxed);
        let before = series.sum_nanos.fetch_add(nanos, Relaxed);
        if before.checked_add(nanos).is_none() {
            series.sum_wraps.fetch_add(1, Relaxed);
        }
    }

    /// The p99 of the successful and failed calls counted, by nearest rank
    /// (the `ceil(0.99 n)`-th smallest), as the upper bound of its bucket (the
    /// last bound for a call past it); `None` before the first call. Pure.
    pub(crate) fn p99(&self) -> Option<Duration> {
        let [successful, failed, _] = &self.series;
        let counts = || {
            (successful.buckets.iter().zip(&failed.buckets))
                .map(|(s, f)| s.load(Relaxed).saturating_add(f.load(Relaxed)))
        };
        let calls = counts().fold(0u64, u64::saturating_add);
        if calls == 0 {
            return None;
        }
        let rank = calls - calls / 100;
        let mut seen = 0u64;
        let bucket = counts()
            .position(|n| {
                seen = seen.saturating_add(n);
                seen >= rank
            })
            .unwrap_or(self.bounds);
        Some(BOUNDS[bucket.min(self.bounds - 1)])
    }

    /// What the histogram holds now. Pure; a snapshot taken while calls end
    /// may hold a call in its bucket and not yet in its sum.
    pub(crate) fn read(&self) -> CallDurations {
        let [successful, failed, ignored] = std::array::from_fn(|kind| {
            let series = &self.series[kind];
            let buckets: Vec<u64> = series.buckets[..=self.bounds]
                .iter()
                .map(|n| n.load(Relaxed))
                .collect();
            let wraps = u128::from(series.sum_wraps.load(Relaxed));
            let nanos = (wraps << 64) | u128::from(series.sum_nanos.load(Relaxed));
            DurationCounts {
                count: buckets.iter().fold(0u64, |sum, n| sum.saturating_add(*n)),
                buckets,
                sum: Duration::from_secs((nanos / 1_000_000_000).try_into().unwrap_or(u64::MAX))
                    + Duration::from_nanos((nanos % 1_000_000_000) as u64),
            }
        });
        CallDurations {
            bounds: &BOUNDS[..self.bounds],
            labels: &BUCKET_LABELS[..self.bounds],
            successful,
            failed,
            ignored,
        }
    }
}

/// A group's call-duration histogram (config key `histogram_ms`) at one
/// moment: the calls that ended, by outcome, counted in fixed buckets of their
/// duration from claim to verdict, as Prometheus's `calls_seconds` histograms
/// hold them.
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::time::Duration;
/// use breakerbox::{Breaker, Config, ManualClock};
///
/// let clock = ManualClock::new();
/// let config = Config::builder().histogram(Duration::from_millis(100)).build()?;
/// let breaker = Breaker::with_clock("geo", config, clock.clone());
/// let permit = breaker.try_acquire()?;
/// clock.advance(Duration::from_millis(30));
/// permit.success();
///
/// let durations = breaker.metrics().call_durations.expect("a histogram");
/// let ms: Vec<f64> = durations.bounds().iter().map(|b| b.as_secs_f64() * 1e3).collect();
/// assert_eq!(ms, [1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0]);
/// // Not cumulative: the 30 ms call is in the bucket up to 50 ms alone.
/// assert_eq!(durations.successful.buckets, [0, 0, 0, 0, 0, 1, 0, 0]);
/// assert_eq!(durations.successful.count, 1);
/// assert_eq!(durations.successful.sum, Duration::from_millis(30));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallDurations {
    bounds: &'static [Duration],
    labels: &'static [&'static str],
    /// Calls that succeeded (probes included).
    pub successful: DurationCounts,
    /// Calls that failed, timed-out calls and panics included.
    pub failed: DurationCounts,
    /// Calls whose error the classifier ignored.
    pub ignored: DurationCounts,
}

impl CallDurations {
    /// The upper bound of each bucket but the last, rising; a bucket holds
    /// the calls above the bound before it up to its own, included. The last
    /// bucket, past these, holds every longer call.
    pub fn bounds(&self) -> &'static [Duration] {
        self.bounds
    }

    /// The bounds in seconds as Prometheus labels them (`le`), `+Inf` last:
    /// one per bucket.
    pub fn bucket_labels(&self) -> impl Iterator<Item = &'static str> {
        self.labels.iter().copied().chain(["+Inf"])
    }

    /// The three outcomes with their `kind` label values (those of
    /// `breaker_calls_total`): `successful`, `failed`, `ignored`.
    pub fn by_kind(&self) -> [(&'static str, &DurationCounts); 3] {
        [
            ("successful", &self.successful),
            ("failed", &self.failed),
            ("ignored", &self.ignored),
        ]
    }
}

/// One outcome's calls in a [`CallDurations`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DurationCounts {
    /// Calls in each bucket (one more than
    /// [`CallDurations::bounds`], the last for calls past the last bound).
    /// Not cumulative: each call is in one bucket.
    pub buckets: Vec<u64>,
    /// Calls counted: the sum of `buckets`.
    pub count: u64,
    /// Their durations added up.
    pub sum: Duration,
}

impl DurationCounts {
    /// The calls at or below each bound, the last (`+Inf`) all of them: the
    /// cumulative counts Prometheus's `_bucket` series carry.
    pub fn cumulative(&self) -> impl Iterator<Item = u64> + '_ {
        self.buckets.iter().scan(0u64, |sum, n| {
            *sum = sum.saturating_add(*n);
            Some(*sum)
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn histogram(max_ms: u64) -> CallHistogram {
        let config = Config::builder()
            .histogram(Duration::from_millis(max_ms))
            .build()
            .unwrap();
        CallHistogram::new(&config, false).unwrap()
    }

    #[test]
    fn the_buckets_end_at_the_first_bound_at_or_above_the_maximum() {
        assert_eq!(histogram(1).read().bounds(), [Duration::from_millis(1)]);
        assert_eq!(histogram(10_000).read().bounds().len(), 13);
        let last = histogram(10_001).read().bounds().last().copied();
        assert_eq!(last, Some(Duration::from_secs(25)));
        assert_eq!(
            histogram(Config::MAX_HISTOGRAM_MS).read().bounds().len(),
            25
        );
    }

    #[test]
    fn a_call_of_exactly_a_bound_is_in_that_bound_s_bucket() {
        let h = histogram(10);
        let ms = 1_000_000;
        for nanos in [0, ms, ms + 1, 10 * ms, 10 * ms + 1, u64::MAX] {
            h.record(Kind::Failed, nanos);
        }
        let failed = h.read().failed;
        assert_eq!(failed.buckets, [2, 1, 0, 1, 2]);
        assert_eq!(failed.cumulative().collect::<Vec<_>>(), [2, 3, 3, 4, 6]);
        assert_eq!(failed.count, 6);
        assert_eq!(h.read().successful.count, 0);
    }

    #[test]
    fn the_sum_carries_past_u64_nanoseconds_instead_of_wrapping() {
        let h = histogram(10);
        h.record(Kind::Successful, u64::MAX);
        h.record(Kind::Successful, 2_000_000_000);
        let sum = h.read().successful.sum;
        let expected = Duration::from_nanos(u64::MAX) + Duration::from_secs(2);
        assert_eq!(sum, expected);
    }

    #[test]
    fn the_p99_is_the_bound_of_the_bucket_holding_the_nearest_rank() {
        let h = histogram(10_000);
        assert_eq!(h.p99(), None);
        let ms = 1_000_000;
        for _ in 0..99 {
            h.record(Kind::Successful, 3 * ms);
        }
        h.record(Kind::Failed, 700 * ms);
        h.record(Kind::Ignored, 9_000 * ms);
        // 100 calls (the ignored one is none): the 99th smallest is 3 ms.
        assert_eq!(h.p99(), Some(Duration::from_millis(5)));
        h.record(Kind::Failed, 700 * ms);
        // 101 calls: the 100th smallest is 700 ms.
        assert_eq!(h.p99(), Some(Duration::from_secs(1)));
    }

    #[test]
    fn the_labels_are_the_bounds_in_seconds() {
        for (label, ms) in BUCKET_LABELS.iter().zip(BOUNDS_MS) {
            // As `prometheus-client` writes an `f64` bound.
            assert_eq!(*label, (ms / 1e3).to_string());
        }
        assert_eq!(BUCKET_LABELS.last(), Some(&"+Inf"));
    }
}
