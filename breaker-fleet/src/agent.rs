//! The fleet agent: turns local trips and closes into compare-and-sets on the
//! store, and store records into local opens and closes. It never touches a
//! call; it runs on its own task, and when the store fails it leaves the local
//! breakers to decide alone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::clock::Clock;
use tokio::sync::mpsc;

use crate::local::{LocalEvent, LocalEventKind, LocalSide};
use crate::store::{Cas, FleetState, FleetStore, GroupRecord, Notice, StoreError, Trip};

/// How an agent behaves. `AgentConfig::new("instance-id")` gives the defaults.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AgentConfig {
    /// This instance's name in the store (unique in the fleet).
    pub instance: String,
    /// How often the agent reads every group's record (the fallback for lost
    /// notices), retries what failed, and rejoins. Default 100 ms: with the
    /// subscription gone, propagation lag is bounded by this plus one round trip.
    pub poll_every: Duration,
    /// How long past the end of a fleet open every instance keeps refusing
    /// while the agent asks the store who probes. Default 200 ms. The agent
    /// asks at the end itself and, on loopback, knows within a millisecond;
    /// the winner then probes at once and the others are held until the
    /// lease runs out. Only an agent slower than this (a store past its
    /// timeout, a starved thread) lets its breaker probe without the lease,
    /// as it would with the store gone.
    pub lease_wait: Duration,
    /// Whether to subscribe to notices (default `true`; `false` measures the
    /// polling fallback alone).
    pub pubsub: bool,
    /// How long a fleet probe lease lasts: an instance that won a slot and did
    /// not report within it loses the slot to another. Default 10 s.
    pub probe_lease: Duration,
    /// Distinct instances that must trip before the fleet opens. Default 1 (no
    /// quorum). See the crate docs for the trade-off.
    pub quorum: u32,
    /// Fleet-wide failure-rate tripping on aggregated counts; off by default.
    pub aggregation: Option<Aggregation>,
}

impl AgentConfig {
    /// The defaults, for the instance named `instance`.
    pub fn new(instance: impl Into<String>) -> Self {
        AgentConfig {
            instance: instance.into(),
            poll_every: Duration::from_millis(100),
            lease_wait: Duration::from_millis(200),
            pubsub: true,
            probe_lease: Duration::from_secs(10),
            quorum: 1,
            aggregation: None,
        }
    }
}

/// Aggregation of outcome counts across the fleet: every `flush_every` each
/// instance adds its new calls and failures to the group's window bucket; when
/// the current and previous buckets together hold at least `min_calls` calls
/// and a failure share of at least `failure_rate`, the fleet trips, even if no
/// instance saw enough calls to trip alone.
#[derive(Clone, Copy, Debug)]
pub struct Aggregation {
    /// Width of one window bucket (the buckets expire after two widths).
    pub window: Duration,
    /// How often counts are flushed.
    pub flush_every: Duration,
    /// Calls the fleet must have seen before the rate is judged.
    pub min_calls: u64,
    /// Failure share that trips, in `(0, 1]`.
    pub failure_rate: f64,
}

/// What the agent knows of itself: its errors against the store, how stale its
/// view is, and what it did. Read with [`FleetAgent::stats`](crate::FleetAgent::stats) or [`Agent::stats`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentStats {
    /// Whether the last store call succeeded.
    pub connected: bool,
    /// Whether a notice subscription is live.
    pub subscribed: bool,
    /// Store calls that failed or timed out.
    pub store_errors: u64,
    /// The last failure.
    pub last_error: Option<String>,
    /// Time since the last successful store call (the view's staleness);
    /// `None` before the first one.
    pub stale_for: Option<Duration>,
    /// Trips this instance wrote to the store.
    pub trips_published: u64,
    /// Closes this instance wrote.
    pub closes_published: u64,
    /// Trips recorded as quorum votes only.
    pub votes: u64,
    /// Fleet opens applied to a local breaker.
    pub opens_applied: u64,
    /// Fleet closes applied to a local breaker.
    pub closes_applied: u64,
    /// Records ignored because their epoch was not newer.
    pub stale_ignored: u64,
    /// Times the agent came back to a working store after failures.
    pub rejoins: u64,
    /// Group-scope holds of this instance's shared with the fleet.
    pub holds_published: u64,
    /// Other instances' group-scope holds applied to a local breaker.
    pub holds_applied: u64,
}

#[derive(Default)]
pub(crate) struct SharedStats {
    connected: AtomicBool,
    subscribed: AtomicBool,
    store_errors: AtomicU64,
    last_ok: AtomicU64, // clock nanos + 1; 0 = never
    trips: AtomicU64,
    closes: AtomicU64,
    votes: AtomicU64,
    opens_applied: AtomicU64,
    closes_applied: AtomicU64,
    stale: AtomicU64,
    rejoins: AtomicU64,
    holds_published: AtomicU64,
    holds_applied: AtomicU64,
    last_error: Mutex<Option<String>>,
}

impl SharedStats {
    pub(crate) fn snapshot(&self, now: u64) -> AgentStats {
        let last_ok = self.last_ok.load(Relaxed);
        AgentStats {
            connected: self.connected.load(Relaxed),
            subscribed: self.subscribed.load(Relaxed),
            store_errors: self.store_errors.load(Relaxed),
            last_error: self
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            stale_for: (last_ok > 0).then(|| Duration::from_nanos(now.saturating_sub(last_ok - 1))),
            trips_published: self.trips.load(Relaxed),
            closes_published: self.closes.load(Relaxed),
            votes: self.votes.load(Relaxed),
            opens_applied: self.opens_applied.load(Relaxed),
            closes_applied: self.closes_applied.load(Relaxed),
            stale_ignored: self.stale.load(Relaxed),
            rejoins: self.rejoins.load(Relaxed),
            holds_published: self.holds_published.load(Relaxed),
            holds_applied: self.holds_applied.load(Relaxed),
        }
    }

    pub(crate) fn set_subscribed(&self, on: bool) {
        self.subscribed.store(on, Relaxed);
    }
}

/// What this instance believes of one group.
#[derive(Clone, Debug)]
struct View {
    record: GroupRecord,
    /// Local clock nanos when the fleet open ends.
    open_until: u64,
    /// Local clock nanos until which this instance holds a probe lease, or
    /// waits before asking for one.
    lease_until: Option<u64>,
    /// Whether that lease was won (not only waited for).
    lease_won: bool,
    /// Whether the local breaker has been told of this record: `false` for
    /// another instance's open that came when this process had no breaker of
    /// the group yet; it is applied to the breaker once one exists
    /// ([`Agent::apply_held`]).
    applied: bool,
}

/// The agent's logic, independent of how events arrive: feed it
/// [`LocalEvent`]s, [`Notice`]s and [`tick`](Self::tick)s. [`Agent::run`] does
/// so from channels and timers; tests drive it by hand on a
/// [`ManualClock`](breakerbox::ManualClock) with a [`MemoryStore`](crate::MemoryStore).
pub struct Agent<S, L> {
    store: S,
    local: L,
    clock: Arc<dyn Clock>,
    config: AgentConfig,
    views: HashMap<String, View>,
    /// Events the store did not take, with the local time they were queued.
    pending: HashMap<String, (LocalEvent, u64)>,
    flushed: HashMap<String, (u64, u64)>,
    next_flush: u64,
    /// The end (store ms) of each group's newest hold this instance knows,
    /// taken here or applied from the fleet.
    holds: HashMap<String, u64>,
    stats: Arc<SharedStats>,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl<S: FleetStore, L: LocalSide> Agent<S, L> {
    /// An agent between `store` and `local`, reading time from `clock`.
    pub fn new(store: S, local: L, clock: impl Clock, config: AgentConfig) -> Self {
        Agent {
            store,
            local,
            clock: Arc::new(clock),
            config,
            views: HashMap::new(),
            pending: HashMap::new(),
            flushed: HashMap::new(),
            next_flush: 0,
            holds: HashMap::new(),
            stats: Arc::default(),
        }
    }

    /// What the agent knows of itself now.
    pub fn stats(&self) -> AgentStats {
        self.stats.snapshot(self.clock.now_nanos())
    }

    pub(crate) fn shared_stats(&self) -> Arc<SharedStats> {
        Arc::clone(&self.stats)
    }

    /// The fleet record this instance holds for `group`.
    pub fn view(&self, group: &str) -> Option<&GroupRecord> {
        self.views.get(group).map(|v| &v.record)
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    fn now(&self) -> u64 {
        self.clock.now_nanos()
    }

    /// Books the result of one store call: errors and staleness.
    fn note<T>(&self, result: Result<T, StoreError>) -> Option<T> {
        match result {
            Ok(v) => {
                if !self.stats.connected.swap(true, Relaxed)
                    && self.stats.store_errors.load(Relaxed) > 0
                {
                    self.stats.rejoins.fetch_add(1, Relaxed);
                    log::info!("fleet store is back; rejoining");
                }
                self.stats
                    .last_ok
                    .store(self.now().saturating_add(1), Relaxed);
                Some(v)
            }
            Err(e) => {
                if self.stats.connected.swap(false, Relaxed) {
                    log::warn!("{e}; local breakers decide alone until it returns");
                }
                self.stats.store_errors.fetch_add(1, Relaxed);
                *self
                    .stats
                    .last_error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = Some(e.to_string());
                None
            }
        }
    }

    fn view_or_unknown(&self, group: &str) -> GroupRecord {
        self.views
            .get(group)
            .map(|v| v.record.clone())
            .unwrap_or_else(|| GroupRecord::unknown("", 0))
    }

    /// A local breaker tripped or closed: propose it to the fleet. If the store
    /// does not answer, the event is kept and retried on the next tick.
    ///
    /// A group-scope hold is shared as it is: the store keeps the later end,
    /// and a store that does not answer loses it (the local breaker holds
    /// anyway; a hold is the server's word, and the next answer repeats it).
    pub async fn handle_local(&mut self, event: LocalEvent) {
        if let LocalEventKind::Held { remaining } = event.kind {
            return self.share_hold(&event.group, remaining).await;
        }
        let now = self.now();
        let view = self.view_or_unknown(&event.group);
        let (outcome, is_trip) = match event.kind {
            LocalEventKind::Tripped { open_for } => {
                let fleet_open = view.state == FleetState::Open
                    && self
                        .views
                        .get(&event.group)
                        .is_some_and(|v| now < v.open_until);
                if fleet_open {
                    return; // already open fleet-wide; our breaker is open too
                }
                let trip = Trip {
                    group: &event.group,
                    expected: view.epoch,
                    run: &view.run,
                    open_for,
                    origin: &self.config.instance,
                    quorum: self.config.quorum.max(1),
                };
                (self.store.trip(trip).await, true)
            }
            LocalEventKind::Held { .. } => return,
            LocalEventKind::Closed => {
                if view.state != FleetState::Open {
                    // Our trip may have reached the store although its answer
                    // did not (a timeout): keep the close until a read tells.
                    let unconfirmed = self
                        .pending
                        .get(&event.group)
                        .is_some_and(|(e, _)| matches!(e.kind, LocalEventKind::Tripped { .. }));
                    if unconfirmed {
                        self.pending.insert(event.group.clone(), (event, now));
                    }
                    return;
                }
                let cas = self
                    .store
                    .close(&event.group, &view.run, view.epoch, &self.config.instance)
                    .await;
                (cas, false)
            }
        };
        let Some(cas) = self.note(outcome) else {
            let queued = self.now();
            // The newest event of a group replaces an older one.
            self.pending.insert(event.group.clone(), (event, queued));
            return;
        };
        self.pending.remove(&event.group);
        match cas {
            Cas::Applied(record) => {
                let counter = if is_trip {
                    &self.stats.trips
                } else {
                    &self.stats.closes
                };
                counter.fetch_add(1, Relaxed);
                self.adopt(&event.group, record);
            }
            Cas::Lost(record) => self.adopt(&event.group, record),
            Cas::Voted { record, .. } => {
                self.stats.votes.fetch_add(1, Relaxed);
                self.adopt(&event.group, record);
            }
        }
    }

    /// A notice from the subscription.
    pub fn handle_notice(&mut self, notice: Notice) {
        self.adopt(&notice.group, notice.record);
    }

    /// Writes this instance's group-scope hold of `group` to the store. The
    /// store keeps the later of its hold and this one: when that is another
    /// instance's, the local breaker takes it as a notice of it would.
    async fn share_hold(&mut self, group: &str, remaining: Duration) {
        let origin = self.config.instance.clone();
        if let Some(record) = self.note(self.store.hold(group, remaining, &origin).await) {
            if record.hold_origin == origin {
                self.stats.holds_published.fetch_add(1, Relaxed);
                let known = self.holds.entry(group.to_owned()).or_default();
                *known = (*known).max(record.hold_until_ms);
            } else {
                self.adopt_hold(group, &record);
            }
        }
    }

    /// Another instance's group-scope hold in `record`, newer than any this
    /// instance knows, held by the local breaker for the time it has left.
    /// Whatever the record's epoch: a hold is no trip.
    fn adopt_hold(&mut self, group: &str, record: &GroupRecord) {
        let remaining = record.hold_remaining();
        let known = self.holds.get(group).copied().unwrap_or(0);
        if remaining.is_zero() || record.hold_until_ms <= known {
            return;
        }
        if record.hold_origin != self.config.instance {
            if self.local.probe_slots(group).is_none() {
                return; // no breaker of the group here yet: a later read holds it
            }
            self.local.group_hold(group, remaining);
            self.stats.holds_applied.fetch_add(1, Relaxed);
        }
        self.holds.insert(group.to_owned(), record.hold_until_ms);
    }

    /// Takes `record` if it is newer than what this instance holds, and applies
    /// it to the local breaker.
    fn adopt(&mut self, group: &str, record: GroupRecord) {
        self.adopt_hold(group, &record);
        let now = self.now();
        let remaining = nanos(record.remaining());
        let open_until = now.saturating_add(remaining);
        let known = self.views.get(group).map(|v| v.record.clone());
        let new_run = known.as_ref().is_none_or(|k| k.run != record.run);
        if let Some(k) = &known {
            if !new_run && record.epoch <= k.epoch {
                if record.epoch < k.epoch {
                    self.stats.stale.fetch_add(1, Relaxed);
                } else {
                    self.apply_held(group);
                }
                return;
            }
        }
        if new_run && record.epoch == 0 {
            self.carry_over(group, now);
        }
        let mine = record.origin == self.config.instance;
        let state = record.state;
        let epoch = record.epoch;
        self.views.insert(
            group.to_owned(),
            View {
                record,
                open_until,
                lease_until: None,
                lease_won: false,
                applied: true,
            },
        );
        let held = Duration::from_nanos(remaining).saturating_add(self.config.lease_wait);
        match state {
            FleetState::Open if !mine && remaining > 0 => {
                if self.local.probe_slots(group).is_some() {
                    self.apply_open(group, remaining);
                } else if let Some(view) = self.views.get_mut(group) {
                    // No breaker of the group here yet: held for the one made later.
                    view.applied = false;
                }
            }
            // Our own trip: our breaker opened itself for about as long; it
            // too waits for the lease. A close handled since (our own, still
            // queued when it tripped again, or another instance's) may have
            // closed it: then it opens again.
            FleetState::Open if remaining > 0 => {
                self.local.reassert(group, Duration::from_nanos(remaining));
                self.local.hold(group, held);
            }
            FleetState::Open => {}
            // A store that lost its data (new run, epoch 0) says nothing about
            // the dependency: local breakers keep their own state.
            FleetState::Closed if new_run && epoch == 0 => {}
            FleetState::Closed if !mine => {
                self.local.close(group);
                self.stats.closes_applied.fetch_add(1, Relaxed);
            }
            // Our own close: our breaker closed itself, unless the agent held
            // it open meanwhile (a lost lease race); then release it too. One
            // that tripped again since is not closed: that trip comes next.
            FleetState::Closed => self.local.release(group),
        }
    }

    /// Another instance's fleet open, `remaining` from now, applied to the
    /// local breaker: it refuses, and does not probe on its own when the time
    /// is over (the fleet's probe lease decides, see `probes`).
    fn apply_open(&mut self, group: &str, remaining: u64) {
        let held = Duration::from_nanos(remaining).saturating_add(self.config.lease_wait);
        self.local.open(group, Duration::from_nanos(remaining));
        self.local.hold(group, held);
        self.stats.opens_applied.fetch_add(1, Relaxed);
    }

    /// A fleet open this instance holds but could not apply, because the
    /// process had no breaker of `group` when it came, is applied to the
    /// breaker made since, for the time the open has left. Called on every
    /// tick and on every later read of the same record, so a breaker made
    /// after the fleet tripped refuses from the agent's next look (at most
    /// `poll_every` after it was made), not from the fleet's next trip.
    fn apply_held(&mut self, group: &str) {
        let now = self.now();
        let Some(view) = self.views.get(group) else {
            return;
        };
        let remaining = view.open_until.saturating_sub(now);
        if view.applied || view.record.state != FleetState::Open {
            return;
        }
        if remaining == 0 {
            // Over before a breaker was made: the fleet's lease decides what
            // comes next; nothing is left to apply.
            if let Some(view) = self.views.get_mut(group) {
                view.applied = true;
            }
            return;
        }
        if self.local.probe_slots(group).is_none() {
            return; // still no breaker here
        }
        if let Some(view) = self.views.get_mut(group) {
            view.applied = true;
        }
        self.apply_open(group, remaining);
    }

    /// The store lost its data (a new run, nothing written yet) while this
    /// instance held `group` open: republish the open for the time it still
    /// has (every instance tries; the compare-and-set keeps one), or, if its
    /// time is over, let the local breaker probe alone.
    fn carry_over(&mut self, group: &str, now: u64) {
        let Some(old) = self.views.get(group) else {
            return;
        };
        if old.record.state != FleetState::Open || old.record.run.is_empty() {
            return;
        }
        let left = old.open_until.saturating_sub(now);
        if left > 0 {
            self.pending.insert(
                group.to_owned(),
                (
                    LocalEvent {
                        group: group.to_owned(),
                        generation: 0,
                        kind: LocalEventKind::Tripped {
                            open_for: Duration::from_nanos(left),
                        },
                    },
                    now,
                ),
            );
        } else {
            self.local.allow_probes(group);
        }
    }

    /// The periodic work: read every group (the fallback for lost notices, and
    /// rejoining), retry what failed, hand out fleet probes whose open time is
    /// over, flush counts.
    pub async fn tick(&mut self) {
        let held: Vec<String> = self
            .views
            .iter()
            .filter(|(_, v)| !v.applied)
            .map(|(g, _)| g.clone())
            .collect();
        for group in held {
            self.apply_held(&group);
        }
        let mut groups = self.local.groups();
        for g in self.views.keys() {
            if !groups.contains(g) {
                groups.push(g.clone());
            }
        }
        let mut reachable = true;
        if !groups.is_empty() {
            match self.note(self.store.read(&groups).await) {
                Some(records) => {
                    for (group, record) in groups.iter().zip(records) {
                        self.adopt(group, record);
                    }
                }
                None => reachable = false,
            }
        }

        // What the store missed, now that it answers: a trip for the open time
        // it still has (a trip whose time is over is history), a close as is.
        if reachable {
            let now = self.now();
            let retry: Vec<_> = self.pending.drain().map(|(_, e)| e).collect();
            for (mut event, queued) in retry {
                if let LocalEventKind::Tripped { open_for } = &mut event.kind {
                    let elapsed = Duration::from_nanos(now.saturating_sub(queued));
                    match open_for.checked_sub(elapsed) {
                        Some(left) if !left.is_zero() => *open_for = left,
                        _ => continue,
                    }
                }
                self.handle_local(event).await;
            }
        }

        self.probes().await;
        self.flush().await;
    }

    /// Fleet half-open: once an open episode's time is over, instances race for
    /// the `half_open_probes` lease slots; the winners let their breaker probe,
    /// the others keep refusing until the close (or the next trip) arrives or
    /// the lease runs out.
    async fn probes(&mut self) {
        let now = self.now();
        let due: Vec<(String, u64)> = self
            .views
            .iter()
            .filter(|(_, v)| {
                v.record.state == FleetState::Open
                    && now >= v.open_until
                    && v.lease_until.is_none_or(|until| now >= until)
            })
            .map(|(g, v)| (g.clone(), v.record.epoch))
            .collect();
        for (group, epoch) in due {
            let lease = self.config.probe_lease;
            // Until the lease is known, look again at the next poll, not sooner.
            let retry = now.saturating_add(nanos(self.config.poll_every));
            let Some(v) = self.views.get_mut(&group) else {
                continue;
            };
            v.lease_until = Some(retry);
            let wait = self.config.lease_wait;
            if std::mem::take(&mut v.lease_won) {
                // Our lease ran out without a verdict (no traffic here, or a
                // hung probe): refuse again and let another instance have it.
                self.local
                    .hold(&group, self.config.poll_every.saturating_add(wait));
                continue;
            }
            if self.local.probe_slots(&group).is_none() {
                continue; // no breaker here: nothing to probe with
            }
            // One lease: one instance probes at a time, with its own
            // `half_open_probes` slots.
            let result = self
                .store
                .acquire_probe(&group, epoch, 1, lease, &self.config.instance)
                .await;
            let won = match self.note(result) {
                Some(won) => won,
                // Fail-local: without the store, the local breaker probes alone.
                None => {
                    self.local.allow_probes(&group);
                    continue;
                }
            };
            let until = now.saturating_add(nanos(lease));
            if let Some(v) = self.views.get_mut(&group) {
                v.lease_until = Some(until);
                v.lease_won = won;
            }
            if won {
                self.local.allow_probes(&group);
            } else {
                // Until the lease has run out and we asked again.
                self.local.hold(&group, lease.saturating_add(wait));
            }
        }
    }

    async fn flush(&mut self) {
        let Some(agg) = self.config.aggregation else {
            return;
        };
        let now = self.now();
        if now < self.next_flush {
            return;
        }
        self.next_flush = now.saturating_add(nanos(agg.flush_every));
        for group in self.local.groups() {
            let Some((calls, failures)) = self.local.counts(&group) else {
                continue;
            };
            let (c0, f0) = *self.flushed.get(&group).unwrap_or(&(0, 0));
            let (dc, df) = (calls.saturating_sub(c0), failures.saturating_sub(f0));
            let result = self.store.add_counts(&group, agg.window, dc, df).await;
            let Some((total, failed)) = self.note(result) else {
                continue; // counts stay unflushed; the next flush carries them
            };
            self.flushed.insert(group.clone(), (calls, failures));
            let view = self.view_or_unknown(&group);
            let judged =
                total >= agg.min_calls.max(1) && failed as f64 >= agg.failure_rate * total as f64;
            if judged && view.state == FleetState::Closed {
                let open_for = self.local.open_for(&group).unwrap_or_default();
                let trip = Trip {
                    group: &group,
                    expected: view.epoch,
                    run: &view.run,
                    open_for,
                    origin: &self.config.instance,
                    quorum: 1,
                };
                let result = self.store.trip(trip).await;
                if let Some(cas) = self.note(result) {
                    let record = match cas {
                        Cas::Applied(r) => {
                            self.stats.trips.fetch_add(1, Relaxed);
                            // The fleet tripped, not our breaker: apply it here too.
                            self.local.open(&group, r.remaining());
                            self.stats.opens_applied.fetch_add(1, Relaxed);
                            r
                        }
                        Cas::Lost(r) | Cas::Voted { record: r, .. } => r,
                    };
                    self.adopt(&group, record);
                }
            }
        }
    }

    /// Local clock nanos of the next moment a fleet open ends or a probe
    /// lease runs out (for the timer): the lease is asked for then, not a
    /// poll later, while the instances wait at most `lease_wait` for it.
    fn next_deadline(&self) -> Option<u64> {
        self.views
            .values()
            .filter(|v| v.record.state == FleetState::Open)
            .map(|v| v.lease_until.unwrap_or(v.open_until))
            .min()
    }

    /// Runs until `local` ends: local events as they come, notices as they come
    /// (subscribing again when the subscription is lost), a tick every
    /// `poll_every` and at the end of each fleet open.
    pub async fn run(mut self, mut local: mpsc::UnboundedReceiver<LocalEvent>) {
        let mut notices: Option<mpsc::UnboundedReceiver<Notice>> = None;
        let mut ticker = tokio::time::interval(self.config.poll_every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if notices.is_none() && self.config.pubsub {
                let subscribed = self.store.subscribe().await;
                notices = self.note(subscribed);
                self.stats.set_subscribed(notices.is_some());
                if notices.is_some() {
                    // Whatever was missed while unsubscribed is read now.
                    self.tick().await;
                }
            }
            let deadline = self
                .next_deadline()
                .map(|at| Duration::from_nanos(at.saturating_sub(self.now())));
            tokio::select! {
                event = local.recv() => match event {
                    Some(event) => self.handle_local(event).await,
                    None => break,
                },
                notice = recv(&mut notices) => match notice {
                    Some(notice) => self.handle_notice(notice),
                    None => {
                        notices = None;
                        self.stats.set_subscribed(false);
                        ticker.tick().await; // no resubscribe storm
                    }
                },
                _ = ticker.tick() => self.tick().await,
                _ = sleep_opt(deadline) => self.tick().await,
            }
        }
    }
}

async fn recv(rx: &mut Option<mpsc::UnboundedReceiver<Notice>>) -> Option<Notice> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_opt(d: Option<Duration>) {
    match d {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}
