//! A keyed group's memory stays bounded even when its keys fail and are never
//! called again (a crawler meeting dead hosts): an open key is kept while its
//! open time runs, so a host that is down stays refused, and may be evicted
//! once no call has come for it during one more open duration.

use std::time::Duration;

use breaker_core::{Config, ManualClock, Registry, State};

const OPEN: Duration = Duration::from_secs(60);

fn one_failure_opens() -> Config {
    Config::builder()
        .threshold(1)
        .open_ms(OPEN.as_millis() as u64)
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
    // group holds them all (memory past `max_keys` is the price of remembering
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
    assert!(m.keys <= 16 + 100, "{} keys held for max_keys = 16", m.keys);
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
