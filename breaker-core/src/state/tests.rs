//! The word's fields, flags, views and builders.

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
fn a_group_trip_is_refused_by_the_state_machine_and_is_not_the_fleets() {
    for (timed, windowed) in [(false, false), (true, true)] {
        let closed = Word::initial(timed, windowed).with_failures(2);
        let trip = closed.next(State::Open).group_trip();
        assert!(trip.is_group_trip());
        assert!(!trip.is_fleet_open());
        assert_eq!(trip.state(), State::Open);
        assert_eq!(trip.generation(), 1);
        assert_eq!(trip.refusing(), Refusing::Other);
        assert!(!closed.next_fleet_open().is_group_trip());
        for state in [State::Closed, State::HalfOpen, State::Open] {
            assert!(!trip.next(state).is_group_trip(), "{state}");
        }
        let probing = Word::initial(timed, windowed)
            .next(State::HalfOpen)
            .with_probes(2);
        assert!(!probing.is_group_trip(), "a half-open word's probe count");
        assert!(!Word::initial(timed, windowed)
            .with_failures(2)
            .is_group_trip());
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

#[test]
fn a_traced_word_leaves_every_fast_path_and_keeps_its_flag() {
    let plain = Word::initial(false, false);
    let traced = plain.with_traced(true);
    assert!(traced.is_traced() && !plain.is_traced());
    assert!(!traced.is_plain(), "its success is told");
    assert!(!traced.admits_untimed(), "its claim is told");
    assert!(!traced.admits_untraced());
    assert!(traced.admits_outright(), "a traced closed word admits");
    assert!(traced.is_held_or_traced());
    assert_eq!(traced.next(State::Open).refusing(), Refusing::Other);
    assert_eq!(
        traced.next(State::ForcedOpen).refusing(),
        Refusing::Other,
        "its refusal is told"
    );
    let later = traced
        .next(State::Open)
        .next(State::HalfOpen)
        .next(State::Closed);
    assert!(later.is_traced(), "kept by every transition");
    assert_eq!(
        later.with_traced(false),
        plain
            .next(State::Open)
            .next(State::HalfOpen)
            .next(State::Closed)
    );
}
