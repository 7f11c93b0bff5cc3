//! A keyed group under churn: how long a call for a key the group
//! holds takes while another thread keeps creating keys (so the group keeps
//! sweeping and evicting), as percentiles of single calls; and what a new key
//! costs, with one and two threads creating.
//!
//! `cargo bench -p breaker-benches --bench keyed_churn`. Wall-clock figures of
//! single calls, taken with `Instant`: compare runs on one machine only, and
//! run it under `chrt -f 80` on a busy one.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use breakerbox::{keyed::KeyedGroup, Config};

#[path = "readme.rs"]
mod readme;

const KEY_CAPACITY: usize = 10_000;
const HOT_KEYS: usize = 64;

fn group(name: &str) -> KeyedGroup<String> {
    let config = Config::builder()
        .threshold(3)
        .build()
        .expect("valid config");
    KeyedGroup::new(name, config, KEY_CAPACITY)
}

/// One call through `key`'s breaker.
fn call(group: &KeyedGroup<String>, key: &str) {
    let breaker = group.breaker(key);
    breaker.try_acquire().expect("closed").success();
}

/// Percentiles of single calls for `HOT_KEYS` held keys on this thread, for
/// `length`, while another thread creates a new key per call.
fn hot_calls_under_churn(length: Duration) -> String {
    let group = group("churn-hot");
    let hot: Vec<String> = (0..HOT_KEYS).map(|i| format!("hot-{i}.example")).collect();
    for key in &hot {
        call(&group, key);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let churner = {
        let (group, stop) = (group.clone(), Arc::clone(&stop));
        thread::spawn(move || {
            let mut created = 0u64;
            let mut key = String::new();
            while !stop.load(Relaxed) {
                key.clear();
                key.push_str("new-");
                key.push_str(&created.to_string());
                call(&group, &key);
                created += 1;
            }
            created
        })
    };
    let mut took = Vec::with_capacity(4_000_000);
    let start = Instant::now();
    let mut i = 0;
    while start.elapsed() < length {
        let key = &hot[i % HOT_KEYS];
        let t = Instant::now();
        call(&group, black_box(key));
        took.push(t.elapsed().as_nanos() as u64);
        i += 1;
    }
    stop.store(true, Relaxed);
    let created = churner.join().expect("churner");
    took.sort_unstable();
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize];
    let m = group.metrics();
    format!(
        "| held key, while another thread creates keys | {} | {} | {} | {} | {} | {} calls; {created} keys created, {} evicted |",
        at(0.5),
        at(0.99),
        at(0.999),
        at(0.9999),
        took[took.len() - 1],
        took.len(),
        m.evictions,
    )
}

/// Nanoseconds per new key with `threads` threads creating `per_thread` keys
/// each, and the slowest single creation.
fn new_keys(threads: usize, per_thread: usize) -> String {
    let group = group("churn-new");
    let start = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let group = group.clone();
            thread::spawn(move || {
                let mut slowest = Duration::ZERO;
                for i in 0..per_thread {
                    let key = format!("t{t}-{i}.example");
                    let s = Instant::now();
                    call(&group, &key);
                    slowest = slowest.max(s.elapsed());
                }
                slowest
            })
        })
        .collect();
    let slowest = workers
        .into_iter()
        .map(|w| w.join().expect("worker"))
        .max()
        .unwrap_or_default();
    let per_key = start.elapsed().as_nanos() as f64 / (threads * per_thread) as f64;
    format!(
        "| new keys, {threads} thread(s), {} keys | {per_key:.0} ns per key (all threads together) | slowest single creation {slowest:?} |",
        threads * per_thread
    )
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let held = hot_calls_under_churn(Duration::from_secs(3));
    let one = new_keys(1, 400_000);
    let two = new_keys(2, 200_000);
    let out = format!(
        "A keyed group at key_capacity = {KEY_CAPACITY}, `String` keys.\n\n\
         | case | p50 ns | p99 ns | p99.9 ns | p99.99 ns | max ns | |\n\
         |---|---:|---:|---:|---:|---:|---|\n\
         {held}\n\n\
         | case | cost | |\n\
         |---|---|---|\n\
         {one}\n\
         {two}\n"
    );
    println!("\n## Keyed group under churn\n\n{out}");
    readme::write_if_asked(
        std::path::Path::new(readme::README),
        &[("keyed_churn", out)],
    );
}
