//! Eviction is approximately least-recently-used: a sweep passes a key used
//! since the last sweep once (its second chance) and evicts keys idle since
//! then first.

use breaker_core::{Config, KeyedGroup};

#[test]
fn keys_used_since_the_last_sweep_outlive_the_idle_ones() {
    // At 16 keys, a new key sweeps the group down to 14.
    let group: KeyedGroup<u64> = KeyedGroup::new("lru", Config::default(), 16);
    for key in 0..16 {
        group.breaker(&key);
    }
    // Every key is new (used): the sweep takes back their second chances,
    // then evicts two. The 14 left are idle now.
    group.breaker(&100);
    let survivors: Vec<u64> = (0..16).filter(|k| group.get(k).is_some()).collect();
    assert_eq!(survivors.len(), 14);
    // Use all but four of them again.
    let (idle, used) = survivors.split_at(4);
    for key in used {
        group.breaker(key);
    }
    // Two more keys: the second sweeps, and must take two idle keys, not a
    // key used since the last sweep.
    group.breaker(&101);
    group.breaker(&102);
    for key in used {
        assert!(
            group.get(key).is_some(),
            "key {key} was used since the last sweep"
        );
    }
    let evicted = idle.iter().filter(|k| group.get(k).is_none()).count();
    assert_eq!(evicted, 2, "the idle keys go first");
    assert_eq!(group.metrics().evictions, 4);
}
