//! The breaker's states and the one atomic word that holds the state, its
//! generation, the consecutive failures while closed, the probes in flight and
//! probe successes of a half-open episode, whether an open came from the fleet
//! or is a keyed group's own trip,
//! whether a closed circuit still ramps its traffic back in, whether claims
//! pass the adaptive throttle, whether a hold (the server asked to wait)
//! refuses claims, and whether the group's calls are recorded on spans.

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
    /// A short snake_case label, the one spelling of the state in `Display`,
    /// logs, events, admin JSON and metric labels: `"closed"`, `"open"`,
    /// `"half_open"`, `"forced_open"`, `"forced_closed"` (resilience4j's
    /// label values).
    pub const fn as_str(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half_open",
            State::ForcedOpen => "forced_open",
            State::ForcedClosed => "forced_closed",
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
    /// Open by its own trip or failed probe (an open word the fleet opened,
    /// and a keyed group's own trip, are `Other`: the state machine tells
    /// their reason).
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
const FLAGS: u64 = TIMED | WINDOWED | SHADOW | THROTTLED | HELD | TRACED;
/// Never set in the breaker's word: set in a permit's copy of it unless the claim
/// found the word plain, so a success that may need more than a count (and
/// rarely one that does not) never takes the verdict's fast path.
const MARKED: u64 = 1 << (STATE_BITS + 2);
const PROBE_BITS: u32 = 10;
const SUCCESS_BITS: u32 = 10;
const PROBE_SHIFT: u32 = STATE_BITS + 3;
const SUCCESS_SHIFT: u32 = PROBE_SHIFT + PROBE_BITS;
/// Set in a closed word while the traffic ramp after the close runs (`ramp_ms`):
/// claims leave the fast path to take the ramp's credit. Cleared, like every
/// field, by the next generation, and by the claim that finds the ramp over.
const RAMPING: u64 = 1 << (SUCCESS_SHIFT + SUCCESS_BITS);
/// Set while the breaker is in shadow mode (`shadow`), in every state: a claim
/// it would refuse is admitted and counted. Kept by every transition and
/// switched live by a compare-and-swap; no test of the closed path reads it, and
/// it takes an open word off the claim's refusal frame, so a breaker without it
/// refuses as fast as ever.
const SHADOW: u64 = 1 << (SUCCESS_SHIFT + SUCCESS_BITS + 1);
/// Set for the breaker's life when claims pass the adaptive throttle
/// (`throttle`) and verdicts feed it: a throttled word is never plain, so a
/// group without the key keeps the closed path as it is.
const THROTTLED: u64 = 1 << (SUCCESS_SHIFT + SUCCESS_BITS + 2);
/// Set while a hold may refuse claims (`Breaker::hold`), in every state: claims
/// leave the fast path and compare the hold's deadline, and the first claim
/// past it clears the bit. Kept by every transition, so a hold outlives a trip
/// or a close; cleared by manual control and by the release.
const HELD: u64 = 1 << (SUCCESS_SHIFT + SUCCESS_BITS + 3);
/// Set while the group's calls are recorded on spans (`trace`, switched live):
/// claims and verdicts leave the fast paths, whose cold paths tell the span
/// hook, so a group that is not recorded keeps every path as it is.
const TRACED: u64 = 1 << (SUCCESS_SHIFT + SUCCESS_BITS + 4);
const GEN_SHIFT: u32 = SUCCESS_SHIFT + SUCCESS_BITS + 5;
/// Generations count modulo 2^33: at one transition a millisecond that is 99 days
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
/// In an open word, whose probe and success fields are otherwise zero: a keyed
/// group's own breaker tripped on its own evidence (`Word::group_trip`), so
/// the state machine, not the claim's refusal frame, tells its refusals, as
/// the group's. Never set with [`FLEET`]: a fleet's open is the fleet's.
const GROUP_TRIP: u64 = 1 << (PROBE_SHIFT + 1);
/// Only in a permit's forced-closed copy, whose probe and success fields are
/// otherwise zero: shadow mode admitted the call in place of a refusal
/// ([`Word::shadow_call`]).
const SHADOW_CALL: u64 = 1 << PROBE_SHIFT;
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
        RAMPING,
        SHADOW,
        THROTTLED,
        HELD,
        TRACED,
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
    // open word's fleet bit is the probe field's lowest, its group-trip bit
    // the next.
    assert!(FAILURE_FIELD == PROBE_FIELD | SUCCESS_FIELD);
    assert!(FLEET & PROBE_FIELD == FLEET && FLEET.count_ones() == 1);
    assert!(GROUP_TRIP & PROBE_FIELD == GROUP_TRIP && GROUP_TRIP.count_ones() == 1);
    assert!(GROUP_TRIP & FLEET == 0);
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
/// | 6..16 | half-open: probes in flight; closed: consecutive failures, low bits; open: bit 6 says the fleet opened it, bit 7 that a keyed group's own breaker tripped; forced closed, only in a permit's copy: bit 6 says shadow mode admitted the call in place of a refusal |
/// | 16..26 | half-open: probe successes; closed: consecutive failures, high bits |
/// | 26 | closed: the traffic ramp after the close runs |
/// | 27 | shadow mode: refusals are admitted and counted (switched live) |
/// | 28 | claims pass the adaptive throttle (fixed for the breaker's life) |
/// | 29 | held: a hold's deadline may refuse claims |
/// | 30 | traced: the group's calls are recorded on spans (switched live) |
/// | 31..64 | generation |
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Word(pub(crate) u64);

impl Word {
    /// A new breaker's word: closed, generation 0, with its two life-long flags.
    pub(crate) const fn initial(timed: bool, windowed: bool) -> Word {
        let timed = if timed { TIMED } else { 0 };
        let windowed = if windowed { WINDOWED } else { 0 };
        Word(Word::new(State::Closed, 0, 0, 0).0 | timed | windowed)
    }

    /// This word with the adaptive throttle's life-long flag (`on`) or without.
    pub(crate) const fn with_throttle(self, on: bool) -> Word {
        if on {
            Word(self.0 | THROTTLED)
        } else {
            Word(self.0 & !THROTTLED)
        }
    }

    /// Whether claims pass the adaptive throttle and verdicts feed it.
    #[inline(always)]
    pub(crate) const fn is_throttled(self) -> bool {
        self.0 & THROTTLED != 0
    }

    /// This permit's word with the throttle's flag off: its verdict is not
    /// counted by the throttle.
    pub(crate) const fn without_throttle(self) -> Word {
        Word(self.0 & !THROTTLED)
    }

    /// Whether a claim the throttle admitted on this word is admitted with no
    /// question to ask the breaker: [`admits_outright`](Self::admits_outright)
    /// but for the throttle.
    #[inline(always)]
    pub(crate) const fn admits_past_throttle(self) -> bool {
        self.0 & (REFUSING_OR_PROBING | RAMPING | HELD) == 0
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

    /// A claim's answer packed as a word (see `ClaimCode`): never stored in the
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
    /// closed and the fleet and group-trip bits when open: asked of those, a
    /// debug build panics).
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
        self.0
            & (REFUSING_OR_PROBING
                | TIMED
                | WINDOWED
                | FAILURE_FIELD
                | RAMPING
                | THROTTLED
                | HELD
                | TRACED)
            == 0
    }

    /// Whether this word admits a call without reading the clock: closed or
    /// forced closed, not timed, not ramping, not throttled, not held and not
    /// traced. Its verdict may still need more than a count.
    #[inline(always)]
    pub(crate) const fn admits_untimed(self) -> bool {
        self.0 & (REFUSING_OR_PROBING | TIMED | RAMPING | THROTTLED | HELD | TRACED) == 0
    }

    /// Whether a claim on this word would be admitted with no question to
    /// ask: closed or forced closed, not ramping, not throttled
    /// and not held.
    #[inline(always)]
    pub(crate) const fn admits_outright(self) -> bool {
        self.0 & (REFUSING_OR_PROBING | RAMPING | THROTTLED | HELD) == 0
    }

    /// [`admits_outright`](Self::admits_outright), and not traced: a claim
    /// of a traced word is told to the span hook.
    #[inline(always)]
    pub(crate) const fn admits_untraced(self) -> bool {
        self.0 & (REFUSING_OR_PROBING | RAMPING | THROTTLED | HELD | TRACED) == 0
    }

    /// Whether the group's calls are recorded on spans: claims and verdicts
    /// on this word are told to the span hook.
    #[inline(always)]
    pub(crate) const fn is_traced(self) -> bool {
        self.0 & TRACED != 0
    }

    /// Whether claims pass the adaptive throttle or are told to the span
    /// hook (one mask).
    #[inline(always)]
    pub(crate) const fn is_throttled_or_traced(self) -> bool {
        self.0 & (THROTTLED | TRACED) != 0
    }

    /// This word traced (`on`) or not, every other field kept.
    pub(crate) const fn with_traced(self, on: bool) -> Word {
        if on {
            Word(self.0 | TRACED)
        } else {
            Word(self.0 & !TRACED)
        }
    }

    /// Whether a verdict on this permit's word leaves the verdict's slow
    /// path's first test: held or traced (one mask).
    #[inline(always)]
    pub(crate) const fn is_held_or_traced(self) -> bool {
        self.0 & (HELD | TRACED) != 0
    }

    /// Whether a hold may refuse claims on this word: its deadline decides.
    #[inline(always)]
    pub(crate) const fn is_held(self) -> bool {
        self.0 & HELD != 0
    }

    /// This word held (`on`) or released, every other field kept.
    pub(crate) const fn with_held(self, on: bool) -> Word {
        if on {
            Word(self.0 | HELD)
        } else {
            Word(self.0 & !HELD)
        }
    }

    /// Whether this is a closed word whose traffic ramp still runs.
    #[inline(always)]
    pub(crate) const fn is_ramping(self) -> bool {
        self.0 & RAMPING != 0
    }

    /// This closed word, ramping (a debug build panics on any other state).
    pub(crate) const fn ramping(self) -> Word {
        debug_assert!(
            matches!(self.state(), State::Closed),
            "a ramp on a word that is not closed"
        );
        Word(self.0 | RAMPING)
    }

    /// This word with its ramp over: the same generation, fully closed.
    pub(crate) const fn ramp_done(self) -> Word {
        Word(self.0 & !RAMPING)
    }

    /// The copy of this word a permit keeps when its success needs more than a
    /// count (a probe, a window, failures to reset): it never equals the live
    /// word, and reads the same in every field.
    pub(crate) const fn marked(self) -> Word {
        Word(self.0 | MARKED)
    }

    /// Whether the breaker is in shadow mode.
    #[inline(always)]
    pub(crate) const fn is_shadow(self) -> bool {
        self.0 & SHADOW != 0
    }

    /// This word in shadow mode (`on`) or out of it, every other field kept.
    pub(crate) const fn with_shadow(self, on: bool) -> Word {
        if on {
            Word(self.0 | SHADOW)
        } else {
            Word(self.0 & !SHADOW)
        }
    }

    /// The copy of this word a call admitted by shadow mode in place of a
    /// refusal keeps: a forced-closed word of the same generation, so its
    /// outcome is counted, as a forced-closed breaker's are, and judged only
    /// as the breaker's live word has it judged: never a probe, never fed to
    /// the failure policy of an open or half-open breaker (a ramp's call,
    /// whose breaker is closed in the same generation, is judged as any closed
    /// call). Marked, so it never takes a verdict's fast path, and flagged
    /// so that [`is_shadow_call`](Self::is_shadow_call) tells it apart from a
    /// forced-closed breaker's own calls.
    pub(crate) const fn shadow_call(self) -> Word {
        Word(
            self.flagged(Word::new(State::ForcedClosed, self.generation(), 0, 0))
                .marked()
                .0
                | SHADOW_CALL,
        )
    }

    /// Whether this is a permit's copy made by [`shadow_call`](Self::shadow_call).
    #[inline(always)]
    pub(crate) const fn is_shadow_call(self) -> bool {
        matches!(self.state(), State::ForcedClosed) && self.0 & SHADOW_CALL != 0
    }

    /// The word of the next generation, open because the fleet says so.
    pub(crate) const fn next_fleet_open(self) -> Word {
        Word(self.next(State::Open).0 | FLEET)
    }

    /// This open word (a local trip's or failed probe's) as a keyed group's
    /// own breaker's: refused by the state machine rather than the claim's
    /// refusal frame, so its refusals are the group's, and told apart from an
    /// open the fleet made (a fleet agent's release leaves it open).
    pub(crate) const fn group_trip(self) -> Word {
        debug_assert!(
            matches!(self.state(), State::Open) && self.0 & FLEET == 0,
            "a group trip of a word that is not a local open"
        );
        Word(self.0 | GROUP_TRIP)
    }

    /// Whether this is an open word of a keyed group's own trip.
    #[inline(always)]
    pub(crate) const fn is_group_trip(self) -> bool {
        matches!(self.state(), State::Open) && self.0 & GROUP_TRIP != 0
    }

    /// What the claim's refusal frame must tell apart, from one mask of the
    /// state bits, the fleet and group-trip bits, the shadow bit, the hold bit
    /// and the trace bit (a shadow word is `Other`: the claim step decides,
    /// and the shadow helper admits what it refuses; a held word is `Other`:
    /// the step compares the hold; a traced word is `Other`: its refusal is
    /// told).
    #[inline(always)]
    pub(crate) const fn refusing(self) -> Refusing {
        match self.0 & (STATE_FIELD | FLEET | GROUP_TRIP | SHADOW | HELD | TRACED) {
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
    /// On an open word the field holds the fleet and group-trip bits, on a
    /// half-open one the probes: a debug build panics on any word but a
    /// closed one.
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
            State::Closed => d
                .field("failures", &self.failures())
                .field("ramping", &self.is_ramping()),
            State::HalfOpen => d
                .field("probes", &self.probes())
                .field("successes", &self.successes()),
            State::Open => d
                .field("fleet", &self.is_fleet_open())
                .field("group_trip", &self.is_group_trip()),
            State::ForcedClosed => d.field("shadow_call", &self.is_shadow_call()),
            State::ForcedOpen => &mut d,
        };
        d.field("timed", &self.is_timed())
            .field("windowed", &(self.0 & WINDOWED != 0))
            .field("marked", &(self.0 & MARKED != 0))
            .field("shadow", &self.is_shadow())
            .field("throttled", &self.is_throttled())
            .field("held", &self.is_held())
            .field("traced", &self.is_traced())
            .finish()
    }
}

#[cfg(test)]
mod tests;
