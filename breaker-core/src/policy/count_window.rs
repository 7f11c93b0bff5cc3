//! The count window: a lock-free ring of the last `window_calls` outcomes with
//! their failure and slow counts in atomic words, emptied by a change of
//! generation (see [`super::rule`]).
//!
//! Three words carry it. `head` holds the generation, the next position and
//! whether the ring has wrapped: one compare-and-swap per outcome claims a
//! position and gives the number of calls the window holds. `tally` holds the
//! failures and slow calls among them, tagged with the generation's low bits.
//! Which of two generations is the later one is read from `head`, which holds
//! the whole generation, never from those low bits: they only tell "this
//! generation" from "another", so no count of transitions without an outcome
//! can make the current generation look older than a stale tally or slot.
//! Each slot holds one outcome's bits tagged with its generation's low bits, so a
//! new generation empties the ring without a sweep: a slot of another generation
//! counts as empty.
//!
//! An outcome's bits are added to `tally` before they are written to their slot,
//! and whoever replaces them in the slot subtracts them: so `tally` never counts
//! below what the slots hold, and at quiescence equals their sum exactly. A success
//! that replaces a success (the common case) writes nothing but `head`.

use crate::sync::{AtomicU32, AtomicU64, Ordering::*};

use super::rule::{is_later_generation, Counts, Outcome, Rule};
use crate::state::GEN_MASK;

/// What is left to do once a position is claimed.
enum Recorded {
    /// Nothing: the window holds.
    Held,
    /// Judge these counts.
    Judge { calls: u64, tally: u64 },
    /// Record the outcome at the claimed position ([`CountWindow::record_at`]).
    Claimed { at: u64, calls: u64 },
}

/// The window of the last `window_calls` outcomes.
#[derive(Debug)]
pub(crate) struct CountWindow {
    rule: Rule,
    /// `generation << HEAD_GEN_SHIFT | wrapped << POS_BITS | next position`.
    head: AtomicU64,
    /// `tag << TAG_SHIFT | slow << COUNT_BITS | failures`, tag the generation's low bits.
    tally: AtomicU64,
    /// `epoch << 2 | slow << 1 | failed`, epoch the generation's low bits.
    slots: Box<[AtomicU32]>,
}

const POS_BITS: u32 = 17; // Config::MAX_WINDOW_CALLS = 2^16 fits
const POS_MASK: u64 = (1 << POS_BITS) - 1;
const WRAPPED: u64 = 1 << POS_BITS;
const HEAD_GEN_SHIFT: u32 = POS_BITS + 1;
// A window's counts (at most Config::MAX_WINDOW_CALLS = 2^16) plus the outcomes
// in flight (at most one per thread): 17 bits leave the tag 30.
const COUNT_BITS: u32 = 17;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const TAG_SHIFT: u32 = 2 * COUNT_BITS;
const TAG_MASK: u64 = (1 << (64 - TAG_SHIFT)) - 1;
const EPOCH_MASK: u32 = (1 << 30) - 1;
const FAILED: u32 = 1;
const SLOW: u32 = 2;

// Every generation fits beside the position.
const _: () = assert!(GEN_MASK.leading_zeros() >= HEAD_GEN_SHIFT);
// A full window fits in a count with room for as many outcomes in flight.
const _: () = assert!(crate::Config::MAX_WINDOW_CALLS as u64 <= 1 << (COUNT_BITS - 1));

fn epoch(generation: u64) -> u32 {
    generation as u32 & EPOCH_MASK
}

fn tag(generation: u64) -> u64 {
    generation & TAG_MASK
}

fn tally_of(bits: u32) -> u64 {
    u64::from(bits & FAILED) | (u64::from((bits & SLOW) >> 1) << COUNT_BITS)
}

impl CountWindow {
    pub(crate) fn new(window_calls: u32, rule: Rule) -> Self {
        let len = window_calls.max(1) as usize;
        debug_assert!(len as u64 <= POS_MASK);
        CountWindow {
            rule,
            head: AtomicU64::new(0),
            tally: AtomicU64::new(0),
            // Generation 0's epoch, holding a success: the same as empty.
            slots: (0..len).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    pub(crate) fn rule(&self) -> &Rule {
        &self.rule
    }

    /// Records `outcome` for `generation`; returns whether the window trips.
    #[inline(always)]
    pub(crate) fn record(&self, generation: u64, outcome: Outcome) -> bool {
        let Some((at, calls)) = self.claim(generation) else {
            return false; // an outcome of an older generation
        };
        match self.after_claim(generation, at, calls, outcome.failed || outcome.slow) {
            Recorded::Held => false,
            Recorded::Judge { calls, tally } => self.judge(calls, tally),
            Recorded::Claimed { at, calls } => self.record_at(generation, at, calls, outcome),
        }
    }

    /// What is left after position `at` was claimed for an outcome that is a
    /// success (`!other`) or not.
    #[inline(always)]
    fn after_claim(&self, generation: u64, at: u64, calls: u64, other: bool) -> Recorded {
        if !other {
            let old = self.slots[at as usize].load(Acquire);
            if old >> 2 != epoch(generation) || old & 3 == 0 {
                let tally = self.tally(generation);
                // Rates are above zero: a window without failures or slow calls holds.
                return if tally == 0 {
                    Recorded::Held
                } else {
                    Recorded::Judge { calls, tally }
                };
            }
        }
        Recorded::Claimed { at, calls }
    }

    /// Claims the next position of the ring for `generation`: the position and
    /// the number of calls the window then holds; `None` for an older generation.
    #[inline(always)]
    fn claim(&self, generation: u64) -> Option<(u64, u64)> {
        let mut head = self.head.load(Acquire);
        loop {
            let (at, calls, claimed) = self.next(head, generation)?;
            match self
                .head
                .compare_exchange_weak(head, claimed, AcqRel, Acquire)
            {
                Ok(_) => return Some((at, calls)),
                Err(now) => head = now,
            }
        }
    }

    /// From `head`, the position `generation` would claim, the calls the
    /// window would then hold, and the `head` that claims it; `None` for an
    /// older generation. A later generation starts an empty ring.
    #[inline(always)]
    fn next(&self, head: u64, generation: u64) -> Option<(u64, u64, u64)> {
        let len = self.slots.len() as u64;
        let current = head >> HEAD_GEN_SHIFT;
        let (at, wrapped) = if current == generation {
            (head & POS_MASK, head & WRAPPED)
        } else if is_later_generation(generation, current) {
            (0, 0)
        } else {
            return None;
        };
        let (next, wrapped) = if at + 1 == len {
            (0, WRAPPED)
        } else {
            (at + 1, wrapped)
        };
        let calls = if wrapped != 0 { len } else { next };
        Some((at, calls, generation << HEAD_GEN_SHIFT | wrapped | next))
    }

    /// [`record`](Self::record) from a claimed position `at`, for every outcome
    /// but a success that writes nothing.
    #[inline(never)]
    fn record_at(&self, generation: u64, at: u64, calls: u64, outcome: Outcome) -> bool {
        let bits = (u32::from(outcome.failed) * FAILED) | (u32::from(outcome.slow) * SLOW);
        let tagged = epoch(generation) << 2 | bits;
        let slot = &self.slots[at as usize];
        let mut tally = None;
        if bits != 0 {
            // Counted before it is visible in the slot, so whoever replaces it
            // subtracts only what was added.
            tally = self.adjust(generation, tally_of(bits), 0);
            if tally.is_none() {
                return false; // the window moved on to a later generation
            }
        }
        let mut old = slot.load(Acquire);
        loop {
            let same_epoch = old >> 2 == epoch(generation);
            if bits == 0 && (!same_epoch || old & 3 == 0) {
                // A success over an empty slot or a success: nothing to write.
                break;
            }
            if !same_epoch && self.moved_on(generation) {
                // A later generation owns the slot: take this outcome back.
                if bits != 0 {
                    self.adjust(generation, 0, tally_of(bits));
                }
                return false;
            }
            match slot.compare_exchange_weak(old, tagged, AcqRel, Acquire) {
                Ok(_) => {
                    if same_epoch && old & 3 != 0 {
                        tally = self.adjust(generation, 0, tally_of(old & 3));
                    }
                    break;
                }
                Err(now) => old = now,
            }
        }
        let tally = match tally {
            Some(tally) => tally,
            None => self.tally(generation),
        };
        if tally == 0 {
            // Rates are above zero: a window without failures or slow calls holds.
            return false;
        }
        self.judge(calls, tally)
    }

    #[inline(never)]
    fn judge(&self, calls: u64, tally: u64) -> bool {
        self.rule.trips(Counts {
            calls,
            failures: tally & COUNT_MASK,
            slow: tally >> COUNT_BITS & COUNT_MASK,
        })
    }

    /// Whether `head` holds a later generation than `generation`, which claimed
    /// a position in it: the generation in `head` only ever grows. A slot or the
    /// tally is written for a generation only after that generation claimed
    /// `head`, so while `head` still holds `generation`, a slot or tally of
    /// another generation holds an older one, however many transitions apart.
    fn moved_on(&self, generation: u64) -> bool {
        self.head.load(Acquire) >> HEAD_GEN_SHIFT != generation
    }

    /// Adds `add` to and subtracts `sub` from the tally of `generation`, starting
    /// it afresh if it holds an older one; `None` if the window moved on to a
    /// later one.
    #[inline(never)]
    fn adjust(&self, generation: u64, add: u64, sub: u64) -> Option<u64> {
        let mut tally = self.tally.load(Acquire);
        loop {
            let held = tally >> TAG_SHIFT;
            let counts = if held == tag(generation) {
                tally & !(TAG_MASK << TAG_SHIFT)
            } else if self.moved_on(generation) {
                return None;
            } else {
                0
            };
            // Never below zero: `sub` is only ever bits that were added before.
            let counts = counts.wrapping_add(add).wrapping_sub(sub);
            let next = tag(generation) << TAG_SHIFT | counts;
            match self
                .tally
                .compare_exchange_weak(tally, next, AcqRel, Acquire)
            {
                Ok(_) => return Some(counts),
                Err(now) => tally = now,
            }
        }
    }

    /// The failure and slow counts of `generation`: none if the tally holds another.
    fn tally(&self, generation: u64) -> u64 {
        let tally = self.tally.load(Acquire);
        if tally >> TAG_SHIFT == tag(generation) {
            tally & !(TAG_MASK << TAG_SHIFT)
        } else {
            0
        }
    }

    /// What the window holds for `generation`. Pure.
    pub(crate) fn counts(&self, generation: u64) -> Counts {
        let head = self.head.load(Acquire);
        if head >> HEAD_GEN_SHIFT != generation {
            return Counts::default();
        }
        let calls = if head & WRAPPED != 0 {
            self.slots.len() as u64
        } else {
            head & POS_MASK
        };
        let tally = self.tally(generation);
        Counts {
            calls,
            failures: tally & COUNT_MASK,
            slow: tally >> COUNT_BITS & COUNT_MASK,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::rule::fixtures::{rule, FAIL, OK};
    use super::*;

    #[test]
    fn the_tally_equals_the_failed_slots_after_threads_race_around_the_ring() {
        let w = std::sync::Arc::new(CountWindow::new(7, rule(1.1, 1, Some(1), 1.1)));
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let w = std::sync::Arc::clone(&w);
                std::thread::spawn(move || {
                    for i in 0..20_000u64 {
                        let failed = (i * (t + 3)) % 5 == 0;
                        let slow = (i + t) % 3 == 0;
                        w.record(0, Outcome { failed, slow });
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let held = |bit: u32| {
            w.slots
                .iter()
                .filter(|s| s.load(Relaxed) & bit != 0)
                .count()
        };
        let counts = w.counts(0);
        assert_eq!(counts.calls, 7);
        assert_eq!(counts.failures, held(FAILED) as u64);
        assert_eq!(counts.slow, held(SLOW) as u64);
    }

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

/// The ring under loom's model checker: outcomes of one generation raced
/// around a ring they wrap, and an outcome raced against the first outcome of
/// the next generation (the rotation that empties the ring), keep the tally
/// equal to what the slots hold.
/// Run with `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p breaker-core --release --lib loom_`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::super::rule::fixtures::rule;
    use super::*;
    use loom::sync::Arc;

    fn held(w: &CountWindow, generation: u64, bit: u32) -> u64 {
        w.slots
            .iter()
            .map(|s| s.load(Relaxed))
            .filter(|s| s >> 2 == epoch(generation) && s & bit != 0)
            .count() as u64
    }

    #[test]
    fn loom_outcomes_racing_around_the_ring_keep_the_tally_equal_to_the_slots() {
        loom::model(|| {
            // Two slots, one outcome before the race: the racers wrap the ring.
            let w = Arc::new(CountWindow::new(2, rule(1.1, u32::MAX, None, 1.1)));
            w.record(
                0,
                Outcome {
                    failed: true,
                    slow: false,
                },
            );
            let racers: Vec<_> = [(true, false), (false, true)]
                .into_iter()
                .map(|(failed, slow)| {
                    let w = Arc::clone(&w);
                    loom::thread::spawn(move || {
                        w.record(0, Outcome { failed, slow });
                    })
                })
                .collect();
            racers.into_iter().for_each(|t| t.join().unwrap());
            let counts = w.counts(0);
            assert_eq!(counts.calls, 2);
            assert_eq!(counts.failures, held(&w, 0, FAILED));
            assert_eq!(counts.slow, held(&w, 0, SLOW));
        });
    }

    #[test]
    fn loom_an_outcome_racing_the_next_generation_never_counts_in_it() {
        loom::model(|| {
            let w = Arc::new(CountWindow::new(2, rule(1.1, u32::MAX, None, 1.1)));
            w.record(
                0,
                Outcome {
                    failed: true,
                    slow: false,
                },
            );
            let late = {
                let w = Arc::clone(&w);
                loom::thread::spawn(move || {
                    w.record(
                        0,
                        Outcome {
                            failed: true,
                            slow: false,
                        },
                    );
                })
            };
            w.record(
                1,
                Outcome {
                    failed: false,
                    slow: true,
                },
            );
            late.join().unwrap();
            let counts = w.counts(1);
            assert_eq!(counts.calls, 1);
            assert_eq!(counts.failures, 0);
            assert_eq!(counts.slow, 1);
            assert_eq!(counts.failures, held(&w, 1, FAILED));
            assert_eq!(counts.slow, held(&w, 1, SLOW));
        });
    }
}
