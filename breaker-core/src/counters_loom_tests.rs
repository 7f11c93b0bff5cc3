//! Loom models of one breaker's counters: a slot handed from a thread that
//! is done to the next, while another thread grows the table.

use loom::sync::Arc;

use super::*;

/// Bounded as the breaker's models are: the races here need one or two
/// preemptions each.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// Counts `event` as the owner of `slot` does in `Counters::bump` (the
/// thread-locals that give a thread its slot are not loom's, so the model
/// names the slot): the cell of the current table if it holds one, else the
/// slow path's growth.
fn bump_as(counters: &Counters, slot: usize, event: Counter) {
    let offset = slot * CELL_BYTES;
    if offset < counters.size.load(Acquire) {
        let cells = counters.cells.load(Acquire);
        // SAFETY: as in `Counters::bump`: `offset` is below the size of the
        // live table `cells` points at.
        increment(unsafe { &*cells.byte_add(offset) }, event);
    } else {
        increment(counters.grow_to(slot), event);
    }
}

/// Slot 0 counts, then is handed (through a mutex, as exited threads hand
/// theirs back) to another thread that counts on from the exact count, while
/// slot 2's first count grows the table: no count is lost or doubled.
#[test]
fn loom_a_slot_handed_on_while_the_table_grows_keeps_every_count() {
    model(|| {
        let counters = Arc::new(Counters::new());
        let free = Arc::new(loom::sync::Mutex::new(None::<usize>));
        // The table exists before the model's threads: slot 0 has its cell.
        bump_as(&counters, 0, Counter::Successes);
        let first = {
            let (counters, free) = (counters.clone(), free.clone());
            loom::thread::spawn(move || {
                bump_as(&counters, 0, Counter::Failures);
                *free.lock().unwrap() = Some(0);
            })
        };
        let next = {
            let (counters, free) = (counters.clone(), free.clone());
            loom::thread::spawn(move || {
                let Some(slot) = free.lock().unwrap().take() else {
                    return false;
                };
                bump_as(&counters, slot, Counter::Failures);
                true
            })
        };
        let grower = {
            let counters = counters.clone();
            loom::thread::spawn(move || bump_as(&counters, 2, Counter::Failures))
        };
        first.join().unwrap();
        let handed = next.join().unwrap();
        grower.join().unwrap();
        let totals = counters.totals();
        assert_eq!(totals.get(Counter::Successes), 1);
        assert_eq!(totals.get(Counter::Failures), 2 + u64::from(handed));
    });
}
