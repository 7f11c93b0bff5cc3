//! A group-scope hold (a provider's quota: every caller of the group must
//! wait) taken on one instance reaches the others through a real
//! `redis-server`; a key-scope hold stays where it was taken, and a hold
//! applied from the fleet is not published again.

mod support;

use std::sync::mpsc::Receiver;
use std::time::Duration;

use breaker_fleet::{
    Agent, AgentConfig, FleetStore, LocalEvent, LocalEventKind, RedisStore, RegistrySide,
};
use breakerbox::events::Subscription;
use breakerbox::hold::HoldScope;
use breakerbox::{Breaker, Config, ManualClock, OpenReason, Registry};

const WAIT: Duration = Duration::from_secs(30);

struct Instance {
    agent: Agent<RedisStore, RegistrySide>,
    local: Receiver<LocalEvent>,
    _subscription: Subscription,
    llm: Breaker,
    search: Breaker,
}

fn instance(name: &str, url: &str) -> Instance {
    let clock = ManualClock::new();
    let registry: &'static Registry = Box::leak(Box::new(Registry::with_clock(clock.clone())));
    let llm = registry.breaker("llm", &Config::default());
    let search = registry.breaker("search", &Config::default());
    let side = RegistrySide::new(registry);
    let (tx, local) = std::sync::mpsc::channel();
    let subscription = side.subscribe(move |event| tx.send(event).unwrap());
    let store = RedisStore::new(url)
        .unwrap()
        .timeout(Duration::from_secs(2));
    Instance {
        agent: Agent::new(store, side, clock, AgentConfig::new(name)),
        local,
        _subscription: subscription,
        llm,
        search,
    }
}

impl Instance {
    /// Hands every local event told so far to the agent.
    async fn pump(&mut self) -> Vec<LocalEvent> {
        let events: Vec<LocalEvent> = self.local.try_iter().collect();
        for event in events.clone() {
            self.agent.handle_local(event).await;
        }
        events
    }
}

#[tokio::test]
async fn a_group_hold_reaches_every_instance_and_a_key_hold_stays_local() {
    let test = "a_group_hold_reaches_every_instance_and_a_key_hold_stays_local";
    let Some(server) = support::redis_or_skip(test) else {
        return;
    };
    let url = server.url();
    let (mut a, mut b) = (instance("a", &url), instance("b", &url));

    let held = a.llm.hold(WAIT, HoldScope::Group);
    a.search.hold(WAIT, HoldScope::Key);
    let told = a.pump().await;
    assert_eq!(told.len(), 1, "the group's hold only: {told:?}");
    assert!(matches!(told[0].kind, LocalEventKind::Held { remaining } if remaining == held));
    assert_eq!(a.agent.stats().holds_published, 1);

    b.agent.tick().await;
    let refused = b.llm.try_acquire().expect_err("held by a's answer");
    assert_eq!(refused.reason(), OpenReason::Held(HoldScope::Group));
    let left = refused.retry_after().unwrap();
    assert!(
        left > held - Duration::from_secs(2) && left <= held,
        "the time a's hold has left: {left:?} of {held:?}"
    );
    assert_eq!(b.llm.metrics().failures, 0);
    b.search
        .try_acquire()
        .expect("a key's hold is its own")
        .success();
    assert_eq!(b.agent.stats().holds_applied, 1);

    // Neither instance echoes the hold: b does not publish what it applied,
    // and a does not apply its own hold back.
    assert!(b.pump().await.is_empty());
    b.agent.tick().await;
    a.agent.tick().await;
    assert_eq!(b.agent.stats().holds_applied, 1);
    assert_eq!(a.agent.stats().holds_applied, 0);
    assert_eq!(a.llm.metrics().holds.group, 1);
    assert_eq!(b.llm.metrics().holds.group, 1);
}

#[tokio::test]
async fn the_store_keeps_the_later_hold_and_tells_it_in_a_notice() {
    let test = "the_store_keeps_the_later_hold_and_tells_it_in_a_notice";
    let Some(server) = support::redis_or_skip(test) else {
        return;
    };
    let store = RedisStore::new(&server.url())
        .unwrap()
        .timeout(Duration::from_secs(2));
    let mut notices = store.subscribe().await.unwrap();

    let first = store.hold("llm", WAIT, "a").await.unwrap();
    assert_eq!(first.hold_remaining(), WAIT);
    assert_eq!(
        (first.hold_origin.as_str(), first.epoch),
        ("a", 0),
        "no trip"
    );
    let notice = tokio::time::timeout(Duration::from_secs(5), notices.recv())
        .await
        .expect("a notice within 5 s")
        .expect("subscription alive");
    assert_eq!((notice.group.as_str(), &notice.record), ("llm", &first));

    let shorter = store.hold("llm", WAIT / 3, "b").await.unwrap();
    assert_eq!(
        (shorter.hold_until_ms, shorter.hold_origin.as_str()),
        (first.hold_until_ms, "a"),
        "an earlier end changes nothing"
    );
    let read = store.read(&["llm".into()]).await.unwrap().remove(0);
    assert_eq!(read.hold_until_ms, first.hold_until_ms);
}

#[tokio::test]
async fn an_instance_publishing_a_shorter_hold_takes_the_longer_one_the_store_keeps() {
    let test = "an_instance_publishing_a_shorter_hold_takes_the_longer_one_the_store_keeps";
    let Some(server) = support::redis_or_skip(test) else {
        return;
    };
    let url = server.url();
    let (mut a, mut b) = (instance("a", &url), instance("b", &url));

    let long = a.llm.hold(WAIT, HoldScope::Group);
    a.pump().await;
    // b holds for less before it has heard of a's hold; the store keeps a's.
    b.llm.hold(WAIT / 3, HoldScope::Group);
    b.pump().await;
    assert_eq!(
        b.agent.stats().holds_published,
        0,
        "the store wrote nothing"
    );
    assert_eq!(b.agent.stats().holds_applied, 1);
    let left = b.llm.try_acquire().unwrap_err().retry_after().unwrap();
    assert!(
        left > long - Duration::from_secs(2) && left <= long,
        "b waits out a's longer hold: {left:?} of {long:?}"
    );

    b.agent.tick().await;
    assert_eq!(b.agent.stats().holds_applied, 1, "applied once");
}
