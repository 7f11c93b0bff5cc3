//! The thin layer around [`step`](super::transition::step) for every input but a
//! claim: the compare-and-swap loop, the transitions that write more than the
//! word (under the transition lock), and the one place a transition is published.

use std::time::Duration;

use super::inner::Inner;
use super::transition::{self, Act, Input, Reason, Step, Transition};
use crate::counters::Event;
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

    /// Closed -> open, once per generation however many failures race here.
    #[cold]
    pub(super) fn trip(&self, generation: u64) {
        let open_for = self.config().open_nanos();
        // Without the lock, failures and resets change only the count of a
        // closed word, never its generation: the open retries past them.
        self.open(Input::Trip { generation }, open_for);
    }

    /// Half-open -> open after a failed probe, with the open duration grown.
    #[cold]
    pub(super) fn reopen_after_probe(&self, generation: u64) {
        let open_for = self.config().grown_open_nanos(self.open_for.load(Relaxed));
        // Lock-free claims and verdicts may have moved the breaker on while this
        // probe waited for the lock (another probe closed it, or its lease was
        // reclaimed): then the open is stale.
        if self.open(Input::ProbeFailed { generation }, open_for) {
            self.counters.bump(Event::Failures);
            self.counters.bump(Event::ProbesFailed);
        } else {
            self.counters.bump(Event::Stale);
        }
    }

    /// Opens for `open_for` nanos, unless `input` finds the breaker left its
    /// generation; returns whether it opened.
    fn open(&self, input: Input, open_for: u64) -> bool {
        let guard = self.transition.lock();
        let word = self.word();
        if transition::step(word, input, self.config(), self).act == Act::Stale {
            return false;
        }
        // Published before the word: a claim that sees `Open` sees its deadline.
        // If the open does not happen, nothing reads it before the next open
        // writes it again (claims read it only on an `Open` word).
        let now = self.clock.now();
        self.reopen_at.store(now.saturating_add(open_for), Release);
        let (word, step) = self.drive(word, input);
        if step.act != Act::Opened {
            return false;
        }
        self.open_for.store(open_for, Relaxed);
        drop(guard);
        self.counters.bump(Event::Opened);
        if let Some(transition) = step.transition(word) {
            self.published(transition);
        }
        true
    }

    pub(super) fn force(&self, state: State) {
        let guard = self.transition.lock();
        if state == State::Closed {
            self.open_for.store(self.config().open_nanos(), Relaxed);
        }
        let (word, step) = self.drive(self.word(), Input::Force(state));
        drop(guard);
        if let Some(transition) = step.transition(word) {
            self.published(transition);
        }
    }

    /// Where every change of generation is told: today the log. An observer
    /// would be called here, after the swap and outside the lock.
    #[cold]
    pub(super) fn published(&self, t: Transition) {
        let name = self.name;
        let open_for = || Duration::from_nanos(self.open_for.load(Relaxed));
        match t.reason {
            Reason::Tripped => log::warn!(
                "circuit `{name}` opened: failure policy tripped; open for {:?}",
                open_for()
            ),
            Reason::ProbeFailed => log::warn!(
                "circuit `{name}` reopened: probe failed; open for {:?}",
                open_for()
            ),
            Reason::ProbesSucceeded => log::info!("circuit `{name}` closed: probes succeeded"),
            Reason::LeaseReclaimed { probes } => log::warn!(
                "circuit `{name}`: reclaimed {probes} probe slot(s) held past probe_timeout"
            ),
            Reason::OpenElapsed => {}
            Reason::Forced => log::info!("circuit `{name}` set to {} by hand", t.to),
        }
    }
}
