//! Subscribers are told every transition of the state machine, in order, with
//! its reason, generation and open duration; inherit across the registry's
//! breakers; come and go at run time; may re-enter the registry and make guarded
//! calls from their callback; and a panicking one harms nothing.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;

use breaker_core::{
    Breaker, Config, Event, ManualClock, Registry, State, Transition, TransitionReason, TripCause,
};

mod support;
use support::within_10s;

/// Every transition a subscriber was told, in delivery order.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Transition>>>);

impl Seen {
    fn subscriber(&self) -> impl Fn(&Event) + Send + Sync + 'static {
        let seen = self.0.clone();
        move |event: &Event| {
            if let Event::Transition(t) = event {
                seen.lock().unwrap().push(*t);
            }
        }
    }

    fn take(&self) -> Vec<Transition> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }

    fn steps(&self) -> Vec<(State, State, TransitionReason)> {
        self.take()
            .iter()
            .map(|t| (t.from, t.to, t.reason))
            .collect()
    }
}

fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

#[test]
fn every_transition_of_the_state_machine_is_told_in_order_with_its_reason() {
    use State::*;
    use TransitionReason as R;
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let seen = Seen::default();
    let _subscription = registry.subscribe(seen.subscriber());
    let config = Config::builder()
        .threshold(2)
        .open(Duration::from_secs(1))
        .backoff(2.0)
        .probe_timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let db = registry.breaker("db", &config);

    db.try_acquire().unwrap().failure();
    assert!(
        seen.take().is_empty(),
        "a failure below threshold is no transition"
    );
    db.try_acquire().unwrap().failure(); // trips
    assert!(db.try_acquire().is_err()); // refusals are no transitions
    clock.advance(ms(1_000));
    db.try_acquire().unwrap().failure(); // the probe fails: open for 2 s
    clock.advance(ms(2_000));
    let hung = db.try_acquire().unwrap(); // a probe that hangs...
    clock.advance(ms(500));
    let probe = db.try_acquire().unwrap(); // ...past its lease: reclaimed
    hung.success(); // stale: no transition
    probe.success(); // closes
    db.force_open();
    db.force_closed();
    db.reset();

    let told = seen.take();
    let steps: Vec<_> = told.iter().map(|t| (t.from, t.to, t.reason)).collect();
    assert_eq!(
        steps,
        [
            (Closed, Open, R::Tripped(TripCause::ConsecutiveFailures)),
            (Open, HalfOpen, R::OpenElapsed),
            (HalfOpen, Open, R::ProbeFailed),
            (Open, HalfOpen, R::OpenElapsed),
            (HalfOpen, HalfOpen, R::LeaseReclaimed { probes: 1 }),
            (HalfOpen, Closed, R::ProbesSucceeded),
            (Closed, ForcedOpen, R::ForcedOpen),
            (ForcedOpen, ForcedClosed, R::ForcedClosed),
            (ForcedClosed, Closed, R::Reset),
        ]
    );
    let generations: Vec<_> = told.iter().map(|t| t.generation).collect();
    assert_eq!(generations, (1..=9).collect::<Vec<_>>());
    assert!(told.iter().all(|t| t.group == "db"));
    // The open duration and retry-after come with every entry into Open, grown
    // by the backoff after the failed probe, and with nothing else.
    let open_for: Vec<_> = told.iter().map(|t| t.open_for).collect();
    assert_eq!(open_for[0], Some(ms(1_000)));
    assert_eq!(open_for[2], Some(ms(2_000)));
    assert_eq!(told[2].retry_after, Some(ms(2_000)));
    assert!(told
        .iter()
        .filter(|t| t.to != Open)
        .all(|t| t.open_for.is_none() && t.retry_after.is_none()));

    // The counts the exporters read are the transitions told.
    let counts = db.metrics().transitions;
    assert_eq!(counts.total(), 9);
    assert_eq!(counts.get(Open, HalfOpen), 2);
    assert_eq!(counts.get(HalfOpen, HalfOpen), 1);
    assert_eq!(counts.get(ForcedClosed, Closed), 1);
}

#[test]
fn a_window_trip_names_the_rate_that_tripped() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let seen = Seen::default();
    let _subscription = registry.subscribe(seen.subscriber());

    let failing = Config::builder()
        .window_calls(4)
        .failure_rate(0.5)
        .build()
        .unwrap();
    let geo = registry.breaker("geo", &failing);
    for failed in [false, true, false, true] {
        let permit = geo.try_acquire().unwrap();
        if failed {
            permit.failure()
        } else {
            permit.success()
        }
    }
    let reasons = seen.steps();
    assert_eq!(
        reasons,
        [(
            State::Closed,
            State::Open,
            TransitionReason::Tripped(TripCause::FailureRate)
        )]
    );

    let slow = Config::builder()
        .window_calls(4)
        .slow_call(Duration::from_millis(100))
        .slow_call_rate(0.5)
        .build()
        .unwrap();
    let maps = registry.breaker("maps", &slow);
    for _ in 0..4 {
        let permit = maps.try_acquire().unwrap();
        clock.advance(ms(150));
        permit.success();
    }
    assert_eq!(
        seen.steps(),
        [(
            State::Closed,
            State::Open,
            TransitionReason::Tripped(TripCause::SlowCallRate)
        )]
    );
}

#[test]
fn a_breaker_created_after_subscribing_and_a_subscriber_added_later_are_both_told() {
    let registry = Registry::new();
    let early = Seen::default();
    let _early = registry.subscribe(early.subscriber());
    let before = registry.breaker("before", &Config::default());
    let late = Seen::default();
    let _late = registry.subscribe(late.subscriber());
    let after = registry.breaker("after", &Config::default());

    before.force_open();
    after.force_open();
    let groups = |seen: &Seen| seen.take().iter().map(|t| t.group).collect::<Vec<_>>();
    assert_eq!(groups(&early), ["before", "after"]);
    assert_eq!(groups(&late), ["before", "after"]);
}

#[test]
fn subscribers_come_and_go_at_run_time() {
    let breaker = Breaker::new("payments", Config::default());
    let (a, b) = (Seen::default(), Seen::default());
    let sub_a = breaker.subscribe(a.subscriber());
    breaker.force_open();
    let sub_b = breaker.subscribe(b.subscriber());
    breaker.reset();
    sub_a.unsubscribe();
    breaker.force_closed();
    drop(sub_b); // dropping unsubscribes too
    breaker.reset();
    let detached = Seen::default();
    breaker.subscribe(detached.subscriber()).detach();
    breaker.force_open();

    assert_eq!(
        a.take().iter().map(|t| t.generation).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_eq!(
        b.take().iter().map(|t| t.generation).collect::<Vec<_>>(),
        [2, 3]
    );
    assert_eq!(detached.take().len(), 1, "detach keeps the subscriber");
}

#[test]
fn a_conflict_is_told_to_the_registrys_subscribers_once() {
    let registry = Registry::new();
    let conflicts = Arc::new(AtomicU64::new(0));
    let count = conflicts.clone();
    let _s = registry.subscribe(move |event: &Event| {
        if let Event::Conflict(c) = event {
            assert_eq!(c.group, "search");
            assert_eq!(c.ignored.threshold(), 9);
            count.fetch_add(1, SeqCst);
        }
    });
    let nine = Config::builder().threshold(9).build().unwrap();
    registry.breaker("search", &Config::default());
    registry.breaker("search", &nine);
    registry.breaker("search", &nine);
    assert_eq!(conflicts.load(SeqCst), 1);
    assert_eq!(registry.conflicts().len(), 1);
}

#[test]
fn a_subscriber_may_inspect_the_registry_and_make_guarded_calls() {
    within_10s(|| {
        let clock = ManualClock::new();
        let registry = Arc::new(Registry::with_clock(clock.clone()));
        let inside = registry.clone();
        let answers = Arc::new(Mutex::new(Vec::new()));
        let sink = answers.clone();
        let _s = registry.subscribe(move |event: &Event| {
            let Event::Transition(t) = event else { return };
            // Every inspection the registry has, and guarded calls on this
            // breaker and on another, from inside the callback.
            let snapshot = inside.snapshot();
            let state = snapshot.group(t.group).unwrap().state;
            inside.conflicts();
            let same = inside.get(t.group).unwrap().call(|| Ok::<_, ()>("ran"));
            let other = inside
                .breaker("audit", &Config::default())
                .call(|| Ok::<_, ()>("ran"));
            sink.lock()
                .unwrap()
                .push((t.to, state, same.is_ok(), other.is_ok()));
            // A transition of the same breaker caused from inside: told after
            // this callback returns, not nested in it.
            if t.to == State::Open {
                inside.force_open(t.group).unwrap();
            }
        });
        let config = Config::builder().threshold(1).build().unwrap();
        let db = registry.breaker("db", &config);
        db.try_acquire().unwrap().failure();
        assert_eq!(
            answers.lock().unwrap()[..],
            [
                (State::Open, State::Open, false, true),
                (State::ForcedOpen, State::ForcedOpen, false, true),
            ]
        );
        assert_eq!(db.metrics().transitions.total(), 2);
    });
}

#[test]
fn a_panicking_subscriber_harms_neither_the_breaker_nor_the_others() {
    within_10s(|| {
        let registry = Registry::new();
        let (first, last) = (Seen::default(), Seen::default());
        let _first = registry.subscribe(first.subscriber());
        let panicking = registry.subscribe(|event: &Event| {
            if matches!(event, Event::Transition(_)) {
                panic!("a subscriber bug");
            }
        });
        let _last = registry.subscribe(last.subscriber());
        let config = Config::builder().threshold(1).build().unwrap();
        let db = registry.breaker("db", &config);

        db.try_acquire().unwrap().failure();
        db.reset();
        assert_eq!(first.take().len(), 2);
        assert_eq!(
            last.take().len(),
            2,
            "the panic did not stop later subscribers"
        );
        assert_eq!(panicking.panics(), 2);
        // The breaker and the registry work on.
        assert_eq!(db.state(), State::Closed);
        db.call(|| Ok::<_, ()>(())).unwrap();
        db.try_acquire().unwrap().failure();
        assert_eq!(registry.snapshot().group("db").unwrap().state, State::Open);
        assert_eq!(last.take().len(), 1);
    });
}

/// Two threads making consecutive transitions of one breaker at once: each
/// subscriber is still told them in generation order, each once.
#[test]
fn concurrent_transitions_of_one_breaker_are_told_in_generation_order() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 5_000;
    let breaker = Breaker::new("racy", Config::default());
    let seen = Seen::default();
    let _s = breaker.subscribe(seen.subscriber());
    // A slow second subscriber widens the window in which one thread delivers
    // while others announce.
    let _slow = breaker.subscribe(|_: &Event| {
        for _ in 0..200 {
            std::hint::spin_loop();
        }
    });
    let start = Arc::new(Barrier::new(THREADS));
    let workers: Vec<_> = (0..THREADS)
        .map(|i| {
            let (breaker, start) = (breaker.clone(), start.clone());
            thread::spawn(move || {
                start.wait();
                for round in 0..ROUNDS {
                    match (i + round) % 3 {
                        0 => breaker.force_open(),
                        1 => breaker.force_closed(),
                        _ => breaker.reset(),
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let told = seen.take();
    // Forcing the state the breaker is in already is no transition.
    let total = breaker.metrics().generation;
    assert!(total > 0 && total <= (THREADS * ROUNDS) as u64, "{total}");
    assert_eq!(told.len() as u64, total);
    for (i, t) in told.iter().enumerate() {
        assert_eq!(t.generation, i as u64 + 1, "told out of order at {i}");
    }
    // Each told `from` is the previous told `to`: the sequence is the history.
    for pair in told.windows(2) {
        assert_eq!(pair[0].to, pair[1].from);
    }
    assert_eq!(breaker.metrics().transitions.total(), total);
}
