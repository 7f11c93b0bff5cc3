//! Claims that do not find the breaker plainly closed: refusing while open,
//! moving open to half-open, taking and reclaiming probe slots.

use super::inner::Inner;
use super::permit::Permit;
use crate::counters::Event;
use crate::error::{CircuitOpen, OpenReason};
use crate::state::{State, Word};
use crate::sync::Ordering::*;

impl Inner {
    /// A call admitted on a closed or forced-closed `word` by a claim that went
    /// the slow way: the word is timed (the claim reads the clock), or it turned
    /// closed while the claim retried. Its permit is marked either way, and its
    /// success takes the slow path.
    pub(super) fn admit(&self, word: Word) -> Permit<'_> {
        let started = if word.is_timed() { self.clock.now() } else { 0 };
        Permit::new(self, word.marked(), started)
    }

    #[inline]
    pub(super) fn refuse(&self, reason: OpenReason, retry_after: Option<u64>) -> CircuitOpen {
        self.counters.bump(Event::Rejected);
        CircuitOpen::new(self.name, reason, retry_after)
    }

    /// A refusal as a contended claim returns it, in two registers: a word in a
    /// state no admitted permit has (open, or forced open), whose probe field
    /// says "half-open and full" and whose success field says whether the second
    /// value, the nanoseconds until a probe may go, is there.
    #[inline]
    pub(super) fn refused(reason: OpenReason, retry_after: Option<u64>) -> (Word, u64) {
        let (state, full) = match reason {
            OpenReason::Open => (State::Open, 0),
            OpenReason::HalfOpenFull => (State::Open, 1),
            OpenReason::ForcedOpen => (State::ForcedOpen, 0),
        };
        let has_retry = u32::from(retry_after.is_some());
        (
            Word::new(state, 0, full, has_retry),
            retry_after.unwrap_or(0),
        )
    }

    /// The [`CircuitOpen`] a [`refused`](Self::refused) pair stands for.
    #[inline]
    pub(super) fn refusal(&self, code: Word, retry_after: u64) -> CircuitOpen {
        let reason = match (code.state(), code.probes()) {
            (State::ForcedOpen, _) => OpenReason::ForcedOpen,
            (_, 0) => OpenReason::Open,
            _ => OpenReason::HalfOpenFull,
        };
        let retry_after = (code.successes() != 0).then_some(retry_after);
        CircuitOpen::new(self.name, reason, retry_after)
    }

    /// Every claim that does not find the breaker closed. Refusing while open is
    /// the common case here; it stays a small frame, apart from the transitions.
    /// Returns the admitted permit's word and start time, or a
    /// [`refused`](Self::refused) pair.
    #[cold]
    #[inline(never)]
    pub(super) fn acquire_contended(&self, word: Word) -> (Word, u64) {
        match word.state() {
            State::Closed | State::ForcedClosed => return self.admit(word).into_parts(),
            State::ForcedOpen => {
                self.counters.bump(Event::Rejected);
                return Self::refused(OpenReason::ForcedOpen, None);
            }
            State::Open => {
                let reopen_at = self.reopen_at.load(Acquire);
                let coarse = self.clock.now_coarse(); // see the `State::Open` arm below
                if coarse < reopen_at {
                    self.counters.bump(Event::Rejected);
                    return Self::refused(OpenReason::Open, Some(reopen_at - coarse));
                }
            }
            _ => {}
        }
        match self.acquire_moving(word) {
            Ok(permit) => permit.into_parts(),
            Err(open) => {
                let retry_after = open.retry_after().map(crate::clock::duration_to_nanos);
                Self::refused(open.reason(), retry_after)
            }
        }
    }

    /// The claims that may move the breaker: open to half-open, probe slots.
    #[inline(never)]
    pub(super) fn acquire_moving(&self, mut word: Word) -> Result<Permit<'_>, CircuitOpen> {
        loop {
            match word.state() {
                State::Closed | State::ForcedClosed => return Ok(self.admit(word)),
                State::ForcedOpen => return Err(self.refuse(OpenReason::ForcedOpen, None)),
                State::Open => {
                    let reopen_at = self.reopen_at.load(Acquire);
                    // A coarse reading never leads the precise clock, so a refusal
                    // may come up to one tick late, and a probe never goes early.
                    let coarse = self.clock.now_coarse();
                    if coarse < reopen_at {
                        return Err(self.refuse(OpenReason::Open, Some(reopen_at - coarse)));
                    }
                    // The open duration has passed: this claim is the first probe.
                    let now = self.clock.now().max(coarse);
                    self.renew_lease(now);
                    let next = word.next(State::HalfOpen).with_probes(1);
                    match self.cas(word, next) {
                        Ok(()) => return Ok(self.admit_probe(next, now)),
                        Err(seen) => word = seen,
                    }
                }
                State::HalfOpen => {
                    let probes = word.probes();
                    if probes < self.config.half_open_probes() {
                        let now = self.clock.now();
                        self.renew_lease(now);
                        let next = word.with_probes(probes + 1);
                        match self.cas(word, next) {
                            Ok(()) => return Ok(self.admit_probe(next, now)),
                            Err(seen) => word = seen,
                        }
                        continue;
                    }
                    let lease_until = self.lease_until.load(Acquire);
                    let coarse = self.clock.now_coarse(); // late, never early: as above
                    if coarse < lease_until {
                        return Err(
                            self.refuse(OpenReason::HalfOpenFull, Some(lease_until - coarse))
                        );
                    }
                    // Every probe in flight has overrun its lease: a new half-open
                    // episode takes their slots, and their outcomes become stale.
                    let now = self.clock.now().max(coarse);
                    self.renew_lease(now);
                    let next = word.next(State::HalfOpen).with_probes(1);
                    match self.cas(word, next) {
                        Ok(()) => {
                            for _ in 0..probes {
                                self.counters.bump(Event::ProbesReclaimed);
                            }
                            log::warn!(
                                "circuit `{}`: reclaimed {probes} probe slot(s) held past probe_timeout",
                                self.name
                            );
                            return Ok(self.admit_probe(next, now));
                        }
                        Err(seen) => word = seen,
                    }
                }
            }
        }
    }

    /// Extends the probes' lease to `now + probe_timeout`. Never shortens it: a
    /// claim that read the clock, then lost the CPU, must not cut short the
    /// lease of a probe admitted after its read.
    pub(super) fn renew_lease(&self, now: u64) {
        let lease = now.saturating_add(self.config.probe_timeout_nanos());
        self.lease_until.fetch_max(lease, AcqRel);
    }

    pub(super) fn admit_probe(&self, word: Word, now: u64) -> Permit<'_> {
        Permit::new(self, word.marked(), now)
    }
}
