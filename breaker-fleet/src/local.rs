//! The seam between the agent and the local breakers: [`LocalSide`] (apply a
//! fleet decision), [`LocalEvent`] (a local trip or close, however it was
//! learned), and [`RegistrySide`], which does both over a registry with the
//! core's fleet operations and its transition events.

use std::time::Duration;

use breakerbox::events::{Event, HoldStarted, Subscription, Transition, TransitionReason};
use breakerbox::fleet::FleetControl;
use breakerbox::hold::HoldScope;
use breakerbox::{Breaker, Registry, State};

/// A change of a local breaker that the fleet should hear of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalEvent {
    /// The group.
    pub group: String,
    /// The local breaker's generation after the change.
    pub generation: u64,
    /// What happened.
    pub kind: LocalEventKind,
}

/// What a local breaker did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalEventKind {
    /// It opened on its own evidence (its policy tripped, or a probe failed),
    /// for `open_for` from now.
    Tripped {
        /// Time until it lets a probe go.
        open_for: Duration,
    },
    /// A probe closed it (or a person reset it while it was open).
    Closed,
    /// It took a group-scope hold (a server's wait that is the whole
    /// group's, a provider's quota) of `remaining` from now: every instance
    /// should hold too. A hold of one key's, or one the agent applied, is
    /// not told.
    Held {
        /// Time until the hold ends.
        remaining: Duration,
    },
}

impl LocalEvent {
    /// The local event a transition is, if the fleet should hear of it: a
    /// local trip or failed probe (to open), or a close of an open or
    /// half-open breaker by its probes or by a person. The transitions a fleet
    /// agent caused ([`TransitionReason::FleetOpen`], [`TransitionReason::FleetClose`])
    /// are not: publishing them again would echo every fleet change back.
    ///
    /// ```
    /// use breakerbox::{Breaker, Config, events::Event, events::TransitionReason, fleet::FleetControl};
    /// use breaker_fleet::LocalEvent;
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    ///
    /// let breaker = Breaker::new("db", Config::builder().threshold(1).build()?);
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = seen.clone();
    /// let _s = breaker.subscribe(move |e: &Event| {
    ///     if let Event::Transition(t) = e {
    ///         sink.lock().unwrap().push(LocalEvent::of(t));
    ///     }
    /// });
    /// breaker.fleet_open(Duration::from_secs(5)); // the agent's own: not an event
    /// breaker.fleet_close();
    /// breaker.try_acquire()?.failure(); // a local trip: an event
    /// let seen = seen.lock().unwrap();
    /// assert_eq!(seen[..2], [None, None]);
    /// assert!(seen[2].is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of(t: &Transition) -> Option<LocalEvent> {
        let kind = match (t.reason, t.from, t.to) {
            (TransitionReason::FleetOpen | TransitionReason::FleetClose, _, _) => return None,
            (_, _, State::Open) => LocalEventKind::Tripped {
                open_for: t.open_for.unwrap_or_default(),
            },
            (_, State::Open | State::HalfOpen, State::Closed) => LocalEventKind::Closed,
            _ => return None,
        };
        Some(LocalEvent {
            group: t.group.to_owned(),
            generation: t.generation,
            kind,
        })
    }
}

impl LocalEvent {
    /// The local event a hold is, if the fleet should hear of it: a
    /// group-scope hold this instance took (from a server's answer or by
    /// code). A key's hold is one tenant's quota, and a hold the agent applied
    /// ([`HoldStarted::fleet`]) is the fleet's already.
    pub fn of_hold(held: &HoldStarted) -> Option<LocalEvent> {
        if held.scope != HoldScope::Group || held.fleet {
            return None;
        }
        Some(LocalEvent {
            group: held.group.to_owned(),
            generation: 0,
            kind: LocalEventKind::Held {
                remaining: held.retry_after,
            },
        })
    }
}

/// What the agent needs from the local process. The agent calls these from its
/// own thread or task, never from a user's call; they must be quick and must not
/// block on the network.
pub trait LocalSide: Send + Sync + 'static {
    /// Groups this process has breakers for.
    fn groups(&self) -> Vec<String>;

    /// Local probe slots of `group` (its `half_open_probes`), `None` if the
    /// group has no breaker here. The fleet hands its probe lease to one
    /// instance at a time, so at most this many probes run fleet-wide.
    fn probe_slots(&self, group: &str) -> Option<u32>;

    /// The open duration to propose when the fleet itself trips `group` (on
    /// aggregated counts): its configured open duration.
    fn open_for(&self, group: &str) -> Option<Duration>;

    /// Cumulative `(calls, failures)` of `group`, for aggregation.
    fn counts(&self, group: &str) -> Option<(u64, u64)>;

    /// The fleet says: refuse calls of `group` for `remaining` from now, with
    /// a reason that says "fleet". A breaker the user forced by hand is left
    /// alone.
    fn open(&self, group: &str, remaining: Duration);

    /// Keep refusing calls of `group` for `remaining` from now, without
    /// probing alone: the fleet decides who probes (this instance's open,
    /// local or the fleet's, is over later; a half-open one refuses again). A
    /// breaker that closed itself meanwhile is left closed: its close is on
    /// its way to the fleet.
    fn hold(&self, group: &str, remaining: Duration);

    /// This instance holds the fleet's probe lease (or the fleet cannot be
    /// asked): let the local breaker probe now.
    fn allow_probes(&self, group: &str);

    /// The fleet closed `group` (a probe somewhere succeeded): close here too.
    fn close(&self, group: &str);

    /// The fleet took this instance's own close. Close here too only if the
    /// fleet holds the local breaker open (`FleetControl::fleet_release`): one
    /// that has tripped again on its own evidence since stays open, and its
    /// trip is on its way to the fleet.
    fn release(&self, group: &str);

    /// The fleet's newest record is this instance's own trip, open for
    /// `remaining`: a local breaker that a close of an older generation has
    /// closed since (its own close still queued, or another instance's) opens
    /// again, so the instance that saw the failures refuses like the others.
    /// One that is open already is left as it is.
    fn reassert(&self, group: &str, remaining: Duration);

    /// Another instance took a group-scope hold of `group`, `remaining` from
    /// now: hold here too (a later hold in force stays). By default nothing:
    /// a side that shares no holds.
    fn group_hold(&self, group: &str, remaining: Duration) {
        let _ = (group, remaining);
    }
}

/// [`LocalSide`] over a [`Registry`]: fleet decisions are the core's fleet
/// operations ([`Breaker::fleet_open`], [`Breaker::fleet_hold`],
/// [`Breaker::fleet_close`]), and local trips and closes come from the
/// registry's transition events ([`subscribe`](Self::subscribe)) as they
/// happen, on the thread that made them: nothing is polled, nothing is missed
/// between two looks, and the agent's own transitions are told apart by their
/// reason.
///
/// A fleet open refuses with
/// [`OpenReason::Fleet`](breakerbox::OpenReason::Fleet) and the fleet's time
/// left as `retry_after`; once it is over (and the agent has the lease), the
/// breaker goes half-open lazily and admits `half_open_probes` probes, as after
/// a local trip; a probe that fails reopens with the backoff grown from the
/// fleet's open time.
#[derive(Clone)]
pub struct RegistrySide {
    registry: &'static Registry,
}

impl RegistrySide {
    /// The side of `registry` (usually `breakerbox::registry()`).
    pub fn new(registry: &'static Registry) -> Self {
        RegistrySide { registry }
    }

    /// Calls `sink` with every local trip and close of the registry's
    /// breakers ([`LocalEvent::of`]) until the returned [`Subscription`] is
    /// dropped: at once, on the thread that made the transition, after the
    /// breaker's locks are released. `sink` must be quick (a channel send).
    ///
    /// Breakers already open by their own trip when it subscribes (a keyed
    /// group's own breaker among them, not an open the fleet made) are told
    /// first, with the time they have left, and a held one for its open
    /// duration at most, not for the server's wait (a trip made between the
    /// subscription and that look may be told twice; the store's
    /// compare-and-set keeps one).
    pub fn subscribe<F>(&self, sink: F) -> Subscription
    where
        F: Fn(LocalEvent) + Send + Sync + 'static,
    {
        let sink = std::sync::Arc::new(sink);
        let each = sink.clone();
        // Whole groups only: a keyed group's keys are not shared (nor named
        // for this subscriber); a keyed group's own breaker, when it judges
        // as one, tells its transitions as a plain group's.
        let subscription = self.registry.subscribe_unkeyed(move |event: &Event| {
            let local = match event {
                Event::Transition(t) => LocalEvent::of(t),
                Event::Held(held) => LocalEvent::of_hold(held),
                _ => None,
            };
            if let Some(local) = local {
                each(local);
            }
        });
        let judged = self.registry.keyed_names().into_iter();
        let judged = judged.filter_map(|name| self.registry.keyed_group_breaker(name));
        for breaker in self.registry.breakers().into_iter().chain(judged) {
            // Open by its own trip (a keyed group's own breaker refuses as
            // the group's either way), not by the fleet.
            if breaker.state() != State::Open || breaker.is_fleet_open() {
                continue;
            }
            let Some(refused) = breaker.refusal() else {
                continue;
            };
            let metrics = breaker.metrics();
            let mut open_for = refused.retry_after().unwrap_or_default();
            if breaker.held().is_some() {
                // A hold refuses for the longer of the server's wait and the
                // open: the trip is published for its open at most, never
                // for the server's wait.
                open_for = open_for.min(metrics.open_for.unwrap_or_default());
            }
            sink(LocalEvent {
                group: breaker.group().to_owned(),
                generation: metrics.generation,
                kind: LocalEventKind::Tripped { open_for },
            });
        }
        subscription
    }

    /// The breaker that stands for `group`: the registry's breaker of that
    /// name, or the own breaker of a keyed group that judges as one (its
    /// trips and closes are the group's, as a plain group's are).
    fn breaker(&self, group: &str) -> Option<Breaker> {
        self.registry
            .get(group)
            .or_else(|| self.registry.keyed_group_breaker(group))
    }

    fn with(&self, group: &str, act: impl FnOnce(&Breaker)) {
        if let Some(breaker) = self.breaker(group) {
            act(&breaker);
        }
    }
}

impl LocalSide for RegistrySide {
    fn groups(&self) -> Vec<String> {
        let judged = self
            .registry
            .keyed_names()
            .into_iter()
            .filter(|name| self.registry.keyed_group_breaker(name).is_some());
        self.registry
            .groups()
            .into_iter()
            .chain(judged)
            .map(str::to_owned)
            .collect()
    }

    fn probe_slots(&self, group: &str) -> Option<u32> {
        self.breaker(group).map(|b| b.config().half_open_probes())
    }

    fn open_for(&self, group: &str) -> Option<Duration> {
        self.breaker(group).map(|b| b.config().open())
    }

    fn counts(&self, group: &str) -> Option<(u64, u64)> {
        self.breaker(group).map(|b| {
            let m = b.metrics();
            (m.successes.saturating_add(m.failures), m.failures)
        })
    }

    fn open(&self, group: &str, remaining: Duration) {
        self.with(group, |breaker| {
            breaker.fleet_open(remaining);
        });
    }

    fn hold(&self, group: &str, remaining: Duration) {
        self.with(group, |breaker| {
            // Push the end of the open; too late for that (it is within a
            // millisecond, or past) or probing without the lease (it ran out,
            // or the end passed before the agent decided): refuse again, and a
            // probe in flight is stale. A breaker whose probe closed it is left
            // closed, atomically (its close is on its way to the fleet).
            if !breaker.fleet_hold(remaining) {
                breaker.fleet_reopen(remaining);
            }
        });
    }

    fn allow_probes(&self, group: &str) {
        self.with(group, |breaker| {
            breaker.fleet_hold(Duration::ZERO);
        });
    }

    fn close(&self, group: &str) {
        self.with(group, |breaker| {
            breaker.fleet_close();
        });
    }

    fn release(&self, group: &str) {
        self.with(group, |breaker| {
            breaker.fleet_release();
        });
    }

    fn reassert(&self, group: &str, remaining: Duration) {
        self.with(group, |breaker| {
            if breaker.state() == State::Closed {
                breaker.fleet_open(remaining);
            }
        });
    }

    fn group_hold(&self, group: &str, remaining: Duration) {
        self.with(group, |breaker| {
            breaker.fleet_group_hold(remaining);
        });
    }
}

impl std::fmt::Debug for RegistrySide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistrySide")
            .field("groups", &self.registry.groups())
            .finish()
    }
}
