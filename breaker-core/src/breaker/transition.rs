//! The state machine as a pure function: [`step`] takes the breaker's word, what
//! happened, and the readings it may need, and says what the word becomes and
//! what to do. No atomics, clock or lock here; `claim`, `settle` and `apply` run
//! it inside their compare-and-swap loops, and the tests below run it alone.

use crate::config::Config;
use crate::error::OpenReason;
use crate::events::TripCause;
use crate::hold::{HoldScope, HoldUntil};
use crate::state::{State, Word};

/// How a permit's call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Success,
    Failure,
    Ignored,
    Abandoned,
}

/// What happened to the breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Input {
    /// A claim that did not find the word plain.
    Claim,
    /// A probe admitted in `generation` ended, with anything but a failure (a
    /// failed probe reopens: [`Input::ProbeFailed`]).
    ProbeEnded { generation: u64, verdict: Verdict },
    /// The failure policy's rule `cause` tripped in `generation`: closed to
    /// open.
    Trip { generation: u64, cause: TripCause },
    /// A probe admitted in `generation` failed: half-open to open.
    ProbeFailed { generation: u64 },
    /// Set by hand.
    Force(State),
    /// The fleet says the circuit is open: a new generation, open, whatever
    /// the breaker was doing, unless it is forced by hand.
    FleetOpen,
    /// As [`Input::FleetOpen`], for a breaker that refuses or probes now (open
    /// or half-open): one that closed meanwhile is left closed.
    FleetReopen,
    /// The fleet says a probe elsewhere closed the circuit: open or half-open
    /// to closed.
    FleetClose,
    /// The fleet withdraws its own open: open to closed, only when the fleet
    /// opened it (a local trip since, a keyed group's own trip and a
    /// half-open stay).
    FleetRelease,
    /// The fleet moves the end of the current open to `deadline`, read at `now`
    /// (precise): no new generation. Sooner is always safe; later only while
    /// the current end is more than [`HOLD_GUARD`] ahead of `now`, so that no
    /// claim is already taking the half-open slot.
    FleetHold { now: u64, deadline: u64 },
}

/// How far ahead the current end of an open must be for
/// [`Input::FleetHold`] to push it later: a claim compares the deadline to a
/// clock it read a moment before, and must not find it passed while the
/// hold moves it.
pub(super) const HOLD_GUARD: u64 = 1_000_000;

/// The times a claim may compare, read only when it needs them: the coarse
/// clock (see [the crate docs](crate#time)) and the two deadlines.
pub(super) trait Readings {
    fn coarse(&self) -> u64;
    /// A `coarse` reading short of `deadline`, confirmed by a precise one when
    /// the coarse clock's lag could be all that keeps it short (see
    /// `ClockSource::confirm`); never earlier than `coarse`.
    fn confirm(&self, coarse: u64, deadline: u64) -> u64;
    /// When the current open state ends.
    fn reopen_at(&self) -> u64;
    /// Until when the probes in flight hold their slots.
    fn lease_until(&self) -> u64;
    /// When the hold ends, and its scope: read only on a held word.
    fn hold(&self) -> HoldUntil;
}

/// What [`step`] decided: the word to swap in (`None`: leave it), what to do
/// once it is in, and why the breaker changed generation, when it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Step {
    pub(super) next: Option<Word>,
    pub(super) act: Act,
    pub(super) kind: Option<ChangeKind>,
}

/// What the thin layer does after its swap succeeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Act {
    /// Nothing more.
    Nothing,
    /// Admit a call on a closed (or forced-closed) word.
    Admit,
    /// A claim on a ramping word: the ramp's credit decides (see `crate::ramp`).
    Ramp,
    /// The ramp ran its length: `next` is the word fully closed, in the same
    /// generation. The claim that swaps it in is admitted.
    RampOver,
    /// Admit a probe into the slot `next` holds and renew the lease from a
    /// precise reading no earlier than `coarse` (0: not read). `reclaimed`
    /// slots were taken back from probes that overran their lease.
    Probe { coarse: u64, reclaimed: u32 },
    /// Refuse the claim.
    Refuse {
        refusal: Refusal,
        retry_after: Option<u64>,
    },
    /// A probe success, ignore or abandonment was recorded.
    ProbeEnded(Verdict),
    /// The breaker opened.
    Opened,
    /// The outcome or transition belongs to a generation the breaker has left.
    Stale,
    /// Write the fleet's new end of the current open.
    Hold,
    /// The hold's deadline passed on an open or half-open word: `next` is
    /// the word released (same generation). The thin layer releases it under
    /// the transition lock, so that a hold set meanwhile is not lost, and
    /// claims again.
    Release,
    /// The hold's deadline (or the lease of the call let through to end it)
    /// passed on a closed word: the thin layer admits this claim as the one
    /// call that ends the hold, under the transition lock, and leases it.
    ReleaseProbe,
}

/// Why a claim is refused: the [`OpenReason`]s a claim can give. (A full bulkhead refuses before any claim: it is no answer of the
/// state machine, so it has no value here.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Open by its own trip or failed probe.
    Open,
    /// Half-open, every probe slot taken.
    HalfOpenFull,
    /// Open because the fleet says so.
    Fleet,
    /// Forced open by hand.
    ForcedOpen,
    /// Closed and ramping: the ramp's credit did not admit the claim.
    Ramping,
    /// The adaptive throttle's credit did not admit the claim (decided before
    /// the state machine is asked, in the claim layer).
    Throttled,
    /// Held: the server asked to wait, and the hold has not ended.
    Held(HoldScope),
    /// A keyed group's own breaker refuses: open or half-open and full.
    Group,
}

impl Refusal {
    /// What the caller is told.
    #[inline(always)]
    pub(super) const fn reason(self) -> OpenReason {
        match self {
            Refusal::Open => OpenReason::Open,
            Refusal::HalfOpenFull => OpenReason::HalfOpenFull,
            Refusal::Fleet => OpenReason::Fleet,
            Refusal::ForcedOpen => OpenReason::ForcedOpen,
            Refusal::Ramping => OpenReason::Ramping,
            Refusal::Throttled => OpenReason::Throttled,
            Refusal::Held(scope) => OpenReason::Held(scope),
            Refusal::Group => OpenReason::Group,
        }
    }

    /// The refusal as a keyed group's own breaker tells it: its open and
    /// half-open refusals are the group's; a forced open, a ramp, a throttle
    /// and a hold say what they are.
    #[inline(always)]
    pub(super) const fn of_group(self) -> Refusal {
        match self {
            Refusal::ForcedOpen | Refusal::Ramping | Refusal::Throttled | Refusal::Held(_) => self,
            _ => Refusal::Group,
        }
    }
}

/// Why a breaker changed generation: what an observer would be told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    /// The failure policy's rule tripped (the one the tripping verdict saw).
    Tripped(TripCause),
    /// The open duration passed and a claim became the first probe.
    OpenElapsed,
    /// Every probe overran its lease; a claim took their `probes` slots.
    LeaseReclaimed { probes: u32 },
    /// Enough probes succeeded.
    ProbesSucceeded,
    /// A probe failed.
    ProbeFailed,
    /// Set by hand.
    Forced,
    /// A fleet agent opened it.
    FleetOpen,
    /// A fleet agent closed it.
    FleetClose,
}

/// One change of generation, as an observer would be told it. Built only on
/// the cold paths that change generation, from a [`Step`] and the word it left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) from: State,
    pub(crate) to: State,
    pub(crate) kind: ChangeKind,
    pub(crate) generation: u64,
    /// The word it entered ramps (closed, with `ramp_ms`).
    pub(crate) ramping: bool,
}

impl Step {
    const fn stay(act: Act) -> Step {
        Step {
            next: None,
            act,
            kind: None,
        }
    }

    const fn write(next: Word, act: Act) -> Step {
        Step {
            next: Some(next),
            act,
            kind: None,
        }
    }

    const fn to(next: Word, act: Act, kind: ChangeKind) -> Step {
        Step {
            next: Some(next),
            act,
            kind: Some(kind),
        }
    }

    /// The transition this step makes from `from`, if it changes generation.
    pub(super) fn change(&self, from: Word) -> Option<Change> {
        match (self.next, self.kind) {
            (Some(next), Some(kind)) => Some(Change {
                from: from.state(),
                to: next.state(),
                kind,
                generation: next.generation(),
                ramping: next.is_ramping(),
            }),
            _ => None,
        }
    }
}

const fn refuse(refusal: Refusal, retry_after: Option<u64>) -> Step {
    Step::stay(Act::Refuse {
        refusal,
        retry_after,
    })
}

/// The state machine: what `input` does to `word` under `config`.
#[inline(always)]
pub(super) fn step(word: Word, input: Input, config: &Config, at: &impl Readings) -> Step {
    match input {
        Input::Claim => claim(word, config, at),
        Input::ProbeEnded {
            generation,
            verdict,
        } => probe_ended(word, generation, verdict, config),
        Input::Trip { generation, cause } => {
            open(word, generation, State::Closed, ChangeKind::Tripped(cause))
        }
        Input::ProbeFailed { generation } => {
            open(word, generation, State::HalfOpen, ChangeKind::ProbeFailed)
        }
        Input::Force(state) => forced(word, state),
        // The user's hand wins over the fleet.
        Input::FleetOpen => match word.state() {
            State::ForcedOpen | State::ForcedClosed => Step::stay(Act::Nothing),
            _ => Step::to(word.next_fleet_open(), Act::Opened, ChangeKind::FleetOpen),
        },
        Input::FleetReopen => match word.state() {
            State::Open | State::HalfOpen => {
                Step::to(word.next_fleet_open(), Act::Opened, ChangeKind::FleetOpen)
            }
            State::Closed | State::ForcedOpen | State::ForcedClosed => Step::stay(Act::Nothing),
        },
        Input::FleetClose => match word.state() {
            State::Open | State::HalfOpen => {
                Step::to(closed(word, config), Act::Nothing, ChangeKind::FleetClose)
            }
            _ => Step::stay(Act::Nothing),
        },
        Input::FleetRelease if word.is_fleet_open() => {
            Step::to(closed(word, config), Act::Nothing, ChangeKind::FleetClose)
        }
        Input::FleetRelease => Step::stay(Act::Nothing),
        Input::FleetHold { now, deadline } => {
            if word.state() != State::Open {
                return Step::stay(Act::Nothing);
            }
            let reopen_at = at.reopen_at();
            if deadline <= reopen_at || now.saturating_add(HOLD_GUARD) < reopen_at {
                Step::stay(Act::Hold)
            } else {
                // Too late to push it: a claim may be taking the probe slot.
                Step::stay(Act::Nothing)
            }
        }
    }
}

/// Set by hand to `state`: a transition into a new generation, unless the
/// breaker is in `state` already. Then nothing is told and the generation
/// stays, so calls in flight keep their outcomes; a reset of a closed word
/// clears its failure count and ends its ramp. Either way a hold ends: the
/// operator's hand outranks the server's wait.
fn forced(word: Word, state: State) -> Step {
    let unheld = word.with_held(false);
    if word.state() != state {
        return Step::to(unheld.next(state), Act::Nothing, ChangeKind::Forced);
    }
    let next = match state {
        State::Closed => unheld.ramp_done().with_failures(0),
        _ => unheld,
    };
    if next == word {
        Step::stay(Act::Nothing)
    } else {
        Step::write(next, Act::Nothing)
    }
}

/// Why an open word refuses: the fleet opened it, or it tripped here.
#[inline(always)]
pub(super) const fn open_refusal(word: Word) -> Refusal {
    if word.is_fleet_open() {
        Refusal::Fleet
    } else {
        Refusal::Open
    }
}

#[inline(always)]
fn claim(word: Word, config: &Config, at: &impl Readings) -> Step {
    if word.is_held() {
        return held(word, at);
    }
    match word.state() {
        State::Closed if word.is_ramping() => Step::stay(Act::Ramp),
        State::Closed | State::ForcedClosed => Step::stay(Act::Admit),
        State::ForcedOpen => refuse(Refusal::ForcedOpen, None),
        State::Open => {
            let reopen_at = at.reopen_at();
            let mut coarse = at.coarse();
            if coarse < reopen_at {
                // Refused only if a precise reading agrees: a caller that
                // waited the `retry_after` it was given is due, though the
                // coarse clock lags.
                coarse = at.confirm(coarse, reopen_at);
                if coarse < reopen_at {
                    return refuse(open_refusal(word), Some(reopen_at - coarse));
                }
            }
            let next = word.next(State::HalfOpen).with_probes(1);
            let act = Act::Probe {
                coarse,
                reclaimed: 0,
            };
            Step::to(next, act, ChangeKind::OpenElapsed)
        }
        State::HalfOpen => {
            let probes = word.probes();
            if probes < config.half_open_probes() {
                let act = Act::Probe {
                    coarse: 0,
                    reclaimed: 0,
                };
                return Step::write(word.with_probes(probes + 1), act);
            }
            let lease_until = at.lease_until();
            let mut coarse = at.coarse();
            if coarse < lease_until {
                coarse = at.confirm(coarse, lease_until);
                if coarse < lease_until {
                    return refuse(Refusal::HalfOpenFull, Some(lease_until - coarse));
                }
            }
            // Every probe in flight has overrun its lease: a new half-open
            // episode takes their slots, and their outcomes become stale.
            let next = word.next(State::HalfOpen).with_probes(1);
            let act = Act::Probe {
                coarse,
                reclaimed: probes,
            };
            Step::to(next, act, ChangeKind::LeaseReclaimed { probes })
        }
    }
}

/// A claim on a held word. Before the hold's deadline (confirmed near it by
/// a precise reading, as an open's is) it is refused as held, with the time
/// the hold has left, or the later end of an open circuit under it; manual
/// control outranks a hold (forced open refuses as forced, forced closed
/// admits). Past the deadline a closed word lets this claim through as the
/// one call that ends the hold (the others wait for its answer); an open or
/// half-open word is released, and the claim goes on as a claim on the word
/// without the hold (an open circuit whose time ran out meanwhile still
/// takes its probe).
#[cold]
fn held(word: Word, at: &impl Readings) -> Step {
    match word.state() {
        State::ForcedOpen => return refuse(Refusal::ForcedOpen, None),
        State::ForcedClosed => return Step::stay(Act::Admit),
        _ => {}
    }
    let HoldUntil { until, scope, .. } = at.hold();
    let mut now = at.coarse();
    if now < until {
        now = at.confirm(now, until);
    }
    if now >= until {
        return match word.state() {
            State::Closed => Step::stay(Act::ReleaseProbe),
            _ => Step::write(word.with_held(false), Act::Release),
        };
    }
    let end = match word.state() {
        State::Open => until.max(at.reopen_at()),
        _ => until,
    };
    refuse(Refusal::Held(scope), Some(end - now))
}

fn probe_ended(word: Word, generation: u64, verdict: Verdict, config: &Config) -> Step {
    if word.generation() != generation || word.state() != State::HalfOpen {
        return Step::stay(Act::Stale);
    }
    let probes = word.probes().saturating_sub(1);
    let act = Act::ProbeEnded(verdict);
    match verdict {
        Verdict::Success => {
            let successes = word.successes() + 1;
            if successes >= config.successes_to_close() {
                Step::to(closed(word, config), act, ChangeKind::ProbesSucceeded)
            } else {
                Step::write(word.with_successes(probes, successes), act)
            }
        }
        Verdict::Ignored | Verdict::Abandoned | Verdict::Failure => {
            Step::write(word.with_probes(probes), act)
        }
    }
}

/// The word of the next generation, closed: ramping when `config` has a ramp.
const fn closed(word: Word, config: &Config) -> Word {
    let next = word.next(State::Closed);
    match config.ramp_nanos() {
        Some(_) => next.ramping(),
        None => next,
    }
}

/// The ramping `word` once its ramp ran its length: the same generation, with
/// its failure count, fully closed.
pub(super) const fn ramp_over(word: Word) -> Step {
    Step::write(word.ramp_done(), Act::RampOver)
}

/// Opens a `from` word of `generation`; stale when the breaker left it.
fn open(word: Word, generation: u64, from: State, kind: ChangeKind) -> Step {
    if word.generation() != generation || word.state() != from {
        return Step::stay(Act::Stale);
    }
    Step::to(word.next(State::Open), Act::Opened, kind)
}

#[cfg(test)]
mod tests;
