//! Verdicts: a permit's outcome timed, counted and fed to the failure policy,
//! and the transition it causes run through [`step`](super::transition::step).

use super::inner::Inner;
use super::transition::{Input, Verdict};
use crate::config::Abandoned;
use crate::counters::Counter;
use crate::events::TripCause;
use crate::histogram::Kind;
use crate::policy::Outcome;
use crate::state::{State, Word};

impl Inner {
    /// Records the verdict of a permit admitted when the word was `admitted`,
    /// with the clock reading `started` at the claim (a timed word's).
    #[inline(always)]
    pub(super) fn settle(&self, admitted: Word, started: u64, verdict: Verdict) {
        // The common verdict: the success of a call claimed on a plain word (an
        // unmarked one) that finds the word as it was at the claim (so in the
        // same generation, with the same failure count: none). It only counts.
        if verdict == Verdict::Success && self.word() == admitted {
            return self.counters.bump(Counter::Successes);
        }
        self.settle_slow(admitted, started, verdict, 0);
    }

    /// The verdict of a call dropped without one (not while panicking), by
    /// the group's `abandoned` key.
    #[cold]
    pub(super) fn abandoned_verdict(&self) -> Verdict {
        match self.config().abandoned() {
            Abandoned::Ignore => Verdict::Abandoned,
            Abandoned::Failure => Verdict::Failure,
        }
    }

    /// The failure of a call dropped at its deadline of `after` nanos: it
    /// lasted at least `after` on the breaker's clock, whatever the clock and
    /// the timer say (a `ManualClock` at 0 under a paused runtime reads less),
    /// so it is a slow call and its duration is at least the deadline.
    #[cold]
    #[inline(never)]
    pub(super) fn settle_timed_out(&self, admitted: Word, started: u64, after: u64) {
        self.settle_slow(admitted, started, Verdict::Failure, after);
    }

    /// Every verdict but the common one, in order: the call timed, then a
    /// stale outcome counted, a probe's end, the count, the policy's record
    /// and the trip it asks for. `at_least` floors the call's duration.
    #[cold]
    #[inline(never)]
    fn settle_slow(&self, admitted: Word, started: u64, verdict: Verdict, at_least: u64) {
        if admitted.is_held_or_traced() && self.settle_flagged(admitted, started, verdict, at_least)
        {
            return;
        }
        // Only timed words carry a start (every group with a slow-call rule
        // or a histogram is timed); an untimed call's duration is read by no one.
        let ended =
            (admitted.is_timed() && verdict != Verdict::Abandoned).then(|| self.clock.now());
        let lasted = ended.map_or(0, |now| now.saturating_sub(started).max(at_least));
        if ended.is_some() {
            self.time_call(lasted, verdict);
        }
        if admitted.is_throttled() {
            self.throttle_settled(verdict);
        }
        let word = self.word();
        let generation = admitted.generation();
        if word.generation() != generation {
            return self.counters.bump(Counter::Stale);
        }
        if admitted.state() == State::HalfOpen {
            return self.probe_ended(generation, verdict);
        }
        let failed = match verdict {
            Verdict::Success => false,
            Verdict::Failure => true,
            Verdict::Ignored => return self.counters.bump(Counter::Ignored),
            Verdict::Abandoned => return self.counters.bump(Counter::Abandoned),
        };
        self.counters.bump(if failed {
            Counter::Failures
        } else {
            Counter::Successes
        });
        // A forced-closed breaker feeds its window (its rates stay in view)
        // and never trips; an open one's shadow calls are only counted.
        let closed = match word.state() {
            State::Closed => true,
            State::ForcedClosed => false,
            _ => return,
        };
        let outcome = Outcome {
            failed,
            lasted,
            ended,
        };
        // A key of a keyed group that judges as one tells its group level
        // (see `level`); nothing of it stays live across the record.
        if self.judged_key && closed {
            self.tell_level(admitted, outcome);
        }
        let tripped = (self.hot.policy).record(&self.hot.word, generation, outcome, &self.clock);
        if let Some(cause) = tripped.filter(|_| closed) {
            if self.judged_key {
                self.trip_judged(generation, cause);
            } else {
                self.trip_on(generation, cause);
            }
        }
    }

    /// Counts a request the dependency refused with a wait (a hold) in the
    /// throttle of `admitted`'s group, and returns the word to settle the call
    /// on: without the throttle, so that its ignored verdict is not counted
    /// again as an accept.
    pub(super) fn throttle_rejected(&self, admitted: Word) -> Word {
        if !admitted.is_throttled() {
            return admitted;
        }
        if let Some(throttle) = self.throttle.as_deref() {
            throttle.record(throttle.now(&self.clock), false);
        }
        admitted.without_throttle()
    }

    /// Counts the request of a call a throttled group admitted: accepted when
    /// the dependency answered it (a success, an error the classifier
    /// ignores). Whatever its generation: a late answer is an answer.
    fn throttle_settled(&self, verdict: Verdict) {
        if let Some(throttle) = self.throttle.as_deref() {
            let accepted = matches!(verdict, Verdict::Success | Verdict::Ignored);
            throttle.record(throttle.now(&self.clock), accepted);
        }
    }

    /// A verdict on a held or traced word: told to the span hook if traced,
    /// and settled here (`true`) if it is the call let through to end a hold.
    /// Only that call is admitted on a closed, held word (shadow and
    /// forced-closed calls are forced-closed copies).
    #[cold]
    #[inline(never)]
    fn settle_flagged(
        &self,
        admitted: Word,
        started: u64,
        verdict: Verdict,
        at_least: u64,
    ) -> bool {
        #[cfg(feature = "trace")]
        if admitted.is_traced() {
            self.settled_traced(verdict);
        }
        let admitted = admitted.with_traced(false);
        if admitted.is_held() && admitted.state() == State::Closed {
            self.settle_release_probe(admitted, started, verdict, at_least);
            return true;
        }
        false
    }

    /// The verdict of the call let through to end a hold: recorded as any
    /// closed call's, then the hold ends, unless its answer held again.
    #[cold]
    #[inline(never)]
    fn settle_release_probe(&self, admitted: Word, started: u64, verdict: Verdict, at_least: u64) {
        self.settle_slow(admitted.with_held(false), started, verdict, at_least);
        self.end_release_probe();
    }

    /// Counts a call that lasted `lasted` nanos and ended by `verdict` in the
    /// call-duration histogram, if the group keeps one. Stale outcomes are
    /// counted too (the call ran); abandoned ones are not.
    fn time_call(&self, lasted: u64, verdict: Verdict) {
        let Some(histogram) = self.guards.histogram() else {
            return;
        };
        let kind = match verdict {
            Verdict::Success => Kind::Successful,
            Verdict::Failure => Kind::Failed,
            Verdict::Ignored => Kind::Ignored,
            Verdict::Abandoned => return,
        };
        histogram.record(kind, lasted);
    }

    /// A probe of `generation` ended by `verdict`: a failure reopens, a success
    /// may close, anything else frees its slot.
    #[cold]
    fn probe_ended(&self, generation: u64, verdict: Verdict) {
        if verdict == Verdict::Failure {
            return self.reopen_after_probe(generation);
        }
        let input = Input::ProbeEnded {
            generation,
            verdict,
        };
        let word = self.word();
        let (from, step) = if verdict == Verdict::Success {
            self.drive_close(word, input)
        } else {
            self.drive(word, input)
        };
        self.execute(from, step, None);
    }

    /// Opens the breaker because `cause` tripped in `generation`. The p99
    /// rule's trips are counted when they open it, not when the window says
    /// so: racing verdicts may all see it over the bound, and one opens.
    /// Returns whether it opened.
    #[cold]
    pub(super) fn trip_on(&self, generation: u64, cause: TripCause) -> bool {
        let opened = self.trip(generation, cause);
        if opened && cause == TripCause::LatencyP99 {
            self.counters.bump(Counter::LatencyTrips);
        }
        opened
    }
}
