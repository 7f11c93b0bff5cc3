//! A key of a keyed group that judges as one: its closed outcomes told to the
//! group level ([`crate::level`]), and its trips bounded by `max_open_keys`;
//! the group's own breaker ramping its keys back in as one.

use super::inner::Inner;
use super::transition::Verdict;
use super::Breaker;
use crate::events::TripCause;
use crate::level::KeyOutcome;
use crate::policy::Outcome;
use crate::state::{State, Word};

impl Inner {
    /// A closed key's outcome told to its group level.
    #[cold]
    #[inline(never)]
    pub(super) fn tell_level(&self, admitted: Word, outcome: Outcome) {
        if let Some(level) = self.guards.group_level() {
            let windowed = self.hot.policy.is_window();
            let told = KeyOutcome {
                failed: outcome.failed,
                lasted: outcome.lasted,
                ended: outcome.ended,
            };
            level.key_outcome(told, admitted.failures() != 0, windowed);
        }
    }

    /// The verdict on this breaker of a failure that is its keyed group's
    /// (`Permit::failure_of_group`) admitted on `admitted`: told to the group
    /// level and ignored here, when there is one and the call was a closed
    /// one's; a failure otherwise.
    #[cold]
    pub(super) fn failure_of_group(&self, admitted: Word) -> Verdict {
        match self.guards.group_level() {
            Some(level) if admitted.state() == State::Closed => {
                level.group_failure(self.hot.policy.is_window());
                Verdict::Ignored
            }
            _ => Verdict::Failure,
        }
    }

    /// A key of a keyed group that judges as one trips: it opens if
    /// `max_open_keys` leaves room, or the group opens in its place.
    #[cold]
    #[inline(never)]
    pub(super) fn trip_judged(&self, generation: u64, cause: TripCause) {
        let Some(level) = self.guards.group_level() else {
            // Not reached: a judged key's slot holds its group level for life.
            self.trip_on(generation, cause);
            return;
        };
        if !level.reserve_open() {
            return level.key_past_cap();
        }
        if !self.trip_on(generation, cause) {
            level.release_open();
        }
    }
}

impl Breaker {
    /// A keyed group's own breaker: whether it stands in for the key of one
    /// lookup because it closed with a ramp that runs and the ramp refuses
    /// this lookup's share (taken now).
    #[inline]
    pub(crate) fn ramp_refuses_lookup(&self) -> bool {
        let word = self.inner.word();
        word.is_ramping() && self.inner.ramp_refuses_lookup(word)
    }
}
