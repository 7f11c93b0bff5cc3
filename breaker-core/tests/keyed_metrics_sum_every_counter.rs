//! A keyed group's metrics sum every counter its keys show, field by field:
//! timeouts, bulkhead refusals, latency trips, probes and transitions as well
//! as calls, for the keys it holds and for the keys it evicted.

use std::time::Duration;

use breaker_core::{
    Config, KeyedGroup, KeyedMetrics, ManualClock, Metrics, OpenReason, Registry, State,
};

const OPEN: Duration = Duration::from_secs(1);
const TIMEOUT: Duration = Duration::from_millis(100);

/// Every counter of one key, by the name both structs give it.
fn key_counters(m: &Metrics) -> Vec<(&'static str, u64)> {
    let mut counters = vec![
        ("calls", m.calls),
        ("successes", m.successes),
        ("failures", m.failures),
        ("ignored", m.ignored),
        ("rejected", m.rejected),
        ("abandoned", m.abandoned),
        ("stale", m.stale),
        ("probes_succeeded", m.probes_succeeded),
        ("probes_failed", m.probes_failed),
        ("probes_reclaimed", m.probes_reclaimed),
        ("times_opened", m.times_opened),
        ("timeouts", m.timeouts),
        ("bulkhead_rejected", m.bulkhead_rejected),
        ("latency_trips", m.latency_trips),
    ];
    counters.extend(transitions(&m.transitions));
    counters
}

/// Every counter of the group, in the order of [`key_counters`].
fn group_counters(m: &KeyedMetrics) -> Vec<(&'static str, u64)> {
    let mut counters = vec![
        ("calls", m.calls),
        ("successes", m.successes),
        ("failures", m.failures),
        ("ignored", m.ignored),
        ("rejected", m.rejected),
        ("abandoned", m.abandoned),
        ("stale", m.stale),
        ("probes_succeeded", m.probes_succeeded),
        ("probes_failed", m.probes_failed),
        ("probes_reclaimed", m.probes_reclaimed),
        ("times_opened", m.times_opened),
        ("timeouts", m.timeouts),
        ("bulkhead_rejected", m.bulkhead_rejected),
        ("latency_trips", m.latency_trips),
    ];
    counters.extend(transitions(&m.transitions));
    counters
}

fn transitions(t: &breaker_core::TransitionCounts) -> Vec<(&'static str, u64)> {
    let states = [
        State::Closed,
        State::Open,
        State::HalfOpen,
        State::ForcedOpen,
        State::ForcedClosed,
    ];
    states
        .iter()
        .flat_map(|&from| states.iter().map(move |&to| (from, to)))
        .map(|(from, to)| ("transitions", t.get(from, to)))
        .collect()
}

fn summed(keys: &[Metrics]) -> Vec<(&'static str, u64)> {
    let mut sums = key_counters(&keys[0]);
    for m in &keys[1..] {
        for (sum, (_, n)) in sums.iter_mut().zip(key_counters(m)) {
            sum.1 += n;
        }
    }
    sums
}

/// A group whose keys can time out, meet a full bulkhead and trip on latency.
fn guarded() -> Config {
    Config::builder()
        .window_calls(10)
        .min_calls(2)
        .failure_rate(0.5)
        .latency_p99(Duration::from_millis(50))
        .timeout(Duration::from_millis(TIMEOUT.as_millis() as u64))
        .max_concurrent(1)
        .open(Duration::from_millis(OPEN.as_millis() as u64))
        .probe_timeout(Duration::from_millis(500))
        .build()
        .unwrap()
}

/// Makes each key of `group` show some of every counter.
fn exercise(group: &KeyedGroup<String>, clock: &ManualClock) {
    // Slow answers: the p99 rule trips, a claim is refused, a probe
    // succeeds and closes.
    let slow = group.breaker("slow");
    for _ in 0..2 {
        let permit = slow.try_acquire().unwrap();
        clock.advance(Duration::from_millis(80));
        permit.success();
    }
    assert_eq!(slow.state(), State::Open);
    assert!(slow.try_acquire().is_err());
    clock.advance(OPEN);
    slow.try_acquire().unwrap().success();
    assert_eq!(slow.state(), State::Closed);

    // A hanging dependency: two timeouts trip it; a probe fails; a later
    // probe overruns its lease, is reclaimed, and its verdict is stale.
    let hangs = group.breaker("hangs");
    for _ in 0..2 {
        let permit = hangs.try_acquire().unwrap();
        clock.advance(TIMEOUT);
        breaker_core::__private::timed_out(&hangs, permit, TIMEOUT);
    }
    assert_eq!(hangs.state(), State::Open);
    clock.advance(OPEN);
    hangs.try_acquire().unwrap().failure();
    clock.advance(OPEN * 10);
    let overran = hangs.try_acquire().unwrap();
    clock.advance(Duration::from_secs(1));
    let reclaiming = hangs.try_acquire().unwrap();
    overran.success(); // stale: its slot was taken back
    reclaiming.ignore();
    hangs.reset();

    // A full bulkhead, an ignored error and a cancelled call.
    let busy = group.breaker("busy");
    let slot = busy.enter_bulkhead().unwrap();
    let refused = busy.enter_bulkhead().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::BulkheadFull);
    drop(slot);
    busy.try_acquire().unwrap().ignore();
    drop(busy.try_acquire().unwrap());
    busy.force_closed();
    busy.reset();
}

#[test]
fn the_group_sums_every_counter_of_the_keys_it_holds_and_evicted() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let group = registry.keyed::<String>("guarded", &guarded(), 3).unwrap();
    exercise(&group, &clock);
    let keys: Vec<Metrics> = ["slow", "hangs", "busy"]
        .iter()
        .map(|&key| group.get(key).unwrap().metrics())
        .collect();
    let held = summed(&keys);
    for (name, n) in &held[..14] {
        assert!(*n > 0, "the keys show no {name}: {held:?}");
    }
    let m = group.metrics();
    assert_eq!(m.keys, 3);
    assert_eq!(group_counters(&m), held, "the sums of the keys held");

    // Every key is closed now: new keys evict them, and the sums keep them.
    for i in 0..20 {
        group
            .breaker(format!("new-{i}").as_str())
            .try_acquire()
            .unwrap()
            .success();
    }
    let m = group.metrics();
    assert!(["slow", "hangs", "busy"]
        .iter()
        .all(|&key| group.get(key).is_none()));
    assert!(m.evictions >= 3, "{m:?}");
    let mut want = held;
    want[0].1 += 20; // calls
    want[1].1 += 20; // successes
    assert_eq!(group_counters(&m), want, "the sums of the keys evicted");
}
