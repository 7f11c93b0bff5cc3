//! A keyed group's memory stays bounded even when its keys fail and are never
//! called again (a crawler meeting dead hosts): an open key is kept while its
//! open time runs, so a host that is down stays refused, and may be evicted
//! once no call has come for it during one more open duration; a half-open key
//! is kept while a probe holds its slot, and may be evicted once its probes
//! ended (a cancelled one included) and none was admitted for an open duration.

use std::time::Duration;

use breaker_core::{Config, ManualClock, Registry, State};

const OPEN: Duration = Duration::from_secs(60);

fn one_failure_opens() -> Config {
    Config::builder()
        .threshold(1)
        .open(Duration::from_millis(OPEN.as_millis() as u64))
        .build()
        .unwrap()
}

#[test]
fn open_keys_stay_while_their_open_time_runs_and_go_once_idle_past_it() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = registry
        .keyed::<u64>("crawl", &one_failure_opens(), 16)
        .unwrap();
    for host in 0..5_000u64 {
        hosts.breaker_for(&host).try_acquire().unwrap().failure();
    }
    // Every one of them is open and within its open time: none may go, so the
    // group holds them all (memory past `key_capacity` is the price of remembering
    // that 5,000 hosts are down).
    let m = hosts.metrics();
    assert_eq!((m.keys, m.open), (5_000, 5_000));
    assert_eq!(hosts.breaker_for(&7u64).state(), State::Open);

    // Their open time ran out, but not yet another one: still kept.
    clock.advance(OPEN + OPEN / 2);
    for host in 10_000..10_100u64 {
        hosts.breaker_for(&host).try_acquire().unwrap().success();
    }
    assert!(hosts.metrics().keys >= 5_000, "{:?}", hosts.metrics());

    // Idle for a whole open duration past it: new keys push them out.
    clock.advance(OPEN);
    for host in 20_000..20_100u64 {
        hosts.breaker_for(&host).try_acquire().unwrap().success();
    }
    let m = hosts.metrics();
    assert!(
        m.keys <= 16 + 100,
        "{} keys held for key_capacity = 16",
        m.keys
    );
    assert!(m.evictions >= 5_000, "{} evictions", m.evictions);
    // Nothing is lost from the group's counts.
    assert_eq!(m.failures, 5_000);
    assert_eq!(m.successes, 200);
}

#[test]
fn a_key_called_again_after_its_open_time_is_probed_not_evicted_unseen() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = registry
        .keyed::<u64>("probe", &one_failure_opens(), 1)
        .unwrap();
    hosts.breaker_for(&1u64).try_acquire().unwrap().failure();
    clock.advance(OPEN);
    // Its open time is over: the next call is its probe, in the same breaker.
    let host = hosts.breaker_for(&1u64);
    let probe = host.try_acquire().unwrap();
    assert!(probe.is_probe());
    probe.failure();
    assert_eq!(hosts.breaker_for(&1u64).metrics().probes_failed, 1);
    // Reopened with its time ahead: a new key does not push it out.
    hosts.breaker_for(&2u64).try_acquire().unwrap().success();
    assert_eq!(hosts.breaker_for(&1u64).state(), State::Open);
}

#[test]
fn half_open_keys_whose_probes_were_cancelled_go_once_idle() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = registry
        .keyed::<u64>("cancelled", &one_failure_opens(), 100)
        .unwrap();
    for host in 0..500u64 {
        hosts.breaker_for(&host).try_acquire().unwrap().failure();
    }
    clock.advance(OPEN);
    // Each host's probe is claimed and dropped without a verdict (a cancelled
    // request): the slot is released, the key stays half-open.
    for host in 0..500u64 {
        let breaker = hosts.breaker_for(&host);
        let probe = breaker.try_acquire().unwrap();
        assert!(probe.is_probe());
        drop(probe);
    }
    let m = hosts.metrics();
    assert_eq!((m.keys, m.half_open, m.abandoned), (500, 500, 500));

    // Just cancelled: the next call of each is still a probe, so they stay.
    for host in 1_000..1_100u64 {
        hosts.breaker_for(&host).try_acquire().unwrap().success();
    }
    assert_eq!(hosts.metrics().half_open, 500, "{:?}", hosts.metrics());

    // No probe admitted for an open duration: new keys push them out, and
    // the group is back within its bound.
    clock.advance(OPEN);
    for host in 2_000..2_100u64 {
        hosts.breaker_for(&host).try_acquire().unwrap().success();
    }
    let m = hosts.metrics();
    assert!(
        m.keys <= 100,
        "{} keys held for key_capacity = 100: {m:?}",
        m.keys
    );
    assert!(m.evictions >= 500, "{} evictions", m.evictions);
    assert_eq!((m.failures, m.abandoned, m.successes), (500, 500, 200));
}

#[test]
fn a_half_open_key_whose_probe_runs_is_kept_however_long() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let hosts = registry
        .keyed::<u64>("probing", &one_failure_opens(), 1)
        .unwrap();
    hosts.breaker_for(&1u64).try_acquire().unwrap().failure();
    clock.advance(OPEN);
    let host = hosts.breaker_for(&1u64);
    let probe = host.try_acquire().unwrap();
    clock.advance(OPEN * 100);
    for other in 2..50u64 {
        hosts.breaker_for(&other).try_acquire().unwrap().success();
    }
    assert!(
        host.same_as(&hosts.get(&1u64).unwrap()),
        "the probing key stays"
    );
    probe.success();
    assert_eq!(hosts.breaker_for(&1u64).state(), State::Closed);
}

#[test]
fn a_half_open_key_whose_probe_was_leaked_goes_once_its_lease_ran_out() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_millis(OPEN.as_millis() as u64))
        .probe_timeout(Duration::from_millis(10 * OPEN.as_millis() as u64))
        .build()
        .unwrap();
    let hosts = registry.keyed::<u64>("leaked", &config, 1).unwrap();
    hosts.breaker_for(&1u64).try_acquire().unwrap().failure();
    clock.advance(OPEN);
    std::mem::forget(hosts.breaker_for(&1u64).try_acquire().unwrap());
    // The probe holds its slot until its lease runs out: kept.
    clock.advance(OPEN * 5);
    hosts.breaker_for(&2u64).try_acquire().unwrap().success();
    let held = hosts
        .get(&1u64)
        .expect("a probe within its lease holds the key");
    assert_eq!(held.metrics().probes_in_flight, 1);
    drop(held);
    // Its lease ran out (a claim would reclaim the slot): it may go.
    clock.advance(OPEN * 5);
    hosts.breaker_for(&3u64).try_acquire().unwrap().success();
    assert!(hosts.get(&1u64).is_none(), "{:?}", hosts.keys());
}
