//! A keyed group's summed counts never go down while keys are evicted: an
//! evicted key's counts are in the group's sums by the time it is gone from the
//! map (exporters read these as counters; a dip reads as a reset).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread;

use breaker_core::{Config, KeyedGroup, ManualClock, Registry};

#[test]
fn summed_counts_never_go_down_while_keys_are_evicted() {
    let registry = Registry::with_clock(ManualClock::new());
    let config = Config::builder().threshold(3).build().unwrap();
    let group: KeyedGroup<String> = registry.keyed("churn", &config, 64).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..3)
        .map(|t| {
            let group = group.clone();
            thread::spawn(move || {
                for i in 0..40_000u32 {
                    let breaker = group.breaker(format!("k{t}-{i}").as_str());
                    breaker
                        .try_acquire()
                        .expect("a new key is closed")
                        .success();
                }
            })
        })
        .collect();
    let reader = {
        let (group, done) = (group.clone(), done.clone());
        thread::spawn(move || {
            let (mut last, mut reads) = (0, 0u64);
            while !done.load(Relaxed) {
                let calls = group.metrics().calls;
                assert!(
                    calls >= last,
                    "the group's calls went from {last} to {calls}"
                );
                last = calls;
                reads += 1;
            }
            reads
        })
    };
    for worker in workers {
        worker.join().unwrap();
    }
    done.store(true, Relaxed);
    let reads = reader.join().unwrap();
    assert!(reads > 0);
    let m = group.metrics();
    assert_eq!(m.calls, 120_000, "no count lost to eviction");
    assert!(m.evictions > 100_000);
}
