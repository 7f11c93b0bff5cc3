//! The transitions that write more than the word: tripping, reopening after a
//! failed probe, and forcing by hand, serialised by the transition lock.

use std::time::Duration;

use super::inner::Inner;
use crate::counters::Event;
use crate::state::{State, Word};
use crate::sync::Ordering::*;

impl Inner {
    /// Closed -> open, once per generation however many failures race here.
    #[cold]
    pub(super) fn trip(&self, generation: u64) {
        let guard = self.transition.lock();
        let word = self.word();
        if word.generation() != generation || word.state() != State::Closed {
            return; // another failure of this generation already tripped it
        }
        let open_for = self.config.open_nanos();
        // Without this lock, failures and resets change only the count of a closed
        // word, never its generation: the open retries past them and cannot miss.
        let opened = self.open(word, open_for);
        debug_assert!(opened, "a closed word left its generation without the lock");
        drop(guard);
        log::warn!(
            "circuit `{}` opened: failure policy tripped; open for {:?}",
            self.name,
            Duration::from_nanos(open_for)
        );
    }

    /// Half-open -> open after a failed probe, with the open duration grown.
    #[cold]
    pub(super) fn reopen_after_probe(&self, generation: u64) {
        let guard = self.transition.lock();
        let word = self.word();
        if word.generation() != generation || word.state() != State::HalfOpen {
            drop(guard);
            return self.counters.bump(Event::Stale);
        }
        let open_for = self.config.grown_open_nanos(self.open_for.load(Relaxed));
        if !self.open(word, open_for) {
            // While this probe waited, lock-free claims and verdicts moved the
            // breaker on (another probe closed it, or its lease was reclaimed).
            drop(guard);
            return self.counters.bump(Event::Stale);
        }
        drop(guard);
        self.counters.bump(Event::Failures);
        self.counters.bump(Event::ProbesFailed);
        log::warn!(
            "circuit `{}` reopened: probe failed; open for {:?}",
            self.name,
            Duration::from_nanos(open_for)
        );
    }

    /// Publishes `Open` for the generation after `word`'s, unless the breaker left
    /// that generation meanwhile; returns whether it opened. Caller holds
    /// `transition`.
    pub(super) fn open(&self, mut word: Word, open_for: u64) -> bool {
        let generation = word.generation();
        let now = self.clock.now();
        // Published before the word: a claim that sees `Open` sees its deadline.
        // If the open does not happen, nothing reads it before the next open
        // writes it again (claims read it only on an `Open` word).
        self.reopen_at.store(now.saturating_add(open_for), Release);
        // Lock-free claims may move the probe count under us; anything else (a
        // probe closing the circuit, a reclaimed lease) makes this open stale.
        while let Err(seen) = self.cas(word, word.next(State::Open)) {
            if seen.generation() != generation {
                return false;
            }
            word = seen;
        }
        self.open_for.store(open_for, Relaxed);
        self.counters.bump(Event::Opened);
        true
    }

    pub(super) fn force(&self, state: State) {
        let guard = self.transition.lock();
        if state == State::Closed {
            self.open_for.store(self.config.open_nanos(), Relaxed);
        }
        let mut word = self.word();
        while let Err(seen) = self.cas(word, word.next(state)) {
            word = seen;
        }
        drop(guard);
        log::info!("circuit `{}` set to {} by hand", self.name, state);
    }
}
