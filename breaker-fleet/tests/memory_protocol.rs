//! The fleet protocol on the in-memory store and a manual clock: trips, closes,
//! fleet probes, stale epochs, lost notices, a store that fails or forgets.
//! No sleeps, no server: every step is driven by hand.

use std::time::Duration;

use breaker_fleet::{
    Agent, AgentConfig, Aggregation, FleetState, GroupRecord, LocalEvent, LocalEventKind,
    MemoryStore, Notice, RegistrySide,
};
use breakerbox::events::Subscription;
use breakerbox::fleet::FleetControl;
use breakerbox::{Breaker, Config, ManualClock, OpenReason, Registry, State};
use tokio::sync::mpsc::UnboundedReceiver;

const OPEN: Duration = Duration::from_secs(30);

struct Instance {
    /// Local trips and closes, as the registry's subscription told them.
    local: std::sync::mpsc::Receiver<LocalEvent>,
    _subscription: Subscription,
    agent: Agent<MemoryStore, RegistrySide>,
    notices: Option<UnboundedReceiver<Notice>>,
    breaker: Breaker,
    store: MemoryStore,
}

fn config(probes: u32) -> Config {
    Config::builder()
        .threshold(3)
        .open(Duration::from_secs(30))
        .backoff(2.0)
        .half_open_probes(probes)
        .build()
        .unwrap()
}

async fn instance(
    name: &str,
    clock: &ManualClock,
    store: &MemoryStore,
    agent: AgentConfig,
    probes: u32,
) -> Instance {
    let registry: &'static Registry = Box::leak(Box::new(Registry::with_clock(clock.clone())));
    let breaker = registry.breaker("db", &config(probes));
    let side = RegistrySide::new(registry);
    let (tx, local) = std::sync::mpsc::channel();
    let subscription = side.subscribe(move |event| tx.send(event).unwrap());
    let mut agent_config = agent;
    agent_config.instance = name.to_owned();
    Instance {
        agent: Agent::new(store.clone(), side, clock.clone(), agent_config),
        local,
        _subscription: subscription,
        notices: store.subscribe_now(),
        breaker,
        store: store.clone(),
    }
}

trait SubscribeNow {
    fn subscribe_now(&self) -> Option<UnboundedReceiver<Notice>>;
}

impl SubscribeNow for MemoryStore {
    fn subscribe_now(&self) -> Option<UnboundedReceiver<Notice>> {
        use breaker_fleet::FleetStore;
        // The memory store answers at once: polling the future once is enough.
        futures_util::FutureExt::now_or_never(self.subscribe()).and_then(Result::ok)
    }
}

impl Instance {
    /// Local changes to the agent, then notices to the agent.
    async fn pump(&mut self) {
        for event in self.events() {
            self.agent.handle_local(event).await;
        }
        // A lost subscription (the store restarted) is taken again, as `run` does.
        if self
            .notices
            .as_ref()
            .is_none_or(|rx| rx.is_closed() && rx.is_empty())
        {
            self.notices = self.store.subscribe_now();
        }
        if let Some(rx) = &mut self.notices {
            while let Ok(notice) = rx.try_recv() {
                self.agent.handle_notice(notice);
            }
        }
    }

    fn fail(&self, times: usize) {
        for _ in 0..times {
            if let Ok(permit) = self.breaker.try_acquire() {
                permit.failure();
            }
        }
    }

    /// One call that succeeds if admitted; whether it was.
    fn succeed(&self) -> bool {
        match self.breaker.try_acquire() {
            Ok(permit) => {
                permit.success();
                true
            }
            Err(_) => false,
        }
    }

    fn refuses(&self) -> bool {
        !self.breaker.would_admit()
    }

    /// Notices to the agent, leaving local events where they are.
    fn notices_only(&mut self) {
        if let Some(rx) = &mut self.notices {
            while let Ok(notice) = rx.try_recv() {
                self.agent.handle_notice(notice);
            }
        }
    }

    /// The local events told since the last look.
    fn events(&self) -> Vec<LocalEvent> {
        self.local.try_iter().collect()
    }
}

async fn settle(fleet: &mut [Instance]) {
    for _ in 0..3 {
        for i in fleet.iter_mut() {
            i.pump().await;
        }
    }
}

async fn tick_all(fleet: &mut [Instance]) {
    for i in fleet.iter_mut() {
        i.agent.tick().await;
    }
    settle(fleet).await;
}

async fn fleet(n: usize, agent: AgentConfig) -> (ManualClock, MemoryStore, Vec<Instance>) {
    fleet_of(n, agent, 1).await
}

/// `n` instances whose breakers have `probes` half-open probe slots each.
async fn fleet_of(
    n: usize,
    agent: AgentConfig,
    probes: u32,
) -> (ManualClock, MemoryStore, Vec<Instance>) {
    let clock = ManualClock::new();
    let store = MemoryStore::new(clock.clone());
    let mut all = Vec::new();
    for k in 0..n {
        all.push(instance(&format!("i{k}"), &clock, &store, agent.clone(), probes).await);
    }
    (clock, store, all)
}

fn defaults() -> AgentConfig {
    AgentConfig::new("unused")
}

#[tokio::test(flavor = "current_thread")]
async fn a_trip_on_one_instance_opens_every_other() {
    let (_clock, store, mut fleet) = fleet(3, defaults()).await;
    assert!(fleet.iter().all(|i| !i.refuses()));

    fleet[0].fail(3);
    settle(&mut fleet).await;

    assert_eq!(
        fleet[0].breaker.state(),
        State::Open,
        "the origin tripped itself"
    );
    assert!(
        fleet[1].refuses() && fleet[2].refuses(),
        "the others follow"
    );
    let record = store.record("db");
    assert_eq!((record.epoch, record.state), (1, FleetState::Open));
    assert_eq!(record.origin, "i0");
    assert_eq!(record.remaining(), OPEN);
    assert_eq!(fleet[1].agent.stats().opens_applied, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn an_instance_that_heard_of_a_trip_before_its_breaker_existed_refuses_once_it_is_made() {
    let (clock, store, mut fleet) = fleet(1, defaults()).await;
    // Instance B has a registry and an agent, but no breaker of `db` yet (a
    // `#[circuit_breaker]` fn not called so far).
    let registry: &'static Registry = Box::leak(Box::new(Registry::with_clock(clock.clone())));
    let mut b = Agent::new(
        store.clone(),
        RegistrySide::new(registry),
        clock.clone(),
        AgentConfig::new("b"),
    );
    let mut notices = store.subscribe_now().expect("the memory store subscribes");

    fleet[0].fail(3);
    settle(&mut fleet).await;
    while let Ok(notice) = notices.try_recv() {
        b.handle_notice(notice);
    }
    b.tick().await;
    assert_eq!(b.view("db").map(|r| r.state), Some(FleetState::Open));
    assert_eq!(b.stats().opens_applied, 0, "no breaker to apply it to");

    // The breaker is made 10 s into the fleet's 30 s open; the agent's next
    // look applies the open it holds, for the time it has left.
    clock.advance(Duration::from_secs(10));
    let breaker = registry.breaker("db", &config(1));
    assert!(breaker.would_admit(), "made closed");
    b.tick().await;
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Fleet);
    // The time the open has left, plus the wait for the fleet's probe lease.
    let lease_wait = defaults().lease_wait;
    assert_eq!(
        refused.retry_after(),
        Some(Duration::from_secs(20) + lease_wait)
    );
    assert_eq!(b.stats().opens_applied, 1);

    // Applied once: later reads of the same record change nothing.
    b.tick().await;
    assert_eq!(b.stats().opens_applied, 1);
    assert_eq!(
        breaker.try_acquire().unwrap_err().reason(),
        OpenReason::Fleet
    );
}

#[tokio::test(flavor = "current_thread")]
async fn without_a_trip_nothing_is_written_and_nobody_refuses() {
    let (_clock, store, mut fleet) = fleet(2, defaults()).await;
    fleet[0].fail(2); // below the threshold
    assert!(fleet[0].succeed());
    settle(&mut fleet).await;
    tick_all(&mut fleet).await;
    assert!(fleet.iter().all(|i| !i.refuses()));
    assert_eq!(store.record("db").epoch, 0);
}

#[tokio::test(flavor = "current_thread")]
async fn lost_notices_are_found_by_the_next_poll() {
    let (_clock, store, mut fleet) = fleet(2, defaults()).await;
    store.set_delivering(false);
    fleet[0].fail(3);
    settle(&mut fleet).await;
    assert!(
        !fleet[1].refuses(),
        "no notice, no poll yet: still diverging"
    );

    fleet[1].agent.tick().await;
    assert!(fleet[1].refuses(), "the poll found the trip");
}

#[tokio::test(flavor = "current_thread")]
async fn a_stale_epoch_never_undoes_a_newer_state() {
    let (_clock, store, mut fleet) = fleet(2, defaults()).await;
    fleet[0].fail(3);
    settle(&mut fleet).await;
    let open = store.record("db");

    // A late, older record (epoch 0, closed) arrives after the open one.
    let old = GroupRecord::unknown(&open.run, open.now_ms);
    fleet[1].agent.handle_notice(Notice {
        group: "db".into(),
        record: old,
    });
    assert!(fleet[1].refuses(), "the stale close was ignored");
    assert_eq!(fleet[1].agent.stats().stale_ignored, 1);
    assert_eq!(fleet[1].agent.view("db").unwrap().epoch, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_trip_from_a_stale_view_loses_the_compare_and_set() {
    let (_clock, store, mut fleet) = fleet(2, defaults()).await;
    store.set_delivering(false);
    // Both trip before either hears of the other: one epoch wins.
    fleet[0].fail(3);
    fleet[1].fail(3);
    settle(&mut fleet).await;
    let record = store.record("db");
    assert_eq!(record.epoch, 1, "one trip, one epoch");
    let published: u64 = fleet.iter().map(|i| i.agent.stats().trips_published).sum();
    assert_eq!(published, 1);
    assert!(fleet.iter().all(|i| i.agent.view("db").unwrap().epoch == 1));
}

#[tokio::test(flavor = "current_thread")]
async fn one_probe_runs_fleet_wide_and_its_success_closes_every_instance() {
    let (clock, store, mut fleet) = fleet(3, defaults()).await;
    fleet[0].fail(3);
    settle(&mut fleet).await;

    clock.advance(OPEN);
    tick_all(&mut fleet).await;

    let probing: Vec<usize> = (0..3).filter(|&k| !fleet[k].refuses()).collect();
    assert_eq!(
        probing.len(),
        1,
        "half_open_probes = 1 across the fleet: {probing:?}"
    );
    let prober = probing[0];

    assert!(fleet[prober].succeed());
    settle(&mut fleet).await;

    assert!(
        fleet.iter().all(|i| !i.refuses()),
        "the close reached everyone"
    );
    let record = store.record("db");
    assert_eq!((record.epoch, record.state), (2, FleetState::Closed));
    assert!(fleet.iter().all(|i| i.breaker.state() == State::Closed));
}

#[tokio::test(flavor = "current_thread")]
async fn with_a_ramp_every_instance_ramps_from_the_fleets_close() {
    let (clock, _store, mut fleet) = fleet(3, defaults()).await;
    let ramp = Duration::from_secs(10);
    for i in &fleet {
        let ramped = Config::builder()
            .threshold(3)
            .open(Duration::from_millis(30_000))
            .ramp(ramp)
            .build()
            .unwrap();
        i.breaker.reconfigure(ramped).unwrap();
    }
    fleet[0].fail(3);
    settle(&mut fleet).await;
    clock.advance(OPEN);
    tick_all(&mut fleet).await;
    let prober = (0..3).find(|&k| !fleet[k].refuses()).expect("a prober");
    assert!(fleet[prober].succeed());
    settle(&mut fleet).await;
    // Every instance closed, and every one ramps from that moment: half way
    // through, each admits half its calls, the prober and the others alike.
    clock.advance(ramp / 2);
    for (k, i) in fleet.iter().enumerate() {
        assert_eq!(i.breaker.state(), State::Closed, "instance {k}");
        assert_eq!(i.breaker.metrics().ramp.map(|r| r.length), Some(ramp));
        let mut admitted = 0;
        for _ in 0..100 {
            match i.breaker.try_acquire() {
                Ok(permit) => {
                    permit.success();
                    admitted += 1;
                }
                Err(refused) => assert_eq!(refused.reason(), OpenReason::Ramping),
            }
        }
        assert_eq!(admitted, 50, "instance {k}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_failed_fleet_probe_reopens_every_instance_in_a_new_epoch() {
    let (clock, store, mut fleet) = fleet(2, defaults()).await;
    fleet[0].fail(3);
    settle(&mut fleet).await;
    clock.advance(OPEN);
    tick_all(&mut fleet).await;
    let prober = (0..2).find(|&k| !fleet[k].refuses()).expect("one prober");

    fleet[prober].fail(1);
    settle(&mut fleet).await;

    assert!(fleet.iter().all(Instance::refuses));
    let record = store.record("db");
    assert_eq!((record.epoch, record.state), (2, FleetState::Open));
    assert!(
        record.remaining() >= OPEN,
        "the open time grew: {:?}",
        record.remaining()
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_probe_lease_that_runs_out_passes_to_another_instance() {
    let mut config = defaults();
    config.probe_lease = Duration::from_secs(5);
    let (clock, _store, mut fleet) = fleet(2, config).await;
    fleet[0].fail(3);
    settle(&mut fleet).await;
    clock.advance(OPEN);
    tick_all(&mut fleet).await;
    let first = (0..2).find(|&k| !fleet[k].refuses()).expect("one prober");
    let other = 1 - first;

    // The holder never calls; its lease runs out.
    clock.advance(Duration::from_secs(5));
    fleet[first].agent.tick().await; // the holder itself is not first to retry
    fleet[other].agent.tick().await;
    clock.advance(Duration::from_millis(1));
    fleet[other].agent.tick().await;
    fleet[first].agent.tick().await;
    settle(&mut fleet).await;
    assert!(
        fleet[other].refuses() || fleet[first].refuses(),
        "never two leases for one slot"
    );
    assert!(
        !fleet[other].refuses(),
        "the other instance took the expired lease"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn with_the_store_down_instances_serve_alone_and_publish_when_it_returns() {
    let (clock, store, mut fleet) = fleet(2, defaults()).await;
    store.set_down(true);

    fleet[0].fail(3);
    settle(&mut fleet).await;
    tick_all(&mut fleet).await;
    assert!(
        fleet[0].refuses(),
        "the local breaker still protects its instance"
    );
    assert!(!fleet[1].refuses(), "the other serves with its own breaker");
    assert!(fleet[1].succeed());
    let stats = fleet[0].agent.stats();
    assert!(!stats.connected && stats.store_errors >= 2, "{stats:?}");
    assert!(stats.last_error.is_some());

    clock.advance(Duration::from_secs(10));
    store.set_down(false);
    tick_all(&mut fleet).await; // the trip goes out for the 20 s it has left
    tick_all(&mut fleet).await;
    assert!(
        fleet[1].refuses(),
        "rejoined: the trip reached the other instance"
    );
    let record = store.record("db");
    assert_eq!(record.remaining(), Duration::from_secs(20));
    let stats = fleet[0].agent.stats();
    assert!(stats.connected && stats.rejoins == 1, "{stats:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_fleet_open_ends_locally_when_the_store_is_gone() {
    let (clock, store, mut fleet) = fleet(2, defaults()).await;
    fleet[0].fail(3);
    settle(&mut fleet).await;
    assert!(fleet[1].refuses());

    store.set_down(true);
    clock.advance(OPEN);
    tick_all(&mut fleet).await;
    assert!(
        !fleet[1].refuses(),
        "no lease to ask for: the local breaker probes alone"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_store_that_forgot_everything_gets_the_open_back() {
    let (clock, store, mut fleet) = fleet(3, defaults()).await;
    fleet[0].fail(3);
    settle(&mut fleet).await;

    store.restart(); // Redis restarted without persistence
    clock.advance(Duration::from_secs(10));
    tick_all(&mut fleet).await;
    tick_all(&mut fleet).await;

    let record = store.record("db");
    assert_eq!(
        (record.epoch, record.state),
        (1, FleetState::Open),
        "republished in the new run"
    );
    assert_eq!(record.remaining(), Duration::from_secs(20));
    assert!(fleet.iter().all(Instance::refuses));

    // And the new run works as the old one did: a probe closes everyone.
    clock.advance(Duration::from_secs(20));
    tick_all(&mut fleet).await;
    let prober = (0..3).find(|&k| !fleet[k].refuses()).expect("one prober");
    assert!(fleet[prober].succeed());
    settle(&mut fleet).await;
    assert!(fleet.iter().all(|i| !i.refuses()));
}

#[tokio::test(flavor = "current_thread")]
async fn a_user_forced_breaker_is_left_alone() {
    let (_clock, _store, mut fleet) = fleet(2, defaults()).await;
    fleet[1].breaker.force_closed();
    fleet[0].fail(3);
    settle(&mut fleet).await;
    assert_eq!(fleet[1].breaker.state(), State::ForcedClosed);
    assert!(!fleet[1].refuses());
}

#[tokio::test(flavor = "current_thread")]
async fn with_a_quorum_one_instance_alone_does_not_open_the_fleet() {
    let mut config = defaults();
    config.quorum = 2;
    let (_clock, store, mut fleet) = fleet(3, config).await;

    fleet[0].fail(3);
    settle(&mut fleet).await;
    tick_all(&mut fleet).await;
    assert!(
        !fleet[1].refuses() && !fleet[2].refuses(),
        "one vote of two"
    );
    assert_eq!(store.record("db").state, FleetState::Closed);

    fleet[1].fail(3);
    settle(&mut fleet).await;
    assert!(fleet[2].refuses(), "the second vote opened the fleet");
    assert_eq!(store.record("db").state, FleetState::Open);
}

#[tokio::test(flavor = "current_thread")]
async fn aggregated_counts_trip_the_fleet_when_no_instance_would() {
    let mut config = defaults();
    config.aggregation = Some(Aggregation {
        window: Duration::from_secs(10),
        flush_every: Duration::from_secs(1),
        min_calls: 8,
        failure_rate: 0.5,
    });
    let (clock, store, mut fleet) = fleet(4, config).await;
    // Each instance: fail, succeed, fail, succeed: never 3 in a row.
    for i in &fleet {
        for _ in 0..2 {
            i.fail(1);
            assert!(i.succeed());
        }
    }
    tick_all(&mut fleet).await;
    clock.advance(Duration::from_secs(1));
    tick_all(&mut fleet).await;

    assert_eq!(
        store.record("db").state,
        FleetState::Open,
        "16 calls, half failed"
    );
    assert!(fleet.iter().all(Instance::refuses));
}

#[tokio::test(flavor = "current_thread")]
async fn aggregated_counts_below_the_rate_do_not_trip() {
    let mut config = defaults();
    config.aggregation = Some(Aggregation {
        window: Duration::from_secs(10),
        flush_every: Duration::from_secs(1),
        min_calls: 8,
        failure_rate: 0.5,
    });
    let (clock, store, mut fleet) = fleet(4, config).await;
    for i in &fleet {
        i.fail(1);
        for _ in 0..3 {
            assert!(i.succeed());
        }
    }
    tick_all(&mut fleet).await;
    clock.advance(Duration::from_secs(1));
    tick_all(&mut fleet).await;
    assert_eq!(
        store.record("db").state,
        FleetState::Closed,
        "a quarter failed"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_close_after_a_trip_whose_answer_was_lost_still_reaches_the_fleet() {
    use breaker_fleet::{FleetStore, Trip};
    let (_clock, store, mut fleet) = fleet(2, defaults()).await;
    // The origin's trip is written, but its answer is lost (a timeout): the
    // agent keeps the trip as pending, its view still says closed.
    fleet[0].fail(3);
    let events = fleet[0].events();
    store.set_down(true);
    for event in events {
        fleet[0].agent.handle_local(event).await;
    }
    store.set_down(false);
    let written = Trip {
        group: "db",
        expected: 0,
        run: "",
        open_for: OPEN,
        origin: "i0",
        quorum: 1,
    };
    assert!(matches!(
        store.trip(written).await,
        Ok(breaker_fleet::Cas::Applied(_))
    ));
    fleet[1].agent.tick().await;
    assert!(fleet[1].refuses());

    // The origin's breaker closes before its agent has read the store again ...
    fleet[0].breaker.reset();
    let events = fleet[0].events();
    assert_eq!(events.len(), 1, "{events:?}");
    for event in events {
        fleet[0].agent.handle_local(event).await;
    }
    // ... and its close still goes out once a read shows the open.
    fleet[0].agent.tick().await;
    assert_eq!(
        store.record("db").state,
        FleetState::Closed,
        "the close was kept"
    );
    fleet[1].agent.tick().await;
    assert!(!fleet[1].refuses());
}

/// How long every instance waits past the fleet's end for the lease decision.
const WAIT: Duration = Duration::from_millis(200);

#[tokio::test(flavor = "current_thread")]
async fn refusals_on_a_fleet_open_say_fleet_with_the_fleet_time_left() {
    let (clock, _store, mut fleet) = fleet(3, defaults()).await;
    fleet[0].fail(3);
    settle(&mut fleet).await;

    let origin = fleet[0].breaker.try_acquire().unwrap_err();
    assert_eq!(
        origin.reason(),
        OpenReason::Open,
        "the origin tripped itself"
    );
    for i in &fleet[1..] {
        let refused = i.breaker.try_acquire().unwrap_err();
        assert_eq!(refused.reason(), OpenReason::Fleet);
        let after = refused.retry_after().expect("a real retry_after");
        assert!(
            (OPEN..=OPEN + WAIT).contains(&after),
            "the fleet's 30 s, held up to the lease wait: {after:?}"
        );
    }
    clock.advance(Duration::from_secs(12));
    let refused = fleet[2].breaker.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Fleet);
    let after = refused.retry_after().unwrap();
    let left = OPEN - Duration::from_secs(12);
    assert!((left..=left + WAIT).contains(&after), "{after:?}");
    assert_eq!(fleet[2].breaker.metrics().rejected, 2);
}

#[tokio::test(flavor = "current_thread")]
async fn no_instance_probes_alone_between_the_fleet_end_and_the_lease() {
    let (clock, _store, mut fleet) = fleet(3, defaults()).await;
    fleet[0].fail(3);
    settle(&mut fleet).await;
    // The fleet's open is over, no agent has asked for the lease yet.
    clock.advance(OPEN);
    assert!(
        fleet.iter().all(Instance::refuses),
        "the origin included: every breaker waits for the lease"
    );
    clock.advance(WAIT - Duration::from_millis(1));
    assert!(fleet.iter().all(Instance::refuses));
    // An agent that never decides leaves its breaker to probe alone.
    clock.advance(Duration::from_millis(1));
    assert!(
        fleet.iter().all(|i| !i.refuses()),
        "fail-local after the wait"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn at_most_half_open_probes_probes_run_across_the_fleet() {
    let (clock, _store, mut fleet) = fleet_of(4, defaults(), 2).await;
    fleet[1].fail(3);
    settle(&mut fleet).await;
    clock.advance(OPEN);
    tick_all(&mut fleet).await;

    // Every instance tries three calls and holds the permits it gets.
    let mut admitted = Vec::new();
    let mut refusals = Vec::new();
    for i in &fleet {
        for _ in 0..3 {
            match i.breaker.try_acquire() {
                Ok(permit) => {
                    assert!(permit.is_probe());
                    admitted.push(permit);
                }
                Err(open) => refusals.push(open.reason()),
            }
        }
    }
    assert_eq!(
        admitted.len(),
        2,
        "half_open_probes = 2 across four instances"
    );
    let probing: Vec<_> = (0..4)
        .filter(|&k| fleet[k].breaker.state() == State::HalfOpen)
        .collect();
    assert_eq!(
        probing.len(),
        1,
        "one instance holds the lease: {probing:?}"
    );
    assert_eq!(
        refusals
            .iter()
            .filter(|r| **r == OpenReason::HalfOpenFull)
            .count(),
        1,
        "the prober's third call"
    );
    assert_eq!(refusals.len(), 10);

    // Both probes succeed: the prober closes and so does the fleet.
    for permit in admitted {
        permit.success();
    }
    settle(&mut fleet).await;
    assert!(fleet.iter().all(|i| i.breaker.state() == State::Closed));
}

#[tokio::test(flavor = "current_thread")]
async fn a_failed_probe_reopens_everywhere_with_the_grown_open_time_each_round() {
    let (clock, store, mut fleet) = fleet(3, defaults()).await;
    fleet[0].fail(3);
    settle(&mut fleet).await;
    let mut open = OPEN;
    for round in 1..=3 {
        clock.advance(open);
        tick_all(&mut fleet).await;
        let prober = (0..3).find(|&k| !fleet[k].refuses()).expect("one prober");
        assert_eq!(
            (0..3).filter(|&k| !fleet[k].refuses()).count(),
            1,
            "round {round}"
        );
        fleet[prober].fail(1);
        settle(&mut fleet).await;

        open *= 2; // backoff 2.0, whichever instance probed
        let record = store.record("db");
        assert_eq!(
            (record.state, record.remaining()),
            (FleetState::Open, open),
            "round {round}"
        );
        for (k, i) in fleet.iter().enumerate().filter(|&(k, _)| k != prober) {
            let refused = i.breaker.try_acquire().unwrap_err();
            assert_eq!(refused.reason(), OpenReason::Fleet, "round {round}, i{k}");
            let after = refused.retry_after().unwrap();
            assert!(
                (open..=open + WAIT).contains(&after),
                "round {round}, i{k}: {after:?}"
            );
        }
        assert_eq!(
            fleet[prober].breaker.try_acquire().unwrap_err().reason(),
            OpenReason::Open,
            "the prober reopened itself"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_agents_own_transitions_are_not_published_again() {
    let (clock, store, mut fleet) = fleet(3, defaults()).await;
    fleet[0].fail(3);
    for event in fleet[0].events() {
        fleet[0].agent.handle_local(event).await;
    }
    // The others hear the trip and open: not one local event comes of it.
    for i in &mut fleet[1..] {
        i.notices_only();
        assert_eq!(
            i.breaker.metrics().transitions.total(),
            1,
            "the fleet opened it"
        );
        assert_eq!(i.events(), [], "its own open is not news");
    }
    settle(&mut fleet).await;

    clock.advance(OPEN);
    tick_all(&mut fleet).await;
    let prober = (0..3).find(|&k| !fleet[k].refuses()).expect("one prober");
    assert!(fleet[prober].succeed());
    for event in fleet[prober].events() {
        fleet[prober].agent.handle_local(event).await;
    }
    for (k, i) in fleet.iter_mut().enumerate().filter(|&(k, _)| k != prober) {
        i.notices_only();
        assert_eq!(i.breaker.state(), State::Closed, "i{k}");
        assert_eq!(i.events(), [], "i{k}: its own close is not news");
    }
    settle(&mut fleet).await;
    tick_all(&mut fleet).await;

    let record = store.record("db");
    assert_eq!(
        (record.epoch, record.state),
        (2, FleetState::Closed),
        "one trip, one close: nothing echoed"
    );
    let trips: u64 = fleet.iter().map(|i| i.agent.stats().trips_published).sum();
    let closes: u64 = fleet.iter().map(|i| i.agent.stats().closes_published).sum();
    assert_eq!((trips, closes), (1, 1));
}

#[tokio::test(flavor = "current_thread")]
async fn a_trip_after_a_close_still_queued_is_not_undone_by_that_close() {
    let (clock, store, mut fleet) = fleet(3, defaults()).await;
    fleet[0].fail(3);
    settle(&mut fleet).await;
    clock.advance(OPEN);
    tick_all(&mut fleet).await;
    let prober = (0..3).find(|&k| !fleet[k].refuses()).expect("one prober");
    assert!(fleet[prober].succeed());
    // The dependency is still flaky: the prober trips again before its agent
    // has handled the close.
    fleet[prober].fail(3);
    let events = fleet[prober].events();
    assert!(
        matches!(events[0].kind, LocalEventKind::Closed),
        "{events:?}"
    );
    assert!(
        matches!(events[1].kind, LocalEventKind::Tripped { .. }),
        "{events:?}"
    );
    fleet[prober].agent.handle_local(events[0].clone()).await;
    assert_eq!(
        fleet[prober].breaker.state(),
        State::Open,
        "the fleet took the close; the newer local trip stays"
    );
    fleet[prober].agent.handle_local(events[1].clone()).await;
    settle(&mut fleet).await;
    assert_eq!(store.record("db").state, FleetState::Open);
    for (k, i) in fleet.iter().enumerate() {
        assert!(i.refuses(), "instance {k} admits while the fleet is open");
    }
}

#[test]
fn release_closes_only_a_fleet_open_and_reassert_reopens_only_a_closed_breaker() {
    use breaker_fleet::LocalSide;
    let registry: &'static Registry = Box::leak(Box::new(Registry::new()));
    let side = RegistrySide::new(registry);
    let reason = |b: &Breaker| b.refusal().map(|open| open.reason());

    // The agent's own close comes back: a breaker the fleet holds open is released...
    let held = registry.breaker("held", &config(1));
    held.fleet_open(OPEN);
    side.release("held");
    assert_eq!(held.state(), State::Closed);
    // ...one that tripped again on its own evidence is not: its trip comes next.
    let tripped = registry.breaker("tripped", &config(1));
    tripped.try_acquire().unwrap().failure();
    tripped.try_acquire().unwrap().failure();
    tripped.try_acquire().unwrap().failure();
    assert_eq!(reason(&tripped), Some(OpenReason::Open));
    side.release("tripped");
    assert_eq!(tripped.state(), State::Open);

    // The fleet's newest record is this instance's own trip: a breaker a close
    // has closed since opens again; an open one keeps its own open.
    let closed = registry.breaker("closed", &config(1));
    side.reassert("closed", OPEN);
    assert_eq!(reason(&closed), Some(OpenReason::Fleet));
    side.reassert("tripped", OPEN);
    assert_eq!(reason(&tripped), Some(OpenReason::Open));
}
