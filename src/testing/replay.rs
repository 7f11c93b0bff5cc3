//! [`replay`]: a trace's calls run again through the breaker's own state
//! machine, under any config, on a manual clock.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::clock::Clock;
use breaker_core::events::{Event, Transition};
use breaker_core::hold::HoldScope;
use breaker_core::keyed::KeyedGroup;
use breaker_core::{
    Breaker, Config, ManualClock, OpenReason, OwnedPermit, Registry, State, Subscription,
};

use super::trace::{Change, Outcome, Trace};
use super::{lock, Step};

/// What a config did with a trace's calls ([`replay`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    /// Every transition, in order.
    pub changes: Vec<Change>,
    /// The calls of the trace.
    pub calls: u64,
    /// Calls the breaker refused.
    pub refused: u64,
    /// Calls of those the adaptive throttle (`throttle`) refused: its
    /// admission is a deterministic credit, so a trace replayed under the
    /// config that recorded it is throttled as it was.
    pub throttled: u64,
    /// Calls of those a hold refused: the trace's `held` answers (a server's
    /// wait) hold the replayed breaker as they held the live one, for the
    /// wait the trace wrote (and the breaker's own release spread).
    pub held: u64,
    /// Time spent open (refusing every call: open or forced open), summed
    /// over the keys of a keyed group.
    pub time_open: Duration,
    /// When the last call ended: the timeline's length.
    pub end: Duration,
}

/// Runs `trace`'s calls through breakers made from `config` on a
/// [`ManualClock`], and returns what they did: each call is claimed at its
/// `at` and given its outcome after its `latency` (so calls overlap as they
/// did), the calls with a key through a keyed group of the trace's group
/// (each key on a breaker of its own, and the group's own breaker when
/// `config` sets `systemic_share` or `max_open_keys`: its transitions are the
/// timeline's changes without a key); a `held` answer holds its key's breaker
/// for its wait. A call the
/// recording refused has no outcome of its own: where this config admits it,
/// it takes the last known outcome of its key (a success when there is none).
///
/// The breakers are the live ones, so a trace replayed under the config that
/// recorded it reproduces its transitions, at the same times.
///
/// ```
/// use breakerbox::testing::replay;
/// use breakerbox::testing::trace::{Outcome, Sample, Trace};
/// use breakerbox::Config;
/// use std::time::Duration;
///
/// let failure = |ms| Sample {
///     at: Duration::from_millis(ms),
///     outcome: Outcome::Failure,
///     latency: Duration::from_millis(1),
///     key: None,
/// };
/// let trace = Trace {
///     group: "db".into(),
///     samples: (0..5).map(|i| failure(i * 10)).collect(),
///     changes: Vec::new(),
/// };
/// let strict = Config::builder().threshold(2).open(Duration::from_millis(100)).build()?;
/// let timeline = replay(&trace, &strict);
/// assert_eq!(timeline.changes[0].step, "closed -> open (tripped by consecutive_failures)");
/// assert_eq!(timeline.changes[0].at, Duration::from_millis(11));
/// assert_eq!(timeline.refused, 3);
/// assert_eq!(timeline.time_open, Duration::from_millis(29)); // from 11 ms to the last call, at 40 ms
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn replay(trace: &Trace, config: &Config) -> Timeline {
    let clock = ManualClock::new();
    let seen: Arc<Mutex<Vec<Told>>> = Arc::default();
    let mut unkeyed: Option<(Breaker, Subscription)> = None;
    let mut last_known: HashMap<Option<String>, Outcome> = HashMap::new();
    // Calls in flight, by the time their outcome comes (then by order).
    let mut due: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut in_flight: Vec<Option<(OwnedPermit, Outcome)>> = Vec::new();
    let mut timeline = Timeline::default();
    let mut end = 0u64;

    let settle = |until: u64,
                  due: &mut BinaryHeap<Reverse<(u64, usize)>>,
                  in_flight: &mut Vec<Option<(OwnedPermit, Outcome)>>| {
        while let Some(&Reverse((at, n))) = due.peek() {
            if at > until {
                break;
            }
            due.pop();
            clock.set_nanos(at);
            if let Some((permit, outcome)) = in_flight[n].take() {
                match outcome {
                    Outcome::Success | Outcome::Refused => permit.success(),
                    Outcome::Failure => permit.failure(),
                    Outcome::Ignored => permit.ignore(),
                    Outcome::Held(wait) => drop(permit.hold(wait, HoldScope::Key)),
                }
            }
        }
    };

    // The keyed calls' group, on the same clock, and its transitions (the
    // group level's without a key).
    let registry = Registry::with_clock(clock.clone());
    let mut keyed: Option<(KeyedGroup<String>, Subscription)> = None;
    let mut keyed_group = || -> KeyedGroup<String> {
        let (group, _) = keyed.get_or_insert_with(|| {
            let (sink, now) = (seen.clone(), clock.clone());
            let subscription = registry.subscribe(move |event: &Event| {
                let (key, transition) = match event {
                    Event::KeyedTransition(k) => (Some(k.key.to_string()), k.transition),
                    Event::Transition(t) => (None, *t),
                    _ => return,
                };
                lock(&sink).push(Told {
                    at: now.now_nanos(),
                    key,
                    transition,
                });
            });
            let group = registry
                .keyed::<String>(&trace.group, config, REPLAY_MAX_KEYS)
                .expect("a new registry holds no group");
            (group, subscription)
        });
        group.clone()
    };

    let mut samples: Vec<_> = trace.samples.iter().collect();
    samples.sort_by_key(|s| s.at);
    for sample in samples {
        let at = nanos(sample.at);
        settle(at, &mut due, &mut in_flight);
        clock.set_nanos(at);
        timeline.calls += 1;
        let outcome = match sample.outcome {
            Outcome::Refused => *last_known.get(&sample.key).unwrap_or(&Outcome::Success),
            // A wait is the answer of its moment, not what a later call
            // would have met: the last known outcome stays the one before it.
            held @ Outcome::Held(_) => held,
            known => {
                last_known.insert(sample.key.clone(), known);
                known
            }
        };
        let claimed = match &sample.key {
            Some(key) => keyed_group().breaker(key.as_str()).try_acquire_owned(),
            None => {
                let (breaker, _) = unkeyed.get_or_insert_with(|| {
                    let breaker = Breaker::with_clock(&trace.group, *config, clock.clone());
                    let (sink, now) = (seen.clone(), clock.clone());
                    let subscription = breaker.subscribe(move |event: &Event| {
                        if let Event::Transition(t) = event {
                            lock(&sink).push(Told {
                                at: now.now_nanos(),
                                key: None,
                                transition: *t,
                            });
                        }
                    });
                    (breaker, subscription)
                });
                breaker.try_acquire_owned()
            }
        };
        match claimed {
            Err(refused) => {
                timeline.refused += 1;
                match refused.reason() {
                    OpenReason::Throttled => timeline.throttled += 1,
                    OpenReason::Held(_) => timeline.held += 1,
                    _ => {}
                }
                end = end.max(at);
            }
            Ok(permit) => {
                let done = at.saturating_add(nanos(sample.latency));
                end = end.max(done);
                due.push(Reverse((done, in_flight.len())));
                in_flight.push(Some((permit, outcome)));
            }
        }
    }
    settle(u64::MAX, &mut due, &mut in_flight);

    let seen = std::mem::take(&mut *lock(&seen));
    let mut opened: HashMap<Option<String>, u64> = HashMap::new();
    let mut open = 0u64;
    for Told {
        at,
        key,
        transition: t,
    } in seen
    {
        let refusing = |s: State| matches!(s, State::Open | State::ForcedOpen);
        if refusing(t.from) {
            if let Some(since) = opened.remove(&key) {
                open = open.saturating_add(at.saturating_sub(since));
            }
        }
        if refusing(t.to) {
            opened.insert(key.clone(), at);
        }
        timeline.changes.push(Change {
            at: Duration::from_nanos(at),
            step: Step(t).to_string(),
            key,
        });
    }
    for since in opened.into_values() {
        open = open.saturating_add(end.saturating_sub(since));
    }
    timeline.time_open = Duration::from_nanos(open);
    timeline.end = Duration::from_nanos(end);
    timeline
}

/// A transition a replayed breaker told, when, and of which key.
struct Told {
    at: u64,
    key: Option<String>,
    transition: Transition,
}

/// The most keys a replayed keyed group holds: as many as any trace names,
/// so that no key is evicted.
const REPLAY_MAX_KEYS: usize = 1 << 24;

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
