//! With a registry subscriber naming every key, a keyed group churned through
//! many more keys than `key_capacity` still keeps its live heap bounded: a key's
//! name goes with its breaker when the key is evicted.

use breaker_core::{Config, Event, KeyedGroup, ManualClock, Registry};

mod support;

use support::{live_bytes, CountingAlloc};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

#[test]
fn names_of_evicted_keys_are_freed() {
    const KEYS: u64 = 100_000;
    const MAX: usize = 1_000;
    let registry = Registry::with_clock(ManualClock::new());
    let _subscription = registry.subscribe(|_: &Event| {});
    let hosts: KeyedGroup<String> = registry.keyed("names", &Config::default(), MAX).unwrap();
    let base = live_bytes();
    let mut at_cap = 0;
    let mut peak = 0;
    for i in 0..KEYS {
        // Long names: a leaked one would show (100,000 x ~100 B = 10 MB).
        let host = format!("host-{i:06}.a-rather-long-domain-name-for-a-host.example.com");
        hosts
            .breaker(host.as_str())
            .try_acquire()
            .unwrap()
            .success();
        if i == 5 * MAX as u64 {
            at_cap = live_bytes() - base;
        }
        if i > 5 * MAX as u64 && i % 97 == 0 {
            peak = peak.max(live_bytes() - base);
        }
    }
    assert!(hosts.metrics().evictions > 90_000);
    println!("live heap at cap: {at_cap} B; peak after: {peak} B");
    assert!(
        peak <= at_cap + at_cap / 5,
        "heap grew from {at_cap} to {peak}"
    );
}
