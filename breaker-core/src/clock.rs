//! Time as the breaker sees it: the [`Clock`] trait, the monotonic default and a
//! [`ManualClock`] that tests drive by hand.
//!
//! Time is a plain `u64` count of nanoseconds since the clock's own origin, with
//! saturating arithmetic; the precise and the coarse reading, and which paths
//! take which, are explained once, in [the crate docs](crate#time).

// The monotonic origin is a process-wide static, std's (loom's cannot be
// const); the manual clock's time goes through `crate::sync`, so loom models
// its readers and writers.
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::sync::{AtomicU64, Ordering};

/// A source of monotonic time, in nanoseconds since an origin of the clock's choosing.
///
/// The state machine never reads time itself: it asks its clock once per transition
/// that needs it and passes the value down. Implement this to drive breakers from a
/// simulated or coarse time source.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::clock::Clock;
///
/// /// A clock frozen at one second after its origin.
/// struct Frozen;
/// impl Clock for Frozen {
///     fn now_nanos(&self) -> u64 {
///         1_000_000_000
///     }
/// }
/// assert_eq!(Frozen.now_nanos(), 1_000_000_000);
/// ```
pub trait Clock: Send + Sync + 'static {
    /// Nanoseconds since this clock's origin. Should not go backwards; if it does,
    /// the breaker treats elapsed time as zero (an open circuit stays open longer,
    /// never shorter).
    fn now_nanos(&self) -> u64;

    /// The seed of the `jitter` generator of each breaker on this clock (mixed
    /// with the breaker's group, and a keyed group's key, so groups and keys
    /// draw apart); `None`, the default,
    /// seeds each breaker from the process's random hasher keys, so instances
    /// do not draw alike. [`ManualClock`] gives one, so a test's open
    /// durations are the same on every run.
    fn jitter_seed(&self) -> Option<u64> {
        None
    }

    /// Waits `d` of this clock's time: a retry's backoff on the sync path
    /// ([`Breaker::call_retrying`](crate::Breaker::call_retrying)). The
    /// default blocks the thread for `d`; [`ManualClock`] advances itself by
    /// `d` and returns at once, so a test's retries wait no real time.
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// The default clock. On Linux, `CLOCK_MONOTONIC` (what [`Instant`] reads there)
/// in nanoseconds since boot; elsewhere [`Instant`], measured from the first time
/// any breaker asked. Open breakers refuse claims against its coarse reading,
/// which may admit a probe up to one kernel tick late and never early.
#[derive(Clone, Copy, Debug, Default)]
pub struct MonotonicClock;

impl Clock for MonotonicClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        sys::precise()
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod sys {
    /// `CLOCK_MONOTONIC`, in nanoseconds.
    #[inline]
    pub(super) fn precise() -> u64 {
        // Fall back through the same kernel clock first, so `precise` and
        // `coarse` always share one origin.
        read(libc::CLOCK_MONOTONIC)
            .or_else(|| read(libc::CLOCK_MONOTONIC_COARSE))
            .unwrap_or_else(super::instant_fallback)
    }

    /// `CLOCK_MONOTONIC` as of the last tick: never ahead of [`precise`].
    #[inline]
    pub(super) fn coarse() -> u64 {
        // Without a coarse clock (kernels before 2.6.32), the precise one is exact.
        // Without both, both fall back to `Instant`: never two origins at once.
        read(libc::CLOCK_MONOTONIC_COARSE)
            .or_else(|| read(libc::CLOCK_MONOTONIC))
            .unwrap_or_else(super::instant_fallback)
    }

    #[inline]
    fn read(clock: libc::clockid_t) -> Option<u64> {
        let mut ts = std::mem::MaybeUninit::<libc::timespec>::uninit();
        // SAFETY: `ts` is valid for writes of a timespec for the duration of the call.
        if unsafe { libc::clock_gettime(clock, ts.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: `clock_gettime` returned 0, so it wrote the whole timespec.
        let ts = unsafe { ts.assume_init() };
        // The kernel keeps its monotonic clocks as a signed 64-bit count of
        // nanoseconds (`ktime_t`) and splits it into this timespec, whose
        // `tv_nsec` is below 10^9: joined again, it is below 2^63, so the join
        // takes no saturating step, which every read would pay for. Only a
        // stand-in for the kernel's clock reporting over 584 years of uptime
        // would wrap, which a breaker meets as a clock stepping back.
        let secs = ts.tv_sec as u64;
        Some(
            secs.wrapping_mul(1_000_000_000)
                .wrapping_add(ts.tv_nsec as u64),
        )
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod sys {
    #[inline]
    pub(super) fn precise() -> u64 {
        super::instant_fallback()
    }

    /// No coarse clock here: the precise reading.
    #[inline]
    pub(super) fn coarse() -> u64 {
        precise()
    }
}

/// [`Instant`] since the first time it was asked, for platforms (or failures)
/// without `clock_gettime`.
#[cfg_attr(any(target_os = "linux", target_os = "android"), cold)]
fn instant_fallback() -> u64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let origin = *ORIGIN.get_or_init(Instant::now);
    duration_to_nanos(origin.elapsed())
}

/// A clock that only moves when told to. Cloning shares the same time, so a test
/// keeps one handle and gives another to a [`Registry`](crate::Registry) or
/// [`Breaker`](crate::Breaker).
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::time::Duration;
/// use breakerbox::{clock::Clock, ManualClock};
///
/// let clock = ManualClock::new();
/// let handle = clock.clone();
/// clock.advance(Duration::from_millis(1500));
/// assert_eq!(handle.now_nanos(), 1_500_000_000);
/// clock.set_nanos(0); // time may also be stepped back
/// assert_eq!(handle.now_nanos(), 0);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
    seed: u64,
}

impl ManualClock {
    /// A clock at time zero, whose [`jitter_seed`](Clock::jitter_seed) is 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// This clock with `seed` as its [`jitter_seed`](Clock::jitter_seed): the
    /// breakers on it draw other (and again repeatable) jittered durations.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{clock::Clock, ManualClock};
    ///
    /// assert_eq!(ManualClock::new().jitter_seed(), Some(0));
    /// assert_eq!(ManualClock::new().with_jitter_seed(7).jitter_seed(), Some(7));
    /// ```
    pub fn with_jitter_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Moves time forward by `by` (saturating at `u64::MAX` nanoseconds).
    pub fn advance(&self, by: Duration) {
        let by = duration_to_nanos(by);
        // fetch_update never fails with a closure that always returns Some.
        let _ = self
            .nanos
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                Some(n.saturating_add(by))
            });
    }

    /// Sets the time to exactly `nanos`, forwards or backwards.
    pub fn set_nanos(&self, nanos: u64) {
        self.nanos.store(nanos, Ordering::Release);
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        self.nanos.load(Ordering::Acquire)
    }

    fn jitter_seed(&self) -> Option<u64> {
        Some(self.seed)
    }

    /// Advances this clock by `d`: the wait takes no real time.
    fn sleep(&self, d: Duration) {
        self.advance(d);
    }
}

/// The clock a breaker holds: the monotonic default without dynamic dispatch, or
/// any other clock behind an `Arc`.
#[derive(Clone)]
pub(crate) enum ClockSource {
    Monotonic,
    Custom(Arc<dyn Clock>),
}

impl ClockSource {
    pub(crate) fn of<C: Clock>(clock: C) -> Self {
        // A user passing `MonotonicClock` explicitly still gets the fast path.
        if std::any::TypeId::of::<C>() == std::any::TypeId::of::<MonotonicClock>() {
            ClockSource::Monotonic
        } else {
            ClockSource::Custom(Arc::new(clock))
        }
    }

    // Not inlined: a clock read costs far more than a call, and inlining it would
    // keep the closed path (which reads no clock) from being inlined itself.
    #[inline(never)]
    pub(crate) fn now(&self) -> u64 {
        self.now_inlined()
    }

    /// [`now`](Self::now), inlined: for a caller out of line itself whose
    /// frame already holds what the read needs (a verdict's slow path).
    #[inline(always)]
    pub(crate) fn now_inlined(&self) -> u64 {
        match self {
            ClockSource::Monotonic => MonotonicClock.now_nanos(),
            ClockSource::Custom(clock) => clock.now_nanos(),
        }
    }

    /// The clock's [`Clock::sleep`].
    #[cold]
    pub(crate) fn sleep(&self, d: Duration) {
        match self {
            ClockSource::Monotonic => MonotonicClock.sleep(d),
            ClockSource::Custom(clock) => clock.sleep(d),
        }
    }

    /// The clock's [`Clock::jitter_seed`].
    pub(crate) fn jitter_seed(&self) -> Option<u64> {
        match self {
            ClockSource::Monotonic => None,
            ClockSource::Custom(clock) => clock.jitter_seed(),
        }
    }

    /// A reading that may lag [`now`](Self::now) by up to one kernel tick and is
    /// never ahead of it: for refusals, which may come late but never early.
    #[inline]
    pub(crate) fn now_coarse(&self) -> u64 {
        match self {
            ClockSource::Monotonic => sys::coarse(),
            ClockSource::Custom(clock) => clock.now_nanos(),
        }
    }

    /// Whether this is the default monotonic clock, which has a coarse reading
    /// of its own ([`monotonic_coarse`]).
    pub(crate) fn is_monotonic(&self) -> bool {
        matches!(self, ClockSource::Monotonic)
    }

    /// `coarse`, a [`now_coarse`](Self::now_coarse) reading short of `deadline`,
    /// confirmed: when it is within [`COARSE_LAG_MAX`] of the deadline, the
    /// precise reading (no earlier than `coarse`), which may have reached it.
    /// So a caller told to wait `deadline - now` and waiting that long is due
    /// on its next claim, though the coarse clock still lags. Custom clocks
    /// have one reading only: `coarse` as it is.
    #[cold]
    #[inline(never)]
    pub(crate) fn confirm(&self, coarse: u64, deadline: u64) -> u64 {
        match self {
            ClockSource::Monotonic if deadline - coarse <= COARSE_LAG_MAX => {
                sys::precise().max(coarse)
            }
            _ => coarse,
        }
    }

    /// Whether `deadline` has passed, by the coarse reading confirmed as in
    /// [`confirm`](Self::confirm): what claims and `would_admit` ask.
    #[inline]
    pub(crate) fn reached(&self, deadline: u64) -> bool {
        let coarse = self.now_coarse();
        coarse >= deadline || self.confirm(coarse, deadline) >= deadline
    }
}

impl std::fmt::Debug for ClockSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClockSource::Monotonic => f.write_str("Monotonic"),
            ClockSource::Custom(_) => f.write_str("Custom"),
        }
    }
}

/// The coarse reading of the default monotonic clock: what
/// [`ClockSource::now_coarse`] reads for [`ClockSource::Monotonic`], for a
/// caller that knows its clock is that one.
#[inline]
pub(crate) fn monotonic_coarse() -> u64 {
    sys::coarse()
}

/// How far the coarse reading may lag the precise one: a kernel tick is at most
/// 10 ms (`CONFIG_HZ=100`), doubled for a tick handled late. A coarse reading
/// this close to a deadline is confirmed by a precise one before a claim is
/// refused ([`ClockSource::confirm`]); farther off, it refuses on its own, and
/// the `retry_after` it gives overstates the wait by at most the lag.
pub(crate) const COARSE_LAG_MAX: u64 = 20_000_000;

/// Whole nanoseconds of `d`, saturating at `u64::MAX` (about 584 years).
#[inline]
pub(crate) fn duration_to_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Milliseconds to nanoseconds, saturating.
#[inline]
pub(crate) const fn millis_to_nanos(ms: u64) -> u64 {
    ms.saturating_mul(1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_advance_saturates_instead_of_wrapping() {
        let clock = ManualClock::new();
        clock.set_nanos(u64::MAX - 5);
        clock.advance(Duration::from_secs(10 * 365 * 24 * 3600));
        assert_eq!(clock.now_nanos(), u64::MAX);
    }

    #[test]
    fn huge_durations_saturate_to_u64_max_nanos() {
        assert_eq!(duration_to_nanos(Duration::MAX), u64::MAX);
        assert_eq!(millis_to_nanos(u64::MAX), u64::MAX);
        assert_eq!(millis_to_nanos(3), 3_000_000);
    }

    #[test]
    fn monotonic_clock_never_goes_backwards() {
        let a = MonotonicClock.now_nanos();
        let b = MonotonicClock.now_nanos();
        assert!(b >= a);
    }

    #[test]
    fn a_coarse_reading_is_never_ahead_of_a_precise_one_taken_after_it() {
        // Interleaved reads from two threads: whenever a coarse reading is taken
        // before a precise one, it is no later. (If it ever were, an open breaker
        // could let a probe go before its open duration had passed.)
        let check = || {
            for _ in 0..200_000 {
                let coarse = sys::coarse();
                let precise = sys::precise();
                assert!(coarse <= precise, "coarse {coarse} > precise {precise}");
            }
        };
        std::thread::scope(|s| {
            s.spawn(check);
            check();
        });
    }

    #[test]
    fn the_coarse_reading_lags_by_at_most_a_few_ticks() {
        let lag = sys::precise().saturating_sub(sys::coarse());
        // One tick is at most 10 ms (CONFIG_HZ=100); allow scheduling noise.
        assert!(lag < 50_000_000, "coarse clock lags by {lag} ns");
    }

    #[test]
    fn a_custom_clock_reads_the_same_coarse_and_precise() {
        let clock = ManualClock::new();
        clock.set_nanos(42);
        let source = ClockSource::of(clock);
        assert_eq!(source.now_coarse(), 42);
        assert_eq!(source.now(), 42);
    }
}

/// The manual clock under loom's model checker: two threads advance it while a
/// third reads; no advance is lost, and a reader never sees time go back.
/// Run with `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p breaker-core --release --lib loom_`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;

    #[test]
    fn loom_racing_advances_are_all_kept_and_readers_never_go_back() {
        loom::model(|| {
            let clock = ManualClock::new();
            let advancer = |clock: ManualClock, by: u64| {
                move || {
                    clock.advance(Duration::from_nanos(by));
                    clock.now_nanos()
                }
            };
            let one = loom::thread::spawn(advancer(clock.clone(), 1));
            let two = loom::thread::spawn(advancer(clock.clone(), 2));
            let first = clock.now_nanos();
            let second = clock.now_nanos();
            assert!(first <= second, "time went back: {first} then {second}");
            let (seen_one, seen_two) = (one.join().unwrap(), two.join().unwrap());
            assert!(
                seen_one >= 1 && seen_two >= 2,
                "an advance's own effect is seen"
            );
            assert_eq!(clock.now_nanos(), 3, "an advance was lost");
        });
    }
}
