//! A keyed group with `systemic_share` or `max_open_keys` tells one bad key
//! from a fault its keys share: a shared fault opens the group once (every
//! key refused with `OpenReason::Group`, one probe for the group), one bad key
//! opens only itself, and at most `max_open_keys` keys are open on their own.

use std::time::Duration;

use breakerbox::events::{Event, TransitionReason, TripCause};
use breakerbox::hold::HoldScope;
use breakerbox::keyed::KeyedGroup;
use breakerbox::{Config, ManualClock, OpenReason, Registry, State};

const OPEN: Duration = Duration::from_secs(10);

fn judged(threshold: u32) -> Config {
    Config::builder()
        .threshold(threshold)
        .open(OPEN)
        .systemic_share(0.5)
        .max_open_keys(0.1)
        .build()
        .unwrap()
}

fn group(registry: &Registry, config: &Config) -> KeyedGroup<u32> {
    let hosts = registry.keyed::<u32>("hosts", config, 1_000).unwrap();
    for key in 0..100 {
        hosts.breaker(&key).try_acquire().unwrap().success();
    }
    hosts
}

#[test]
fn a_shared_fault_opens_the_group_after_one_thresholds_worth_of_failures() {
    let registry = Registry::with_clock(ManualClock::new());
    let hosts = group(&registry, &judged(5));
    let mut reached = 0;
    for key in (0..100).cycle().take(1_000) {
        if let Ok(permit) = hosts.breaker(&key).try_acquire() {
            reached += 1;
            permit.failure();
        }
    }
    assert_eq!(
        reached, 5,
        "five keys failing, none recovering, open the group"
    );
    let group = hosts.group_breaker().unwrap();
    assert_eq!(group.state(), State::Open);
    let refused = hosts.breaker(&42).try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Group);
    assert_eq!(refused.retry_after(), Some(OPEN));
    // No key paid its own threshold.
    assert_eq!(hosts.metrics().open, 0);
    assert_eq!(hosts.get(&0).unwrap().state(), State::Closed);
}

#[test]
fn one_probe_goes_for_the_whole_group_per_open_period() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = group(&registry, &judged(3));
    for key in 0..3 {
        hosts.breaker(&key).try_acquire().unwrap().failure();
    }
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Open);
    clock.advance(OPEN);
    let probe = hosts.breaker(&7).try_acquire_owned().unwrap();
    assert_eq!(hosts.group_breaker().unwrap().state(), State::HalfOpen);
    // Every other key waits for that one probe.
    for key in 0..100 {
        let refused = hosts.breaker(&key).try_acquire().unwrap_err();
        assert_eq!(refused.reason(), OpenReason::Group);
    }
    probe.failure();
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Open);
    clock.advance(OPEN);
    let probe = hosts.breaker(&9).try_acquire_owned().unwrap();
    assert!(hosts.breaker(&10).try_acquire().is_err());
    probe.success();
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Closed);
    hosts.breaker(&10).try_acquire().unwrap().success();
}

#[test]
fn keys_resume_in_their_own_state_when_the_group_closes() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let config = Config::builder()
        .threshold(2)
        .open(OPEN)
        .max_open(Duration::from_secs(600))
        .systemic_share(0.5)
        .build()
        .unwrap();
    let hosts = group(&registry, &config);
    // Key 1 opens on its own.
    for _ in 0..2 {
        hosts.breaker(&1).try_acquire().unwrap().failure();
    }
    assert_eq!(hosts.get(&1).unwrap().state(), State::Open);
    // Then another key begins failing, and none has succeeded since the
    // first: two keys, the threshold, a shared fault.
    hosts.breaker(&2).try_acquire().unwrap().failure();
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Open);
    clock.advance(OPEN / 2);
    hosts.breaker(&4).try_acquire().unwrap_err();
    clock.advance(OPEN / 2);
    hosts.breaker(&5).try_acquire().unwrap().success();
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Closed);
    // Key 1 is where it was: open, its open time passed: its next claim is
    // its own probe. Key 2 kept its one failure.
    let own = hosts.breaker(&1).try_acquire_owned().unwrap();
    assert_eq!(
        hosts.get(&1).unwrap().state(),
        State::HalfOpen,
        "its own probe"
    );
    own.success();
    hosts.breaker(&2).try_acquire().unwrap().failure();
    assert_eq!(hosts.get(&2).unwrap().state(), State::Open);
}

#[test]
fn one_bad_key_opens_only_itself_and_healthy_keys_run_on() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = group(&registry, &judged(5));
    let mut healthy_refused = 0;
    for round in 0..200 {
        for key in 0..100 {
            match hosts.breaker(&key).try_acquire() {
                Ok(permit) if key == 13 => permit.failure(),
                Ok(permit) => permit.success(),
                Err(_) if key == 13 => {}
                Err(_) => healthy_refused += 1,
            }
        }
        if round % 10 == 0 {
            clock.advance(OPEN);
        }
    }
    assert_eq!(healthy_refused, 0);
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Closed);
    assert_eq!(hosts.get(&13).unwrap().state(), State::Open);
    assert_eq!(hosts.metrics().open, 1);
}

#[test]
fn a_trip_past_max_open_keys_opens_the_group_instead_of_one_more_key() {
    let registry = Registry::with_clock(ManualClock::new());
    let config = Config::builder()
        .threshold(2)
        .open(OPEN)
        .max_open_keys(0.1)
        .build()
        .unwrap();
    let hosts = group(&registry, &config);
    let told = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = told.clone();
    let _subscription = registry.subscribe(move |event: &Event| {
        if let Event::Transition(t) = event {
            sink.lock().unwrap().push(t.reason);
        }
    });
    // Bad keys one after the other, each failing on its own (a success
    // elsewhere between, so no shared run builds up).
    for key in 0..20 {
        for _ in 0..2 {
            if let Ok(permit) = hosts.breaker(&key).try_acquire() {
                permit.failure();
            }
            if let Ok(permit) = hosts.breaker(&99).try_acquire() {
                permit.success();
            }
        }
        assert!(
            hosts.metrics().open <= 10,
            "at most a tenth of the keys open"
        );
    }
    assert_eq!(hosts.metrics().open, 10);
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Open);
    assert_eq!(
        *told.lock().unwrap(),
        [TransitionReason::Tripped(TripCause::MaxOpenKeys)]
    );
}

#[test]
fn a_group_without_the_keys_has_no_group_level() {
    let hosts = KeyedGroup::<u32>::new(
        "plain",
        Config::builder().threshold(1).build().unwrap(),
        100,
    );
    assert!(hosts.group_breaker().is_none());
    for key in 0..50 {
        hosts.breaker(&key).try_acquire().unwrap().failure();
    }
    assert_eq!(hosts.metrics().open, 50, "every key opens on its own");
}

#[test]
fn shares_out_of_range_are_refused() {
    for share in [0.0, -0.5, 1.5, f64::NAN] {
        let err = Config::builder().systemic_share(share).build().unwrap_err();
        assert_eq!(err.key(), "systemic_share");
        let err = Config::builder().max_open_keys(share).build().unwrap_err();
        assert_eq!(err.key(), "max_open_keys");
    }
    let config = Config::builder()
        .systemic_share(1.0)
        .max_open_keys(0.25)
        .build()
        .unwrap();
    assert_eq!(config.systemic_share(), Some(1.0));
    assert_eq!(config.max_open_keys(), Some(0.25));
}

#[test]
fn a_few_bad_keys_among_healthy_ones_leave_the_group_closed() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = group(&registry, &judged(5));
    // Keys 0 to 7 go bad one after the other while the rest succeed: eight
    // keys failing is more than `threshold`, and less than half the keys.
    for round in 0..50 {
        for key in 0..100 {
            if let Ok(permit) = hosts.breaker(&key).try_acquire() {
                if key < 8 && round >= key {
                    permit.failure();
                } else {
                    permit.success();
                }
            }
        }
    }
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Closed);
    assert_eq!(hosts.metrics().open, 8);
}

#[test]
fn transitions_tell_how_many_keys_are_open_and_the_group_level_is_one_of_them() {
    let registry = Registry::with_clock(ManualClock::new());
    let config = Config::builder()
        .threshold(2)
        .open(OPEN)
        .max_open_keys(0.1)
        .build()
        .unwrap();
    let hosts = group(&registry, &config);
    let plain = registry
        .keyed::<u32>(
            "plain",
            &Config::builder().threshold(1).build().unwrap(),
            10,
        )
        .unwrap();
    let told = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = told.clone();
    let _subscription = registry.subscribe(move |event: &Event| {
        let (key, t) = match event {
            Event::Transition(t) => (None, t),
            Event::KeyedTransition(k) => (Some(k.key.to_string()), &k.transition),
            _ => return,
        };
        sink.lock()
            .unwrap()
            .push((t.group, key, t.to, t.keys_open.map(|k| (k.open, k.keys))));
    });
    plain.breaker(&1).try_acquire().unwrap().failure();
    for key in 0..11 {
        for _ in 0..2 {
            if let Ok(permit) = hosts.breaker(&key).try_acquire() {
                permit.failure();
            }
            if let Ok(permit) = hosts.breaker(&99).try_acquire() {
                permit.success();
            }
        }
    }
    let told = told.lock().unwrap();
    assert_eq!(
        told[0],
        ("plain", Some("1".to_owned()), State::Open, None),
        "a group that does not judge as one counts nothing"
    );
    let keys: Vec<_> = told[1..11].iter().map(|t| t.3).collect();
    let expected: Vec<_> = (1..=10).map(|open| Some((open, 100))).collect();
    assert_eq!(
        keys, expected,
        "each key's trip, with the keys open after it"
    );
    assert_eq!(
        told[11],
        ("hosts", None, State::Open, Some((10, 100))),
        "the eleventh trip opens the group, which says ten keys are open"
    );
    assert_eq!(told.len(), 12);
}

#[test]
fn healthy_fast_keys_never_open_a_group_that_judges_slow_calls() {
    let clock = ManualClock::new();
    clock.advance(Duration::from_secs(3_600));
    let registry = Registry::with_clock(clock.clone());
    let config = Config::builder()
        .window(Duration::from_secs(60))
        .min_calls(10)
        .slow_call(Duration::from_millis(100))
        .slow_call_rate(0.5)
        .systemic_share(0.5)
        .build()
        .unwrap();
    let hosts = registry.keyed::<u32>("hosts", &config, 1_000).unwrap();
    for _ in 0..20 {
        for key in 0..10 {
            hosts
                .breaker(&key)
                .call(|| {
                    clock.advance(Duration::from_millis(1));
                    Ok::<_, ()>(())
                })
                .expect("a healthy group admits every call");
        }
    }
    let group = hosts.group_breaker().unwrap();
    assert_eq!(group.state(), State::Closed);
    let window = group.metrics().window.unwrap();
    assert_eq!(window.calls, 200, "every key's call is the group's too");
    assert_eq!(
        window.slow_calls, 0,
        "a call lasts as long as the key's did"
    );
}

/// Fails keys once each until the group opens as one (none recovers).
fn open_as_one(hosts: &KeyedGroup<u32>) {
    for key in 0..100 {
        if let Ok(permit) = hosts.breaker(&key).try_acquire() {
            permit.failure();
        }
    }
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Open);
}

#[test]
fn shadow_mode_admits_the_calls_of_a_group_open_as_one() {
    let registry = Registry::with_clock(ManualClock::new());
    let hosts = group(&registry, &judged(5));
    open_as_one(&hosts);
    hosts.set_shadow(true);
    assert!(hosts.group_breaker().unwrap().is_shadow());
    for key in [0, 42, 99] {
        hosts
            .breaker(&key)
            .try_acquire()
            .expect("shadow mode refuses no call")
            .success();
    }
    assert_eq!(hosts.group_breaker().unwrap().metrics().shadow_refused, 3);
    hosts.set_shadow(false);
    let refused = hosts.breaker(&42).try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Group);
}

#[test]
fn a_group_open_as_one_sends_no_probe_while_the_group_is_held() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = group(&registry, &judged(5));
    open_as_one(&hosts);
    let held = hosts.hold(Duration::from_secs(30));
    clock.advance(OPEN * 2);
    for key in [0, 42] {
        let refused = hosts.breaker(&key).try_acquire().unwrap_err();
        assert_eq!(refused.reason(), OpenReason::Held(HoldScope::Group));
    }
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Open);
    clock.advance(held);
    hosts
        .breaker(&42)
        .try_acquire()
        .expect("the hold over, one claim is the group's probe")
        .success();
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Closed);
}

#[test]
fn a_hold_of_the_group_breaker_refuses_every_key() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = group(&registry, &judged(5));
    // What the fleet does with another instance's hold of the group.
    let held = hosts
        .group_breaker()
        .unwrap()
        .hold(Duration::from_secs(30), HoldScope::Group);
    for key in [0, 42, 1_000] {
        let refused = hosts.breaker(&key).try_acquire().unwrap_err();
        assert_eq!(refused.reason(), OpenReason::Held(HoldScope::Group));
    }
    clock.advance(held);
    hosts
        .breaker(&42)
        .try_acquire()
        .expect("the hold over, the keys call again")
        .success();
    // The hold over, the group still opens as one.
    open_as_one(&hosts);
    let refused = hosts.breaker(&42).try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Group);
}

#[test]
fn releasing_the_group_hold_by_hand_frees_the_group_breaker_too() {
    let registry = Registry::with_clock(ManualClock::new());
    let hosts = group(&registry, &judged(5));
    hosts.hold(Duration::from_secs(30));
    assert!(hosts.group_breaker().unwrap().held().is_some());
    assert_eq!(hosts.release_hold(), 100);
    assert!(hosts.group_breaker().unwrap().held().is_none());
    hosts.breaker(&7).try_acquire().expect("released").success();
}

/// Calls every one of the hundred hosts once, a success each; returns how
/// many were admitted. Every refusal is the ramp's, with a time to retry.
fn call_every_host(hosts: &KeyedGroup<u32>) -> u32 {
    let mut admitted = 0;
    for key in 0..100 {
        match hosts.breaker(&key).try_acquire() {
            Ok(permit) => {
                admitted += 1;
                permit.success();
            }
            Err(refused) => {
                assert_eq!(refused.reason(), OpenReason::Ramping);
                assert!(refused.retry_after().is_some(), "{refused:?}");
            }
        }
    }
    admitted
}

const RAMP: Duration = Duration::from_secs(10);

/// The hundred hosts of a group with a ramp of [`RAMP`], opened as one and
/// closed by the group's probe: the ramp has just begun.
fn closed_after_a_shared_fault(registry: &Registry, clock: &ManualClock) -> KeyedGroup<u32> {
    let config = Config::builder()
        .threshold(3)
        .open(OPEN)
        .ramp(RAMP)
        .systemic_share(0.5)
        .build()
        .unwrap();
    let hosts = group(registry, &config);
    open_as_one(&hosts);
    clock.advance(OPEN);
    hosts.breaker(&7).try_acquire().unwrap().success(); // the group's probe
    hosts
}

#[test]
fn a_group_that_closes_with_a_ramp_lets_its_keys_back_in_as_one() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = closed_after_a_shared_fault(&registry, &clock);
    let group = hosts.group_breaker().unwrap();
    assert_eq!(group.state(), State::Closed);

    // What the group's breaker is asked says what its claims do: refused.
    assert!(!group.would_admit());
    assert_eq!(group.refusal().unwrap().reason(), OpenReason::Ramping);
    assert_eq!(call_every_host(&hosts), 0, "at the close, a share of none");
    clock.advance(RAMP / 2);
    let half = call_every_host(&hosts);
    assert!((49..=51).contains(&half), "{half} of 100 at half the ramp");
    clock.advance(RAMP / 2);
    assert_eq!(call_every_host(&hosts), 100, "the ramp ran its length");
    assert!(group.would_admit() && group.refusal().is_none());

    // Each admitted call ran on its key's own breaker; the group's ran only
    // its probe, and refused the rest.
    let keys: u64 = (0..100)
        .map(|key| hosts.get(&key).unwrap().metrics().successes)
        .sum();
    assert_eq!(keys, 100 + u64::from(half) + 100);
    let m = group.metrics();
    assert_eq!(m.successes, 1, "{m:?}");
    assert_eq!(m.ramp_refused, 100 + u64::from(100 - half), "{m:?}");
    assert_eq!(hosts.metrics().open, 0);
}

#[test]
fn racing_lookups_share_the_groups_ramp_exactly() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = closed_after_a_shared_fault(&registry, &clock);
    clock.advance(RAMP / 4);
    // Four threads, 250 calls each over the hundred hosts, at a quarter of
    // the ramp: a quarter of the 1,000 calls pass, to within one.
    let admitted = std::sync::atomic::AtomicU32::new(0);
    let start = std::sync::Barrier::new(4);
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let (hosts, admitted, start) = (&hosts, &admitted, &start);
            s.spawn(move || {
                start.wait();
                for i in 0..250u32 {
                    if let Ok(permit) = hosts.breaker(&((t * 250 + i) % 100)).try_acquire() {
                        admitted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        permit.success();
                    }
                }
            });
        }
    });
    let admitted = admitted.into_inner();
    assert!((249..=251).contains(&admitted), "{admitted} of 1,000");
    let m = hosts.group_breaker().unwrap().metrics();
    assert_eq!(m.ramp_refused, u64::from(1_000 - admitted), "{m:?}");
}
