//! A registry's subscribers are told its keyed groups' transitions as
//! `Event::KeyedTransition`s, with the key: for keys created after the
//! subscription and before it, and for keys created while it is being made.
//! A registry nobody subscribes to never makes a key's text.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;

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
        .open_ms(1_000)
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
    assert_eq!(&*k.key, r#""a.example""#);
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
    assert_eq!(
        TEXTS_MADE.load(SeqCst),
        0,
        "nobody listens: no key is named"
    );

    let seen = Seen::default();
    let subscription = registry.subscribe(seen.subscriber());
    assert_eq!(TEXTS_MADE.load(SeqCst), 50, "the walk names each key once");
    let second = registry.subscribe(|_: &Event| {});
    assert_eq!(
        TEXTS_MADE.load(SeqCst),
        50,
        "a named key is not named again"
    );
    for key in 0..50 {
        group.breaker(&Counted(key)).reset();
    }
    group.breaker(&Counted(50)).try_acquire().unwrap().failure();
    assert_eq!(
        TEXTS_MADE.load(SeqCst),
        51,
        "one new key, one text; none per event"
    );
    assert_eq!(seen.take().len(), 51);
    drop((subscription, second));
    // The standalone group has no registry to tell.
    standalone.breaker(&Counted(0)).reset();
    assert_eq!(TEXTS_MADE.load(SeqCst), 51);
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
