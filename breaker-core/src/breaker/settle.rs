//! Verdicts: how a permit's outcome is counted, fed to the failure policy and,
//! when the policy says so, turned into a transition.

use super::inner::Inner;
use super::permit::Verdict;
use crate::counters::Event;
use crate::policy::Policy;
use crate::state::{State, Word};

impl Inner {
    /// Records the verdict of a permit admitted when the word was `admitted`.
    #[inline(always)]
    pub(super) fn settle(&self, admitted: Word, started: u64, verdict: Verdict) {
        // The common verdict: the success of a call claimed on a plain word (an
        // unmarked one) that finds the word as it was at the claim (so in the
        // same generation, with the same failure count: none). It only counts.
        if verdict == Verdict::Success && self.word() == admitted {
            return self.counters.bump(Event::Successes);
        }
        self.settle_slow(admitted, started, verdict);
    }

    /// Every other verdict: failures, probes, windows, resets of the failure
    /// count, and outcomes that find the breaker moved on.
    #[cold]
    #[inline(never)]
    pub(super) fn settle_slow(&self, admitted: Word, started: u64, verdict: Verdict) {
        let word = self.word();
        if word.generation() != admitted.generation() {
            return self.counters.bump(Event::Stale);
        }
        match admitted.state() {
            State::HalfOpen => self.settle_probe(word, verdict),
            _ => self.settle_call(word, started, verdict),
        }
    }

    pub(super) fn settle_call(&self, word: Word, started: u64, verdict: Verdict) {
        let generation = word.generation();
        // A forced-closed breaker counts outcomes and never trips.
        let closed = word.state() == State::Closed;
        let policy = &self.hot.policy;
        match verdict {
            Verdict::Success => {
                self.counters.bump(Event::Successes);
                match policy {
                    _ if !closed => {}
                    Policy::Consecutive { .. } => self.clear_failures(word),
                    _ => {
                        if policy.on_outcome(generation, false, started, &self.clock) {
                            self.trip(generation);
                        }
                    }
                }
            }
            Verdict::Failure => {
                self.counters.bump(Event::Failures);
                let trips = match *policy {
                    _ if !closed => false,
                    Policy::Consecutive { threshold } => self.count_failure(word, threshold),
                    _ => policy.on_outcome(generation, true, started, &self.clock),
                };
                if trips {
                    self.trip(generation);
                }
            }
            Verdict::Ignored => self.counters.bump(Event::Ignored),
            Verdict::Abandoned => self.counters.bump(Event::Abandoned),
        }
    }

    /// Adds a failure to the consecutive count of `word`'s generation; returns
    /// whether the count reached `threshold`. A failure that finds the breaker
    /// moved on since `word` counts nowhere (it is already counted as a failure).
    pub(super) fn count_failure(&self, mut word: Word, threshold: u32) -> bool {
        let generation = word.generation();
        while word.generation() == generation && word.state() == State::Closed {
            let failures = word.failures().saturating_add(1);
            match self.cas(word, word.with_failures(failures)) {
                Ok(()) => return failures >= threshold,
                Err(seen) => word = seen,
            }
        }
        false
    }

    /// Resets the consecutive count of `word`'s generation to zero. A failure
    /// racing in is either reset too (it came first) or counted after this reset,
    /// never lost into it.
    pub(super) fn clear_failures(&self, mut word: Word) {
        let generation = word.generation();
        while word.generation() == generation && word.failures() != 0 {
            match self.cas(word, word.with_failures(0)) {
                Ok(()) => return,
                Err(seen) => word = seen,
            }
        }
    }

    #[cold]
    pub(super) fn settle_probe(&self, mut word: Word, verdict: Verdict) {
        let generation = word.generation();
        if verdict == Verdict::Failure {
            return self.reopen_after_probe(generation);
        }
        loop {
            if word.generation() != generation || word.state() != State::HalfOpen {
                return self.counters.bump(Event::Stale);
            }
            let probes = word.probes().saturating_sub(1);
            let (next, event) = match verdict {
                Verdict::Success => {
                    let successes = word.successes() + 1;
                    if successes >= self.config.successes_to_close() {
                        (word.next(State::Closed), Event::Successes)
                    } else {
                        (word.with_successes(probes, successes), Event::Successes)
                    }
                }
                Verdict::Ignored => (word.with_probes(probes), Event::Ignored),
                Verdict::Abandoned | Verdict::Failure => {
                    (word.with_probes(probes), Event::Abandoned)
                }
            };
            match self.cas(word, next) {
                Ok(()) => {
                    self.counters.bump(event);
                    if verdict == Verdict::Success {
                        self.counters.bump(Event::ProbesSucceeded);
                        if next.state() == State::Closed {
                            log::info!("circuit `{}` closed: probes succeeded", self.name);
                        }
                    }
                    return;
                }
                Err(seen) => word = seen,
            }
        }
    }
}
