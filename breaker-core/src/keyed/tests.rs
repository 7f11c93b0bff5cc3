//! A call for a key that exists never waits on the group's writers; a call that
//! meets a key mid-eviction waits for the sweep's decision and then gets the
//! key's one breaker; a key created across a reconfiguration runs the new
//! config, and one created across a registry subscription is named.

use std::cell::RefCell;
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use std::sync::atomic::Ordering::Relaxed;

use super::KeyedGroup;
use crate::clock::ClockSource;
use crate::{Breaker, Config, Event, ManualClock, Registry, State};

/// Long enough for any machine to run a thousand calls; a call that waits on
/// the writer lock never ends while the test holds it.
const PATIENCE: Duration = Duration::from_secs(30);

fn group() -> KeyedGroup<u64> {
    KeyedGroup::new(
        "keyed-tests",
        Config::builder().threshold(2).build().unwrap(),
        16,
    )
}

#[test]
fn calls_for_existing_keys_run_while_a_writer_holds_the_group() {
    let group = group();
    for key in 0..8 {
        group.breaker(&key).try_acquire().unwrap().success();
    }
    // What creating a key or sweeping holds, for as long as the test likes.
    let writer = group.shared.writer.lock();
    let (done, finished) = mpsc::channel();
    let caller = {
        let group = group.clone();
        thread::spawn(move || {
            for i in 0..1_000u64 {
                let key = i % 8;
                group.breaker(&key).try_acquire().unwrap().success();
                assert!(group.get(&key).is_some());
            }
            done.send(()).unwrap();
        })
    };
    assert!(
        finished.recv_timeout(PATIENCE).is_ok(),
        "a call for an existing key waited on the writer lock"
    );
    drop(writer);
    caller.join().unwrap();
    assert_eq!(group.metrics().successes, 1_008);
}

#[test]
fn a_call_meeting_a_key_mid_eviction_waits_for_the_decision_and_keeps_the_one_breaker() {
    let group = group();
    group.breaker(&7).try_acquire().unwrap().failure();
    // A sweep has marked key 7 and not decided yet (it holds the writer lock).
    let writer = group.shared.writer.lock();
    group.shared.map.pin().get(&7).unwrap().mark.set_evicting();
    let (done, finished) = mpsc::channel();
    let caller = {
        let group = group.clone();
        thread::spawn(move || {
            let breaker = group.breaker(&7);
            done.send(()).unwrap();
            breaker.try_acquire().unwrap().failure();
            breaker.state()
        })
    };
    // Turned away by the mark, the call waits for the writer lock.
    assert!(finished.recv_timeout(Duration::from_millis(100)).is_err());
    // The sweep saw a handle (say) and keeps the key.
    group.shared.map.pin().get(&7).unwrap().mark.set_used();
    drop(writer);
    // The call ran on the key's one breaker: its second failure trips it.
    assert_eq!(caller.join().unwrap(), State::Open);
    assert_eq!(group.breaker(&7).state(), State::Open);
    assert_eq!(group.metrics().keys, 1);
}

thread_local! {
    /// Run by `create` on this thread between reading the group's config and
    /// taking the writer lock: where a test makes a race happen for sure.
    static BEFORE_THE_WRITER_LOCK: RefCell<Option<Box<dyn FnOnce()>>> = const { RefCell::new(None) };
}

pub(super) fn before_the_writer_lock() {
    if let Some(pause) = BEFORE_THE_WRITER_LOCK.with(|hook| hook.borrow_mut().take()) {
        pause();
    }
}

/// A thread running `create`, paused before the writer lock until `resume`.
struct Paused<T> {
    resume: mpsc::Sender<()>,
    thread: thread::JoinHandle<T>,
}

impl<T: Send + 'static> Paused<T> {
    /// Starts `create` on a thread of its own and returns once that thread's
    /// first `create` has reached `before_the_writer_lock`.
    fn before_the_writer_lock(create: impl FnOnce() -> T + Send + 'static) -> Self {
        let (paused, wait_for_pause) = mpsc::channel();
        let (resume, wait_for_resume) = mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            BEFORE_THE_WRITER_LOCK.with(|hook| {
                *hook.borrow_mut() = Some(Box::new(move || {
                    paused.send(()).unwrap();
                    wait_for_resume.recv().unwrap();
                }));
            });
            create()
        });
        wait_for_pause.recv().unwrap();
        Paused { resume, thread }
    }

    /// Lets the thread go on and returns what `create` returned.
    fn resume(self) -> T {
        self.resume.send(()).unwrap();
        self.thread.join().unwrap()
    }
}

#[test]
fn a_key_created_across_a_reconfiguration_runs_the_new_config() {
    let group = group();
    let creator = Paused::before_the_writer_lock({
        let group = group.clone();
        move || group.breaker(&3).config().threshold()
    });
    // The creator read the config (threshold 2) and built its breaker.
    group
        .reconfigure(Config::builder().threshold(7).build().unwrap())
        .unwrap();
    assert_eq!(creator.resume(), 7);
    assert_eq!(group.breaker(&3).config().threshold(), 7);
}

#[test]
fn a_key_created_across_a_registry_subscription_is_named() {
    // A key built (and not named: nobody listened) before the subscriber was
    // listed, and inserted after the subscription's walk passed its group:
    // `create` must see the subscriber under the writer lock and go back to
    // name it, or its transitions reach nobody.
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    let group = registry
        .keyed::<u64>("named", &Config::default(), 64)
        .unwrap();
    let creator = Paused::before_the_writer_lock({
        let group = group.clone();
        move || drop(group.breaker(&3))
    });
    let told = Arc::new(Mutex::new(Vec::new()));
    let sink = told.clone();
    let _subscription = registry.subscribe(move |event: &Event| {
        if let Event::KeyedTransition(k) = event {
            sink.lock().unwrap().push(k.key.to_string());
        }
    });
    creator.resume();
    group.breaker(&3).force_open();
    assert_eq!(*told.lock().unwrap(), ["3"]);
}

#[test]
fn an_entry_found_before_its_eviction_turns_its_caller_away_after_it() {
    let group = group();
    group.breaker(&1);
    let map = &group.shared.map;
    let guard = map.guard();
    // A caller found key 1 and has not taken its handle yet.
    let found = map.get(&1, &guard).unwrap();
    // Meanwhile the group fills up and sweeps key 1 out. When depends on
    // where the map (seeded at random) puts it and where the sweep's hand
    // is: new keys come until it is gone.
    let mut key = 100;
    while group.get(&1).is_some() {
        group.breaker(&key);
        key += 1;
        assert!(key < 10_000, "key 1 was never evicted");
    }
    // The caller asks for the handle now: turned away, to look again.
    assert!(found.handle(true).is_none());
    drop(guard);
    assert_eq!(group.breaker(&1).metrics().calls, 0, "a new breaker");
}

#[test]
fn a_sweep_that_frees_nothing_is_not_repeated_until_the_group_grows_or_time_passes() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .open(Duration::from_secs(1))
        .build()
        .unwrap();
    let source = ClockSource::of(clock.clone());
    let group = KeyedGroup::<u64>::from_parts("futile", config, config, source, 64, None);
    // Every key held by a call in flight: nothing is evictable, and the 65th
    // key's sweep frees nothing.
    let held: Vec<Breaker> = (0..65).map(|key| group.breaker(&key)).collect();
    let shared = &*group.shared;
    assert_eq!(shared.keys.load(Relaxed), 65);
    // No sweep again before the group has grown a sixteenth past 64...
    assert!(!shared.may_sweep(65) && !shared.may_sweep(67));
    assert!(shared.may_sweep(68));
    // ... or an open duration has passed.
    clock.advance(Duration::from_millis(1_000));
    assert!(shared.may_sweep(65));
    // A sweep that frees keys leaves no wait behind.
    drop(held);
    group.breaker(&100);
    assert!(shared.keys.load(Relaxed) <= 60);
    assert!(shared.may_sweep(64));
}

#[test]
fn a_group_debugs_as_its_name_and_size() {
    let group = group();
    group.breaker(&1);
    assert_eq!(
        format!("{group:?}"),
        "KeyedGroup { group: \"keyed-tests\", keys: 1, key_capacity: 16, .. }"
    );
}

#[test]
fn a_keys_text_stops_at_the_cut_even_if_its_debug_goes_on() {
    // A `Debug` that ignores the refusal and writes on must not splice its
    // tail onto the cut text.
    struct Stubborn;
    impl std::fmt::Debug for Stubborn {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let _ = f.write_str(&format!("ab{}", "€".repeat(100)));
            let _ = f.write_str("Z");
            Ok(())
        }
    }
    let text = super::key_text(&Stubborn);
    // "ab" and 84 whole euro signs (254 bytes: the 85th would pass 256), then `…`.
    assert_eq!(&*text, format!("ab{}…", "€".repeat(84)));
    // A `Debug` that fits is kept whole, with no mark.
    assert_eq!(&*super::key_text(&(7u8, 'x')), "(7, 'x')");
}
