//! The failure policies that decide, in the closed state, when to trip.
//!
//! A policy's memory is tagged with the generation it counts for, so a transition
//! resets it without a write and a late outcome from an earlier generation can
//! never leak into the count of a newer one.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::config::{Config, FailurePolicy};
use crate::state::GEN_MASK;

const COUNT_BITS: u32 = 24;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const TAG_MASK: u64 = GEN_MASK & (u64::MAX >> COUNT_BITS);

#[derive(Debug)]
pub(crate) enum Policy {
    /// Consecutive failures in the low 24 bits, the generation they count for above.
    Consecutive { threshold: u32, word: AtomicU64 },
}

impl Policy {
    pub(crate) fn new(config: &Config) -> Self {
        match config.policy() {
            FailurePolicy::Consecutive { threshold } => Policy::Consecutive {
                threshold,
                word: AtomicU64::new(0),
            },
        }
    }

    /// Whether verdicts need the call's duration (so claims must read the clock).
    #[inline]
    pub(crate) fn needs_clock(&self) -> bool {
        match self {
            Policy::Consecutive { .. } => false,
        }
    }

    /// A success in generation `generation`.
    #[inline]
    pub(crate) fn on_success(&self, generation: u64) {
        match self {
            Policy::Consecutive { word, .. } => {
                let current = word.load(Relaxed);
                // Reading is free for every thread; write only when there is a
                // count to clear, so successes never contend on this line.
                if current & COUNT_MASK != 0 && tag(current) == tag_of(generation) {
                    let _ = word.compare_exchange(current, pack(generation, 0), Relaxed, Relaxed);
                }
            }
        }
    }

    /// A failure in generation `generation`; returns whether the policy trips.
    pub(crate) fn on_failure(&self, generation: u64) -> bool {
        match self {
            Policy::Consecutive { threshold, word } => {
                let mine = tag_of(generation);
                let mut current = word.load(Relaxed);
                loop {
                    let count = match tag(current) {
                        t if t == mine => current & COUNT_MASK,
                        t if is_newer(t, mine) => return false,
                        _ => 0,
                    };
                    let next = (count + 1).min(COUNT_MASK);
                    match word.compare_exchange_weak(
                        current,
                        pack(generation, next),
                        Relaxed,
                        Relaxed,
                    ) {
                        Ok(_) => return next >= u64::from(*threshold),
                        Err(seen) => current = seen,
                    }
                }
            }
        }
    }

    /// Consecutive failures counted in `generation` so far.
    pub(crate) fn consecutive_failures(&self, generation: u64) -> u32 {
        match self {
            Policy::Consecutive { word, .. } => {
                let current = word.load(Relaxed);
                if tag(current) == tag_of(generation) {
                    (current & COUNT_MASK) as u32
                } else {
                    0
                }
            }
        }
    }
}

fn tag_of(generation: u64) -> u64 {
    generation & TAG_MASK
}

fn tag(word: u64) -> u64 {
    word >> COUNT_BITS
}

fn pack(generation: u64, count: u64) -> u64 {
    (tag_of(generation) << COUNT_BITS) | count
}

/// Whether tag `a` is a later generation than `b`, modulo the tag's width.
fn is_newer(a: u64, b: u64) -> bool {
    let distance = a.wrapping_sub(b) & TAG_MASK;
    distance != 0 && distance <= TAG_MASK / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn consecutive(threshold: u32) -> Policy {
        Policy::new(&Config::builder().threshold(threshold).build().unwrap())
    }

    #[test]
    fn the_nth_consecutive_failure_trips_and_a_success_resets() {
        let p = consecutive(3);
        assert!(!p.on_failure(0));
        assert!(!p.on_failure(0));
        p.on_success(0);
        assert_eq!(p.consecutive_failures(0), 0);
        assert!(!p.on_failure(0));
        assert!(!p.on_failure(0));
        assert!(p.on_failure(0));
    }

    #[test]
    fn a_new_generation_starts_from_zero_and_ignores_older_failures() {
        let p = consecutive(2);
        assert!(!p.on_failure(4));
        assert_eq!(p.consecutive_failures(5), 0);
        assert!(!p.on_failure(5));
        // A late failure of generation 4 neither counts nor trips.
        assert!(!p.on_failure(4));
        assert_eq!(p.consecutive_failures(5), 1);
    }

    #[test]
    fn the_count_saturates_at_its_width() {
        let p = consecutive(crate::config::MAX_THRESHOLD);
        if let Policy::Consecutive { word, .. } = &p {
            word.store(pack(1, COUNT_MASK), Relaxed);
        }
        assert!(p.on_failure(1));
        assert_eq!(p.consecutive_failures(1), COUNT_MASK as u32);
    }
}
