//! Holds on one breaker (see [`crate::hold`]): taking one, from the handle or
//! a permit; its release, by the first claim past its deadline or by hand; and
//! the questions about it. Every write is under the transition lock, so a
//! hold taken while another is released is never lost; the word's hold bit
//! publishes the cell's deadline, written first.

use std::time::Duration;

use super::claim::ClaimCode;
use super::handle::Breaker;
use super::inner::Inner;
use super::jitter;
use super::permit::{OwnedPermit, Permit};
use crate::clock::ClockSource;
use crate::config::Config;
use crate::events::{Event, HoldReleased, HoldStarted};
use crate::hold::{Count, Held, HoldScope, HoldUntil, RELEASE_SPREAD};
use crate::state::{State, Word};

impl Inner {
    /// The hold's deadline and scope (a deadline of 0 when never held).
    pub(super) fn hold_until(&self) -> HoldUntil {
        self.events.started_hold().map_or(
            HoldUntil {
                until: 0,
                scope: HoldScope::Key,
                probing: false,
            },
            |cell| cell.get(),
        )
    }

    /// Holds for `wait` nanos as `scope`: capped at `max_hold_ms`, the release
    /// spread drawn, kept behind a hold in force that ends later. Returns the
    /// nanos held from now.
    #[cold]
    pub(super) fn hold(&self, wait: u64, scope: HoldScope) -> u64 {
        let cap = self.config().max_hold_nanos();
        let capped = wait > cap;
        let cell = self.events.hold();
        let counts = cell.counts();
        cell.count(match scope {
            HoldScope::Key => Count::Key,
            HoldScope::Group => Count::Group,
        });
        if capped {
            cell.count(Count::Capped);
        }
        let draw = counts.key.wrapping_add(counts.group);
        let held = spread(
            wait,
            cap,
            self.name,
            u64::from(self.jitter_salt),
            &self.clock,
            draw,
        );
        let guard = self.transition.lock();
        let now = self.clock.now();
        let (left, scope) = self.hold_to(now.saturating_add(held), scope, now);
        drop(guard);
        self.events.tell_other(&Event::Held(HoldStarted {
            group: self.name,
            scope,
            asked: Duration::from_nanos(wait),
            retry_after: Duration::from_nanos(left),
            capped,
            fleet: false,
        }));
        left
    }

    /// Holds until `until` (clock nanos) as `scope`, unless a hold in force
    /// ends later; under the transition lock. Returns the nanos held from
    /// `now` and the scope of the hold that holds.
    pub(super) fn hold_to(&self, until: u64, scope: HoldScope, now: u64) -> (u64, HoldScope) {
        let cell = self.events.hold();
        let current = cell.get();
        let mut word = self.word();
        // A later hold in force stays; the lease of the call let through to
        // end a hold is no hold: a new wait replaces it.
        if word.is_held() && !current.probing && current.until >= until {
            return (current.until.saturating_sub(now), current.scope);
        }
        // The deadline is written before the bit that publishes it.
        cell.set(until, scope, false);
        cell.set_length(until.saturating_sub(now));
        while !word.is_held() {
            match self.cas(word, word.with_held(true)) {
                Ok(()) => break,
                Err(seen) => word = seen,
            }
        }
        (cell.get().until.saturating_sub(now), scope)
    }

    /// Another instance's group-scope hold, `remaining` nanos from now (its
    /// spread drawn there), capped at `max_hold_ms`: held as
    /// [`HoldScope::Group`] when it ends later than the hold in force, counted
    /// and told as the fleet's. Returns whether it held.
    #[cold]
    pub(super) fn fleet_group_hold(&self, remaining: u64) -> bool {
        let cap = self.config().max_hold_nanos();
        let guard = self.transition.lock();
        let now = self.clock.now();
        let until = now.saturating_add(remaining.min(cap));
        let word = self.word();
        let current = self.hold_until();
        if word.is_held() && !current.probing && current.until >= until {
            return false;
        }
        let (left, scope) = self.hold_to(until, HoldScope::Group, now);
        drop(guard);
        let cell = self.events.hold();
        cell.count(Count::Group);
        if remaining > cap {
            cell.count(Count::Capped);
        }
        self.events.tell_other(&Event::Held(HoldStarted {
            group: self.name,
            scope,
            asked: Duration::from_nanos(remaining),
            retry_after: Duration::from_nanos(left),
            capped: remaining > cap,
            fleet: true,
        }));
        true
    }

    /// Clears the hold bit, whatever else the word does meanwhile; returns
    /// whether it was set. Under the transition lock.
    fn clear_hold(&self) -> bool {
        let mut word = self.word();
        while word.is_held() {
            match self.cas(word, word.with_held(false)) {
                Ok(()) => return true,
                Err(seen) => word = seen,
            }
        }
        false
    }

    /// A claim found the hold's deadline passed: releases it, unless a hold
    /// taken meanwhile ends later, and tells the release.
    #[cold]
    #[inline(never)]
    pub(super) fn release_expired(&self) {
        let guard = self.transition.lock();
        let hold = self.hold_until();
        if !self.clock.reached(hold.until) || !self.clear_hold() {
            return;
        }
        drop(guard);
        log::info!("circuit `{}`: hold released at its deadline", self.name);
        self.tell_released(hold.scope, false);
    }

    /// A claim past a closed word's hold: admits it as the one call that
    /// ends the hold, leased for the shorter of the hold's length and
    /// `probe_timeout_ms`, unless another claim
    /// was let through meanwhile or a new hold came (`None`: claim again).
    #[cold]
    #[inline(never)]
    pub(super) fn release_probe(&self) -> Option<ClaimCode> {
        let guard = self.transition.lock();
        let word = self.word();
        let hold = self.hold_until();
        let now = self.clock.now();
        if !word.is_held() || word.state() != State::Closed || now < hold.until {
            return None;
        }
        let cell = self.events.hold();
        let lease = self.config().probe_timeout_nanos().min(cell.length());
        cell.set(now.saturating_add(lease), hold.scope, true);
        drop(guard);
        // Marked and held: its verdict ends the hold (`settle_release_probe`).
        let started = if word.is_timed() { now } else { 0 };
        Some(ClaimCode::admitted(word.marked(), started))
    }

    /// The call let through to end a hold answered (with anything but
    /// another wait, which held again): the hold ends, and it is told.
    pub(super) fn end_release_probe(&self) {
        let guard = self.transition.lock();
        let hold = self.hold_until();
        if !hold.probing || !self.clear_hold() {
            return;
        }
        drop(guard);
        log::info!("circuit `{}`: hold released at its deadline", self.name);
        self.tell_released(hold.scope, false);
    }

    /// Releases a hold in force by hand; returns whether there was one.
    #[cold]
    pub(super) fn release_hold(&self) -> bool {
        let guard = self.transition.lock();
        let hold = self.hold_until();
        let held = self.word().is_held() && !self.clock.reached(hold.until);
        if !self.clear_hold() {
            return false;
        }
        drop(guard);
        if held {
            self.events.hold().count(Count::Released);
            log::info!("circuit `{}`: hold released by hand", self.name);
        }
        self.tell_released(hold.scope, held);
        held
    }

    /// Tells that manual control (a forced state, a reset) ended the hold
    /// `from` carried.
    pub(super) fn released_by_force(&self, from: Word) {
        if from.is_held() && !self.clock.reached(self.hold_until().until) {
            self.events.hold().count(Count::Released);
            self.tell_released(self.hold_until().scope, true);
        }
    }

    fn tell_released(&self, scope: HoldScope, by_hand: bool) {
        self.events.tell_other(&Event::Released(HoldReleased {
            group: self.name,
            scope,
            by_hand,
        }));
    }

    /// The hold in force now, if any. Pure: a hold whose deadline passed is
    /// over, though no claim has released it yet.
    pub(super) fn held(&self, word: Word) -> Option<Held> {
        if !word.is_held() || matches!(word.state(), State::ForcedOpen | State::ForcedClosed) {
            return None;
        }
        let hold = self.hold_until();
        let now = self.clock.now_coarse();
        (now < hold.until).then(|| Held {
            remaining: Duration::from_nanos(hold.until - now),
            scope: hold.scope,
        })
    }
}

/// A wait of `wait` nanos capped at `cap`, stretched by the release spread
/// (the `draw`-th of the breaker `name` with `salt`), never past `cap`.
fn spread(wait: u64, cap: u64, name: &str, salt: u64, clock: &ClockSource, draw: u64) -> u64 {
    let base = wait.min(cap);
    let spread = jitter::spread(base / u64::from(RELEASE_SPREAD), name, salt, clock, draw);
    base.saturating_add(spread).min(cap)
}

/// The nanos a group-scope hold of `wait` lasts under `config`, for the
/// group `name` on `clock`: capped and spread as a breaker's own hold is.
pub(crate) fn hold_deadline(
    config: &Config,
    name: &str,
    clock: &ClockSource,
    wait: Duration,
    draw: u64,
) -> u64 {
    spread(
        super::handle::nanos(wait),
        config.max_hold_nanos(),
        name,
        0,
        clock,
        draw,
    )
}

impl Breaker {
    /// Holds this breaker's calls for `wait`: the server asked every caller to
    /// wait (a `429` or `503` with `Retry-After`, a gRPC `RESOURCE_EXHAUSTED`,
    /// an error of the app's own). Until the hold ends every claim is refused
    /// at once with [`OpenReason::Held`](crate::OpenReason::Held) and the time
    /// the hold has left; the fallback answers it like any refusal.
    ///
    /// A hold is no failure: it records no outcome, grows no backoff and
    /// starts no generation. `wait` is capped at `max_hold_ms` (counted in
    /// [`HoldCounts::capped`](crate::HoldCounts::capped)) and stretched by the
    /// release spread (see [the release window](crate::hold#the-release-window));
    /// a hold in force that ends later is kept. Over an open circuit the later
    /// end governs, and the circuit still needs its probe. Manual control
    /// ends a hold: a forced state or a reset releases it, and a forced-closed
    /// breaker admits through one. Shadow mode admits what a hold refuses, and
    /// counts it. Returns the time held from now.
    ///
    /// `scope` is what the refusals and the metrics say the hold holds back:
    /// [`HoldScope::Key`] for one key's quota; [`KeyedGroup::hold`](crate::keyed::KeyedGroup::hold)
    /// holds every key of a keyed group as [`HoldScope::Group`].
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, Config, HoldScope, ManualClock, OpenReason, State};
    ///
    /// let clock = ManualClock::new();
    /// let breaker = Breaker::with_clock("llm", Config::default(), clock.clone());
    /// let held = breaker.hold(Duration::from_secs(5), HoldScope::Group);
    /// assert!(held >= Duration::from_secs(5) && held <= Duration::from_millis(5_500));
    /// let refused = breaker.try_acquire().unwrap_err();
    /// assert_eq!(refused.reason(), OpenReason::Held(HoldScope::Group));
    /// assert_eq!(refused.retry_after(), Some(held));
    /// assert_eq!(breaker.state(), State::Closed); // no failure, no trip
    /// clock.advance(held);
    /// breaker.try_acquire().expect("released at its deadline").success();
    /// ```
    pub fn hold(&self, wait: Duration, scope: HoldScope) -> Duration {
        Duration::from_nanos(self.inner.hold(super::handle::nanos(wait), scope))
    }

    /// Holds until `until` (clock nanos) as `scope`, with no cap or spread of
    /// its own: a keyed group's hold, drawn once for every key. With `asked`
    /// (the wait the server asked for, and whether it was capped), counted and
    /// told as [`Event::Held`] as a hold of the breaker's own is; without (a
    /// key made while the group's hold lasts), counted only.
    pub(crate) fn hold_to(&self, until: u64, scope: HoldScope, asked: Option<(Duration, bool)>) {
        let inner = &*self.inner;
        let cell = inner.events.hold();
        cell.count(match scope {
            HoldScope::Key => Count::Key,
            HoldScope::Group => Count::Group,
        });
        if let Some((_, true)) = asked {
            cell.count(Count::Capped);
        }
        let guard = inner.transition.lock();
        let now = inner.clock.now();
        let (left, scope) = inner.hold_to(until, scope, now);
        drop(guard);
        if let Some((asked, capped)) = asked {
            inner.events.tell_other(&Event::Held(HoldStarted {
                group: inner.name,
                scope,
                asked,
                retry_after: Duration::from_nanos(left),
                capped,
                fleet: false,
            }));
        }
    }

    /// Whether a claim made once the hold in force ends would be admitted, as
    /// far as the state tells now: [`would_admit`](Self::would_admit) with
    /// the hold set aside. For a retry, which waits a hold out.
    pub(crate) fn would_admit_past_hold(&self) -> bool {
        let word = self.inner.word().with_held(false);
        word.admits_outright() || self.inner.would_admit(word)
    }

    /// The clock reading (nanos) holds compare: the breaker's clock, now.
    pub(crate) fn clock_now(&self) -> u64 {
        self.inner.clock.now()
    }

    /// Releases a hold in force at once, by hand (an operator, the admin
    /// router): the next claim is admitted as the state allows. Returns
    /// whether a hold was in force. Counted in
    /// [`HoldCounts::released`](crate::HoldCounts::released), and told as an
    /// [`Event::Released`](crate::events::Event::Released) by hand.
    pub fn release_hold(&self) -> bool {
        self.inner.release_hold()
    }

    /// The hold in force now, if any. Pure, like [`state`](Self::state): a
    /// hold whose deadline passed is over, though no claim has released it.
    pub fn held(&self) -> Option<Held> {
        self.inner.held(self.inner.word())
    }

    /// Counts a wait a server asked for that is not taken as a hold (a
    /// `Retry-After` that is unreadable, negative or past): what the
    /// integrations do with bad input, in
    /// [`HoldCounts::bad`](crate::HoldCounts::bad).
    pub fn count_bad_hold(&self) {
        self.inner.events.hold().count(Count::Bad);
    }
}

impl Permit<'_> {
    /// The call's answer says "wait for `wait`" (a `429` with `Retry-After`,
    /// say): the breaker [holds](Breaker::hold) for it, as `scope`, and the
    /// call counts as ignored (neither success nor failure; a probe frees its
    /// slot, and the circuit still needs a probe's success to close). Returns
    /// the time held from now.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, Config, HoldScope, ManualClock};
    ///
    /// let breaker = Breaker::with_clock("quota", Config::default(), ManualClock::new());
    /// let permit = breaker.try_acquire().unwrap();
    /// permit.hold(Duration::from_secs(2), HoldScope::Key);
    /// let metrics = breaker.metrics();
    /// assert_eq!((metrics.failures, metrics.ignored, metrics.holds.key), (0, 1, 1));
    /// assert!(breaker.try_acquire().is_err());
    /// ```
    pub fn hold(self, wait: Duration, scope: HoldScope) -> Duration {
        // Held before the verdict frees a probe slot, so no claim slips in
        // between as the next probe.
        let held = self.inner.hold(super::handle::nanos(wait), scope);
        self.settle_held();
        Duration::from_nanos(held)
    }
}

impl OwnedPermit {
    /// As [`Permit::hold`].
    pub fn hold(self, wait: Duration, scope: HoldScope) -> Duration {
        let held = self.breaker().hold(wait, scope);
        self.settle_held();
        held
    }
}
