//! The count window: a ring of the last `window_calls` outcomes behind a short
//! lock, emptied by a change of generation (see [`super::rule`]).

use parking_lot::Mutex;

use super::rule::{is_later_generation, Counts, Outcome, Rule};

///
/// Every outcome goes through one short critical section (a handful of loads and
/// stores); a count window needs one order of outcomes anyway, so a lock-free ring
/// would still funnel every outcome through one contended word.
#[derive(Debug)]
pub(crate) struct CountWindow {
    rule: Rule,
    ring: Mutex<Ring>,
}

#[derive(Debug)]
struct Ring {
    generation: u64,
    /// Where the next outcome goes.
    next: usize,
    /// Outcomes held, up to `slots.len()`.
    len: usize,
    failures: u64,
    slow: u64,
    /// Bit 0: failed; bit 1: slow. Only the `len` latest are meaningful.
    slots: Box<[u8]>,
}

const FAILED: u8 = 1;
const SLOW: u8 = 2;

impl CountWindow {
    pub(crate) fn new(window_calls: u32, rule: Rule) -> Self {
        CountWindow {
            rule,
            ring: Mutex::new(Ring {
                generation: 0,
                next: 0,
                len: 0,
                failures: 0,
                slow: 0,
                slots: vec![0; window_calls.max(1) as usize].into_boxed_slice(),
            }),
        }
    }

    pub(crate) fn rule(&self) -> &Rule {
        &self.rule
    }

    /// Records `outcome` for `generation`; returns whether the window trips.
    pub(crate) fn record(&self, generation: u64, outcome: Outcome) -> bool {
        let counts = {
            let mut ring = self.ring.lock();
            if ring.generation != generation {
                if !is_later_generation(generation, ring.generation) {
                    return false;
                }
                ring.generation = generation;
                ring.next = 0;
                ring.len = 0;
                ring.failures = 0;
                ring.slow = 0;
            }
            let bits = (u8::from(outcome.failed) * FAILED) | (u8::from(outcome.slow) * SLOW);
            let at = ring.next;
            if ring.len == ring.slots.len() {
                let evicted = ring.slots[at];
                ring.failures -= u64::from(evicted & FAILED);
                ring.slow -= u64::from((evicted & SLOW) >> 1);
            } else {
                ring.len += 1;
            }
            ring.slots[at] = bits;
            ring.failures += u64::from(outcome.failed);
            ring.slow += u64::from(outcome.slow);
            ring.next = if at + 1 == ring.slots.len() {
                0
            } else {
                at + 1
            };
            ring.counts()
        };
        self.rule.trips(counts)
    }

    /// What the window holds for `generation`. Pure.
    pub(crate) fn counts(&self, generation: u64) -> Counts {
        let ring = self.ring.lock();
        if ring.generation == generation {
            ring.counts()
        } else {
            Counts::default()
        }
    }
}

impl Ring {
    fn counts(&self) -> Counts {
        Counts {
            calls: self.len as u64,
            failures: self.failures,
            slow: self.slow,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::rule::fixtures::{rule, FAIL, OK};
    use super::*;

    #[test]
    fn the_ring_evicts_the_oldest_outcome_and_ignores_older_generations() {
        let w = CountWindow::new(3, rule(0.5, 3, None, 1.0));
        assert!(!w.record(0, FAIL));
        assert!(!w.record(0, OK));
        assert!(w.record(0, FAIL)); // 2 of 3
        assert!(!w.record(0, OK)); // evicts the first failure: 1 of 3
        assert_eq!(
            w.counts(0),
            Counts {
                calls: 3,
                failures: 1,
                slow: 0
            }
        );
        assert!(!w.record(1, OK));
        assert_eq!(w.counts(1).calls, 1);
        assert!(!w.record(0, FAIL));
        assert_eq!(w.counts(1).failures, 0);
    }
}
