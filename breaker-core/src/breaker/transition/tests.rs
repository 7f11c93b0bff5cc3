//! The state machine alone: every state against every input, no threads, no clock.

use super::*;

const LIMITS: Config = match Config::builder()
    .threshold(3)
    .half_open_probes(2)
    .successes_to_close(2)
    .build()
{
    Ok(config) => config,
    Err(_) => panic!("a valid config"),
};

/// Fixed readings; `None` panics if the step reads it, so a test also pins
/// which readings a step needs.
#[derive(Clone, Copy, Default)]
struct At {
    coarse: Option<u64>,
    /// What a confirming precise reading finds; `None`: no second reading
    /// (a custom clock), the coarse one stands.
    precise: Option<u64>,
    reopen_at: Option<u64>,
    lease_until: Option<u64>,
}

impl Readings for At {
    fn coarse(&self) -> u64 {
        self.coarse.expect("this step reads no clock")
    }
    fn confirm(&self, coarse: u64, deadline: u64) -> u64 {
        assert!(
            coarse < deadline,
            "confirms only a reading short of its deadline"
        );
        self.precise.map_or(coarse, |precise| precise.max(coarse))
    }
    fn reopen_at(&self) -> u64 {
        self.reopen_at.expect("this step reads no open deadline")
    }
    fn lease_until(&self) -> u64 {
        self.lease_until.expect("this step reads no lease")
    }
    fn hold(&self) -> crate::hold::HoldUntil {
        panic!("this step reads no hold")
    }
}

const NO_READING: At = At {
    coarse: None,
    precise: None,
    reopen_at: None,
    lease_until: None,
};

fn at(coarse: u64, reopen_at: u64, lease_until: u64) -> At {
    At {
        coarse: Some(coarse),
        precise: None,
        reopen_at: Some(reopen_at),
        lease_until: Some(lease_until),
    }
}

const STATES: [State; 5] = [
    State::Closed,
    State::Open,
    State::HalfOpen,
    State::ForcedOpen,
    State::ForcedClosed,
];

/// A word of generation 7 in `state`, with both life-long flags as given.
fn word(state: State, timed: bool, windowed: bool) -> Word {
    let mut w = Word::initial(timed, windowed);
    for _ in 0..6 {
        w = w.next(State::Closed);
    }
    w.next(state)
}

/// `w` with `n` in the bits a half-open word counts its probes in (a closed
/// word's failures, an open word's fleet bit), whatever its state: words the
/// state machine never makes, to show a step reads those bits only in the
/// state they belong to.
fn with_field(w: Word, n: u32) -> Word {
    let field = Word::new(State::Closed, 0, 1023, 0).0;
    Word((w.0 & !field) | Word::new(State::Closed, 0, n, 0).0)
}

fn flags() -> impl Iterator<Item = (bool, bool)> {
    [(false, false), (true, false), (false, true), (true, true)].into_iter()
}

fn step_on(w: Word, input: Input) -> Step {
    step(w, input, &LIMITS, &NO_READING)
}

#[test]
fn a_claim_on_a_closed_word_admits_without_a_reading_or_a_write() {
    for (timed, windowed) in flags() {
        for state in [State::Closed, State::ForcedClosed] {
            let s = step(
                word(state, timed, windowed),
                Input::Claim,
                &LIMITS,
                &NO_READING,
            );
            assert_eq!(s, Step::stay(Act::Admit), "{state}");
        }
    }
}

#[test]
fn a_forced_open_word_refuses_without_a_retry_time_or_a_reading() {
    let s = step_on(word(State::ForcedOpen, false, false), Input::Claim);
    assert_eq!(s, refuse(Refusal::ForcedOpen, None));
}

#[test]
fn an_open_word_refuses_until_its_deadline_and_then_admits_the_first_probe() {
    for (timed, windowed) in flags() {
        let open = word(State::Open, timed, windowed);
        let early = step(open, Input::Claim, &LIMITS, &at(999, 1_000, 0));
        assert_eq!(early, refuse(Refusal::Open, Some(1)));
        for coarse in [1_000, 5_000] {
            let due = step(open, Input::Claim, &LIMITS, &at(coarse, 1_000, 0));
            let next = open.next(State::HalfOpen).with_probes(1);
            assert_eq!(
                due,
                Step::to(
                    next,
                    Act::Probe {
                        coarse,
                        reclaimed: 0
                    },
                    ChangeKind::OpenElapsed
                )
            );
            let t = due.change(open).expect("a new generation");
            assert_eq!(
                t,
                Change {
                    from: State::Open,
                    to: State::HalfOpen,
                    kind: ChangeKind::OpenElapsed,
                    generation: 8,
                    ramping: false,
                }
            );
            assert_eq!(next.is_timed(), timed, "the flags stay");
        }
    }
}

#[test]
fn a_coarse_reading_short_of_a_deadline_is_confirmed_by_a_precise_one() {
    // The coarse clock lags: a precise reading that has reached the deadline
    // admits the probe (and starts the lease from it); one short of it refuses
    // with the exact time left, so waiting that long is enough.
    let open = word(State::Open, false, false);
    let confirmed = |precise| At {
        precise: Some(precise),
        ..at(996, 1_000, 0)
    };
    let due = step(open, Input::Claim, &LIMITS, &confirmed(1_003));
    assert_eq!(
        due.act,
        Act::Probe {
            coarse: 1_003,
            reclaimed: 0
        }
    );
    let early = step(open, Input::Claim, &LIMITS, &confirmed(998));
    assert_eq!(early, refuse(Refusal::Open, Some(2)));

    let full = word(State::HalfOpen, false, false).with_probes(2);
    let lease = |precise| At {
        precise: Some(precise),
        ..at(1_990, 0, 2_000)
    };
    let reclaim = step(full, Input::Claim, &LIMITS, &lease(2_000));
    assert_eq!(
        reclaim.act,
        Act::Probe {
            coarse: 2_000,
            reclaimed: 2
        }
    );
    let early = step(full, Input::Claim, &LIMITS, &lease(1_999));
    assert_eq!(early, refuse(Refusal::HalfOpenFull, Some(1)));
}

#[test]
fn a_half_open_word_admits_into_free_slots_without_reading_the_clock() {
    let w = word(State::HalfOpen, false, false);
    let first = step_on(w, Input::Claim);
    let one = w.with_probes(1);
    let free = Act::Probe {
        coarse: 0,
        reclaimed: 0,
    };
    assert_eq!(first, Step::write(one, free));
    assert_eq!(first.change(w), None, "same generation");
    assert_eq!(
        step_on(one, Input::Claim),
        Step::write(w.with_probes(2), free)
    );
}

#[test]
fn a_full_half_open_word_refuses_until_the_lease_runs_out_then_reclaims_every_slot() {
    let full = word(State::HalfOpen, false, false).with_probes(2);
    let held = step(full, Input::Claim, &LIMITS, &at(10, 0, 15));
    assert_eq!(held, refuse(Refusal::HalfOpenFull, Some(5)));
    let out = step(full, Input::Claim, &LIMITS, &at(15, 0, 15));
    let next = full.next(State::HalfOpen).with_probes(1);
    assert_eq!(
        out,
        Step::to(
            next,
            Act::Probe {
                coarse: 15,
                reclaimed: 2
            },
            ChangeKind::LeaseReclaimed { probes: 2 }
        )
    );
    assert_eq!(
        next.generation(),
        full.generation() + 1,
        "old probes go stale"
    );
}

#[test]
fn probe_successes_close_at_successes_to_close_and_free_their_slot_before() {
    let w = word(State::HalfOpen, false, true).with_probes(2);
    let ended = |verdict| Input::ProbeEnded {
        generation: 7,
        verdict,
    };
    let first = step_on(w, ended(Verdict::Success));
    assert_eq!(
        first,
        Step::write(w.with_successes(1, 1), Act::ProbeEnded(Verdict::Success))
    );
    let second = step_on(w.with_successes(1, 1), ended(Verdict::Success));
    assert_eq!(
        second,
        Step::to(
            w.next(State::Closed),
            Act::ProbeEnded(Verdict::Success),
            ChangeKind::ProbesSucceeded
        )
    );
    for verdict in [Verdict::Ignored, Verdict::Abandoned] {
        assert_eq!(
            step_on(w, ended(verdict)),
            Step::write(w.with_probes(1), Act::ProbeEnded(verdict)),
            "{verdict:?} frees its slot and moves nothing"
        );
    }
}

#[test]
fn a_probe_outcome_of_another_generation_or_state_is_stale() {
    for state in STATES {
        let w = with_field(word(state, false, false), 1);
        for verdict in [Verdict::Success, Verdict::Ignored, Verdict::Abandoned] {
            for generation in [6, 7, 8] {
                let s = step_on(
                    w,
                    Input::ProbeEnded {
                        generation,
                        verdict,
                    },
                );
                if state == State::HalfOpen && generation == 7 {
                    assert_ne!(s.act, Act::Stale);
                } else {
                    assert_eq!(s, Step::stay(Act::Stale), "{state} {generation}");
                }
            }
        }
    }
}

#[test]
fn trips_and_failed_probes_open_only_from_their_own_state_and_generation() {
    for state in STATES {
        for generation in [6, 7, 8] {
            let w = with_field(word(state, true, false), 1);
            for (input, from, kind) in [
                (
                    Input::Trip {
                        generation,
                        cause: TripCause::FailureRate,
                    },
                    State::Closed,
                    ChangeKind::Tripped(TripCause::FailureRate),
                ),
                (
                    Input::ProbeFailed { generation },
                    State::HalfOpen,
                    ChangeKind::ProbeFailed,
                ),
            ] {
                let s = step_on(w, input);
                if state == from && generation == 7 {
                    assert_eq!(s, Step::to(w.next(State::Open), Act::Opened, kind));
                    let t = s.change(w).unwrap();
                    let opened = Change {
                        from,
                        to: State::Open,
                        kind,
                        generation: 8,
                        ramping: false,
                    };
                    assert_eq!(t, opened);
                } else {
                    assert_eq!(s, Step::stay(Act::Stale), "{state} {input:?}");
                }
            }
        }
    }
}

#[test]
fn forcing_moves_every_other_state_to_a_new_generation_of_the_forced_one() {
    for from in STATES {
        for to in STATES {
            if from == to {
                continue;
            }
            let w = with_field(word(from, true, true), 2);
            let s = step_on(w, Input::Force(to));
            assert_eq!(s, Step::to(w.next(to), Act::Nothing, ChangeKind::Forced));
            let t = s.change(w).unwrap();
            assert_eq!(
                t,
                Change {
                    from,
                    to,
                    kind: ChangeKind::Forced,
                    generation: 8,
                    ramping: false,
                }
            );
        }
    }
}

#[test]
fn forcing_the_state_a_word_is_in_keeps_its_generation_and_tells_nothing() {
    for state in STATES {
        let w = with_field(word(state, true, true), 2);
        let s = step_on(w, Input::Force(state));
        assert_eq!(s.change(w), None, "{state}");
        let kept = s.next.unwrap_or(w);
        assert_eq!(kept.generation(), w.generation(), "{state}");
        assert_eq!(kept.state(), state);
    }
    // A reset of a closed word clears its failure count and ends its ramp.
    let w = word(State::Closed, false, false).with_failures(2).ramping();
    let s = step_on(w, Input::Force(State::Closed));
    assert_eq!(
        s,
        Step::write(word(State::Closed, false, false), Act::Nothing)
    );
    let plain = word(State::Closed, false, false);
    assert_eq!(
        step_on(plain, Input::Force(State::Closed)),
        Step::stay(Act::Nothing)
    );
}

#[test]
fn only_steps_that_change_generation_carry_a_transition() {
    let inputs = |generation| {
        [
            Input::Claim,
            Input::ProbeEnded {
                generation,
                verdict: Verdict::Success,
            },
            Input::ProbeEnded {
                generation,
                verdict: Verdict::Ignored,
            },
            Input::Trip {
                generation,
                cause: TripCause::ConsecutiveFailures,
            },
            Input::ProbeFailed { generation },
            Input::Force(State::Open),
        ]
    };
    for state in STATES {
        for probes in [0, 1, 2] {
            let w = with_field(word(state, false, false), probes);
            for input in inputs(7) {
                for readings in [at(0, 10, 10), at(10, 10, 10)] {
                    let s = step(w, input, &LIMITS, &readings);
                    let changes = s.next.is_some_and(|n| n.generation() != w.generation());
                    assert_eq!(s.change(w).is_some(), changes, "{state} {input:?}");
                }
            }
        }
    }
}

// The fleet's inputs (`FleetControl::fleet_open`, `fleet_close`, `fleet_hold`).

#[test]
fn a_fleet_open_starts_a_new_open_generation_from_every_state_not_forced() {
    for (timed, windowed) in flags() {
        for state in [State::Closed, State::Open, State::HalfOpen] {
            let w = word(state, timed, windowed);
            let w = if state == State::Closed {
                w.with_failures(2)
            } else {
                w
            };
            let s = step_on(w, Input::FleetOpen);
            let next = w.next_fleet_open();
            assert_eq!(
                s,
                Step::to(next, Act::Opened, ChangeKind::FleetOpen),
                "{state}"
            );
            assert_eq!(
                s.change(w),
                Some(Change {
                    from: state,
                    to: State::Open,
                    kind: ChangeKind::FleetOpen,
                    generation: 8,
                    ramping: false,
                })
            );
            assert!(next.is_fleet_open() && next.failures() == 0);
            assert_eq!(next.is_timed(), timed, "the flags stay");
        }
    }
}

#[test]
fn a_fleet_reopen_opens_only_a_breaker_that_refuses_or_probes() {
    for (timed, windowed) in flags() {
        for state in [State::Open, State::HalfOpen] {
            let w = word(state, timed, windowed);
            assert_eq!(
                step_on(w, Input::FleetReopen),
                Step::to(w.next_fleet_open(), Act::Opened, ChangeKind::FleetOpen),
                "{state}"
            );
        }
        for state in [State::Closed, State::ForcedOpen, State::ForcedClosed] {
            let w = word(state, timed, windowed);
            assert_eq!(
                step_on(w, Input::FleetReopen),
                Step::stay(Act::Nothing),
                "{state}"
            );
        }
    }
}

#[test]
fn a_fleet_open_of_a_fleet_open_word_starts_another_generation() {
    let w = word(State::Closed, false, false).next_fleet_open();
    let s = step_on(w, Input::FleetOpen);
    assert_eq!(s.next, Some(w.next_fleet_open()));
    assert_eq!(s.next.unwrap().generation(), w.generation() + 1);
}

#[test]
fn the_fleet_leaves_a_breaker_forced_by_hand_alone() {
    for state in [State::ForcedOpen, State::ForcedClosed] {
        let w = word(state, false, false);
        assert_eq!(step_on(w, Input::FleetOpen), Step::stay(Act::Nothing));
        assert_eq!(step_on(w, Input::FleetClose), Step::stay(Act::Nothing));
        let hold = Input::FleetHold {
            now: 0,
            deadline: 10,
        };
        assert_eq!(step_on(w, hold), Step::stay(Act::Nothing));
    }
}

#[test]
fn a_fleet_open_word_refuses_with_the_fleet_reason_until_its_deadline() {
    let open = word(State::Closed, true, false).next_fleet_open();
    let early = step(open, Input::Claim, &LIMITS, &at(400, 1_000, 0));
    assert_eq!(early, refuse(Refusal::Fleet, Some(600)));
    let confirmed = At {
        precise: Some(999),
        ..at(990, 1_000, 0)
    };
    let still = step(open, Input::Claim, &LIMITS, &confirmed);
    assert_eq!(still, refuse(Refusal::Fleet, Some(1)));
    assert_eq!(
        step(
            word(State::Open, false, false),
            Input::Claim,
            &LIMITS,
            &at(400, 1_000, 0)
        ),
        refuse(Refusal::Open, Some(600)),
        "a local trip still says open"
    );
}

#[test]
fn a_due_fleet_open_word_goes_half_open_and_probes_as_a_local_one_does() {
    let open = word(State::Closed, false, false).next_fleet_open();
    let due = step(open, Input::Claim, &LIMITS, &at(1_000, 1_000, 0));
    let next = open.next(State::HalfOpen).with_probes(1);
    assert_eq!(
        due,
        Step::to(
            next,
            Act::Probe {
                coarse: 1_000,
                reclaimed: 0
            },
            ChangeKind::OpenElapsed
        )
    );
    assert!(!next.is_fleet_open());
    // Its slots, successes and failures are the half-open state's own.
    assert_eq!(
        step_on(next, Input::Claim),
        Step::write(
            next.with_probes(2),
            Act::Probe {
                coarse: 0,
                reclaimed: 0
            }
        )
    );
    let full = next.with_probes(2);
    assert_eq!(
        step(full, Input::Claim, &LIMITS, &at(1_001, 0, 2_000)),
        refuse(Refusal::HalfOpenFull, Some(999))
    );
    let failed = step_on(
        next,
        Input::ProbeFailed {
            generation: next.generation(),
        },
    );
    assert_eq!(failed.next, Some(next.next(State::Open)));
    assert!(
        !failed.next.unwrap().is_fleet_open(),
        "a probe that fails here is a local reopen"
    );
}

#[test]
fn a_fleet_close_closes_an_open_or_half_open_word_and_nothing_else() {
    for state in [State::Open, State::HalfOpen] {
        let w = word(state, false, true);
        let w = if state == State::HalfOpen {
            w.with_probes(1)
        } else {
            w
        };
        let s = step_on(w, Input::FleetClose);
        assert_eq!(
            s,
            Step::to(w.next(State::Closed), Act::Nothing, ChangeKind::FleetClose),
            "{state}"
        );
        assert_eq!(s.change(w).unwrap().to, State::Closed);
    }
    let fleet = word(State::Closed, false, false).next_fleet_open();
    assert_eq!(
        step_on(fleet, Input::FleetClose).next,
        Some(fleet.next(State::Closed))
    );
    let closed = word(State::Closed, false, false).with_failures(2);
    assert_eq!(
        step_on(closed, Input::FleetClose),
        Step::stay(Act::Nothing),
        "a closed word keeps its count"
    );
}

#[test]
fn a_fleet_release_closes_only_a_fleet_open_word() {
    for (timed, windowed) in flags() {
        let fleet = word(State::Closed, timed, windowed).next_fleet_open();
        assert_eq!(
            step_on(fleet, Input::FleetRelease),
            Step::to(
                fleet.next(State::Closed),
                Act::Nothing,
                ChangeKind::FleetClose
            )
        );
        let local = word(State::Open, timed, windowed);
        let group = local.group_trip();
        let probing = word(State::HalfOpen, timed, windowed).with_probes(1);
        let closed = word(State::Closed, timed, windowed).with_failures(2);
        let forced = [State::ForcedOpen, State::ForcedClosed].map(|s| word(s, timed, windowed));
        for w in [local, group, probing, closed].into_iter().chain(forced) {
            assert_eq!(
                step_on(w, Input::FleetRelease),
                Step::stay(Act::Nothing),
                "{w:?}"
            );
        }
    }
}

#[test]
fn a_group_trip_refuses_as_a_local_open_until_its_deadline() {
    let open = word(State::Closed, true, false).next(State::Open);
    let group = open.group_trip();
    for at in [at(400, 1_000, 0), at(1_000, 1_000, 0)] {
        assert_eq!(
            step(group, Input::Claim, &LIMITS, &at),
            step(open, Input::Claim, &LIMITS, &at)
        );
    }
}

#[test]
fn a_fleet_close_makes_the_probes_in_flight_stale() {
    let probing = word(State::HalfOpen, false, false).with_probes(1);
    let closed = step_on(probing, Input::FleetClose).next.unwrap();
    let late = Input::ProbeEnded {
        generation: probing.generation(),
        verdict: Verdict::Success,
    };
    assert_eq!(step_on(closed, late), Step::stay(Act::Stale));
    let failed = Input::ProbeFailed {
        generation: probing.generation(),
    };
    assert_eq!(step_on(closed, failed), Step::stay(Act::Stale));
}

#[test]
fn a_fleet_hold_moves_an_open_end_sooner_always_and_later_only_well_ahead_of_it() {
    for open in [
        word(State::Open, false, false),
        word(State::Closed, false, false).next_fleet_open(),
    ] {
        let reads = |reopen_at| At {
            reopen_at: Some(reopen_at),
            ..NO_READING
        };
        let hold = |now, deadline| Input::FleetHold { now, deadline };
        let end = 10 * HOLD_GUARD;
        // Sooner, even once the end has passed (harmless: nothing waits for it).
        for now in [0, end, 2 * end] {
            let s = step(open, hold(now, now.min(end)), &LIMITS, &reads(end));
            assert_eq!(s, Step::stay(Act::Hold), "now {now}");
        }
        // Later, while the end is more than the guard ahead.
        let well_ahead = end - HOLD_GUARD - 1;
        let s = step(open, hold(well_ahead, 3 * end), &LIMITS, &reads(end));
        assert_eq!(s, Step::stay(Act::Hold));
        // Not within the guard of it, nor past it: a claim may be probing.
        for now in [end - HOLD_GUARD, end - 1, end, 2 * end] {
            let s = step(open, hold(now, 3 * end), &LIMITS, &reads(end));
            assert_eq!(s, Step::stay(Act::Nothing), "now {now}");
        }
        // Never a write of the word: no generation, no transition.
        assert_eq!(
            step(open, hold(0, 3 * end), &LIMITS, &reads(end)).change(open),
            None
        );
    }
}

#[test]
fn a_fleet_hold_of_a_word_not_open_does_nothing_and_reads_nothing() {
    for state in STATES.into_iter().filter(|&s| s != State::Open) {
        let s = step_on(
            word(state, false, false),
            Input::FleetHold {
                now: 0,
                deadline: 5,
            },
        );
        assert_eq!(s, Step::stay(Act::Nothing), "{state}");
    }
}

#[test]
fn a_fleet_hold_saturates_near_the_end_of_time() {
    let open = word(State::Open, false, false);
    let reads = At {
        reopen_at: Some(u64::MAX),
        ..NO_READING
    };
    let s = step(
        open,
        Input::FleetHold {
            now: u64::MAX - 1,
            deadline: u64::MAX,
        },
        &LIMITS,
        &reads,
    );
    assert_eq!(s, Step::stay(Act::Hold), "no longer than it was: a no-op");
}

const RAMPED: Config = match Config::builder()
    .threshold(3)
    .ramp(std::time::Duration::from_millis(10_000))
    .build()
{
    Ok(config) => config,
    Err(_) => panic!("a valid config"),
};

#[test]
fn a_close_under_a_ramp_enters_a_ramping_closed_word_and_without_one_a_plain_one() {
    for (timed, windowed) in flags() {
        let half_open = word(State::HalfOpen, timed, windowed).with_probes(1);
        let ended = Input::ProbeEnded {
            generation: 7,
            verdict: Verdict::Success,
        };
        let ramped = step(half_open, ended, &RAMPED, &NO_READING);
        let next = ramped.next.expect("closes");
        assert_eq!(next, half_open.next(State::Closed).ramping());
        assert!(next.is_ramping() && !next.is_plain() && !next.admits_untimed());
        assert!(ramped.change(half_open).unwrap().ramping);
        let plain = step(half_open, ended, &LIMITS, &NO_READING);
        assert!(!plain.next.unwrap().is_ramping());
        // The fleet's close ramps the same way.
        for from in [State::Open, State::HalfOpen] {
            let w = word(from, timed, windowed);
            let closed = step(w, Input::FleetClose, &RAMPED, &NO_READING);
            assert_eq!(closed.next, Some(w.next(State::Closed).ramping()));
        }
    }
}

#[test]
fn a_claim_on_a_ramping_word_asks_the_ramp_and_keeps_its_failures_and_generation() {
    let w = word(State::Closed, false, false).ramping();
    assert_eq!(
        step(w, Input::Claim, &RAMPED, &NO_READING),
        Step::stay(Act::Ramp)
    );
    // The ramp's end keeps the failure count and the generation.
    let counted = w.with_failures(1);
    assert!(counted.is_ramping() && counted.failures() == 1);
    let over = ramp_over(counted);
    assert_eq!(over.act, Act::RampOver);
    let done = over.next.unwrap();
    assert!(!done.is_ramping());
    assert_eq!((done.failures(), done.generation()), (1, 7));
    assert_eq!(
        over.change(counted),
        None,
        "no transition: the generation stays"
    );
    // A trip of the ramping word opens it, as any closed word's.
    let trip = Input::Trip {
        generation: 7,
        cause: TripCause::ConsecutiveFailures,
    };
    let opened = step(counted, trip, &RAMPED, &NO_READING);
    assert_eq!(opened.next, Some(w.next(State::Open)));
    assert!(!opened.next.unwrap().is_ramping());
}
