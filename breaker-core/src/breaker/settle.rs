//! Verdicts: the thin layer that counts a permit's outcome, feeds it to the
//! failure policy and runs [`step`](super::transition::step) on what it changes.

use super::inner::{Inner, Verdicts};
use super::transition::{Act, Input, Verdict};
use crate::clock::{monotonic_coarse, monotonic_precise};
use crate::config::FailurePolicy;
use crate::counters::Counter;
use crate::events::TripCause;
use crate::histogram::Kind;
use crate::policy::latency::{LatencyWindow, Taken};
use crate::policy::{Policy, Recorded, TimeWindow};
use crate::state::{State, Word};

impl Inner {
    /// Records the verdict of a permit admitted when the word was `admitted`.
    #[inline(always)]
    pub(super) fn settle(&self, admitted: Word, started: u64, verdict: Verdict) {
        // The common verdict: the success of a call claimed on a plain word (an
        // unmarked one) that finds the word as it was at the claim (so in the
        // same generation, with the same failure count: none). It only counts.
        if verdict == Verdict::Success && self.word() == admitted {
            return self.counters.bump(Counter::Successes);
        }
        self.settle_slow(admitted, started, verdict);
    }

    /// The failure of a call dropped at its deadline of `after` nanos: it
    /// lasted at least `after` on the breaker's clock, whatever the clock and
    /// the timer say, so it is a slow call and its latency sample is at least
    /// the deadline. A timed word's verdict measures from its claim's reading
    /// to a reading at the verdict; a start `after` before now stands for the
    /// duration when the clock reads that much. A clock that reads less (a
    /// `ManualClock` at 0 under a paused runtime, a clock younger than the
    /// deadline) cannot hold such a start: then the duration goes to the
    /// windows as it is.
    #[cold]
    #[inline(never)]
    pub(super) fn settle_timed_out(&self, admitted: Word, started: u64, after: u64) {
        if !admitted.is_timed() {
            // No rule of the group reads a duration.
            return self.settle(admitted, started, Verdict::Failure);
        }
        let now = self.clock.now();
        let lasted = now.saturating_sub(started).max(after);
        match now.checked_sub(lasted) {
            Some(start) => self.settle(admitted, start, Verdict::Failure),
            None => self.settle_failure_lasting(admitted, started, after),
        }
    }

    /// A failure claimed at `started` that lasted at least `after` nanos,
    /// fed to the windows by that duration: what `settle_rest` and
    /// `settle_call` do for a failure, with the duration floored at `after`.
    #[cold]
    fn settle_failure_lasting(&self, admitted: Word, started: u64, after: u64) {
        let lasted = self.clock.now().saturating_sub(started).max(after);
        if let Some(histogram) = self.guards.histogram() {
            histogram.record(Kind::Failed, lasted);
        }
        let word = self.word();
        let generation = admitted.generation();
        if word.generation() != generation {
            return self.counters.bump(Counter::Stale);
        }
        if admitted.state() == State::HalfOpen {
            return self.reopen_after_probe(generation);
        }
        self.counters.bump(Counter::Failures);
        if word.state() != State::Closed {
            // Forced closed: counted, never tripped.
            return;
        }
        let tripped = match &self.hot.policy {
            Policy::Consecutive => (self.drive(word, Input::Failure { generation }).1.act
                == Act::Trip)
                .then_some(TripCause::ConsecutiveFailures),
            Policy::TimeWindow(window) => {
                let outcome = window.rule().outcome(true, 0, lasted);
                let at = window.now(&self.clock);
                window
                    .record(generation, at, outcome)
                    .then(|| self.window_cause(generation))
            }
            Policy::CountWindow(window) => {
                let outcome = window.rule().outcome(true, 0, lasted);
                window
                    .record(generation, outcome)
                    .then(|| self.window_cause(generation))
            }
        };
        if let Some(cause) = tripped {
            self.trip(generation, cause);
        } else if self.latency_trips(generation, started, after)
            && self.trip(generation, TripCause::LatencyP99)
        {
            self.counters.bump(Counter::LatencyTrips);
        }
    }

    /// Counts a timed call that ended by `verdict` in the call-duration
    /// histogram, if the group keeps one: from `started` to now. Stale
    /// outcomes are counted too (the call ran); abandoned ones are not.
    #[inline(never)]
    fn time_call(&self, started: u64, verdict: Verdict) {
        let Some(histogram) = self.guards.histogram() else {
            return;
        };
        let kind = match verdict {
            Verdict::Success => Kind::Successful,
            Verdict::Failure => Kind::Failed,
            Verdict::Ignored => Kind::Ignored,
            Verdict::Abandoned => return,
        };
        histogram.record(kind, self.clock.now().saturating_sub(started));
    }

    /// Every other verdict: failures, probes, windows, resets of the failure
    /// count, and outcomes that find the breaker moved on.
    #[cold]
    #[inline(never)]
    fn settle_slow(&self, admitted: Word, started: u64, verdict: Verdict) {
        // A count window's closed call: its own small function, so that it
        // does not pay for the frame of everything else below. A group with a
        // latency window or a histogram goes the general way, which feeds them,
        // but for a closed success of a count window whose only timing is a
        // latency window: that has a short way of its own.
        if let Policy::CountWindow(_) = &self.hot.policy {
            if self.guards.untimed() {
                if let Some(generation) = self.closed_call(admitted, verdict) {
                    return self.settle_count_window(generation, started, verdict);
                }
            } else if self.verdicts != Verdicts::Policy
                && verdict == Verdict::Success
                && self.closed_since_claim(admitted)
            {
                return self.latency_count_window_success(admitted.generation(), started);
            }
        }
        self.settle_other(admitted, started, verdict)
    }

    /// A time window's closed call, on its own small way too; everything else
    /// (to [`settle_rest`](Self::settle_rest)). Out of `settle_slow`, so that
    /// the count window's calls pay one test of the policy, and before
    /// `settle_rest`'s frame, which the time window's calls do not pay.
    #[inline(never)]
    fn settle_other(&self, admitted: Word, started: u64, verdict: Verdict) {
        if let Policy::TimeWindow(window) = &self.hot.policy {
            // The common verdict: a success of a window that places by the
            // coarse clock, on the word as the claim found it.
            if window.is_coarse()
                && verdict == Verdict::Success
                && self.guards.untimed()
                && self.word().marked() == admitted
                && admitted.state() == State::Closed
            {
                return self.time_window_success(admitted.generation(), window);
            }
            if let Some(generation) = self.closed_window_call(admitted, verdict) {
                return self.settle_time_window(generation, started, verdict, window);
            }
        }
        if let Some(latency) = self.guards.latency() {
            if let Some(generation) = self.closed_call(admitted, verdict) {
                return self.settle_latency_window(generation, started, verdict, latency);
            }
        }
        self.settle_rest(admitted, started, verdict);
    }

    /// The generation of a call that was claimed closed, settles closed in
    /// the same generation and is a success or a failure; `None` for any
    /// other verdict.
    #[inline(always)]
    fn closed_call(&self, admitted: Word, verdict: Verdict) -> Option<u64> {
        (matches!(verdict, Verdict::Success | Verdict::Failure)
            && self.closed_since_claim(admitted))
        .then(|| admitted.generation())
    }

    /// A closed call of a group with a latency window (`latency_p99_ms`):
    /// what `settle_call` does for it, with one reading of the clock for both
    /// windows and the histogram (the call is timed: its claim read the clock
    /// too), and a count window's success on its short way.
    #[inline(never)]
    fn settle_latency_window(
        &self,
        generation: u64,
        started: u64,
        verdict: Verdict,
        latency: &LatencyWindow,
    ) {
        let failed = verdict == Verdict::Failure;
        self.counters.bump(if failed {
            Counter::Failures
        } else {
            Counter::Successes
        });
        let now = self.clock.now_inlined();
        if let Some(histogram) = self.guards.histogram() {
            let kind = if failed {
                Kind::Failed
            } else {
                Kind::Successful
            };
            histogram.record(kind, now.saturating_sub(started));
        }
        let tripped = match &self.hot.policy {
            Policy::Consecutive => false,
            Policy::TimeWindow(window) => {
                window.record(generation, now, window.rule().outcome(failed, started, now))
            }
            Policy::CountWindow(window) => {
                let outcome = window.rule().outcome(failed, started, now);
                if outcome.failed || outcome.slow {
                    window.record(generation, outcome)
                } else {
                    match window.record_success(generation) {
                        Recorded::Held => false,
                        Recorded::Judge { calls, tally } => window.judge(calls, tally),
                        Recorded::Claimed { at, calls } => window.success_at(generation, at, calls),
                        Recorded::Retry => window.record(generation, outcome),
                    }
                }
            }
        };
        if tripped {
            return self.trip_cold(generation);
        }
        // Counted when it opens the breaker (see `settle_call`).
        if latency.record(generation, now, now.saturating_sub(started))
            && self.trip(generation, TripCause::LatencyP99)
        {
            self.counters.bump(Counter::LatencyTrips);
        }
    }

    /// A count window's closed success in a group with a latency window: what
    /// [`settle_latency_window`](Self::settle_latency_window) does for it,
    /// which takes the success of a group that also keeps a histogram or
    /// judges slow calls. Only the start, the generation and `self` are kept
    /// across the clock's read; the common call (the count window's success
    /// that holds, then the latency window's common add) makes no call after
    /// it but, once a bucket, the one that fills the bucket, and every other
    /// case goes on in a frame of its own.
    #[inline(never)]
    fn latency_count_window_success(&self, generation: u64, started: u64) {
        let now = if self.verdicts == Verdicts::LatencyCountWindow {
            monotonic_precise()
        } else {
            self.clock.now_inlined()
        };
        // `settle_slow` sends only these here (`Verdicts::LatencyCountWindow*`),
        // and neither the policy nor the guards change for a breaker's life.
        let (Some(latency), Policy::CountWindow(window)) =
            (self.guards.latency(), &self.hot.policy)
        else {
            debug_assert!(false, "a count window with a latency window");
            return;
        };
        debug_assert!(!window.rule().judges_slowness() && self.guards.histogram().is_none());
        let recorded = window.record_success(generation);
        if !matches!(recorded, Recorded::Held) {
            return self.latency_count_window_rest(generation, started, now, recorded);
        }
        let lasted = now.saturating_sub(started);
        match latency.add_unjudged_calls(generation, lasted) {
            Ok(()) => self.counters.bump(Counter::Successes),
            Err(taken) => self.latency_success_taken(generation, taken, lasted),
        }
    }

    /// [`latency_count_window_success`](Self::latency_count_window_success)
    /// of a success the count window did not simply hold (`recorded`), settled
    /// at `now`: the count window's judgement first, then the latency
    /// window's record.
    #[cold]
    #[inline(never)]
    fn latency_count_window_rest(
        &self,
        generation: u64,
        started: u64,
        now: u64,
        recorded: Recorded,
    ) {
        let (Some(latency), Policy::CountWindow(window)) =
            (self.guards.latency(), &self.hot.policy)
        else {
            return;
        };
        let tripped = match recorded {
            Recorded::Held => false,
            Recorded::Judge { calls, tally } => window.judge(calls, tally),
            Recorded::Claimed { at, calls } => window.success_at(generation, at, calls),
            Recorded::Retry => window.record(generation, window.rule().outcome(false, 0, 0)),
        };
        self.counters.bump(Counter::Successes);
        if tripped {
            return self.trip_cold(generation);
        }
        // Counted when it opens the breaker (see `settle_call`).
        if latency.record(generation, now, now.saturating_sub(started))
            && self.trip(generation, TripCause::LatencyP99)
        {
            self.counters.bump(Counter::LatencyTrips);
        }
    }

    /// [`latency_count_window_success`](Self::latency_count_window_success)
    /// of a success the count window held and the latency window must judge,
    /// or record after claiming its bucket (`taken`: the position the call
    /// took there).
    #[cold]
    #[inline(never)]
    fn latency_success_taken(&self, generation: u64, taken: Taken, lasted: u64) {
        self.counters.bump(Counter::Successes);
        let Some(latency) = self.guards.latency() else {
            return;
        };
        // Counted when it opens the breaker (see `settle_call`).
        if latency.record_taken(generation, taken, lasted)
            && self.trip(generation, TripCause::LatencyP99)
        {
            self.counters.bump(Counter::LatencyTrips);
        }
    }

    /// A count window's closed call (see "The frames of the call paths" in
    /// the module docs of `breaker`): every call it makes is its last (the
    /// count's too: it comes after the window).
    #[inline(never)]
    fn settle_count_window(&self, generation: u64, started: u64, verdict: Verdict) {
        let failed = verdict == Verdict::Failure;
        let Policy::CountWindow(window) = &self.hot.policy else {
            return;
        };
        if failed || window.rule().judges_slowness() {
            return self.count_window_outcome(generation, started, failed);
        }
        match window.record_success(generation) {
            Recorded::Held => self.counters.bump(Counter::Successes),
            Recorded::Judge { calls, tally } => self.count_window_judge(generation, calls, tally),
            Recorded::Claimed { at, calls } => self.count_window_success_at(generation, at, calls),
            Recorded::Retry => self.count_window_outcome(generation, started, false),
        }
    }

    /// [`closed_call`](Self::closed_call) in a group without a latency window
    /// or a histogram.
    #[inline(always)]
    fn closed_window_call(&self, admitted: Word, verdict: Verdict) -> Option<u64> {
        (matches!(verdict, Verdict::Success | Verdict::Failure)
            && self.guards.untimed()
            && self.closed_since_claim(admitted))
        .then(|| admitted.generation())
    }

    /// Whether a call claimed closed on `admitted` finds the breaker closed in
    /// the same generation; the common case in one compare: the word as the
    /// claim found it.
    #[inline(always)]
    fn closed_since_claim(&self, admitted: Word) -> bool {
        let word = self.word();
        (word.marked() == admitted && admitted.state() == State::Closed)
            || (word.state() == State::Closed
                && admitted.state() == State::Closed
                && word.generation() == admitted.generation())
    }

    /// A time window's closed success, when the window places by the coarse
    /// clock (so judges no slowness): counted, and added to its bucket.
    #[inline(never)]
    fn time_window_success(&self, generation: u64, window: &TimeWindow) {
        self.counters.bump(Counter::Successes);
        // The caller found the window coarse: it reads the default clock's
        // coarse reading.
        if window.record_success(generation, monotonic_coarse()) {
            self.trip_cold(generation);
        }
    }

    /// A time window's closed call: what `settle_call` does for it, without
    /// the frame of the other policies and the latency window.
    #[inline(never)]
    fn settle_time_window(
        &self,
        generation: u64,
        started: u64,
        verdict: Verdict,
        window: &TimeWindow,
    ) {
        let failed = verdict == Verdict::Failure;
        self.counters.bump(if failed {
            Counter::Failures
        } else {
            Counter::Successes
        });
        let now = window.now(&self.clock);
        if window.record(generation, now, window.rule().outcome(failed, started, now)) {
            self.trip_cold(generation);
        }
    }

    /// A count window's failure, any outcome of one that judges slowness, and
    /// a success that lost its first try at the ring.
    #[inline(never)]
    fn count_window_outcome(&self, generation: u64, started: u64, failed: bool) {
        self.counters.bump(if failed {
            Counter::Failures
        } else {
            Counter::Successes
        });
        if self
            .hot
            .policy
            .on_count_window(generation, failed, started, &self.clock)
        {
            self.trip_cold(generation);
        }
    }

    /// A success that found failures or slow calls in the window: judge them.
    #[inline(never)]
    fn count_window_judge(&self, generation: u64, calls: u64, tally: u64) {
        self.counters.bump(Counter::Successes);
        if let Policy::CountWindow(window) = &self.hot.policy {
            if window.judge(calls, tally) {
                self.trip_cold(generation);
            }
        }
    }

    /// A success that replaces a failure or a slow call in its slot.
    #[inline(never)]
    fn count_window_success_at(&self, generation: u64, at: u64, calls: u64) {
        self.counters.bump(Counter::Successes);
        if let Policy::CountWindow(window) = &self.hot.policy {
            if window.success_at(generation, at, calls) {
                self.trip_cold(generation);
            }
        }
    }

    /// A window's trip, kept out of its frame.
    #[cold]
    #[inline(never)]
    fn trip_cold(&self, generation: u64) {
        self.trip(generation, self.window_cause(generation));
    }

    /// Which rule of the group's window tripped in `generation`. A window
    /// with no slow-call rule has one rule, the failure rate: that is the
    /// cause, and nothing is read. With both rules, the window says only that
    /// it tripped, so its counts are read before the trip empties it: the
    /// failure rate if it is at its threshold, else the slow-call rate.
    #[cold]
    fn window_cause(&self, generation: u64) -> TripCause {
        let rule = match &self.hot.policy {
            Policy::Consecutive => return TripCause::ConsecutiveFailures,
            Policy::TimeWindow(window) => window.rule(),
            Policy::CountWindow(window) => window.rule(),
        };
        if !rule.judges_slowness() {
            return TripCause::FailureRate;
        }
        let failure_rate = match self.config().policy() {
            FailurePolicy::TimeWindow { rates, .. } | FailurePolicy::CountWindow { rates, .. } => {
                rates.failure_rate
            }
            _ => return TripCause::FailureRate,
        };
        match self.hot.policy.window_counts(generation, &self.clock) {
            Some(c) if c.calls > 0 && (c.failures as f64) < failure_rate * c.calls as f64 => {
                TripCause::SlowCallRate
            }
            _ => TripCause::FailureRate,
        }
    }

    /// Every verdict of a group with a latency window or a histogram comes
    /// here (`closed_window_call` sends none of them the window's own way),
    /// but a latency window's closed calls (`settle_latency_window`).
    #[inline(never)]
    fn settle_rest(&self, admitted: Word, started: u64, verdict: Verdict) {
        // Only timed words carry a start: a group with a histogram is timed,
        // and an untimed one skips this with a bit test of a value at hand.
        if admitted.is_timed() {
            self.time_call(started, verdict);
        }
        let word = self.word();
        let generation = admitted.generation();
        if word.generation() != generation {
            return self.counters.bump(Counter::Stale);
        }
        match (admitted.state(), verdict) {
            (State::HalfOpen, Verdict::Failure) => self.reopen_after_probe(generation),
            (State::HalfOpen, _) => {
                let input = Input::ProbeEnded {
                    generation,
                    verdict,
                };
                let (from, step) = if verdict == Verdict::Success {
                    self.drive_close(word, input)
                } else {
                    self.drive(word, input)
                };
                self.execute(from, step, None);
            }
            _ => self.settle_call(word, started, verdict),
        }
    }

    /// Feeds a closed call's latency to the latency window, if there is one:
    /// from `started` to now, and at least `at_least` nanos (a timed-out call's
    /// deadline); returns whether the window trips. Out of line: a group
    /// without it pays one test in `settle_call`. The one caller of the
    /// window's `record`, so that it is inlined here.
    #[inline(never)]
    fn latency_trips(&self, generation: u64, started: u64, at_least: u64) -> bool {
        let Some(latency) = self.guards.latency() else {
            return false;
        };
        let now = self.clock.now();
        latency.record(generation, now, now.saturating_sub(started).max(at_least))
    }

    fn settle_call(&self, word: Word, started: u64, verdict: Verdict) {
        let generation = word.generation();
        // A forced-closed breaker counts outcomes and never trips.
        let closed = word.state() == State::Closed;
        let policy = &self.hot.policy;
        // The rule this verdict tripped, if it tripped one.
        let tripped = match verdict {
            Verdict::Success => {
                self.counters.bump(Counter::Successes);
                match policy {
                    _ if !closed => None,
                    // A success resets the count unless a newer generation did.
                    Policy::Consecutive => {
                        self.drive(word, Input::Success { generation });
                        None
                    }
                    _ => policy
                        .on_outcome(generation, false, started, &self.clock)
                        .then(|| self.window_cause(generation)),
                }
            }
            Verdict::Failure => {
                self.counters.bump(Counter::Failures);
                match policy {
                    _ if !closed => None,
                    // A failure that finds the breaker moved on counts nowhere
                    // (it is counted as a failure already).
                    Policy::Consecutive => (self.drive(word, Input::Failure { generation }).1.act
                        == Act::Trip)
                        .then_some(TripCause::ConsecutiveFailures),
                    _ => policy
                        .on_outcome(generation, true, started, &self.clock)
                        .then(|| self.window_cause(generation)),
                }
            }
            Verdict::Ignored => return self.counters.bump(Counter::Ignored),
            Verdict::Abandoned => return self.counters.bump(Counter::Abandoned),
        };
        // The latency trip rides on the window. Only groups with
        // `latency_p99_ms` have one, and their words are timed: an untimed
        // word skips it with a bit test of a value at hand. Its trips are
        // counted when they open the breaker, not when the window says so:
        // racing verdicts may all see it over the bound, and one opens.
        if let Some(cause) = tripped {
            self.trip(generation, cause);
        } else if word.is_timed()
            && closed
            && self.latency_trips(generation, started, 0)
            && self.trip(generation, TripCause::LatencyP99)
        {
            self.counters.bump(Counter::LatencyTrips);
        }
    }
}
