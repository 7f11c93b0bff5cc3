//! `RedisStore` against a real `redis-server` (started by the test): the same
//! protocol as the memory store, Redis `TIME`, pub/sub, and bounded calls when
//! Redis is slow or gone.

mod support;

use std::time::{Duration, Instant};

use breaker_fleet::{Cas, FleetState, FleetStore, RedisStore, StoreError, Trip};

fn trip<'a>(expected: u64, run: &'a str, origin: &'a str) -> Trip<'a> {
    Trip {
        group: "db",
        expected,
        run,
        open_for: Duration::from_secs(30),
        origin,
        quorum: 1,
    }
}

#[tokio::test]
async fn trips_and_closes_are_compare_and_sets_on_the_epoch() {
    let Some(server) = support::redis_or_skip("trips_and_closes_are_compare_and_sets_on_the_epoch")
    else {
        return;
    };
    let store = RedisStore::new(&server.url())
        .unwrap()
        .timeout(Duration::from_secs(2));

    let before = store.read(&["db".into()]).await.unwrap().remove(0);
    assert_eq!((before.epoch, before.state), (0, FleetState::Closed));

    let Cas::Applied(open) = store.trip(trip(0, &before.run, "a")).await.unwrap() else {
        panic!("the first trip applies");
    };
    assert_eq!(
        (open.epoch, open.state, open.origin.as_str()),
        (1, FleetState::Open, "a")
    );
    assert_eq!(
        open.remaining(),
        Duration::from_secs(30),
        "until = Redis TIME + open_for"
    );
    let run = open.run.clone();
    assert!(!run.is_empty(), "the first write created a run");

    // A second trip from the stale view (epoch 0) loses and sees epoch 1.
    let Cas::Lost(seen) = store.trip(trip(0, &run, "b")).await.unwrap() else {
        panic!("a stale trip must lose");
    };
    assert_eq!((seen.epoch, seen.origin.as_str()), (1, "a"));

    // A close of a stale epoch loses; of the current one applies.
    assert!(matches!(
        store.close("db", &run, 0, "b").await.unwrap(),
        Cas::Lost(_)
    ));
    let Cas::Applied(closed) = store.close("db", &run, 1, "b").await.unwrap() else {
        panic!("the close applies");
    };
    assert_eq!((closed.epoch, closed.state), (2, FleetState::Closed));
    assert!(matches!(
        store.close("db", &run, 1, "c").await.unwrap(),
        Cas::Lost(_)
    ));

    let now = store.read(&["db".into(), "other".into()]).await.unwrap();
    assert_eq!((now[0].epoch, now[0].state), (2, FleetState::Closed));
    assert_eq!(now[1].epoch, 0);
}

#[tokio::test]
async fn subscribers_get_every_change_as_a_notice() {
    let Some(server) = support::redis_or_skip("subscribers_get_every_change_as_a_notice") else {
        return;
    };
    let store = RedisStore::new(&server.url())
        .unwrap()
        .timeout(Duration::from_secs(2));
    let mut notices = store.subscribe().await.unwrap();

    let Cas::Applied(open) = store.trip(trip(0, "", "a")).await.unwrap() else {
        panic!("applies");
    };
    let notice = tokio::time::timeout(Duration::from_secs(5), notices.recv())
        .await
        .expect("a notice within 5 s")
        .expect("subscription alive");
    assert_eq!(notice.group, "db");
    assert_eq!(notice.record, open);
}

#[tokio::test]
async fn probe_leases_admit_at_most_the_slots_until_they_expire() {
    let Some(server) =
        support::redis_or_skip("probe_leases_admit_at_most_the_slots_until_they_expire")
    else {
        return;
    };
    let store = RedisStore::new(&server.url())
        .unwrap()
        .timeout(Duration::from_secs(2));
    let lease = Duration::from_millis(300);
    assert!(store.acquire_probe("db", 1, 2, lease, "a").await.unwrap());
    assert!(store.acquire_probe("db", 1, 2, lease, "b").await.unwrap());
    assert!(
        !store.acquire_probe("db", 1, 2, lease, "c").await.unwrap(),
        "two slots only"
    );
    assert!(
        store.acquire_probe("db", 1, 2, lease, "a").await.unwrap(),
        "a holder keeps its slot"
    );
    assert!(
        store.acquire_probe("db", 2, 2, lease, "c").await.unwrap(),
        "a new epoch, new slots"
    );

    // Expiry is Redis's; wait for it with a bounded loop.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !store.acquire_probe("db", 1, 2, lease, "c").await.unwrap() {
        assert!(Instant::now() < deadline, "the lease never expired");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_quorum_opens_only_when_enough_instances_voted() {
    let Some(server) = support::redis_or_skip("a_quorum_opens_only_when_enough_instances_voted")
    else {
        return;
    };
    let store = RedisStore::new(&server.url())
        .unwrap()
        .timeout(Duration::from_secs(2));
    let vote = |origin| Trip {
        quorum: 2,
        ..trip(0, "", origin)
    };
    let first = store.trip(vote("a")).await.unwrap();
    assert!(
        matches!(
            first,
            Cas::Voted {
                votes: 1,
                quorum: 2,
                ..
            }
        ),
        "{first:?}"
    );
    let again = store.trip(vote("a")).await.unwrap();
    assert!(
        matches!(again, Cas::Voted { votes: 1, .. }),
        "one instance, one vote"
    );
    let second = store.trip(vote("b")).await.unwrap();
    assert!(
        matches!(second, Cas::Applied(ref r) if r.state == FleetState::Open),
        "{second:?}"
    );
}

#[tokio::test]
async fn counts_add_up_across_instances_in_the_window() {
    let Some(server) = support::redis_or_skip("counts_add_up_across_instances_in_the_window")
    else {
        return;
    };
    let store = RedisStore::new(&server.url())
        .unwrap()
        .timeout(Duration::from_secs(2));
    let window = Duration::from_secs(60);
    store.add_counts("db", window, 10, 2).await.unwrap();
    let (calls, failures) = store.add_counts("db", window, 5, 5).await.unwrap();
    // Both adds land in the current or the previous bucket.
    assert_eq!((calls, failures), (15, 7));
}

#[tokio::test]
async fn a_slow_redis_costs_one_timeout_and_a_gone_one_an_error() {
    let Some(mut server) =
        support::redis_or_skip("a_slow_redis_costs_one_timeout_and_a_gone_one_an_error")
    else {
        return;
    };
    let timeout = Duration::from_millis(50);
    let store = RedisStore::new(&server.url()).unwrap().timeout(timeout);
    store.read(&["db".into()]).await.expect("up");

    server.pause().unwrap();
    let start = Instant::now();
    let slow = store.read(&["db".into()]).await;
    let waited = start.elapsed();
    server.resume().unwrap();
    assert_eq!(slow, Err(StoreError::Timeout));
    // Documented bound: one call costs its timeout; 2 s leaves room for a busy machine.
    assert!(waited < Duration::from_secs(2), "waited {waited:?}");

    server.kill();
    let gone = store.read(&["db".into()]).await;
    assert!(gone.is_err(), "{gone:?}");

    // Back (empty, a new run): the connection manager reconnects.
    server.restart().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let record = loop {
        match store.read(&["db".into()]).await {
            Ok(mut records) => break records.remove(0),
            Err(e) => assert!(Instant::now() < deadline, "never reconnected: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(record.epoch, 0);
}

#[tokio::test]
async fn a_malformed_hold_reads_as_no_hold_and_every_other_group_reads_as_stored() {
    let test = "a_malformed_hold_reads_as_no_hold_and_every_other_group_reads_as_stored";
    let Some(server) = support::redis_or_skip(test) else {
        return;
    };
    let store = RedisStore::new(&server.url())
        .unwrap()
        .timeout(Duration::from_secs(2));
    let held = store
        .hold("llm", Duration::from_secs(30), "a")
        .await
        .unwrap();
    store
        .hold("search", Duration::from_secs(30), "a")
        .await
        .unwrap();

    let mut raw = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    for bad in ["soon", "-5", "1.5", "inf", "nan", "1e300"] {
        redis::cmd("HSET")
            .arg("breaker:fleet:g:search")
            .arg("hold")
            .arg(bad)
            .query::<()>(&mut raw)
            .unwrap();
        let read = store
            .read(&["llm".into(), "search".into()])
            .await
            .unwrap_or_else(|e| panic!("hold {bad:?}: {e}"));
        assert_eq!(read[0].hold_until_ms, held.hold_until_ms, "{bad:?}");
        assert_eq!(read[0].hold_origin, "a");
        assert_eq!(read[1].hold_until_ms, 0, "{bad:?} is no hold");
        assert_eq!(read[1].hold_remaining(), Duration::ZERO);
    }

    let replaced = store
        .hold("search", Duration::from_secs(10), "b")
        .await
        .unwrap();
    assert_eq!(
        replaced.hold_origin, "b",
        "a new hold replaces a malformed one"
    );
    assert_eq!(replaced.hold_remaining(), Duration::from_secs(10));
}
