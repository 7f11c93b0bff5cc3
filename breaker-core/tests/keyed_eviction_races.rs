//! 64 threads calling random keys of one group while evictions run: no count is
//! lost and no call is admitted to a key after it was seen open.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

use breaker_core::{Config, KeyedGroup, ManualClock, Registry};

const THREADS: usize = 64;
const KEYS: u64 = 400;
const CALLS: u64 = 3_000;

fn bad(key: u64) -> bool {
    key % 10 == 0
}

#[test]
fn sixty_four_threads_with_concurrent_evictions_lose_no_count_and_never_pass_an_open_key() {
    let registry = Registry::with_clock(ManualClock::new());
    let config = Config::builder().threshold(3).build().unwrap();
    let group: KeyedGroup<u64> = registry.keyed("race", &config, 64).unwrap();
    let seen_open: Arc<Vec<AtomicBool>> =
        Arc::new((0..KEYS).map(|_| AtomicBool::new(false)).collect());
    let totals = Arc::new([AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)]);
    let violations = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..THREADS as u64)
        .map(|t| {
            let (group, seen_open, totals, violations) = (
                group.clone(),
                Arc::clone(&seen_open),
                Arc::clone(&totals),
                Arc::clone(&violations),
            );
            std::thread::spawn(move || {
                let mut x = t.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                for _ in 0..CALLS {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let key = x % KEYS;
                    let was_open = seen_open[key as usize].load(SeqCst);
                    let breaker = group.breaker(&key);
                    match breaker.try_acquire() {
                        Ok(permit) => {
                            if was_open {
                                violations.fetch_add(1, SeqCst);
                            }
                            if bad(key) {
                                permit.failure();
                                totals[1].fetch_add(1, SeqCst);
                            } else {
                                permit.success();
                                totals[0].fetch_add(1, SeqCst);
                            }
                        }
                        Err(_) => {
                            seen_open[key as usize].store(true, SeqCst);
                            totals[2].fetch_add(1, SeqCst);
                        }
                    };
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let m = group.metrics();
    assert_eq!(violations.load(SeqCst), 0, "calls admitted to an open key");
    assert!(m.evictions > 0, "the test must evict");
    let (successes, failures) = (totals[0].load(SeqCst), totals[1].load(SeqCst));
    // Every admitted call's verdict is counted once: as a success or a
    // failure, or as stale when its key tripped between the claim and the
    // verdict (three failures of a bad key in flight at once trip it, and a
    // fourth admitted before the trip reports into the next generation).
    assert_eq!(m.calls, successes + failures);
    assert_eq!(m.successes + m.failures + m.stale, successes + failures);
    assert!(m.successes <= successes && m.failures <= failures, "{m:?}");
    assert_eq!(m.rejected, totals[2].load(SeqCst));
    // Every bad key that was called enough is open and still held.
    for key in (0..KEYS).filter(|k| bad(*k)) {
        if seen_open[key as usize].load(SeqCst) {
            assert!(
                group.get(&key).is_some_and(|b| !b.would_admit()),
                "key {key}"
            );
        }
    }
    println!("{m:?}");
}
