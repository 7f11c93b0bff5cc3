//! The counters counted from real threads racing: exact sums, slots handed
//! back and reused, and cells that do not grow with the threads.

use super::*;
use std::sync::Arc;

#[test]
fn counts_from_many_threads_sum_exactly() {
    let counters = Arc::new(Counters::new());
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let counters = Arc::clone(&counters);
            std::thread::spawn(move || {
                for _ in 0..10_000 {
                    counters.bump(Counter::Failures);
                }
                counters.bump(Counter::Stale);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let totals = counters.totals();
    assert_eq!(totals.get(Counter::Failures), 80_000);
    assert_eq!(totals.get(Counter::Stale), 8);
    assert_eq!(totals.get(Counter::Successes), 0);
}

#[test]
fn ninety_six_threads_at_once_count_exactly() {
    let threads = 96;
    let counters = Arc::new(Counters::new());
    let all_counting = Arc::new(std::sync::Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (counters, all_counting) = (Arc::clone(&counters), Arc::clone(&all_counting));
            std::thread::spawn(move || {
                counters.bump(Counter::Failures);
                all_counting.wait(); // every thread holds its own slot at once
                for _ in 0..999 {
                    counters.bump(Counter::Failures);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(
        counters.totals().get(Counter::Failures),
        1_000 * threads as u64
    );
}

#[test]
fn a_thread_alternating_between_counters_counts_in_each_exactly() {
    let (a, b) = (Counters::new(), Counters::new());
    for _ in 0..1_000 {
        a.bump(Counter::Failures);
        b.bump(Counter::Failures);
        b.bump(Counter::Successes);
        b.bump(Counter::Successes);
    }
    assert_eq!(a.totals().get(Counter::Failures), 1_000);
    assert_eq!(a.totals().get(Counter::Successes), 0);
    assert_eq!(b.totals().get(Counter::Failures), 1_000);
    assert_eq!(b.totals().get(Counter::Successes), 2_000);
}

#[test]
fn counters_created_where_dropped_ones_lived_start_from_zero() {
    for _ in 0..100 {
        let c = Box::new(Counters::new());
        c.bump(Counter::Failures);
        assert_eq!(c.totals().get(Counter::Failures), 1);
    }
}

#[test]
fn threads_joining_and_leaving_while_tables_grow_count_exactly() {
    // Waves of threads start and exit while others count, so slots are handed
    // back and reused, and tables grow under counts in flight.
    let counters = Arc::new(Counters::new());
    let mut expected = 0u64;
    let mut running = Vec::new();
    for wave in 0..12u64 {
        for t in 0..(8 + wave * 3) {
            let c = Arc::clone(&counters);
            let n = 500 + 37 * t;
            expected += n;
            running.push(std::thread::spawn(move || {
                for _ in 0..n {
                    c.bump(Counter::Successes);
                }
            }));
        }
        // Join half of what runs: the rest keep counting into the next wave.
        let keep = running.split_off(running.len() / 2);
        for t in running {
            t.join().unwrap();
        }
        running = keep;
    }
    for t in running {
        t.join().unwrap();
    }
    assert_eq!(counters.totals().get(Counter::Successes), expected);
    assert_eq!(counters.totals().get(Counter::Failures), 0);
}

#[test]
fn an_untouched_breaker_holds_no_table_and_one_thread_one_cell_row() {
    let counters = Counters::new();
    assert_eq!(counters.cell_bytes(), 0);
    std::thread::scope(|s| {
        s.spawn(|| counters.bump(Counter::Successes));
    });
    let slot = 1 + NEXT.load(Relaxed) as usize; // an upper bound of any slot yet
    let own = slot.next_power_of_two().min(OWN_CELLS);
    assert!(counters.cell_bytes() <= (own + SHARED_CELLS) * CELL_BYTES);
    assert_eq!(counters.totals().get(Counter::Successes), 1);
}

#[test]
fn sixty_four_threads_at_once_count_exactly_in_cells_that_do_not_grow_with_them() {
    let bound = (2 * OWN_CELLS - 1 + SHARED_CELLS) * CELL_BYTES;
    let counters = Counters::new();
    for threads in [1, 8, 32, 64] {
        let all_counting = std::sync::Barrier::new(threads);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    counters.bump(Counter::Successes);
                    all_counting.wait(); // every thread holds its own slot at once
                    for _ in 0..999 {
                        counters.bump(Counter::Successes);
                        counters.bump(Counter::Timeouts);
                    }
                });
            }
        });
        assert!(
            counters.cell_bytes() <= bound,
            "{} bytes of cells after {threads} threads, past {bound}",
            counters.cell_bytes()
        );
    }
    let calls = 1_000 * (1 + 8 + 32 + 64);
    assert_eq!(counters.totals().get(Counter::Successes), calls);
    assert_eq!(counters.totals().get(Counter::Timeouts), calls - 105);
    assert!(
        counters.shared.get().is_some(),
        "threads past the owned cells counted in the shared ones"
    );
}

#[test]
fn a_reused_slot_continues_from_the_exited_threads_count() {
    let counters = Arc::new(Counters::new());
    for _ in 0..50 {
        let c = Arc::clone(&counters);
        std::thread::spawn(move || c.bump(Counter::Successes))
            .join()
            .unwrap();
    }
    assert_eq!(counters.totals().get(Counter::Successes), 50);
}
