//! A key's memory does not grow with the threads that called it: a breaker's
//! counters hold a cell for each of the first few thread slots and share a
//! fixed set of cells among all other threads, so a keyed group called from a
//! 64-thread runtime holds about what it holds called from 8, and every call
//! is still counted exactly once.

use std::sync::Barrier;

use breaker_core::{Config, KeyedGroup};

mod support;

use support::{live_bytes, CountingAlloc};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

const KEYS: u64 = 1_000;
const ROUNDS: u64 = 10;

/// Live bytes per key of a new group of `KEYS` keys, every key called
/// (`ROUNDS` times, as success and failure alternately) by each of `threads` threads,
/// all alive at once so that each holds its own thread slot; checks that
/// every call was counted once.
fn per_key_after(threads: usize) -> isize {
    let config = Config::builder().threshold(1_000_000).build().unwrap();
    let before = live_bytes();
    let group = KeyedGroup::<u64>::new("threads", config, KEYS as usize);
    let all_alive = Barrier::new(threads);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                all_alive.wait();
                for round in 0..ROUNDS {
                    for key in 0..KEYS {
                        let breaker = group.breaker(&key);
                        let permit = breaker.try_acquire().unwrap();
                        if round % 2 == 0 {
                            permit.success();
                        } else {
                            permit.failure();
                        }
                    }
                }
                all_alive.wait();
            });
        }
    });
    let m = group.metrics();
    let calls = ROUNDS * KEYS * threads as u64;
    assert_eq!((m.keys as u64, m.calls), (KEYS, calls), "{threads} threads");
    assert_eq!((m.successes, m.failures), (calls / 2, calls / 2));
    let bytes = (live_bytes() - before) / KEYS as isize;
    drop(group);
    bytes
}

#[test]
fn a_key_called_by_sixty_four_threads_holds_at_most_three_kib_more_than_by_one() {
    let one = per_key_after(1);
    let eight = per_key_after(8);
    let many = per_key_after(64);
    println!("bytes per key: 1 thread {one}, 8 threads {eight}, 64 threads {many}");
    // The bound: 15 owned cells (the tables of 1, 2, 4 and 8 cells a
    // breaker's table grows through) and 8 shared ones, of 128 bytes each.
    let bound = (15 + 8) * 128;
    assert!(
        many - one <= bound,
        "64 threads add {} bytes per key to one thread's {one}, past {bound}",
        many - one
    );
    assert!(eight <= many, "8 threads {eight}, 64 threads {many}");
}
