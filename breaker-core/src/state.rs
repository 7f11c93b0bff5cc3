//! The breaker's states and the one atomic word that holds the state, its
//! generation, the probes in flight and the probe successes of a half-open episode.

use std::fmt;

/// Where a breaker stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Calls run; outcomes feed the failure policy.
    Closed,
    /// No call runs; claims are refused until the open duration has passed.
    Open,
    /// A limited number of probe calls run to test whether the dependency healed.
    HalfOpen,
    /// Forced open by hand: every claim is refused until reset.
    ForcedOpen,
    /// Forced closed by hand: every claim is admitted and nothing trips until reset.
    ForcedClosed,
}

impl State {
    /// A short lowercase label, for logs and metrics: `"closed"`, `"open"`,
    /// `"half-open"`, `"forced-open"`, `"forced-closed"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half-open",
            State::ForcedOpen => "forced-open",
            State::ForcedClosed => "forced-closed",
        }
    }

    const fn bits(self) -> u64 {
        match self {
            State::Closed => 0,
            State::Open => 1,
            State::HalfOpen => 2,
            State::ForcedOpen => 3,
            State::ForcedClosed => 4,
        }
    }

    const fn from_bits(bits: u64) -> State {
        match bits {
            0 => State::Closed,
            1 => State::Open,
            2 => State::HalfOpen,
            3 => State::ForcedOpen,
            _ => State::ForcedClosed,
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

const STATE_BITS: u32 = 3;
const PROBE_BITS: u32 = 10;
const SUCCESS_BITS: u32 = 10;
const PROBE_SHIFT: u32 = STATE_BITS;
const SUCCESS_SHIFT: u32 = PROBE_SHIFT + PROBE_BITS;
const GEN_SHIFT: u32 = SUCCESS_SHIFT + SUCCESS_BITS;
/// Generations count modulo 2^41: at one transition a millisecond that is 69 years
/// before a number comes back, and a permit would have to outlive all of them.
pub(crate) const GEN_MASK: u64 = (1 << (64 - GEN_SHIFT)) - 1;
const FIELD_MASK: u64 = (1 << PROBE_BITS) - 1;

/// State, generation, probes in flight and half-open successes packed into one
/// `u64`, so every transition is a single compare-and-swap.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Word(pub(crate) u64);

impl Word {
    pub(crate) const INITIAL: Word = Word::new(State::Closed, 0, 0, 0);

    pub(crate) const fn new(state: State, generation: u64, probes: u32, successes: u32) -> Word {
        Word(
            state.bits()
                | ((probes as u64 & FIELD_MASK) << PROBE_SHIFT)
                | ((successes as u64 & FIELD_MASK) << SUCCESS_SHIFT)
                | ((generation & GEN_MASK) << GEN_SHIFT),
        )
    }

    #[inline]
    pub(crate) const fn state(self) -> State {
        State::from_bits(self.0 & ((1 << STATE_BITS) - 1))
    }

    #[inline]
    pub(crate) const fn generation(self) -> u64 {
        self.0 >> GEN_SHIFT
    }

    pub(crate) const fn probes(self) -> u32 {
        ((self.0 >> PROBE_SHIFT) & FIELD_MASK) as u32
    }

    pub(crate) const fn successes(self) -> u32 {
        ((self.0 >> SUCCESS_SHIFT) & FIELD_MASK) as u32
    }

    /// The word of the next generation in `state`, with no probes and no successes.
    pub(crate) const fn next(self, state: State) -> Word {
        Word::new(state, self.generation().wrapping_add(1), 0, 0)
    }

    pub(crate) const fn with_probes(self, probes: u32) -> Word {
        Word::new(self.state(), self.generation(), probes, self.successes())
    }

    pub(crate) const fn with_successes(self, probes: u32, successes: u32) -> Word {
        Word::new(self.state(), self.generation(), probes, successes)
    }
}

impl fmt::Debug for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Word")
            .field("state", &self.state())
            .field("generation", &self.generation())
            .field("probes", &self.probes())
            .field("successes", &self.successes())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_at_their_maximum() {
        let w = Word::new(State::HalfOpen, GEN_MASK, 1023, 1023);
        assert_eq!(w.state(), State::HalfOpen);
        assert_eq!(w.generation(), GEN_MASK);
        assert_eq!(w.probes(), 1023);
        assert_eq!(w.successes(), 1023);
    }

    #[test]
    fn generation_wraps_modulo_its_width_without_touching_other_fields() {
        let w = Word::new(State::Closed, GEN_MASK, 0, 0).next(State::Open);
        assert_eq!(w.generation(), 0);
        assert_eq!(w.state(), State::Open);
        assert_eq!(w.probes(), 0);
    }

    #[test]
    fn every_state_survives_packing() {
        for s in [
            State::Closed,
            State::Open,
            State::HalfOpen,
            State::ForcedOpen,
            State::ForcedClosed,
        ] {
            assert_eq!(Word::new(s, 7, 3, 2).state(), s);
        }
    }
}
