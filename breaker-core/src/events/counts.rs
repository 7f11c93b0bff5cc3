//! [`TransitionCounts`]: a breaker's transitions counted by the state left
//! and the state entered.

use crate::state::State;

/// Counts of transitions by the state left and the state entered.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Breaker, Config, State};
///
/// let breaker = Breaker::new("db", Config::builder().threshold(1).build()?);
/// breaker.try_acquire()?.failure();
/// breaker.reset();
/// let t = breaker.metrics().transitions;
/// assert_eq!(t.get(State::Closed, State::Open), 1);
/// assert_eq!(t.get(State::Open, State::Closed), 1);
/// assert_eq!(t.total(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransitionCounts(pub(super) [[u64; STATES.len()]; STATES.len()]);

impl TransitionCounts {
    /// Transitions from `from` to `to`.
    pub fn get(&self, from: State, to: State) -> u64 {
        self.0[index(from)][index(to)]
    }

    /// Every transition counted.
    pub fn total(&self) -> u64 {
        self.0.iter().flatten().fold(0, |a, &b| a.saturating_add(b))
    }

    /// Adds `other`'s counts pair by pair, saturating (a keyed group's sums).
    pub(crate) fn add(&mut self, other: &TransitionCounts) {
        for (row, other) in self.0.iter_mut().zip(&other.0) {
            for (sum, n) in row.iter_mut().zip(other) {
                *sum = sum.saturating_add(*n);
            }
        }
    }

    /// The pairs with at least one transition, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (State, State, u64)> + '_ {
        STATES.iter().flat_map(move |&from| {
            STATES
                .iter()
                .map(move |&to| (from, to, self.get(from, to)))
                .filter(|&(_, _, n)| n > 0)
        })
    }
}

pub(super) const STATES: [State; 5] = [
    State::Closed,
    State::Open,
    State::HalfOpen,
    State::ForcedOpen,
    State::ForcedClosed,
];

pub(super) const fn index(state: State) -> usize {
    match state {
        State::Closed => 0,
        State::Open => 1,
        State::HalfOpen => 2,
        State::ForcedOpen => 3,
        State::ForcedClosed => 4,
    }
}
