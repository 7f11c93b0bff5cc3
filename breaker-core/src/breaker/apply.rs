//! The thin layer around [`step`](super::transition::step) for every input but a
//! claim: the compare-and-swap loop, the transitions that write more than the
//! word (under the transition lock), and `execute`, the one place a swapped-in
//! step is carried out and its transition published.

use std::time::Duration;

use super::inner::Inner;
use super::jitter;
use super::transition::{self, Act, Change, ChangeKind, Input, Step, Verdict};
use crate::counters::Counter;
use crate::events::{self, TransitionReason, TripCause};
use crate::level::KeyOutcome;
use crate::policy::Outcome;
use crate::state::{State, Word};
use crate::sync::Ordering::*;

impl Inner {
    /// Runs `input` from `word` until its step is swapped in, or needs no write.
    /// Returns the word the step was taken on, and the step; the caller
    /// publishes its transition, once outside the lock.
    pub(super) fn drive(&self, mut word: Word, input: Input) -> (Word, Step) {
        loop {
            let step = transition::step(word, input, self.config(), self);
            let Some(next) = step.next else {
                return (word, step);
            };
            match self.cas(word, next) {
                Ok(()) => return (word, step),
                Err(seen) => word = seen,
            }
        }
    }

    /// Closed -> open because `cause` tripped in `generation`, once per
    /// generation however many verdicts race here; returns whether this call
    /// opened it.
    /// A trip during a traffic ramp reopens as a failed probe does, with the
    /// open duration grown: the dependency did not recover. A trip after the
    /// ramp ran its length opens for `open_ms`: the completed ramp reset it.
    #[cold]
    pub(super) fn trip(&self, generation: u64, cause: TripCause) -> bool {
        let word = self.word();
        let open_for = if word.generation() == generation && self.ramp_running(word) {
            self.config().grown_open_nanos(self.open_for.load(Relaxed))
        } else {
            self.config().open_nanos()
        };
        // Without the lock, failures and resets change only the count of a
        // closed word, never its generation: the open retries past them.
        self.open(Input::Trip { generation, cause }, open_for)
    }

    /// Half-open -> open after a failed probe, with the open duration grown.
    #[cold]
    pub(super) fn reopen_after_probe(&self, generation: u64) {
        let open_for = self.config().grown_open_nanos(self.open_for.load(Relaxed));
        // Lock-free claims and verdicts may have moved the breaker on while this
        // probe waited for the lock (another probe closed it, or its lease was
        // reclaimed): then the open is stale.
        if self.open(Input::ProbeFailed { generation }, open_for) {
            self.counters.bump(Counter::Failures);
            self.counters.bump(Counter::ProbesFailed);
        } else {
            self.counters.bump(Counter::Stale);
        }
    }

    /// Opens for `base` nanos with the config's jitter drawn on them, unless
    /// `input` finds the breaker left its generation; returns whether it opened.
    fn open(&self, input: Input, base: u64) -> bool {
        let guard = self.transition.lock();
        // Drawn here, once per trip: a refused claim reads the deadline only.
        let generation = self.word().generation();
        let open_for = jitter::apply(
            base,
            self.config().jitter(),
            self.name,
            u64::from(self.jitter_salt),
            &self.clock,
            generation,
        );
        // Published before the word: a claim that sees `Open` sees its deadline.
        // If the open does not happen, nothing reads it before the next open
        // writes it again (claims read it only on an `Open` word).
        let opened = self.swap_open(self.word(), input, |_| {
            let now = self.clock.now();
            self.reopen_at.store(now.saturating_add(open_for), Release);
        });
        let Some((from, step, ())) = opened else {
            return false;
        };
        self.open_for.store(base, Relaxed);
        drop(guard);
        self.execute(from, step, Some(open_for));
        true
    }

    /// Swaps in the step `input` takes on `word` if it opens the breaker,
    /// under the transition lock. The pure step runs once per attempt: once,
    /// unless a lock-free claim or verdict moves the word meanwhile (then it
    /// runs again on the word that race left). `prepare` runs once, after the
    /// first step that opens and before any swap: it publishes what a claim
    /// on the open word reads. Returns the word left, the step and what
    /// `prepare` returned; `None` when a step does not open (the input is
    /// stale, or the word is in a state the input leaves alone).
    fn swap_open<R>(
        &self,
        mut word: Word,
        input: Input,
        prepare: impl FnOnce(Word) -> R,
    ) -> Option<(Word, Step, R)> {
        let mut step = transition::step(word, input, self.config(), self);
        if step.act != Act::Opened {
            return None;
        }
        let prepared = prepare(word);
        loop {
            let next = self.opened_word(step.next?);
            match self.cas(word, next) {
                Ok(()) => return Some((word, step, prepared)),
                Err(seen) => {
                    word = seen;
                    step = transition::step(word, input, self.config(), self);
                    if step.act != Act::Opened {
                        return None;
                    }
                }
            }
        }
    }

    /// The open word a step swaps in: a keyed group's own trip is marked so,
    /// and refused by the state machine, which tells its refusals as the
    /// group's (the open path of every other breaker never asks).
    fn opened_word(&self, next: Word) -> Word {
        if self.group_level && next.state() == State::Open && !next.is_fleet_open() {
            next.group_trip()
        } else {
            next
        }
    }

    /// [`FleetControl::fleet_open`](crate::fleet::FleetControl::fleet_open): open for
    /// `remaining` nanos in a new generation, unless forced by hand.
    #[cold]
    pub(super) fn fleet_open(&self, remaining: u64) -> bool {
        self.fleet_opens(remaining, Input::FleetOpen)
    }

    /// [`FleetControl::fleet_reopen`](crate::fleet::FleetControl::fleet_reopen): as
    /// [`fleet_open`](Self::fleet_open), unless closed.
    #[cold]
    pub(super) fn fleet_reopen(&self, remaining: u64) -> bool {
        self.fleet_opens(remaining, Input::FleetReopen)
    }

    fn fleet_opens(&self, remaining: u64, input: Input) -> bool {
        let guard = self.transition.lock();
        // Published before the word, as a local open does. An open under way
        // that ends later (a local backoff, say) keeps its end: the fleet's
        // word never shortens a refusal this instance has its own reason for.
        // The lock keeps manual control and other opens out, not a probe's
        // close (a compare-and-swap): after a lost race the step is taken
        // again, and a breaker that closed stays closed (the deadline written
        // is then unread: the next open writes its own).
        let opened = self.swap_open(self.word(), input, |word| {
            let now = self.clock.now();
            let mut until = now.saturating_add(remaining);
            if word.state() == State::Open {
                until = until.max(self.reopen_at.load(Acquire));
            }
            self.reopen_at.store(until, Release);
            until - now
        });
        let Some((from, step, open_for)) = opened else {
            return false;
        };
        // A failed probe here grows from the fleet's open time; within an
        // episode already under way, from the longer of that and the local one.
        let base = match from.state() {
            State::Open | State::HalfOpen => self.open_for.load(Relaxed),
            _ => self.config().open_nanos(),
        };
        self.open_for.store(base.max(remaining), Relaxed);
        drop(guard);
        self.execute(from, step, Some(open_for));
        true
    }

    /// A probe's end that may close the circuit: as [`drive`](Self::drive),
    /// and when the config ramps, under the transition lock with the ramp
    /// started first, so that the claims of the ramping word find it.
    pub(super) fn drive_close(&self, word: Word, input: Input) -> (Word, Step) {
        if self.config().ramp_nanos().is_none() {
            return self.drive(word, input);
        }
        let guard = self.transition.lock();
        let word = self.word();
        self.start_ramp(word);
        let driven = self.drive(word, input);
        drop(guard);
        driven
    }

    /// Whether `word` is a ramp still running: ramping, and the ramp has not
    /// run its length (the bit is cleared only by the next claim after it).
    pub(super) fn ramp_running(&self, word: Word) -> bool {
        word.is_ramping() && self.ramp.share(self.clock.now()).is_some()
    }

    /// Starts the ramp of a close about to be swapped in from `word`, now, for
    /// the config's `ramp_ms` (nothing without one, and nothing when `word` is
    /// closed: no close can follow from it, and a ramp it runs stays as it is).
    /// Under the transition lock, which every close that ramps takes: no two
    /// starts overlap. A close that then does not happen leaves it unread: only
    /// the claims of a ramping word read it.
    fn start_ramp(&self, word: Word) {
        if word.state() == State::Closed {
            return;
        }
        if let Some(length) = self.config().ramp_nanos() {
            self.ramp.start(self.clock.now(), length);
        }
    }

    /// [`FleetControl::fleet_close`](crate::fleet::FleetControl::fleet_close): open or half-open
    /// to closed in a new generation (ramping, when the config ramps: every
    /// instance ramps from the fleet's close).
    #[cold]
    pub(super) fn fleet_close(&self) -> bool {
        self.fleet_closes(Input::FleetClose)
    }

    /// [`FleetControl::fleet_release`](crate::fleet::FleetControl::fleet_release): as
    /// [`fleet_close`](Self::fleet_close), only from an open the fleet made.
    #[cold]
    pub(super) fn fleet_release(&self) -> bool {
        self.fleet_closes(Input::FleetRelease)
    }

    fn fleet_closes(&self, input: Input) -> bool {
        let guard = self.transition.lock();
        let word = self.word();
        self.start_ramp(word);
        let (from, step) = self.drive(word, input);
        drop(guard);
        let closed = step.change(from).is_some();
        self.execute(from, step, None);
        closed
    }

    /// [`FleetControl::fleet_hold`](crate::fleet::FleetControl::fleet_hold): moves the end of
    /// the current open to `remaining` nanos from now, in the same generation.
    #[cold]
    pub(super) fn fleet_hold(&self, remaining: u64) -> bool {
        let _guard = self.transition.lock();
        let now = self.clock.now();
        let deadline = now.saturating_add(remaining);
        let input = Input::FleetHold { now, deadline };
        if transition::step(self.word(), input, self.config(), self).act != Act::Hold {
            return false;
        }
        // Under the lock, no open or close moves the word meanwhile; a claim
        // that half-opens it now found the old end passed, which the step ruled
        // out unless the new end is sooner (then the store is harmless: claims
        // read it only on an open word, and the next open writes it first).
        self.reopen_at.store(deadline, Release);
        true
    }

    /// A keyed group's own breaker opens the group because `cause` tripped,
    /// if it is closed (see `keyed::judge`).
    #[cold]
    pub(super) fn trip_group(&self, cause: TripCause) {
        let word = self.word();
        if word.state() == State::Closed {
            self.trip(word.generation(), cause);
        }
    }

    /// A keyed group's own breaker records a key's `outcome` (failed, how
    /// long the key's call lasted, when it ended) in its policy and trips on
    /// it, if it is closed (see `keyed::judge`). The group's breaker ran no
    /// call: nothing of a call of its own (span, throttle, hold) is told.
    #[cold]
    pub(super) fn report(&self, outcome: KeyOutcome) {
        let word = self.word();
        if word.state() != State::Closed {
            return;
        }
        self.counters.bump(if outcome.failed {
            Counter::Failures
        } else {
            Counter::Successes
        });
        let generation = word.generation();
        let outcome = Outcome {
            failed: outcome.failed,
            lasted: outcome.lasted,
            ended: outcome.ended,
        };
        let policy = &self.hot.policy;
        if let Some(cause) = policy.record(&self.hot.word, generation, outcome, &self.clock) {
            self.trip_on(generation, cause);
        }
    }

    pub(super) fn force(&self, state: State) {
        let guard = self.transition.lock();
        if state == State::Closed {
            self.open_for.store(self.config().open_nanos(), Relaxed);
        }
        let (word, step) = self.drive(self.word(), Input::Force(state));
        drop(guard);
        self.execute(word, step, None);
        if step.next.is_some() {
            self.released_by_force(word);
        }
    }

    /// What a step taken on `from` and swapped in does next, in one place for
    /// every input but a claim: the counts its act stands for, then its
    /// transition, if it made one, told to the transition counts, the
    /// subscribers and the log, in that order. After the swap and outside
    /// every lock of the breaker (its callers hold none). `open_for` is the
    /// open duration an opening step set (`None`: read it, for a step that
    /// entered `Open` otherwise).
    #[cold]
    pub(super) fn execute(&self, from: Word, step: Step, open_for: Option<u64>) {
        match step.act {
            Act::Opened => self.counters.bump(Counter::Opened),
            Act::ProbeEnded(Verdict::Success) => {
                self.counters.bump(Counter::Successes);
                self.counters.bump(Counter::ProbesSucceeded);
            }
            Act::ProbeEnded(Verdict::Ignored) => self.counters.bump(Counter::Ignored),
            Act::ProbeEnded(_) => self.counters.bump(Counter::Abandoned),
            Act::Stale => self.counters.bump(Counter::Stale),
            // A claim counts its own; the rest count nothing.
            Act::Nothing
            | Act::Admit
            | Act::Ramp
            | Act::RampOver
            | Act::Probe { .. }
            | Act::Refuse { .. }
            | Act::Hold
            | Act::Release
            | Act::ReleaseProbe => {}
        }
        if let Some(transition) = step.change(from) {
            let open_for = open_for
                .or_else(|| (transition.to == State::Open).then(|| self.open_for.load(Relaxed)));
            self.publish(transition, open_for);
        }
    }

    /// Tells one transition: see [`execute`](Self::execute).
    #[cold]
    #[inline(never)]
    pub(super) fn publish(&self, t: Change, open_for: Option<u64>) {
        if let Some(level) = self.guards.group_level() {
            // A trip took its place with `reserve_open` before it was made.
            let tripped = matches!(t.kind, ChangeKind::Tripped(_));
            match (admits(t.from), admits(t.to)) {
                (true, false) if !tripped => level.key_stopped(),
                (false, true) => level.key_resumed(t.to == State::Closed),
                _ => {}
            }
        }
        let name = self.name;
        let open_for = open_for.map(Duration::from_nanos);
        let reason = match t.kind {
            ChangeKind::Tripped(cause) => TransitionReason::Tripped(cause),
            ChangeKind::OpenElapsed => TransitionReason::OpenElapsed,
            ChangeKind::ProbeFailed => TransitionReason::ProbeFailed,
            ChangeKind::ProbesSucceeded => TransitionReason::ProbesSucceeded,
            ChangeKind::LeaseReclaimed { probes } => TransitionReason::LeaseReclaimed { probes },
            ChangeKind::Forced => match t.to {
                State::ForcedOpen => TransitionReason::ForcedOpen,
                State::ForcedClosed => TransitionReason::ForcedClosed,
                _ => TransitionReason::Reset,
            },
            ChangeKind::FleetOpen => TransitionReason::FleetOpen,
            ChangeKind::FleetClose => TransitionReason::FleetClose,
        };
        // Queued (and delivered) before the log line: a log backend that
        // panics must not leave this generation unqueued, which would hold
        // back every later event of the breaker. No lock is held by either.
        self.events.tell(events::Transition {
            group: name,
            from: t.from,
            to: t.to,
            reason,
            generation: t.generation,
            open_for,
            retry_after: open_for,
            ramp: t
                .ramping
                .then(|| self.ramp.length())
                .map(Duration::from_nanos),
            keys_open: self.guards.key_counts().map(|keys| {
                let (open, keys) = keys.read();
                events::KeysOpen { open, keys }
            }),
        });
        match reason {
            TransitionReason::Tripped(cause) => log::warn!(
                "circuit `{name}` opened: {} tripped; open for {:?}",
                cause.as_str(),
                open_for.unwrap_or_default()
            ),
            TransitionReason::ProbeFailed => log::warn!(
                "circuit `{name}` reopened: probe failed; open for {:?}",
                open_for.unwrap_or_default()
            ),
            TransitionReason::ProbesSucceeded => {
                log::info!("circuit `{name}` closed: probes succeeded")
            }
            TransitionReason::LeaseReclaimed { probes } => log::warn!(
                "circuit `{name}`: reclaimed {probes} probe slot(s) held past probe_timeout"
            ),
            TransitionReason::OpenElapsed => {}
            TransitionReason::FleetOpen => log::info!(
                "circuit `{name}` opened by the fleet; open for {:?}",
                open_for.unwrap_or_default()
            ),
            TransitionReason::FleetClose => log::info!("circuit `{name}` closed by the fleet"),
            _ => log::info!("circuit `{name}` set to {} by hand", t.to),
        }
    }
}

/// Whether a breaker in `state` admits calls on its own (as its group level
/// counts keys).
fn admits(state: State) -> bool {
    matches!(state, State::Closed | State::ForcedClosed)
}
