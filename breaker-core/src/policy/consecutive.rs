//! The consecutive policy: trips on the `threshold`-th failure in a row. Its
//! count lives in the closed state word ([`crate::state`]), so counting a
//! failure reads and swaps one word, and a success with nothing to reset
//! writes nothing.

use crate::events::TripCause;
use crate::state::{State, Word, MAX_FAILURES};
use crate::sync::{AtomicU32, AtomicU64, Ordering::*};

#[derive(Debug)]
pub(crate) struct Consecutive {
    /// Tunable while the breaker runs: read at each failure.
    threshold: AtomicU32,
}

impl Consecutive {
    pub(crate) fn new(threshold: u32) -> Self {
        Consecutive {
            threshold: AtomicU32::new(threshold),
        }
    }

    /// Judges by `threshold` from the next failure on, keeping the count.
    pub(crate) fn retune(&self, threshold: u32) {
        self.threshold.store(threshold, Relaxed);
    }

    /// A closed call of `generation` ended, `failed` or not: counts it in
    /// `word`, the state word, while that is closed in `generation` (an
    /// outcome that finds the breaker moved on changes nothing). A failure
    /// that reaches the threshold writes nothing and trips: the open that
    /// follows starts the next generation with the count at zero.
    pub(crate) fn record(
        &self,
        word: &AtomicU64,
        generation: u64,
        failed: bool,
    ) -> Option<TripCause> {
        let mut seen = Word(word.load(Acquire));
        loop {
            if seen.generation() != generation || seen.state() != State::Closed {
                return None;
            }
            let failures = if failed {
                seen.failures().saturating_add(1)
            } else {
                0
            };
            if failed && failures >= self.threshold.load(Relaxed) {
                return Some(TripCause::ConsecutiveFailures);
            }
            let failures = failures.min(MAX_FAILURES);
            if failures == seen.failures() {
                // A success with no count to reset.
                return None;
            }
            match word.compare_exchange(seen.0, seen.with_failures(failures).0, AcqRel, Acquire) {
                Ok(_) => return None,
                Err(now) => seen = Word(now),
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn closed(generation: u64, failures: u32) -> AtomicU64 {
        let word = Word::new(State::Closed, generation, 0, 0).with_failures(failures);
        AtomicU64::new(word.0)
    }

    fn failures(word: &AtomicU64) -> u32 {
        Word(word.load(Relaxed)).failures()
    }

    #[test]
    fn the_threshold_th_failure_in_a_row_trips_and_the_ones_before_count() {
        let policy = Consecutive::new(3);
        let word = closed(7, 0);
        assert_eq!(policy.record(&word, 7, true), None);
        assert_eq!(policy.record(&word, 7, true), None);
        assert_eq!(failures(&word), 2);
        assert_eq!(
            policy.record(&word, 7, true),
            Some(TripCause::ConsecutiveFailures)
        );
    }

    #[test]
    fn a_success_resets_the_count_and_one_with_nothing_to_reset_writes_nothing() {
        let policy = Consecutive::new(3);
        let word = closed(7, 2);
        assert_eq!(policy.record(&word, 7, false), None);
        assert_eq!(failures(&word), 0);
        let before = word.load(Relaxed);
        assert_eq!(policy.record(&word, 7, false), None);
        assert_eq!(word.load(Relaxed), before);
    }

    #[test]
    fn an_outcome_of_another_generation_or_state_changes_nothing() {
        let policy = Consecutive::new(1);
        for word in [
            closed(8, 2),
            AtomicU64::new(Word::new(State::Open, 7, 0, 0).0),
            AtomicU64::new(Word::new(State::ForcedClosed, 7, 0, 0).0),
        ] {
            let before = word.load(Relaxed);
            for failed in [true, false] {
                assert_eq!(policy.record(&word, 7, failed), None);
            }
            assert_eq!(word.load(Relaxed), before);
        }
    }

    #[test]
    fn a_failure_of_a_ramping_word_counts_and_keeps_it_ramping() {
        let policy = Consecutive::new(3);
        let ramping = Word::new(State::Closed, 7, 0, 0).ramping();
        let word = AtomicU64::new(ramping.0);
        assert_eq!(policy.record(&word, 7, true), None);
        let counted = Word(word.load(Relaxed));
        assert!(counted.is_ramping() && counted.failures() == 1);
    }

    #[test]
    fn a_retuned_threshold_judges_the_next_failure_on_the_count_kept() {
        let policy = Consecutive::new(5);
        let word = closed(7, 0);
        policy.record(&word, 7, true);
        policy.record(&word, 7, true);
        policy.retune(3);
        assert_eq!(
            policy.record(&word, 7, true),
            Some(TripCause::ConsecutiveFailures)
        );
    }
}
