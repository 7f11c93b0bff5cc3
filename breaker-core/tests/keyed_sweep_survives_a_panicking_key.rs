//! A sweep runs the key type's `Hash` and `Eq` (and the clock) while it evicts:
//! when the removal of an evicted key panics, the panic reaches the caller that
//! was creating a key, and the group is left whole: every key still held and
//! callable, every count kept once, the key count true. (A panic while the map
//! grows is another matter: `KeyedGroup`'s docs say why keys must not panic.)

use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

use breaker_core::{Config, KeyedGroup};

static PANIC_IN_HASH: AtomicBool = AtomicBool::new(false);

/// Hashing any key but 3 panics while `PANIC_IN_HASH` is set.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Key(u64);

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if PANIC_IN_HASH.load(SeqCst) && self.0 != 3 {
            panic!("a key type's Hash panicked");
        }
        self.0.hash(state)
    }
}

#[test]
fn a_panic_in_an_evicted_keys_hash_leaves_every_key_and_count_in_place() {
    let group: KeyedGroup<Key> = KeyedGroup::new("panicky-keys", Config::default(), 2);
    for k in [1, 2] {
        group.breaker(&Key(k)).try_acquire().unwrap().success();
    }
    // Key 3 is new and the group is full: the sweep removes key 1 or 2, and
    // the removal hashes it.
    PANIC_IN_HASH.store(true, SeqCst);
    let creating = catch_unwind(AssertUnwindSafe(|| group.breaker(&Key(3))));
    PANIC_IN_HASH.store(false, SeqCst);
    assert!(
        creating.is_err(),
        "the sweep's removal must have met the panic"
    );

    let m = group.metrics();
    assert_eq!((m.keys, m.successes, m.evictions), (2, 2, 0));
    let mut held: Vec<u64> = group.keys().into_iter().map(|(k, _)| k.0).collect();
    held.sort_unstable();
    assert_eq!(held, [1, 2]);
    for k in [1, 2] {
        group.breaker(&Key(k)).try_acquire().unwrap().success();
    }
    // Once the keys hash again, the sweep evicts as it should, and the
    // evicted counts are in the sums once.
    group.breaker(&Key(3)).try_acquire().unwrap().success();
    let m = group.metrics();
    assert_eq!(m.successes, 5);
    assert!(m.evictions >= 1);
    assert_eq!(m.keys, group.keys().len());
}
