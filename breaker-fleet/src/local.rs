//! The seam between the agent and the local breakers: [`LocalSide`] (apply a
//! fleet decision), [`LocalEvent`] (a local trip or close, however it was
//! learned), and [`RegistrySide`], which does both with today's public API.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use breaker::{Breaker, Registry, State};

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
    /// A probe closed it.
    Closed,
}

/// What the agent needs from the local process. The agent calls these from its
/// own thread or task, never from a user's call; they must be quick and must not
/// block on the network.
pub trait LocalSide: Send + Sync + 'static {
    /// Groups this process has breakers for.
    fn groups(&self) -> Vec<String>;

    /// Fleet probe slots of `group` (its `half_open_probes`), `None` if the
    /// group has no breaker here.
    fn probe_slots(&self, group: &str) -> Option<u32>;

    /// The open duration to propose when the fleet itself trips `group` (on
    /// aggregated counts): its configured open duration.
    fn open_duration(&self, group: &str) -> Option<Duration>;

    /// Cumulative `(calls, failures)` of `group`, for aggregation.
    fn counts(&self, group: &str) -> Option<(u64, u64)>;

    /// The fleet says: refuse calls of `group` for `remaining` from now (reason:
    /// fleet). Idempotent. A breaker the user forced by hand is left alone.
    fn open(&self, group: &str, remaining: Duration);

    /// The fleet's open time is over but another instance holds the probe
    /// lease: keep refusing for `remaining` (or until the close or the next
    /// trip arrives). A breaker that closed itself meanwhile is left closed: its
    /// close is on its way to the fleet.
    fn hold(&self, group: &str, remaining: Duration);

    /// The fleet's open time is over and this instance holds a probe lease:
    /// let the local breaker probe.
    fn allow_probes(&self, group: &str);

    /// The fleet closed `group` (a probe somewhere succeeded): close here too.
    fn close(&self, group: &str);
}

/// [`LocalSide`] over a [`Registry`] with today's public API, and the poller that
/// turns the registry's pure metrics into [`LocalEvent`]s.
///
/// Detection reads `Breaker::metrics()` (generation, state, retry_after,
/// success and failure counts) of every breaker on each [`poll`](Self::poll):
/// pure, lock-free per breaker, nothing on the call path.
///
/// **Stand-in, approximate** until the core offers an exact way (see the crate
/// docs, "What the core should add"):
/// - [`open`](LocalSide::open) is `force_open()`: refusals say `ForcedOpen`, not
///   "fleet", carry no `retry_after`, and the breaker does not go half-open by
///   itself: the agent ends the fleet open when it gets a probe lease.
/// - [`allow_probes`](LocalSide::allow_probes) is `reset()`: the breaker is
///   *closed*, not half-open, so every call of this instance is admitted while it
///   holds the lease (not only `half_open_probes`); the first outcomes decide:
///   `successes_to_close` successes are a close, one failure is a failed probe
///   (the poller forces it open again and reports a trip with the grown open time).
/// - [`close`](LocalSide::close) is `reset()`, which also resets the local backoff.
#[derive(Clone)]
pub struct RegistrySide {
    registry: &'static Registry,
    seen: Arc<Mutex<HashMap<&'static str, Seen>>>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    generation: u64,
    state: Option<State>,
    /// Set while the breaker is in a state the agent put it in.
    ours: Option<Ours>,
    /// The last open duration the fleet asked for, to grow on a failed probe.
    last_open: Duration,
}

#[derive(Clone, Copy, Debug)]
enum Ours {
    Held {
        generation: u64,
    },
    Probing {
        generation: u64,
        successes: u64,
        failures: u64,
    },
}

impl RegistrySide {
    /// The side of `registry` (usually `breaker::registry()`).
    pub fn new(registry: &'static Registry) -> Self {
        RegistrySide {
            registry,
            seen: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<&'static str, Seen>> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads every breaker once and appends what changed since the last poll.
    /// Changes the agent made itself are not reported back.
    pub fn poll(&self, out: &mut Vec<LocalEvent>) {
        let mut seen = self.lock();
        for breaker in self.registry.breakers() {
            let m = breaker.metrics();
            let event = |kind| LocalEvent {
                group: breaker.group().to_owned(),
                generation: m.generation,
                kind,
            };
            let entry = match seen.entry(breaker.group()) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    // First sight: a breaker already open tripped before we looked.
                    if m.state == State::Open {
                        let open_for = m.retry_after.unwrap_or_default();
                        out.push(event(LocalEventKind::Tripped { open_for }));
                    }
                    e.insert(Seen {
                        generation: m.generation,
                        state: Some(m.state),
                        ..Seen::default()
                    })
                }
            };
            match entry.ours {
                Some(Ours::Held { generation }) if generation == m.generation => continue,
                Some(Ours::Probing {
                    generation,
                    successes,
                    failures,
                }) if generation == m.generation => {
                    let config = breaker.config();
                    if m.failures > failures {
                        let open_for = grown(entry.last_open, config);
                        entry.last_open = open_for;
                        hold(&breaker, entry);
                        out.push(event(LocalEventKind::Tripped { open_for }));
                    } else if m.successes.saturating_sub(successes)
                        >= u64::from(config.successes_to_close())
                    {
                        entry.ours = None;
                        entry.generation = m.generation;
                        entry.state = Some(m.state);
                        out.push(event(LocalEventKind::Closed));
                    }
                    continue;
                }
                Some(_) => entry.ours = None, // moved on without us (a user reset)
                None => {}
            }
            if m.generation != entry.generation {
                let before = entry.state;
                entry.generation = m.generation;
                entry.state = Some(m.state);
                match m.state {
                    State::Open => {
                        let open_for = m.retry_after.unwrap_or_default();
                        out.push(event(LocalEventKind::Tripped { open_for }));
                    }
                    State::Closed if matches!(before, Some(State::Open | State::HalfOpen)) => {
                        out.push(event(LocalEventKind::Closed));
                    }
                    _ => {}
                }
            }
        }
    }

    fn with(&self, group: &str, act: impl FnOnce(&Breaker, &mut Seen)) {
        let Some(breaker) = self.registry.get(group) else {
            return;
        };
        let mut seen = self.lock();
        let m = breaker.metrics();
        let entry = seen.entry(breaker.group()).or_insert_with(|| Seen {
            generation: m.generation,
            state: Some(m.state),
            ..Seen::default()
        });
        let ours = matches!(entry.ours, Some(Ours::Held { generation } | Ours::Probing { generation, .. }) if generation == m.generation);
        // The user's hand wins over the fleet.
        if !ours && matches!(m.state, State::ForcedOpen | State::ForcedClosed) {
            return;
        }
        act(&breaker, entry);
    }
}

fn hold(breaker: &Breaker, seen: &mut Seen) {
    breaker.force_open();
    let m = breaker.metrics();
    seen.generation = m.generation;
    seen.state = Some(m.state);
    seen.ours = Some(Ours::Held {
        generation: m.generation,
    });
}

fn release(breaker: &Breaker, seen: &mut Seen) {
    breaker.reset();
    let m = breaker.metrics();
    seen.generation = m.generation;
    seen.state = Some(m.state);
    seen.ours = None;
}

fn grown(last: Duration, config: &breaker::Config) -> Duration {
    let base = last.max(config.open_duration());
    base.mul_f64(config.backoff().max(1.0))
        .min(config.max_open_duration().max(config.open_duration()))
}

impl LocalSide for RegistrySide {
    fn groups(&self) -> Vec<String> {
        self.registry
            .groups()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    fn probe_slots(&self, group: &str) -> Option<u32> {
        self.registry
            .get(group)
            .map(|b| b.config().half_open_probes())
    }

    fn open_duration(&self, group: &str) -> Option<Duration> {
        self.registry.get(group).map(|b| b.config().open_duration())
    }

    fn counts(&self, group: &str) -> Option<(u64, u64)> {
        self.registry.get(group).map(|b| {
            let m = b.metrics();
            (m.successes.saturating_add(m.failures), m.failures)
        })
    }

    fn open(&self, group: &str, remaining: Duration) {
        self.with(group, |breaker, seen| {
            seen.last_open = remaining;
            if matches!(seen.ours, Some(Ours::Held { .. })) {
                return;
            }
            // A local change the poller has not reported yet (a probe that just
            // closed it) is evidence the fleet has not heard: report it first.
            if seen.ours.is_none() && breaker.metrics().generation != seen.generation {
                return;
            }
            hold(breaker, seen);
        });
    }

    fn hold(&self, group: &str, _remaining: Duration) {
        self.with(group, |breaker, seen| match seen.ours {
            Some(Ours::Held { .. }) => {}
            Some(Ours::Probing { .. }) => hold(breaker, seen),
            None => {
                if matches!(breaker.state(), State::Open | State::HalfOpen) {
                    hold(breaker, seen);
                }
            }
        });
    }

    fn allow_probes(&self, group: &str) {
        self.with(group, |breaker, seen| {
            // Not held by us (our own trip): the breaker goes half-open by itself.
            if let Some(Ours::Held { .. }) = seen.ours {
                breaker.reset();
                let m = breaker.metrics();
                seen.generation = m.generation;
                seen.state = Some(m.state);
                seen.ours = Some(Ours::Probing {
                    generation: m.generation,
                    successes: m.successes,
                    failures: m.failures,
                });
            }
        });
    }

    fn close(&self, group: &str) {
        self.with(group, |breaker, seen| {
            let state = breaker.state();
            if seen.ours.is_some() || matches!(state, State::Open | State::HalfOpen) {
                release(breaker, seen);
            }
        });
    }
}

impl std::fmt::Debug for RegistrySide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistrySide")
            .field("groups", &self.registry.groups())
            .finish_non_exhaustive()
    }
}
