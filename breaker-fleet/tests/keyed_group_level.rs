//! A keyed group that judges as one goes through the fleet as a plain group
//! does: its group-level trip on one instance opens the group on the others
//! (every key refused for the group there too), and its close closes them; a
//! hold of the whole group is published once and holds every key elsewhere.
//! The fleet's own open and the group's own trip stay apart: the agent closes
//! the one it made, and publishes the other.

use std::time::Duration;

use breaker_fleet::{
    Agent, AgentConfig, FleetStore, LocalEvent, LocalEventKind, LocalSide, MemoryStore, Notice,
    RegistrySide,
};
use breakerbox::events::Subscription;
use breakerbox::hold::HoldScope;
use breakerbox::keyed::KeyedGroup;
use breakerbox::{Breaker, Config, ManualClock, OpenReason, Registry, State};
use tokio::sync::mpsc::UnboundedReceiver;

struct Instance {
    local: std::sync::mpsc::Receiver<LocalEvent>,
    _subscription: Subscription,
    agent: Agent<MemoryStore, RegistrySide>,
    notices: Option<UnboundedReceiver<Notice>>,
    hosts: KeyedGroup<u32>,
}

fn instance(name: &str, clock: &ManualClock, store: &MemoryStore) -> Instance {
    let (registry, hosts) = judged_hosts(clock);
    let side = RegistrySide::new(registry);
    let (tx, local) = std::sync::mpsc::channel();
    let subscription = side.subscribe(move |event| tx.send(event).unwrap());
    let mut agent_config = AgentConfig::new("unused");
    agent_config.instance = name.to_owned();
    Instance {
        agent: Agent::new(store.clone(), side, clock.clone(), agent_config),
        local,
        _subscription: subscription,
        notices: futures_util::FutureExt::now_or_never(store.subscribe()).and_then(Result::ok),
        hosts,
    }
}

async fn settle(fleet: &mut [Instance]) {
    for _ in 0..3 {
        for i in fleet.iter_mut() {
            let events: Vec<_> = i.local.try_iter().collect();
            for event in events {
                i.agent.handle_local(event).await;
            }
            if let Some(rx) = &mut i.notices {
                while let Ok(notice) = rx.try_recv() {
                    i.agent.handle_notice(notice);
                }
            }
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_group_level_trip_opens_the_group_on_every_instance_and_its_close_closes_them() {
    let clock = ManualClock::new();
    let store = MemoryStore::new(clock.clone());
    let mut fleet = vec![
        instance("i0", &clock, &store),
        instance("i1", &clock, &store),
    ];
    // Three hosts of instance 0 begin failing, none recovers: the group opens.
    for host in 0..3 {
        fleet[0]
            .hosts
            .breaker(&host)
            .try_acquire()
            .unwrap()
            .failure();
    }
    assert_eq!(fleet[0].hosts.group_breaker().unwrap().state(), State::Open);
    settle(&mut fleet).await;
    // Instance 1 saw no failure, and refuses every host for the group.
    let refused = fleet[1].hosts.breaker(&7).try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Group);
    assert_eq!(fleet[1].hosts.metrics().open, 0, "no key of its own opened");

    // The open ends; instance 0's probe (the fleet's lease) closes the group.
    clock.advance(Duration::from_secs(30));
    fleet[0].agent.tick().await;
    settle(&mut fleet).await;
    let probe = fleet[0].hosts.breaker(&1).try_acquire_owned().unwrap();
    probe.success();
    settle(&mut fleet).await;
    assert_eq!(
        fleet[0].hosts.group_breaker().unwrap().state(),
        State::Closed
    );
    assert_eq!(
        fleet[1].hosts.group_breaker().unwrap().state(),
        State::Closed
    );
    fleet[1].hosts.breaker(&7).try_acquire().unwrap().success();
}

#[tokio::test(flavor = "current_thread")]
async fn a_hold_of_the_whole_group_on_one_instance_refuses_every_key_on_the_others() {
    let clock = ManualClock::new();
    let store = MemoryStore::new(clock.clone());
    let mut fleet = vec![
        instance("i0", &clock, &store),
        instance("i1", &clock, &store),
    ];
    let held = fleet[0].hosts.hold(Duration::from_secs(20));
    let told: Vec<_> = fleet[0].local.try_iter().collect();
    assert_eq!(told.len(), 1, "the group's hold, once: {told:?}");
    fleet[0].agent.handle_local(told[0].clone()).await;
    settle(&mut fleet).await;
    fleet[1].agent.tick().await;
    for host in [0, 7, 42] {
        let refused = fleet[1].hosts.breaker(&host).try_acquire().unwrap_err();
        assert_eq!(refused.reason(), OpenReason::Held(HoldScope::Group));
    }
    assert_eq!(
        fleet[1].hosts.group_breaker().unwrap().state(),
        State::Closed
    );
    clock.advance(held);
    fleet[1].hosts.breaker(&7).try_acquire().unwrap().success();
}

/// A registry of its own with the judged group `hosts` (threshold 3, half of
/// the active keys failing is systemic), ten hosts seen healthy.
fn judged_hosts(clock: &ManualClock) -> (&'static Registry, KeyedGroup<u32>) {
    let registry: &'static Registry = Box::leak(Box::new(Registry::with_clock(clock.clone())));
    let config = Config::builder()
        .threshold(3)
        .open(Duration::from_secs(30))
        .systemic_share(0.5)
        .build()
        .unwrap();
    let hosts = registry.keyed::<u32>("hosts", &config, 100).unwrap();
    for host in 0..10 {
        hosts.breaker(&host).try_acquire().unwrap().success();
    }
    (registry, hosts)
}

/// What an agent subscribing to `registry` is told at once: the breakers
/// already open by their own trip.
fn told_at_subscribe(registry: &'static Registry) -> Vec<LocalEvent> {
    let (tx, told) = std::sync::mpsc::channel();
    let _subscription = RegistrySide::new(registry).subscribe(move |event| tx.send(event).unwrap());
    told.try_iter().collect()
}

fn fail_three_hosts(hosts: &KeyedGroup<u32>) {
    for host in 0..3 {
        hosts.breaker(&host).try_acquire().unwrap().failure();
    }
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Open);
}

#[test]
fn the_fleets_release_leaves_a_group_that_tripped_on_its_own_open() {
    let clock = ManualClock::new();
    let (registry, hosts) = judged_hosts(&clock);
    let side = RegistrySide::new(registry);
    fail_three_hosts(&hosts);
    // The fleet takes an older close of this instance's: the group's own trip
    // since is not the fleet's to withdraw.
    side.release("hosts");
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Open);
    let refused = hosts.breaker(&7).try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Group);
}

#[test]
fn the_fleets_release_closes_the_open_it_made_of_a_group() {
    let clock = ManualClock::new();
    let (registry, hosts) = judged_hosts(&clock);
    let side = RegistrySide::new(registry);
    side.open("hosts", Duration::from_secs(20));
    assert_eq!(
        hosts.breaker(&7).try_acquire().unwrap_err().reason(),
        OpenReason::Group
    );
    side.release("hosts");
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Closed);
    hosts.breaker(&7).try_acquire().unwrap().success();
}

#[test]
fn a_group_open_on_its_own_before_the_agent_listens_is_published_and_a_fleet_open_is_not() {
    let clock = ManualClock::new();
    let (registry, hosts) = judged_hosts(&clock);
    fail_three_hosts(&hosts);
    let told = told_at_subscribe(registry);
    assert_eq!(told.len(), 1, "the group's own trip, once: {told:?}");
    assert_eq!(told[0].group, "hosts");
    assert_eq!(
        told[0].kind,
        LocalEventKind::Tripped {
            open_for: Duration::from_secs(30)
        }
    );

    // Another process whose group the fleet opened has nothing of its own to
    // publish.
    let (registry, hosts) = judged_hosts(&clock);
    let side = RegistrySide::new(registry);
    side.open("hosts", Duration::from_secs(20));
    assert_eq!(hosts.group_breaker().unwrap().state(), State::Open);
    assert_eq!(told_at_subscribe(registry), []);
}

#[test]
fn a_held_trip_before_the_agent_listens_is_published_for_its_open_not_the_servers_wait() {
    let clock = ManualClock::new();
    let registry: &'static Registry = Box::leak(Box::new(Registry::with_clock(clock.clone())));
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(30))
        .build()
        .unwrap();
    let db: Breaker = registry.breaker("db", &config);
    db.try_acquire().unwrap().failure();
    let held = db.hold(Duration::from_secs(120), HoldScope::Group);
    assert!(held > Duration::from_secs(60), "{held:?}");
    assert_eq!(db.refusal().unwrap().retry_after(), Some(held));
    let told = told_at_subscribe(registry);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(
        told[0].kind,
        LocalEventKind::Tripped {
            open_for: Duration::from_secs(30)
        }
    );
}
