//! The breaker's states and the one atomic word that holds the state, its
//! generation, the consecutive failures while closed, the probes in flight and
//! probe successes of a half-open episode, and whether an open came from the fleet.

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

/// [`Word::refusing`]: the words a claim refuses without the state machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusing {
    /// Open by its own trip or failed probe (an open word the fleet opened is
    /// `Other`: the state machine tells its reason).
    LocallyOpen,
    /// Forced open by hand.
    ForcedOpen,
    /// Anything else.
    Other,
}

const STATE_BITS: u32 = 3;
/// The state bits of every state but `Closed` (0) and `ForcedClosed` (4): a word
/// with none of them set admits calls.
const REFUSING_OR_PROBING: u64 = 0b011;
/// Set for the breaker's life when claims must read the clock (slow-call judging).
const TIMED: u64 = 1 << STATE_BITS;
/// Set for the breaker's life when verdicts feed a window policy.
const WINDOWED: u64 = 1 << (STATE_BITS + 1);
const FLAGS: u64 = TIMED | WINDOWED;
/// Never set in the breaker's word: set in a permit's copy of it unless the claim
/// found the word plain, so a success that may need more than a count (and
/// rarely one that does not) never takes the verdict's fast path.
const MARKED: u64 = 1 << (STATE_BITS + 2);
const PROBE_BITS: u32 = 10;
const SUCCESS_BITS: u32 = 10;
const PROBE_SHIFT: u32 = STATE_BITS + 3;
const SUCCESS_SHIFT: u32 = PROBE_SHIFT + PROBE_BITS;
const GEN_SHIFT: u32 = SUCCESS_SHIFT + SUCCESS_BITS;
/// Generations count modulo 2^38: at one transition a millisecond that is 8.7 years
/// before a number comes back, and a permit would have to outlive all of them.
pub(crate) const GEN_MASK: u64 = (1 << (64 - GEN_SHIFT)) - 1;
const FIELD_MASK: u64 = (1 << PROBE_BITS) - 1;
/// While closed, the probe and success fields hold the consecutive failures instead.
const FAILURE_SHIFT: u32 = PROBE_SHIFT;
const FAILURE_BITS: u32 = PROBE_BITS + SUCCESS_BITS;
/// The most consecutive failures the word counts; the count saturates there.
pub(crate) const MAX_FAILURES: u32 = (1 << FAILURE_BITS) - 1;
const FAILURE_FIELD: u64 = (MAX_FAILURES as u64) << FAILURE_SHIFT;
/// In an open word, whose probe and success fields are otherwise zero: the
/// fleet opened it (`Breaker::fleet_open`), so its refusals say so. Cleared,
/// like every field, by the next generation.
const FLEET: u64 = 1 << PROBE_SHIFT;
const STATE_FIELD: u64 = (1 << STATE_BITS) - 1;
const PROBE_FIELD: u64 = FIELD_MASK << PROBE_SHIFT;
const SUCCESS_FIELD: u64 = FIELD_MASK << SUCCESS_SHIFT;
const GEN_FIELD: u64 = GEN_MASK << GEN_SHIFT;
/// The state bits of the states `refusing` tells apart.
const OPEN_BITS: u64 = State::Open.bits();
const FORCED_OPEN_BITS: u64 = State::ForcedOpen.bits();

// The layout, checked by the compiler: the fields tile the 64 bits with no
// overlap and no gap; the aliases are the ones the table below names; and the
// masks that test the state bits hold for the states' numbering.
const _: () = {
    let fields = [
        STATE_FIELD,
        TIMED,
        WINDOWED,
        MARKED,
        PROBE_FIELD,
        SUCCESS_FIELD,
        GEN_FIELD,
    ];
    let mut union = 0u64;
    let mut i = 0;
    while i < fields.len() {
        assert!(union & fields[i] == 0, "two fields of the word overlap");
        union |= fields[i];
        i += 1;
    }
    assert!(
        union == u64::MAX,
        "the fields leave bits of the word unused"
    );
    // Aliases: a closed word's failures are the probe and success fields; an
    // open word's fleet bit is the probe field's lowest.
    assert!(FAILURE_FIELD == PROBE_FIELD | SUCCESS_FIELD);
    assert!(FLEET & PROBE_FIELD == FLEET && FLEET.count_ones() == 1);
    // Every state fits its field, and `REFUSING_OR_PROBING` (a mask of state
    // bits) is clear exactly for the states that admit without a step.
    let states = [
        State::Closed,
        State::Open,
        State::HalfOpen,
        State::ForcedOpen,
        State::ForcedClosed,
    ];
    let mut i = 0;
    while i < states.len() {
        let bits = states[i].bits();
        assert!(bits & !STATE_FIELD == 0, "a state outgrows its field");
        let admits = matches!(states[i], State::Closed | State::ForcedClosed);
        assert!((bits & REFUSING_OR_PROBING == 0) == admits);
        assert!(State::from_bits(bits).bits() == bits);
        i += 1;
    }
    assert!(REFUSING_OR_PROBING & !STATE_FIELD == 0);
};

/// Everything a claim and a verdict must agree on, in one `u64`, so every
/// transition is a single compare-and-swap and the closed path reads one word:
///
/// | bits | field |
/// |---|---|
/// | 0..3 | state |
/// | 3 | claims read the clock (fixed for the breaker's life) |
/// | 4 | verdicts feed a window policy (fixed for the breaker's life) |
/// | 5 | only in a permit's copy: the claim did not find the word plain |
/// | 6..16 | half-open: probes in flight; closed: consecutive failures, low bits; open: bit 6 says the fleet opened it |
/// | 16..26 | half-open: probe successes; closed: consecutive failures, high bits |
/// | 26..64 | generation |
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Word(pub(crate) u64);

impl Word {
    /// A new breaker's word: closed, generation 0, with its two life-long flags.
    pub(crate) const fn initial(timed: bool, windowed: bool) -> Word {
        let timed = if timed { TIMED } else { 0 };
        let windowed = if windowed { WINDOWED } else { 0 };
        Word(Word::new(State::Closed, 0, 0, 0).0 | timed | windowed)
    }

    /// A word without flags: the base of the builders below (and of tests).
    pub(crate) const fn new(state: State, generation: u64, probes: u32, successes: u32) -> Word {
        Word(
            state.bits()
                | ((probes as u64 & FIELD_MASK) << PROBE_SHIFT)
                | ((successes as u64 & FIELD_MASK) << SUCCESS_SHIFT)
                | ((generation & GEN_MASK) << GEN_SHIFT),
        )
    }

    /// A claim's answer packed as a word (see `Claim`): never stored in the
    /// breaker, so its probe field holds `kind` and its success field `flag`
    /// whatever `state` is. Read back with [`code_kind`](Self::code_kind) and
    /// [`code_flag`](Self::code_flag).
    #[inline(always)]
    pub(crate) const fn code(state: State, kind: u32, flag: bool) -> Word {
        Word(
            state.bits()
                | ((kind as u64 & FIELD_MASK) << PROBE_SHIFT)
                | ((flag as u64) << SUCCESS_SHIFT),
        )
    }

    /// The `kind` of a [`code`](Self::code).
    #[inline(always)]
    pub(crate) const fn code_kind(self) -> u32 {
        ((self.0 >> PROBE_SHIFT) & FIELD_MASK) as u32
    }

    /// The `flag` of a [`code`](Self::code).
    #[inline(always)]
    pub(crate) const fn code_flag(self) -> bool {
        (self.0 >> SUCCESS_SHIFT) & FIELD_MASK != 0
    }

    const fn flagged(self, word: Word) -> Word {
        Word(word.0 | (self.0 & FLAGS))
    }

    #[inline]
    pub(crate) const fn state(self) -> State {
        State::from_bits(self.0 & STATE_FIELD)
    }

    #[inline]
    pub(crate) const fn generation(self) -> u64 {
        self.0 >> GEN_SHIFT
    }

    /// Probes in flight, in a half-open word (the field means failures when
    /// closed and the fleet bit when open: asked of those, a debug build panics).
    pub(crate) const fn probes(self) -> u32 {
        debug_assert!(
            self.is_half_open(),
            "probes of a word that is not half-open"
        );
        ((self.0 >> PROBE_SHIFT) & FIELD_MASK) as u32
    }

    /// Probe successes of the episode, in a half-open word (as [`probes`](Self::probes)).
    pub(crate) const fn successes(self) -> u32 {
        debug_assert!(
            self.is_half_open(),
            "successes of a word that is not half-open"
        );
        ((self.0 >> SUCCESS_SHIFT) & FIELD_MASK) as u32
    }

    const fn is_half_open(self) -> bool {
        matches!(self.state(), State::HalfOpen)
    }

    /// Consecutive failures, in a closed word (zero in every other state).
    pub(crate) const fn failures(self) -> u32 {
        match self.state() {
            State::Closed => ((self.0 & FAILURE_FIELD) >> FAILURE_SHIFT) as u32,
            _ => 0,
        }
    }

    /// Whether claims read the clock, to time calls for a slow-call policy.
    #[inline]
    pub(crate) const fn is_timed(self) -> bool {
        self.0 & TIMED != 0
    }

    /// Whether this word admits a call with nothing more to do, and the call's
    /// success, if it finds the word unchanged, with nothing but a count: closed
    /// or forced closed, no clock to read, no window to feed, no failures to
    /// reset. One test of one register.
    #[inline(always)]
    pub(crate) const fn is_plain(self) -> bool {
        self.0 & (REFUSING_OR_PROBING | TIMED | WINDOWED | FAILURE_FIELD) == 0
    }

    /// Whether this word admits a call without reading the clock: closed or
    /// forced closed, and not timed. Its verdict may still need more than a count.
    #[inline(always)]
    pub(crate) const fn admits_untimed(self) -> bool {
        self.0 & (REFUSING_OR_PROBING | TIMED) == 0
    }

    /// The copy of this word a permit keeps when its success needs more than a
    /// count (a probe, a window, failures to reset): it never equals the live
    /// word, and reads the same in every field.
    pub(crate) const fn marked(self) -> Word {
        Word(self.0 | MARKED)
    }

    /// The word of the next generation, open because the fleet says so.
    pub(crate) const fn next_fleet_open(self) -> Word {
        Word(self.next(State::Open).0 | FLEET)
    }

    /// What the claim's refusal frame must tell apart, from one mask of the
    /// state bits and the fleet bit.
    #[inline(always)]
    pub(crate) const fn refusing(self) -> Refusing {
        match self.0 & (STATE_FIELD | FLEET) {
            OPEN_BITS => Refusing::LocallyOpen,
            FORCED_OPEN_BITS => Refusing::ForcedOpen,
            _ => Refusing::Other,
        }
    }

    /// Whether this is an open word the fleet opened (not a local trip).
    #[inline(always)]
    pub(crate) const fn is_fleet_open(self) -> bool {
        matches!(self.state(), State::Open) && self.0 & FLEET != 0
    }

    /// The word of the next generation in `state`, with no probes, successes or
    /// failures.
    pub(crate) const fn next(self, state: State) -> Word {
        self.flagged(Word::new(state, self.generation().wrapping_add(1), 0, 0))
    }

    /// This half-open word with `probes` in flight (a debug build panics on
    /// any other state, whose field means something else).
    pub(crate) const fn with_probes(self, probes: u32) -> Word {
        self.with_successes(probes, self.successes())
    }

    /// This half-open word with `probes` in flight and `successes` (as
    /// [`with_probes`](Self::with_probes)).
    pub(crate) const fn with_successes(self, probes: u32, successes: u32) -> Word {
        debug_assert!(
            self.is_half_open(),
            "probes set on a word that is not half-open"
        );
        self.flagged(Word::new(
            self.state(),
            self.generation(),
            probes,
            successes,
        ))
    }

    /// This closed word with `failures` consecutive failures (at most
    /// [`MAX_FAILURES`]).
    ///
    /// On an open word the field holds the fleet bit, on a half-open one the
    /// probes: a debug build panics on any word but a closed one.
    pub(crate) const fn with_failures(self, failures: u32) -> Word {
        debug_assert!(
            matches!(self.state(), State::Closed),
            "failures set on a word that is not closed"
        );
        let failures = if failures > MAX_FAILURES {
            MAX_FAILURES
        } else {
            failures
        };
        Word((self.0 & !FAILURE_FIELD) | ((failures as u64) << FAILURE_SHIFT))
    }
}

impl fmt::Debug for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Word");
        d.field("state", &self.state())
            .field("generation", &self.generation());
        // Each state's view of the bits it shares with the others.
        match self.state() {
            State::Closed => d.field("failures", &self.failures()),
            State::HalfOpen => d
                .field("probes", &self.probes())
                .field("successes", &self.successes()),
            State::Open => d.field("fleet", &self.is_fleet_open()),
            State::ForcedOpen | State::ForcedClosed => &mut d,
        };
        d.field("timed", &self.is_timed())
            .field("windowed", &(self.0 & WINDOWED != 0))
            .field("marked", &(self.0 & MARKED != 0))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_at_their_maximum() {
        let w = Word::initial(true, true).next(State::HalfOpen);
        let w = Word(w.0 | Word::new(State::HalfOpen, GEN_MASK, 1023, 1023).0);
        assert_eq!(w.state(), State::HalfOpen);
        assert_eq!(w.generation(), GEN_MASK);
        assert_eq!(w.probes(), 1023);
        assert_eq!(w.successes(), 1023);
        assert!(w.is_timed());
    }

    #[test]
    fn the_flags_outlive_every_transition_and_count() {
        for (timed, windowed) in [(false, false), (true, false), (false, true), (true, true)] {
            let w = Word::initial(timed, windowed)
                .with_failures(5)
                .next(State::Open)
                .next(State::HalfOpen)
                .with_successes(2, 1)
                .with_probes(1)
                .next(State::Closed);
            assert_eq!(
                w,
                Word::initial(timed, windowed)
                    .next(State::Open)
                    .next(State::HalfOpen)
                    .next(State::Closed)
            );
            assert_eq!(w.is_timed(), timed);
            assert_eq!(w.0 & WINDOWED != 0, windowed);
            assert_eq!(w.generation(), 3);
        }
    }

    #[test]
    fn consecutive_failures_fill_both_fields_and_saturate() {
        let w = Word::initial(false, false).next(State::Closed);
        assert_eq!(w.with_failures(MAX_FAILURES).failures(), MAX_FAILURES);
        assert_eq!(w.with_failures(u32::MAX).failures(), MAX_FAILURES);
        assert_eq!(
            w.with_failures(MAX_FAILURES).generation(),
            1,
            "the count stays out of the generation"
        );
        assert_eq!(w.with_failures(7).with_failures(0), w);
        assert_eq!(w.with_failures(7).next(State::Open).failures(), 0);
    }

    #[test]
    fn only_a_closed_word_with_nothing_to_time_feed_or_reset_is_plain() {
        let plain = Word::initial(false, false);
        assert!(plain.is_plain());
        assert!(plain.next(State::ForcedClosed).is_plain());
        assert!(!plain.with_failures(1).is_plain());
        assert!(
            !plain.with_failures(1 << PROBE_BITS).is_plain(),
            "the count's high bits count too"
        );
        for refusing_or_probing in [State::Open, State::HalfOpen, State::ForcedOpen] {
            let w = plain.next(refusing_or_probing);
            assert!(!w.is_plain(), "{refusing_or_probing}");
        }
        assert!(
            !Word::initial(true, true).is_plain(),
            "a timed claim reads the clock"
        );
        assert!(!Word::initial(false, true).is_plain(), "a window is fed");
    }

    #[test]
    fn a_closed_word_admits_without_the_clock_unless_it_is_timed() {
        let windowed = Word::initial(false, true);
        assert!(windowed.admits_untimed());
        assert!(windowed.next(State::ForcedClosed).admits_untimed());
        assert!(Word::initial(false, false)
            .with_failures(2)
            .admits_untimed());
        assert!(!Word::initial(true, true).admits_untimed());
        for refusing_or_probing in [State::Open, State::HalfOpen, State::ForcedOpen] {
            assert!(!windowed.next(refusing_or_probing).admits_untimed());
        }
    }

    #[test]
    fn a_marked_copy_never_equals_its_word_and_reads_the_same() {
        let w = Word::initial(true, true)
            .next(State::HalfOpen)
            .with_successes(3, 2);
        let m = w.marked();
        assert_ne!(m, w);
        assert_eq!(m.state(), w.state());
        assert_eq!(m.generation(), w.generation());
        assert_eq!(m.probes(), w.probes());
        assert_eq!(m.successes(), w.successes());
        assert_eq!(m.is_timed(), w.is_timed());
        assert_eq!(
            w.next(State::Closed).0 & MARKED,
            0,
            "never carried into the live word"
        );
    }

    #[test]
    fn only_a_fleet_open_word_says_fleet_and_its_next_generation_forgets_it() {
        for (timed, windowed) in [(false, false), (true, true)] {
            let closed = Word::initial(timed, windowed).with_failures(2);
            let fleet = closed.next_fleet_open();
            assert!(fleet.is_fleet_open());
            assert_eq!(fleet.state(), State::Open);
            assert_eq!(fleet.generation(), 1);
            assert_eq!(
                (fleet.is_timed(), fleet.0 & WINDOWED != 0),
                (timed, windowed)
            );
            assert!(!fleet.is_plain() && !fleet.admits_untimed());
            assert!(!closed.next(State::Open).is_fleet_open(), "a local trip");
            assert_eq!(closed.next(State::Open).refusing(), Refusing::LocallyOpen);
            assert_eq!(fleet.refusing(), Refusing::Other);
            assert_eq!(
                closed.next(State::ForcedOpen).refusing(),
                Refusing::ForcedOpen
            );
            for state in [State::Closed, State::HalfOpen, State::ForcedOpen] {
                assert!(!fleet.next(state).is_fleet_open(), "{state}");
                let refusing = if state == State::ForcedOpen {
                    Refusing::ForcedOpen
                } else {
                    Refusing::Other
                };
                assert_eq!(fleet.next(state).refusing(), refusing, "{state}");
            }
            let probing = Word::initial(timed, windowed)
                .next(State::HalfOpen)
                .with_probes(1);
            assert!(!probing.is_fleet_open(), "a half-open word's probe count");
            assert!(!Word::initial(timed, windowed)
                .with_failures(1)
                .is_fleet_open());
        }
    }

    #[test]
    fn generation_wraps_modulo_its_width_without_touching_other_fields() {
        let w = Word::new(State::Closed, GEN_MASK, 0, 0).next(State::Open);
        assert_eq!(w.generation(), 0);
        assert_eq!(w.state(), State::Open);
        assert!(!w.is_fleet_open());
        assert_eq!(w.0 & !STATE_FIELD, 0);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "failures set on a word that is not closed")]
    fn failures_set_on_an_open_word_panic_in_a_debug_build() {
        // On an open word these bits are the fleet bit.
        let _ = Word::initial(false, false)
            .next(State::Open)
            .with_failures(1);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a word that is not half-open")]
    fn probes_set_on_a_closed_word_panic_in_a_debug_build() {
        // On a closed word these bits are the consecutive failures.
        let _ = Word::initial(false, false).with_probes(1);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "probes of a word that is not half-open")]
    fn probes_read_of_a_fleet_open_word_panic_in_a_debug_build() {
        let _ = Word::initial(false, false).next_fleet_open().probes();
    }

    #[test]
    fn a_words_debug_shows_the_view_of_its_state() {
        let closed = format!("{:?}", Word::initial(false, false).with_failures(3));
        assert!(
            closed.contains("failures: 3") && !closed.contains("probes"),
            "{closed}"
        );
        let fleet = format!("{:?}", Word::initial(false, false).next_fleet_open());
        assert!(
            fleet.contains("fleet: true") && !fleet.contains("failures"),
            "{fleet}"
        );
        let probing = Word::initial(false, false)
            .next(State::HalfOpen)
            .with_successes(2, 1);
        let probing = format!("{probing:?}");
        assert!(
            probing.contains("probes: 2") && probing.contains("successes: 1"),
            "{probing}"
        );
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
