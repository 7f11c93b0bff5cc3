//! Heap bytes per breaker and per key, counted by a global allocator: an idle
//! breaker, the same after one thread's first call, and a keyed group's bytes per
//! key at its `key_capacity` and by the threads that called its keys, beside the
//! peers' idle breakers.

use std::fmt::Write;
use std::time::Duration;

use breakerbox::{events::Event, keyed::KeyedGroup, Breaker, Config, Registry};

#[path = "readme.rs"]
mod readme;

#[path = "../breaker-core/tests/support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{live_bytes, CountingAlloc};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Live bytes per item that `make` leaves behind, over `n` items kept alive.
fn per_item<T>(n: usize, mut make: impl FnMut(usize) -> T) -> isize {
    let mut kept = Vec::with_capacity(n);
    let before = live_bytes();
    for i in 0..n {
        kept.push(make(i));
    }
    let bytes = live_bytes() - before;
    drop(kept);
    bytes / n as isize
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let config = Config::builder().threshold(3).build().unwrap();
    let _warm = Breaker::new("heap", config);
    let idle = per_item(1_000, |_| Breaker::new("heap", config));
    let used = per_item(1_000, |_| {
        let b = Breaker::new("heap", config);
        b.try_acquire().unwrap().success();
        b
    });
    const MAX: usize = 10_000;
    let group = KeyedGroup::<String>::new("heap-keyed", config, MAX);
    let before = live_bytes();
    for i in 0..5 * MAX {
        group
            .breaker(format!("host-{i}").as_str())
            .try_acquire()
            .unwrap()
            .success();
    }
    let keys = group.metrics().keys;
    let per_key = (live_bytes() - before) / keys as isize;
    // A config reload that goes back and forth (a SIGHUP that tunes a
    // threshold, say), 100 times over every key held.
    let before_reloads = live_bytes();
    for reload in 0..100 {
        let threshold = if reload % 2 == 0 { 4 } else { 3 };
        group
            .reconfigure(Config::builder().threshold(threshold).build().unwrap())
            .unwrap();
    }
    let per_key_reloads = (live_bytes() - before_reloads) / keys as isize;
    // What a registry subscriber adds to each key held: its name, for
    // `Event::KeyedTransition` (nothing until someone subscribes).
    let registry = Registry::new();
    let named = registry
        .keyed::<String>("heap-named", &config, MAX)
        .unwrap();
    for i in 0..MAX {
        named.breaker(format!("host-{i}").as_str());
    }
    let before_subscribing = live_bytes();
    let subscription = registry.subscribe(|_: &Event| {});
    let per_key_named = (live_bytes() - before_subscribing) / MAX as isize;
    drop(subscription);
    // A keyed group whose every key was called by `threads` threads, all
    // alive at once (so each holds its own thread slot while it counts).
    let per_key_threads = [1usize, 8, 32, 64].map(|threads| {
        const KEYS: u64 = 1_000;
        let before = live_bytes();
        let group = KeyedGroup::<u64>::new("heap-threads", config, KEYS as usize);
        let all_alive = std::sync::Barrier::new(threads);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    all_alive.wait();
                    for key in 0..KEYS {
                        group.breaker(&key).try_acquire().unwrap().success();
                    }
                    all_alive.wait();
                });
            }
        });
        assert_eq!(group.metrics().successes, KEYS * threads as u64);
        let bytes = (live_bytes() - before) / KEYS as isize;
        drop(group);
        (threads, bytes)
    });
    let failsafe = per_item(1_000, |_| {
        let backoff = failsafe::backoff::constant(Duration::from_secs(30));
        let policy = failsafe::failure_policy::consecutive_failures(3, backoff);
        failsafe::Config::new().failure_policy(policy).build()
    });
    let recloser = per_item(1_000, |_| {
        recloser::Recloser::custom()
            .error_rate(1.0)
            .closed_len(3)
            .open_wait(Duration::from_secs(30))
            .build()
    });
    let mut out = String::from("Live heap bytes (a counting allocator):\n\n");
    let _ = writeln!(out, "| case | bytes |");
    let _ = writeln!(out, "|---|---:|");
    let _ = writeln!(out, "| breaker, idle | {idle} |");
    let _ = writeln!(out, "| breaker, after one thread's call | {used} |");
    let _ = writeln!(out, "| keyed group, per key held at key_capacity = {MAX} ({keys} keys, `String` keys, one thread) | {per_key} |");
    let _ = writeln!(out, "| keyed group, per key held, added by 100 reloads alternating two configs | {per_key_reloads} |");
    let _ = writeln!(out, "| keyed group, per key held, added by a registry subscriber (`host-N` keys) | {per_key_named} |");
    for (threads, bytes) in per_key_threads {
        let threads = match threads {
            1 => "1 thread".to_owned(),
            n => format!("{n} threads"),
        };
        let _ = writeln!(out, "| keyed group, per key held (1,000 `u64` keys), every key called by {threads} | {bytes} |");
    }
    let _ = writeln!(out, "| failsafe 1.3, idle | {failsafe} |");
    let _ = writeln!(out, "| recloser 1.4, idle (closed_len 3) | {recloser} |");
    println!("\n## Heap per breaker\n\n{out}");
    readme::write_if_asked(std::path::Path::new(readme::README), &[("heap", out)]);
}
