//! A keyed group churned through far more keys than `key_capacity` keeps its live heap
//! bounded by the cap, and never evicts a key within its open time.

use breaker_core::{Config, KeyedGroup, ManualClock, Registry, State};
use std::time::Duration;

mod support;

use support::{live_bytes, CountingAlloc};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

#[test]
fn a_million_keys_through_ten_thousand_slots_keep_the_heap_flat_and_every_open_key() {
    const KEYS: u64 = 1_000_000;
    const MAX: usize = 10_000;
    let registry = Registry::with_clock(ManualClock::new()); // time never passes
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(3600))
        .build()
        .unwrap();
    let hosts: KeyedGroup<String> = registry.keyed("hosts", &config, MAX).unwrap();
    let base = live_bytes();
    let mut at_cap = None;
    let mut peak = 0;
    let mut opened = Vec::new();
    for i in 0..KEYS {
        let host = format!("host-{i}.example");
        let breaker = hosts.breaker(host.as_str());
        let permit = breaker.try_acquire().expect("a new key is closed");
        if i % 1_000 == 0 {
            permit.failure(); // opens this host for an hour, far past this test
            opened.push(host);
        } else {
            permit.success();
        }
        drop(breaker);
        if i == 5 * MAX as u64 {
            at_cap = Some(live_bytes() - base);
        }
        if i > 5 * MAX as u64 && i % 997 == 0 {
            peak = peak.max(live_bytes() - base);
        }
    }
    let at_cap = at_cap.unwrap();
    let per_key = at_cap / MAX as isize;
    println!("live heap at cap: {at_cap} B ({per_key} B per key); peak after: {peak} B");
    // Flat: beyond the keys held at the cap, only the open keys (1,000 of them,
    // kept within their open time, which outlasts this test; an open key also holds its events' queue and counts) may
    // add their share, and a tenth for the allocator's slack. A leak of one
    // key in a hundred would add about 10 MB here.
    let open_share = opened.len() as isize * 2 * per_key;
    assert!(
        peak <= at_cap + open_share + at_cap / 10,
        "heap grew from {at_cap} to {peak}"
    );
    assert!(per_key < 2_048, "{per_key} B per key");
    let m = hosts.metrics();
    assert!(m.keys <= MAX + opened.len(), "{} keys held", m.keys);
    assert!(m.evictions >= KEYS - (MAX + opened.len()) as u64);
    assert_eq!(m.open, opened.len());
    assert_eq!(m.successes + m.failures, KEYS, "no count lost to eviction");
    assert_eq!(m.failures, opened.len() as u64);
    for host in &opened {
        let breaker = hosts
            .get(host.as_str())
            .expect("an open key is not evicted within its open time");
        assert_eq!(breaker.state(), State::Open, "{host}");
    }
    let listed = hosts.keys();
    assert_eq!(listed.len(), m.keys);
    assert_eq!(
        listed.iter().filter(|(_, s)| *s == State::Open).count(),
        opened.len()
    );
}
