//! The state one breaker's handles share, and the two ways to touch its word:
//! a load and a compare-and-swap.

use std::time::Duration;

use crate::clock::ClockSource;
use crate::config::Config;
use crate::counters::{Counter, Counters};
use crate::events::Hub;
use crate::guards::Guards;
use crate::metrics::{Metrics, RampMetrics, WindowMetrics};
use crate::policy::Policy;
use crate::ramp::{Admission, Ramp};
use crate::state::{State, Word};
use crate::sync::{AtomicPtr, AtomicU64, Mutex, Ordering::*};
use crate::throttle::Throttle;

/// The shared state of one breaker: 512 bytes in two parts, so that with the
/// `Arc`'s counts an idle breaker's whole heap is 640 bytes.
///
/// The first 128 bytes (one line pair, as `crossbeam_utils::CachePadded` would
/// give) hold what a call reads, and what is written rarely: with the word (a
/// transition takes its lock), by a thread's first count in this breaker (the
/// counters' table grows), and by a metrics read (it locks the table list for
/// the time of the sum: one write per scrape, not per call). The closed path
/// touches this part alone. The rest starts on the next line pair
/// (`LineBreak`), so the writes of probes, bulkheads and events never touch the
/// word's line.
#[repr(C)]
pub(super) struct Inner {
    /// Read by every claim and verdict; written on transitions, failures, and the
    /// success that resets a failure count (never by a success with nothing to reset).
    pub(super) hot: Hot,
    /// Read by every count; written when a thread's first count grows the
    /// table, and by the lock a metrics read takes around its sum.
    pub(super) counters: Counters,
    pub(super) name: &'static str,
    pub(super) clock: ClockSource,
    /// Serialises the transitions that write more than the word, and live
    /// reconfigurations (the config and the window's tuning change as one).
    pub(super) transition: Mutex<()>,
    /// Whether this is a keyed group's own breaker (see `keyed::judge`): its
    /// refusals say [`OpenReason::Group`](crate::OpenReason::Group). Read by
    /// refusals only; in the byte the lock leaves before `jitter_salt`.
    pub(super) group_level: bool,
    /// Whether this is a key of a keyed group that judges as one, which tells
    /// its group level of its outcomes (see `keyed::judge`). Read by the
    /// verdicts' slow path, in the byte after `group_level`.
    pub(super) judged_key: bool,
    /// Mixed into the jitter's draws beside the name: a keyed group's key's
    /// hash, so its keys open for different durations; 0 for a breaker of its
    /// own. Read by trips only; 32 bits, the room the lock leaves in this line.
    pub(super) jitter_salt: u32,
    _line: LineBreak,
    /// Read on the slow paths only (trips, probes, half-open claims): the
    /// closed path never touches it, so a live reconfiguration costs it nothing.
    pub(super) config: LiveConfig,
    /// When the current open state ends (clock nanos). Written before the word
    /// that publishes the `Open` state it belongs to.
    pub(super) reopen_at: AtomicU64,
    /// The current open duration before jitter (the open ends at
    /// `reopen_at`, jitter drawn); grows by `backoff` after a failed probe.
    pub(super) open_for: AtomicU64,
    /// Until when the probes in flight hold their slots: the latest probe
    /// admission plus `probe_timeout`.
    pub(super) lease_until: AtomicU64,
    /// Subscribers, transition counts and the order of delivery.
    pub(super) events: Hub,
    /// The bulkhead, call-duration histogram and retry slot; touched only by
    /// groups that set `max_concurrent`, `timeout_ms`, `latency_p99_ms` or
    /// `histogram_ms`, or retry.
    pub(super) guards: Guards,
    /// The adaptive throttle (`throttle`): its tally, credit and count; `None`
    /// for a group without it, whose calls never read this. Boxed: its
    /// buckets are written by every verdict.
    pub(super) throttle: Option<Box<Throttle>>,
    /// The traffic ramp a close starts (`ramp_ms`): written before the
    /// ramping word that publishes it, then credited by each of that word's
    /// claims. Last, in the room the second line pair leaves, on a line
    /// apart from the config and the deadlines those claims read.
    pub(super) ramp: Ramp,
}

// The layout the doc above promises, where the word's line pair is 128 bytes;
// the ramp on the last line, away from the config's and the deadlines'.
#[cfg(all(not(loom), target_arch = "x86_64"))]
const _: () = assert!(
    size_of::<Inner>() == 512
        && std::mem::offset_of!(Inner, config) == 128
        && std::mem::offset_of!(Inner, ramp) >= 384
);

/// A field of no size that starts the next one on a new line pair (the
/// alignment `crossbeam_utils::CachePadded` uses on x86-64 and aarch64, where the prefetcher
/// pulls lines in pairs).
#[cfg_attr(any(target_arch = "x86_64", target_arch = "aarch64"), repr(align(128)))]
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    repr(align(64))
)]
#[derive(Default)]
struct LineBreak;

impl Inner {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        hot: Hot,
        name: &'static str,
        jitter_salt: u32,
        group_level: bool,
        judged_key: bool,
        config: Config,
        clock: ClockSource,
        open_for: u64,
        events: Hub,
        guards: Guards,
        throttle: Option<Box<Throttle>>,
    ) -> Self {
        Inner {
            hot,
            counters: Counters::new(),
            name,
            jitter_salt,
            clock,
            transition: Mutex::new(()),
            group_level,
            judged_key,
            _line: LineBreak,
            config: LiveConfig::new(config),
            reopen_at: AtomicU64::new(0),
            open_for: AtomicU64::new(open_for),
            lease_until: AtomicU64::new(0),
            events,
            guards,
            throttle,
            ramp: Ramp::default(),
        }
    }
}

// A panic caught around a breaker leaves it whole, so handles and permits may
// cross `catch_unwind` without `AssertUnwindSafe`: every change of state is one
// compare-and-swap of the word; the deadlines are written before the word that
// publishes them; the locks (parking_lot's, which do not poison) hold no user
// code but a custom clock's read, which comes before anything is written; and a
// permit dropped by the unwind records its failure like any other verdict.
impl std::panic::RefUnwindSafe for Inner {}

pub(super) struct Hot {
    pub(super) word: AtomicU64,
    pub(super) policy: Policy,
}

/// The config a breaker runs with, replaceable while it runs.
///
/// The first config is kept inline; each other one published is boxed, pushed
/// on a list of the configs kept, and stays allocated until the breaker drops.
/// So a reference read from `current` stays valid for as long as `&self` is: a
/// reader never waits and never sees a config freed under it. A config equal to
/// one kept is not boxed again: `current` points back at the one kept, so a
/// breaker holds one copy of each distinct config it ran (a keyed group's
/// reloads that go back and forth cost its keys nothing after the first).
pub(super) struct LiveConfig {
    /// The config in force: one of `kept`, or null while `first` is.
    current: AtomicPtr<Published>,
    /// The configs published, newest first, linked by `previous` (null: none).
    kept: AtomicPtr<Published>,
    first: Config,
}

/// A config published by [`LiveConfig::set`], with the one kept before it.
struct Published {
    config: Config,
    /// The one pushed on the list before it (null: none).
    previous: *mut Published,
}

impl LiveConfig {
    pub(super) fn new(first: Config) -> Self {
        LiveConfig {
            current: AtomicPtr::new(std::ptr::null_mut()),
            kept: AtomicPtr::new(std::ptr::null_mut()),
            first,
        }
    }

    #[inline]
    pub(super) fn get(&self) -> &Config {
        self.at(self.current.load(Acquire))
    }

    /// The config `published` holds: `first` for null.
    #[inline]
    fn at(&self, published: *mut Published) -> &Config {
        if published.is_null() {
            return &self.first;
        }
        // SAFETY: every non-null pointer this is given was read from
        // `current`, `kept` or a `previous` link: a `Published` from
        // `Box::into_raw`, pushed on `kept` before any of them could hold it,
        // only read through shared references, and freed only when `self`
        // drops, which `&self` outlives.
        unsafe { &(*published).config }
    }

    /// Publishes `config`; readers see it from their next read. A config that
    /// runs the breaker the same way and spells out the same keys (which the
    /// config file reads back, and `==` leaves out) as the one in force
    /// publishes nothing; as one kept, it is that one again, with nothing
    /// allocated. Of two racing calls, the one whose store comes last holds.
    pub(super) fn set(&self, config: Config) {
        let same =
            |kept: &Config| *kept == config && kept.explicit_keys().eq(config.explicit_keys());
        if same(self.get()) {
            return;
        }
        let known = if same(&self.first) {
            Some(std::ptr::null_mut())
        } else {
            self.kept_ones().find(|&published| same(self.at(published)))
        };
        let published = known.unwrap_or_else(|| self.push(config));
        self.current.store(published, Release);
    }

    /// Boxes `config` and pushes it on `kept`.
    fn push(&self, config: Config) -> *mut Published {
        let mut previous = self.kept.load(Acquire);
        let next = Box::into_raw(Box::new(Published { config, previous }));
        loop {
            match self.kept.compare_exchange(previous, next, AcqRel, Acquire) {
                Ok(_) => return next,
                Err(newer) => {
                    previous = newer;
                    // SAFETY: `next` is ours until the exchange publishes it.
                    unsafe { (*next).previous = newer };
                }
            }
        }
    }

    /// The configs kept, newest first.
    fn kept_ones(&self) -> impl Iterator<Item = *mut Published> + '_ {
        let mut at = self.kept.load(Acquire);
        std::iter::from_fn(move || {
            if at.is_null() {
                return None;
            }
            let here = at;
            // SAFETY: as in `at`; `previous` is written before the push that
            // publishes a `Published`, never after.
            at = unsafe { (*here).previous };
            Some(here)
        })
    }

    /// How many configs this breaker holds until it drops.
    #[cfg(test)]
    pub(super) fn published(&self) -> usize {
        1 + self.kept_ones().count()
    }
}

impl Drop for LiveConfig {
    fn drop(&mut self) {
        // Exclusive here (`&mut self`): no other access to order against.
        let mut at = self.kept.load(Relaxed);
        while !at.is_null() {
            // SAFETY: each `Published` came from `Box::into_raw`, is on the
            // `kept` list once, is freed once, here, and no reference to it
            // outlives `self`.
            let published = unsafe { Box::from_raw(at) };
            at = published.previous;
        }
    }
}

impl Inner {
    /// The nanos until a claim on this ramping word at `now` would be
    /// admitted, or `None` when it would be; takes no credit. A keyed group's
    /// own breaker is claimed only by the lookups its ramp refused (their
    /// share taken then), and refuses every claim until the ramp ran its
    /// length.
    pub(super) fn ramp_refusal(&self, now: u64) -> Option<u64> {
        if !self.group_level {
            return self.ramp.refusal(now);
        }
        match self.ramp.refused_again(now) {
            Admission::Refused { retry_after } => Some(retry_after),
            Admission::Over | Admission::Admitted => None,
        }
    }

    /// [`Breaker::would_admit`](super::Breaker::would_admit) for a word that is
    /// not closed.
    #[inline(never)]
    pub(super) fn would_admit(&self, word: Word) -> bool {
        if word.is_shadow() && word.state() != State::ForcedOpen {
            return true;
        }
        if self.held(word).is_some() || self.throttle_refusal(word).is_some() {
            return false;
        }
        match word.state() {
            State::Closed if word.is_ramping() => {
                self.ramp_refusal(self.clock.now_coarse()).is_none()
            }
            State::Closed | State::ForcedClosed => true,
            State::ForcedOpen => false,
            // The reading a claim compares: see the crate docs, "The coarse reading".
            State::Open => self.clock.reached(self.reopen_at.load(Acquire)),
            State::HalfOpen => {
                word.probes() < self.config().half_open_probes()
                    || self.clock.reached(self.lease_until.load(Acquire))
            }
        }
    }

    /// The throttle's refusal of a claim on `word` now, without taking credit:
    /// the nanos until its window moves on, or `None` when the throttle would
    /// let the claim go on to the breaker (or the group has none, or the
    /// breaker is forced or open: those refuse or admit without asking it).
    pub(super) fn throttle_refusal(&self, word: Word) -> Option<u64> {
        if !word.is_throttled() || !matches!(word.state(), State::Closed | State::HalfOpen) {
            return None;
        }
        let (throttle, rules) = self
            .throttle
            .as_deref()
            .zip(self.config().throttle_rules())?;
        throttle.refusal(throttle.now(&self.clock), &rules)
    }

    /// Sets the word's shadow bit to `on`, whatever the word does meanwhile;
    /// returns whether it was set already.
    #[cold]
    pub(super) fn set_shadow(&self, on: bool) -> bool {
        let mut word = self.word();
        loop {
            if word.is_shadow() == on {
                return on;
            }
            match self.cas(word, word.with_shadow(on)) {
                Ok(()) => return !on,
                Err(seen) => word = seen,
            }
        }
    }

    /// The config in force now.
    #[inline]
    pub(super) fn config(&self) -> &Config {
        self.config.get()
    }

    #[inline]
    pub(super) fn word(&self) -> Word {
        Word(self.hot.word.load(Acquire))
    }

    pub(super) fn cas(&self, current: Word, next: Word) -> Result<(), Word> {
        self.hot
            .word
            .compare_exchange(current.0, next.0, AcqRel, Acquire)
            .map(drop)
            .map_err(Word)
    }

    pub(super) fn metrics(&self) -> Metrics {
        let word = self.word();
        let totals = self.counters.totals();
        // The reading refusals compare, so `retry_after` never reads zero while
        // claims are still refused.
        let now = || self.clock.now_coarse();
        let retry_after = match word.state() {
            State::Open => Some(self.reopen_at.load(Acquire).saturating_sub(now())),
            State::HalfOpen if word.probes() >= self.config().half_open_probes() => {
                Some(self.lease_until.load(Acquire).saturating_sub(now()))
            }
            _ => None,
        };
        // A hold in force refuses until the later of its end and the state's.
        let held = self.held(word);
        let retry_after = match (retry_after, held) {
            (Some(state), Some(held)) => Some(state.max(nanos_of(held.remaining))),
            (None, Some(held)) => Some(nanos_of(held.remaining)),
            (state, None) => state,
        };
        // A ramp that ran its length is over, though no claim has ended it yet.
        let ramp = word
            .is_ramping()
            .then(|| self.ramp.progress(now()))
            .filter(|&(length, elapsed)| elapsed < length)
            .map(|(length, elapsed)| RampMetrics {
                length: Duration::from_nanos(length),
                elapsed: Duration::from_nanos(elapsed),
            });
        Metrics {
            group: self.name,
            state: word.state(),
            generation: word.generation(),
            calls: [
                Counter::Successes,
                Counter::Failures,
                Counter::Ignored,
                Counter::Abandoned,
                Counter::Stale,
            ]
            .iter()
            .fold(0u64, |calls, &event| {
                calls.saturating_add(totals.get(event))
            }),
            successes: totals.get(Counter::Successes),
            failures: totals.get(Counter::Failures),
            ignored: totals.get(Counter::Ignored),
            rejected: totals.get(Counter::Rejected),
            abandoned: totals.get(Counter::Abandoned),
            stale: totals.get(Counter::Stale),
            probes_succeeded: totals.get(Counter::ProbesSucceeded),
            probes_failed: totals.get(Counter::ProbesFailed),
            probes_reclaimed: totals.get(Counter::ProbesReclaimed),
            times_opened: totals.get(Counter::Opened),
            probes_in_flight: if word.state() == State::HalfOpen {
                word.probes()
            } else {
                0
            },
            consecutive_failures: word.failures(),
            window: self
                .hot
                .policy
                .window_counts(word.generation(), &self.clock)
                .map(WindowMetrics::from),
            retry_after: retry_after.map(Duration::from_nanos),
            transitions: self.events.counts(),
            open_for: matches!(word.state(), State::Open | State::HalfOpen)
                .then(|| Duration::from_nanos(self.open_for.load(Relaxed))),
            timeouts: totals.get(Counter::Timeouts),
            bulkhead_rejected: totals.get(Counter::BulkheadRejected),
            bulkhead_in_flight: self.guards.bulkhead.as_ref().map(|b| b.in_flight()),
            latency_trips: totals.get(Counter::LatencyTrips),
            ramp_refused: totals.get(Counter::RampRefused),
            shadow: word.is_shadow(),
            shadow_refused: totals.get(Counter::ShadowRefused),
            retries: self.events.retries(),
            retries_budget_exhausted: self.events.retries_budget_exhausted(),
            ramp,
            latency_p99: (self.guards.histogram())
                .filter(|h| !h.keyed && self.config().latency_p99().is_some())
                .and_then(|h| h.p99()),
            call_durations: (self.guards.histogram())
                .filter(|h| !h.keyed && h.shown)
                .map(|h| h.read()),
            throttled: self.throttle.as_deref().map_or(0, |t| t.throttled()),
            throttle: self
                .throttle
                .as_deref()
                .zip(self.config().throttle_rules())
                .map(|(throttle, rules)| throttle.metrics(throttle.now(&self.clock), &rules)),
            held,
            holds: self
                .events
                .started_hold()
                .map(|cell| cell.counts())
                .unwrap_or_default(),
        }
    }
}

/// A duration's nanos, saturating.
fn nanos_of(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::LiveConfig;
    use crate::config::Config;

    fn threshold(n: u32) -> Config {
        Config::builder().threshold(n).build().unwrap()
    }

    #[test]
    fn racing_reconfigurations_keep_every_config_and_readers_see_only_published_ones() {
        let live = LiveConfig::new(threshold(1));
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let live = &live;
                s.spawn(move || {
                    for i in 0..100 {
                        live.set(threshold(2 + t * 100 + i));
                    }
                });
            }
            s.spawn(|| {
                for _ in 0..10_000 {
                    assert!((1..402).contains(&live.get().threshold()));
                }
            });
        });
        // 400 distinct configs, none lost to a lost exchange, plus the first.
        assert_eq!(live.published(), 401);
        assert!([101, 201, 301, 401].contains(&live.get().threshold()));
        // Setting the config in force again publishes nothing.
        live.set(*live.get());
        assert_eq!(live.published(), 401);
    }

    #[test]
    fn reloads_that_go_back_and_forth_keep_one_copy_of_each_config() {
        let live = LiveConfig::new(threshold(1));
        for round in 0..100 {
            for n in [4, 5, 1] {
                live.set(threshold(n));
                assert_eq!(live.get().threshold(), n, "round {round}");
            }
        }
        // The first inline, 4 and 5 boxed once each.
        assert_eq!(live.published(), 3);
        // Spelling out a key the first left to its default is another config.
        live.set(
            Config::builder()
                .threshold(1)
                .open(std::time::Duration::from_secs(30))
                .build()
                .unwrap(),
        );
        assert_eq!(live.published(), 4);
    }
}
