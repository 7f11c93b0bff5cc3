//! Claims that do not find the breaker plainly closed: the thin layer that runs
//! [`step`](super::transition::step) on a claim, swaps its word in, renews the probes' lease and counts.

use super::inner::Inner;
use super::transition::{self, Act, Input, Readings, Refusal, Step};
use crate::clock::COARSE_LAG_MAX;
use crate::counters::Counter;
use crate::error::OpenReason;
use crate::events::{Event, ThrottleChange};
use crate::hold::{HoldScope, HoldUntil};
use crate::ramp::Admission;
use crate::state::{Refusing, State, Word};
use crate::sync::Ordering::*;
use crate::throttle::{Edge, Judged};

/// What a claim that left the fast path comes to: admitted (the permit's copy of
/// the word and when the call started, 0 when nothing times it) or refused (why,
/// and the nanoseconds until a probe may go, `None` when forced open).
///
/// Packed in two `u64`s so it comes back in two registers: an enum came back
/// through memory and cost the closed and open paths instructions. A refusal is
/// a word in a state no admitted permit has (open or forced open); its probe
/// field says "half-open and full" (1) or "open by the fleet" (2), and its
/// success field whether `retry_after` is there. Only this type reads or writes
/// that code. A ramp's refusal is kind 3, the throttle's 4, a hold's 5 (key) or 6
/// (group), a keyed group's own breaker's 7 ([`GROUP_KIND`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ClaimCode {
    code: Word,
    value: u64,
}

/// The kind of a keyed group's own breaker's refusals in a [`ClaimCode`].
const GROUP_KIND: u32 = 7;

/// A [`ClaimCode`] taken apart: what `Breaker::try_acquire` matches on.
pub(super) enum Claimed {
    Admitted {
        word: Word,
        started: u64,
    },
    Refused {
        reason: OpenReason,
        retry_after: Option<u64>,
    },
}

impl ClaimCode {
    #[inline(always)]
    pub(super) const fn admitted(word: Word, started: u64) -> ClaimCode {
        ClaimCode {
            code: word,
            value: started,
        }
    }

    #[inline(always)]
    pub(super) fn refused(refusal: Refusal, retry_after: Option<u64>) -> ClaimCode {
        let (state, kind) = match refusal {
            Refusal::Open => (State::Open, 0),
            Refusal::HalfOpenFull => (State::Open, 1),
            Refusal::Fleet => (State::Open, 2),
            Refusal::Ramping => (State::Open, 3),
            Refusal::Throttled => (State::Open, 4),
            Refusal::Held(HoldScope::Key) => (State::Open, 5),
            Refusal::Held(HoldScope::Group) => (State::Open, 6),
            Refusal::Group => (State::Open, GROUP_KIND),
            Refusal::ForcedOpen => (State::ForcedOpen, 0),
        };
        ClaimCode {
            code: Word::code(state, kind, retry_after.is_some()),
            value: retry_after.unwrap_or(0),
        }
    }

    #[inline(always)]
    pub(super) fn get(self) -> Claimed {
        let code = self.code;
        match code.state() {
            State::Closed | State::ForcedClosed | State::HalfOpen => Claimed::Admitted {
                word: code,
                started: self.value,
            },
            State::Open | State::ForcedOpen => Claimed::Refused {
                reason: match (code.state(), code.code_kind()) {
                    (State::ForcedOpen, _) => OpenReason::ForcedOpen,
                    (_, 0) => OpenReason::Open,
                    (_, 1) => OpenReason::HalfOpenFull,
                    (_, 2) => OpenReason::Fleet,
                    (_, 3) => OpenReason::Ramping,
                    (_, 4) => OpenReason::Throttled,
                    (_, 5) => OpenReason::Held(HoldScope::Key),
                    (_, 6) => OpenReason::Held(HoldScope::Group),
                    (_, _) => OpenReason::Group,
                },
                retry_after: code.code_flag().then_some(self.value),
            },
        }
    }
}

/// The live readings: each atomic and the coarse clock read only if asked for.
impl Readings for Inner {
    #[inline(always)]
    fn coarse(&self) -> u64 {
        self.clock.now_coarse()
    }

    #[inline(always)]
    fn confirm(&self, coarse: u64, deadline: u64) -> u64 {
        self.clock.confirm(coarse, deadline)
    }

    #[inline(always)]
    fn reopen_at(&self) -> u64 {
        self.reopen_at.load(Acquire)
    }

    #[inline(always)]
    fn lease_until(&self) -> u64 {
        self.lease_until.load(Acquire)
    }

    fn hold(&self) -> HoldUntil {
        self.hold_until()
    }
}

impl Inner {
    /// Every claim that does not find the breaker plainly closed. Refusing while
    /// open is the common case here, so it stays small: only an open word's
    /// refusal takes a stack frame, for the clock's read. Every other claim
    /// leaves by a tail call, and claims that admit go on in
    /// [`acquire_moving`](Self::acquire_moving).
    #[cold]
    #[inline(never)]
    pub(super) fn acquire_contended(&self, word: Word) -> ClaimCode {
        // Before its deadline an open word refuses: the rule the claim step
        // starts with, taken here alone so this frame stays small. Within the
        // coarse clock's lag of the deadline, the step decides, confirming by
        // a precise reading. A word the fleet opened, and a keyed group's own
        // trip, go to the step too, which tells their reason: knowing it here
        // would cost every local refusal a register kept across the clock's
        // read.
        let refusing = word.refusing();
        if refusing == Refusing::LocallyOpen {
            let reopen_at = self.reopen_at.load(Acquire);
            let coarse = self.clock.now_coarse();
            if coarse < reopen_at && reopen_at - coarse > COARSE_LAG_MAX {
                return self.refuse(Refusal::Open, Some(reopen_at - coarse));
            }
            return self.acquire_near_deadline();
        }
        if refusing == Refusing::ForcedOpen {
            return self.refuse_forced();
        }
        self.acquire_moving()
    }

    /// [`acquire_moving`](Self::acquire_moving) of an open word near its
    /// deadline. It and [`refuse_forced`](Self::refuse_forced) are calls of
    /// their own so that the compiler keeps the open word's stack frame to
    /// the open word's path: inlined, they would share its return, and with
    /// it the frame.
    #[cold]
    #[inline(never)]
    fn acquire_near_deadline(&self) -> ClaimCode {
        self.acquire_moving()
    }

    /// The refusal of a word forced open.
    #[cold]
    #[inline(never)]
    fn refuse_forced(&self) -> ClaimCode {
        self.refuse(Refusal::ForcedOpen, None)
    }

    #[inline(always)]
    fn refuse(&self, refusal: Refusal, retry_after: Option<u64>) -> ClaimCode {
        self.counters
            .bump_then(Counter::Rejected, ClaimCode::refused(refusal, retry_after))
    }

    /// A refusal the state machine decided on `word`, unless the breaker is in
    /// shadow mode: then the claim is admitted, as a call whose outcome counts
    /// and never moves the breaker (a ramp's refusal: judged as the ramp's
    /// ordinary calls, see `Word::shadow_call`), and counted in
    /// `shadow_refused`. A forced open still refuses:
    /// forcing is an operator's order, not a threshold being tuned. The one
    /// place that decides what shadow mode admits; the refusal frame of
    /// `acquire_contended` never sees a shadow word (see `Word::refusing`), and
    /// a ramp's refusal comes here only in shadow mode, so neither pays for it.
    #[cold]
    #[inline(never)]
    fn refuse_unless_shadow(
        &self,
        word: Word,
        refusal: Refusal,
        retry_after: Option<u64>,
    ) -> ClaimCode {
        if !word.is_shadow() || refusal == Refusal::ForcedOpen {
            // A keyed group's own breaker tells its refusals as the group's.
            let refusal = if self.group_level {
                refusal.of_group()
            } else {
                refusal
            };
            return self.refuse(refusal, retry_after);
        }
        self.counters.bump(Counter::ShadowRefused);
        let started = if word.is_timed() { self.clock.now() } else { 0 };
        ClaimCode::admitted(word.shadow_call(), started)
    }

    /// The claims that admit, and may move the breaker: open to half-open,
    /// probe slots, a ramp's credit, the throttle's. Reads the word afresh. A
    /// traced word's claim is told to the span hook (`trace`).
    #[inline(always)]
    fn acquire_moving(&self) -> ClaimCode {
        let word = self.word();
        if word.admits_untraced() {
            return self.admit_timed(word);
        }
        // One test for two flags: a word without either takes the step as
        // fast as ever.
        if word.is_throttled_or_traced() {
            return self.acquire_throttled_or_traced(word);
        }
        self.acquire_stepping(word)
    }

    /// A claim on a throttled or traced word (`trace`: told to the span hook).
    #[cold]
    #[inline(never)]
    fn acquire_throttled_or_traced(&self, word: Word) -> ClaimCode {
        #[cfg(feature = "trace")]
        if word.is_traced() {
            return self.acquire_traced(word);
        }
        self.acquire_throttled(word)
    }

    /// [`acquire_moving`](Self::acquire_moving) of a word that does not admit
    /// outright, told to the span hook or not: through the throttle, or the
    /// claim step.
    #[cfg(feature = "trace")]
    pub(super) fn acquire_flagged(&self, word: Word) -> ClaimCode {
        if word.is_throttled() {
            return self.acquire_throttled(word);
        }
        self.acquire_stepping(word)
    }

    /// A claim on a throttled word: the throttle's admission first, then the
    /// breaker's claim, as for any word. The throttle judges the claims of a
    /// closed or half-open breaker: an open one refuses as open (and the claim
    /// that finds its open time over goes as the probe), a forced-closed one
    /// admits without asking (an operator's order), as `Breaker::refusal`
    /// tells. Shadow mode admits what the throttle refuses and counts it in
    /// `shadow_refused`. A held word is judged by its hold first.
    fn acquire_throttled(&self, word: Word) -> ClaimCode {
        // A hold refuses before the throttle is asked: the server's own wait.
        if !word.is_held() && matches!(word.state(), State::Closed | State::HalfOpen) {
            if let Some(refused) = self.throttle_claim(word) {
                return refused;
            }
        }
        if word.admits_past_throttle() {
            let started = if word.is_timed() { self.clock.now() } else { 0 };
            return ClaimCode::admitted(word.marked(), started);
        }
        self.acquire_stepping(word)
    }

    /// The throttle's judgement of one claim on `word`: the refusal, or `None`
    /// for a claim that goes on to the breaker. Tells the start or stop of
    /// throttling this claim found.
    fn throttle_claim(&self, word: Word) -> Option<ClaimCode> {
        let (throttle, rules) = self
            .throttle
            .as_deref()
            .zip(self.config().throttle_rules())?;
        let now = throttle.now(&self.clock);
        let (judged, edge) = throttle.admit(now, &rules);
        if let Some(edge) = edge {
            self.tell_throttle(edge, throttle.reject_share(now, &rules));
        }
        let Judged::Refused { retry_after } = judged else {
            return None;
        };
        if word.is_shadow() {
            self.counters.bump(Counter::ShadowRefused);
            return None;
        }
        throttle.refused(now);
        Some(self.refuse(Refusal::Throttled, Some(retry_after)))
    }

    /// Logs and tells the start or stop of throttling.
    #[cold]
    fn tell_throttle(&self, edge: Edge, reject_share: f64) {
        let throttling = edge == Edge::Started;
        if throttling {
            log::info!(
                "group `{}`: throttling, refusing {:.1}% of calls",
                self.name,
                reject_share * 100.0
            );
        } else {
            log::info!("group `{}`: throttling stopped", self.name);
        }
        self.events.tell_other(&Event::Throttle(ThrottleChange {
            group: self.name,
            throttling,
            reject_share,
        }));
    }

    /// A closed, timed word (slow calls or latency judged): admitted with the
    /// clock's reading, inlined here, marked so that its verdict takes the
    /// slow path, as the claim step would. A frame of its own, so that the
    /// claim step's claims do not pay for the read's.
    #[inline(never)]
    fn admit_timed(&self, word: Word) -> ClaimCode {
        ClaimCode::admitted(word.marked(), self.clock.now_inlined())
    }

    /// [`acquire_moving`](Self::acquire_moving) of a word that does not admit
    /// outright: the claim step, in a frame of its own, so that the timed
    /// claims of a closed breaker do not pay for it.
    #[inline(never)]
    fn acquire_stepping(&self, mut word: Word) -> ClaimCode {
        loop {
            let step = transition::step(word, Input::Claim, self.config(), self);
            if step.act == Act::Release {
                self.release_expired();
                word = self.word();
                continue;
            }
            if step.act == Act::ReleaseProbe {
                match self.release_probe() {
                    Some(code) => return code,
                    None => {
                        word = self.word();
                        continue;
                    }
                }
            }
            if step.act == Act::Ramp {
                match self.ramp_claim(word) {
                    Ok(code) => return code,
                    Err(seen) => {
                        word = seen;
                        continue;
                    }
                }
            }
            let Some(next) = step.next else {
                return match step.act {
                    Act::Refuse {
                        refusal,
                        retry_after,
                    } => self.refuse_unless_shadow(word, refusal, retry_after),
                    // The word admits a call: timed, or it turned closed while
                    // this claim retried. Marked either way, so its success
                    // takes the slow path.
                    _ => {
                        let started = if word.is_timed() { self.clock.now() } else { 0 };
                        ClaimCode::admitted(word.marked(), started)
                    }
                };
            };
            let Act::Probe { coarse, reclaimed } = step.act else {
                unreachable!("a claim writes the word only to take a probe slot")
            };
            // The lease covers the probe before its slot is published.
            let now = self.clock.now().max(coarse);
            self.renew_lease(now);
            match self.cas(word, next) {
                Ok(()) => {
                    for _ in 0..reclaimed {
                        self.counters.bump(Counter::ProbesReclaimed);
                    }
                    if let Some(transition) = step.change(word) {
                        self.publish(transition, None);
                    }
                    return ClaimCode::admitted(next.marked(), now);
                }
                Err(seen) => word = seen,
            }
        }
    }

    /// A claim on a ramping word: admitted or refused by the ramp's credit, or,
    /// once the ramp ran its length, admitted by the swap that ends it (`Err`:
    /// the word that swap found instead, to claim on again).
    #[cold]
    fn ramp_claim(&self, word: Word) -> Result<ClaimCode, Word> {
        let now = self.clock.now_coarse();
        // The close that published the ramping word started the ramp first.
        // A keyed group's own breaker is handed out while it ramps only to
        // the lookups the ramp refused, their share taken then.
        let admission = if self.group_level {
            self.ramp.refused_again(now)
        } else {
            self.ramp.admit(now)
        };
        let admitted = match admission {
            Admission::Admitted => word,
            Admission::Refused { retry_after } if word.is_shadow() => {
                return Ok(self.refuse_unless_shadow(word, Refusal::Ramping, Some(retry_after)));
            }
            Admission::Refused { retry_after } => {
                self.counters.bump(Counter::RampRefused);
                return Ok(self.refuse(Refusal::Ramping, Some(retry_after)));
            }
            Admission::Over => self.end_ramp(word)?,
        };
        let started = if word.is_timed() { self.clock.now() } else { 0 };
        Ok(ClaimCode::admitted(admitted.marked(), started))
    }

    /// Ends the ramp of `word`, which has run its length: the word without it
    /// (`Err`: the word the swap found instead).
    fn end_ramp(&self, word: Word) -> Result<Word, Word> {
        let Step { next, .. } = transition::ramp_over(word);
        let next = next.unwrap_or(word);
        self.cas(word, next)?;
        log::info!(
            "circuit `{}`: ramp complete, every call admitted",
            self.name
        );
        Ok(next)
    }

    /// A keyed group's own breaker, closed with a ramp that runs: one lookup
    /// of a key takes its share of the ramp's credit, so that the group's
    /// keys ramp back in as one. `true` when the ramp refuses it (the lookup
    /// hands out this breaker, whose claim refuses as the ramp does); once
    /// the ramp ran its length, the swap that ends it.
    #[cold]
    #[inline(never)]
    pub(super) fn ramp_refuses_lookup(&self, word: Word) -> bool {
        match self.ramp.admit(self.clock.now_coarse()) {
            Admission::Refused { .. } => true,
            Admission::Admitted => false,
            Admission::Over => {
                // Another claim or lookup may have ended it first.
                let _ = self.end_ramp(word);
                false
            }
        }
    }

    /// Extends the probes' lease to `now + probe_timeout`. Never shortens it: a
    /// claim that read the clock, then lost the CPU, must not cut short the
    /// lease of a probe admitted after its read.
    fn renew_lease(&self, now: u64) {
        let lease = now.saturating_add(self.config().probe_timeout_nanos());
        self.lease_until.fetch_max(lease, AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_comes_back_as_its_own_reason_with_its_retry_after() {
        for refusal in [
            Refusal::Open,
            Refusal::HalfOpenFull,
            Refusal::Fleet,
            Refusal::ForcedOpen,
            Refusal::Ramping,
            Refusal::Throttled,
            Refusal::Held(HoldScope::Key),
            Refusal::Held(HoldScope::Group),
            Refusal::Group,
        ] {
            for retry_after in [None, Some(0), Some(7), Some(u64::MAX)] {
                match ClaimCode::refused(refusal, retry_after).get() {
                    Claimed::Refused {
                        reason,
                        retry_after: back,
                    } => {
                        assert_eq!(reason, refusal.reason());
                        assert_eq!(back, retry_after, "{refusal:?}");
                    }
                    Claimed::Admitted { .. } => panic!("{refusal:?} admitted"),
                }
            }
        }
    }
}
