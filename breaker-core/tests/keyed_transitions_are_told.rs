//! A registry's subscribers are told its keyed groups' transitions as
//! `Event::KeyedTransition`s, with the key: for keys created after the
//! subscription and before it, and for keys created while it is being made.
//! A registry nobody subscribes to never makes a key's text.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

mod support;
use support::within_10s;

use breaker_core::{
    AsKey, Config, Event, KeyedGroup, KeyedTransition, ManualClock, Registry, State,
    TransitionReason, TripCause,
};

/// Every keyed transition a subscriber was told, and whether it was told any
/// plain one.
#[derive(Clone, Default)]
struct Seen {
    keyed: Arc<Mutex<Vec<KeyedTransition>>>,
    plain: Arc<AtomicUsize>,
}

impl Seen {
    fn subscriber(&self) -> impl Fn(&Event) + Send + Sync + 'static {
        let seen = self.clone();
        move |event: &Event| match event {
            Event::KeyedTransition(k) => seen.keyed.lock().unwrap().push(k.clone()),
            Event::Transition(_) => {
                seen.plain.fetch_add(1, SeqCst);
            }
            _ => {}
        }
    }

    fn take(&self) -> Vec<KeyedTransition> {
        std::mem::take(&mut *self.keyed.lock().unwrap())
    }
}

fn trips_at_once() -> Config {
    Config::builder()
        .threshold(1)
        .open(Duration::from_secs(1))
        .build()
        .unwrap()
}

#[test]
fn a_keys_trip_is_told_with_its_key_and_never_as_a_plain_transition() {
    let registry = Registry::with_clock(ManualClock::new());
    let seen = Seen::default();
    let _subscription = registry.subscribe(seen.subscriber());
    let hosts = registry
        .keyed::<String>("upstream", &trips_at_once(), 100)
        .unwrap();
    hosts.breaker("a.example").try_acquire().unwrap().failure();
    hosts.breaker("b.example").try_acquire().unwrap().success();

    let told = seen.take();
    assert_eq!(told.len(), 1, "{told:?}");
    let k = &told[0];
    assert_eq!(&*k.key, "a.example");
    assert_eq!(k.transition.group, "upstream");
    assert_eq!(
        (k.transition.from, k.transition.to),
        (State::Closed, State::Open)
    );
    assert_eq!(
        k.transition.reason,
        TransitionReason::Tripped(TripCause::ConsecutiveFailures)
    );
    // The fleet agent and other readers of `Event::Transition` take a group's
    // transition for its only breaker's: a key's must not reach them as one.
    assert_eq!(seen.plain.load(SeqCst), 0);
}

#[test]
fn keys_held_before_the_subscription_are_told_too() {
    let registry = Registry::with_clock(ManualClock::new());
    let tenants = registry
        .keyed::<u64>("tenants", &trips_at_once(), 100)
        .unwrap();
    for tenant in 0..10 {
        tenants.breaker(&tenant).try_acquire().unwrap().success();
    }
    let seen = Seen::default();
    let _subscription = registry.subscribe(seen.subscriber());
    tenants.breaker(&7).force_open();
    let told = seen.take();
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(&*told[0].key, "7");
    assert_eq!(told[0].transition.to, State::ForcedOpen);
}

#[test]
fn an_unkeyed_subscriber_is_never_told_a_keys_transition() {
    // Beside a subscriber that wants keys, so the key is named and told.
    let registry = Registry::with_clock(ManualClock::new());
    let keyed = Seen::default();
    let unkeyed = Seen::default();
    let _keyed = registry.subscribe(keyed.subscriber());
    let _unkeyed = registry.subscribe_unkeyed(unkeyed.subscriber());
    let hosts = registry
        .keyed::<String>("both", &trips_at_once(), 10)
        .unwrap();
    hosts.breaker("a.example").force_open();
    registry
        .breaker("both-plain", &trips_at_once())
        .force_open();
    assert_eq!(keyed.take().len(), 1);
    assert_eq!(keyed.plain.load(SeqCst), 1);
    assert!(unkeyed.take().is_empty());
    assert_eq!(unkeyed.plain.load(SeqCst), 1, "the unkeyed breaker's only");
}

#[test]
fn a_keys_own_subscribers_are_told_plain_transitions() {
    let registry = Registry::with_clock(ManualClock::new());
    let seen = Seen::default();
    let _registry_wide = registry.subscribe(seen.subscriber());
    let hosts = registry
        .keyed::<String>("own", &trips_at_once(), 100)
        .unwrap();
    let own = Seen::default();
    let _own = hosts.breaker("a.example").subscribe(own.subscriber());
    hosts.breaker("a.example").force_open();
    assert_eq!(own.plain.load(SeqCst), 1);
    assert!(own.take().is_empty());
    assert_eq!(seen.take().len(), 1);
}

#[test]
fn a_key_evicted_and_made_again_is_told_under_the_same_key() {
    let registry = Registry::with_clock(ManualClock::new());
    let seen = Seen::default();
    let _subscription = registry.subscribe(seen.subscriber());
    let hosts = registry.keyed::<u32>("churn", &trips_at_once(), 4).unwrap();
    for key in 0..64 {
        hosts.breaker(&key).try_acquire().unwrap().success();
    }
    assert!(hosts.metrics().evictions > 0);
    assert!(hosts.get(&0).is_none(), "key 0 was evicted");
    hosts.breaker(&0).force_open();
    let told = seen.take();
    assert_eq!(told.len(), 1);
    assert_eq!(&*told[0].key, "0");
}

#[test]
fn keys_made_while_a_subscription_is_made_are_all_told() {
    // One thread creates keys while this one subscribes: each key is named as
    // it is created or by the subscription's walk, never missed between them.
    for round in 0..20 {
        let registry = Arc::new(Registry::with_clock(ManualClock::new()));
        let keys = registry
            .keyed::<u64>("race", &trips_at_once(), 1_000_000)
            .unwrap();
        let started = Arc::new(AtomicBool::new(false));
        let maker = {
            let (keys, started) = (keys.clone(), started.clone());
            thread::spawn(move || {
                for key in 0..2_000u64 {
                    keys.breaker(&key);
                    if key == 100 {
                        started.store(true, SeqCst);
                    }
                }
            })
        };
        while !started.load(SeqCst) {
            std::hint::spin_loop();
        }
        let seen = Seen::default();
        let _subscription = registry.subscribe(seen.subscriber());
        maker.join().unwrap();
        for key in 0..2_000u64 {
            keys.breaker(&key).force_open();
        }
        let mut told: Vec<u64> = seen.take().iter().map(|k| k.key.parse().unwrap()).collect();
        told.sort_unstable();
        assert_eq!(told, (0..2_000).collect::<Vec<_>>(), "round {round}");
    }
}

/// A key whose `Debug` text counts how often it is made.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Counted(u32);

static TEXTS_MADE: AtomicUsize = AtomicUsize::new(0);

impl fmt::Debug for Counted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        TEXTS_MADE.fetch_add(1, SeqCst);
        write!(f, "Counted({})", self.0)
    }
}

impl AsKey for Counted {
    type Owned = Counted;
    type Lookup = Counted;
    fn lookup(&self) -> &Counted {
        self
    }
    fn to_owned_key(&self) -> Counted {
        self.clone()
    }
}

#[test]
fn a_keys_text_is_made_once_and_only_for_a_registry_with_subscribers() {
    // One test owns `TEXTS_MADE`: no other test of this file uses `Counted`.
    let registry = Registry::with_clock(ManualClock::new());
    let group = registry
        .keyed::<Counted>("counted", &trips_at_once(), 1_000)
        .unwrap();
    let standalone = KeyedGroup::<Counted>::new("counted-alone", trips_at_once(), 1_000);
    for key in 0..50 {
        group
            .breaker(&Counted(key))
            .try_acquire()
            .unwrap()
            .failure();
        standalone
            .breaker(&Counted(key))
            .try_acquire()
            .unwrap()
            .failure();
    }
    let texts = || TEXTS_MADE.load(SeqCst);
    assert_eq!(texts(), 0, "nobody listens: no key is named");
    // A subscriber with no use for keys (as the fleet agent) names none and
    // is told none of their transitions.
    let unkeyed = Seen::default();
    let _unkeyed = registry.subscribe_unkeyed(unkeyed.subscriber());
    group.breaker(&Counted(100)).force_open();
    registry
        .breaker("counted-plain", &trips_at_once())
        .force_open();
    assert_eq!(texts(), 0, "an unkeyed subscriber names no key");
    assert!(unkeyed.take().is_empty());
    assert_eq!(unkeyed.plain.load(SeqCst), 1, "the unkeyed breaker's");

    let seen = Seen::default();
    let subscription = registry.subscribe(seen.subscriber());
    assert_eq!(texts(), 51, "the walk names each key once");
    let second = registry.subscribe(|_: &Event| {});
    assert_eq!(texts(), 51, "a named key is not named again");
    for key in 0..50 {
        group.breaker(&Counted(key)).reset();
    }
    group.breaker(&Counted(50)).try_acquire().unwrap().failure();
    assert_eq!(texts(), 52, "one new key, one text; none per event");
    assert_eq!(seen.take().len(), 51);
    drop((subscription, second));
    // The standalone group has no registry to tell.
    standalone.breaker(&Counted(0)).reset();
    assert_eq!(texts(), 52);
}

#[test]
fn a_keyed_transition_displays_its_key() {
    let registry = Registry::with_clock(ManualClock::new());
    let seen = Seen::default();
    let _subscription = registry.subscribe(seen.subscriber());
    let pairs = registry
        .keyed::<(String, u16)>("pairs", &trips_at_once(), 10)
        .unwrap();
    pairs
        .breaker_for(&("db".to_owned(), 5432))
        .try_acquire()
        .unwrap()
        .failure();
    let told = seen.take();
    assert_eq!(
        told[0].to_string(),
        r#"circuit `pairs` key ("db", 5432) closed -> open (tripped by consecutive_failures), generation 1, open for 1s"#
    );
}

#[test]
fn a_string_keys_text_is_escaped_and_cut() {
    let registry = Registry::with_clock(ManualClock::new());
    let seen = Seen::default();
    let _subscription = registry.subscribe(seen.subscriber());
    let hosts = registry
        .keyed::<String>("odd", &trips_at_once(), 10)
        .unwrap();
    // A key that would forge a second log line, and one far too long.
    hosts.breaker("evil\nWARN forged").force_open();
    // 1 + 3n bytes: the text holds "a" and 85 whole euro signs (256 bytes),
    // never part of the 86th.
    let long = format!("a{}", "€".repeat(1_000));
    hosts.breaker(long.as_str()).force_open();
    let told = seen.take();
    assert_eq!(&*told[0].key, "evil\\nWARN forged");
    assert_eq!(&*told[1].key, format!("a{}…", "€".repeat(85)));
}

/// A key whose `Debug` comes back into its own group: it looks its
/// neighbour up (creating it, as a key's `Debug` may well do by accident).
#[derive(Clone, PartialEq, Eq, Hash)]
struct Reentrant(u32);

static REENTRANT: std::sync::OnceLock<KeyedGroup<Reentrant>> = std::sync::OnceLock::new();

impl fmt::Debug for Reentrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 < 1_000 {
            let neighbour = REENTRANT
                .get()
                .unwrap()
                .breaker_for(&Reentrant(self.0 + 1_000));
            write!(f, "Reentrant({}, next to {:?})", self.0, neighbour.state())
        } else {
            write!(f, "Reentrant({})", self.0)
        }
    }
}

impl AsKey for Reentrant {
    type Owned = Reentrant;
    type Lookup = Reentrant;
    fn lookup(&self) -> &Reentrant {
        self
    }
    fn to_owned_key(&self) -> Reentrant {
        self.clone()
    }
}

#[test]
fn a_keys_debug_may_come_back_into_its_group() {
    // The key's text is made with no lock of the group held: a `Debug` that
    // creates a key of the same group would otherwise wait on itself.
    let registry: &'static Registry = Box::leak(Box::new(Registry::with_clock(ManualClock::new())));
    let group = registry
        .keyed::<Reentrant>("reentrant", &trips_at_once(), 100)
        .unwrap();
    REENTRANT.set(group.clone()).ok().unwrap();
    group.breaker(&Reentrant(1)); // held before the subscription: named by its walk
    let seen = Seen::default();
    within_10s({
        let (group, seen) = (group.clone(), seen.clone());
        move || {
            let _subscription = registry.subscribe(seen.subscriber());
            group.breaker(&Reentrant(2)).force_open(); // named as it is created
            group.breaker(&Reentrant(1)).force_open();
        }
    });
    let keys: Vec<String> = seen.take().iter().map(|k| k.key.to_string()).collect();
    assert_eq!(
        keys,
        [
            "Reentrant(2, next to Closed)",
            "Reentrant(1, next to Closed)"
        ]
    );
}

/// A subscriber that counts the holds it is told, by scope.
fn count_holds(count: &Arc<AtomicUsize>) -> impl Fn(&Event) + Send + Sync + 'static {
    let count = Arc::clone(count);
    move |event: &Event| {
        if let Event::Held(held) = event {
            assert_eq!(held.scope, breaker_core::HoldScope::Group);
            count.fetch_add(1, SeqCst);
        }
    }
}

#[test]
fn a_keyed_groups_hold_is_told_once_to_a_subscriber_without_keys() {
    // Beside a subscriber that wants keys, so every key is named and told.
    let registry = Registry::with_clock(ManualClock::new());
    let (keyed, unkeyed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let _keyed = registry.subscribe(count_holds(&keyed));
    let _unkeyed = registry.subscribe_unkeyed(count_holds(&unkeyed));
    let hosts = registry
        .keyed::<u32>("quota", &Config::default(), 100)
        .unwrap();
    for key in 0..10 {
        let _ = hosts.breaker(&key);
    }
    hosts.hold(Duration::from_secs(30));
    assert_eq!(unkeyed.load(SeqCst), 1, "the group's hold, once");
    assert_eq!(keyed.load(SeqCst), 10, "each key's hold");
}
