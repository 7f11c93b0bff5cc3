//! The traffic ramp after a close (`ramp_ms`): its curve, and the credit that
//! turns the curve's share into exact admissions without a lock or a random draw.
//!
//! # The curve
//!
//! A ramp of length `L` started at `t0`. A claim at `t` has the share
//!
//! ```text
//! share(t) = (t - t0) / L          (0 at the close, 1 at t0 + L)
//!
//!  1 |            ___________ every call
//!    |          /
//!    |        /
//!    |      /
//!    |    /
//!  0 |__/_______________________ t
//!      t0          t0 + L
//! ```
//!
//! Each claim adds its share to the credit; the claim whose addition carries
//! the credit past a whole call is admitted. So of any `n` consecutive claims
//! the number admitted is the sum of their shares rounded down or up: exact to
//! within one, whatever the interleaving, since the additions are one atomic
//! read-modify-write each.

use crate::sync::{AtomicU64, Ordering::*};

/// Fraction bits of the credit: a share of `ONE` is a whole call.
const FRACTION_BITS: u32 = 32;
/// One whole call of credit.
pub(crate) const ONE: u64 = 1 << FRACTION_BITS;
const FRACTION: u64 = ONE - 1;

/// The ramp's state: written by the close that starts it, under the breaker's
/// transition lock and before the ramping word that publishes it; read and
/// credited by the claims of that word, without a lock.
#[derive(Debug, Default)]
pub(crate) struct Ramp {
    /// When the ramp started (clock nanos).
    from: AtomicU64,
    /// How long it runs (nanos): the config's `ramp_ms` at the close.
    length: AtomicU64,
    /// The credit, in `ONE`s per call (wrapping: only crossings count).
    credit: AtomicU64,
}

/// What the ramp says to one claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// The ramp has run its length: the circuit is fully closed.
    Over,
    /// The claim's share carried the credit past a whole call.
    Admitted,
    /// Refused; a lone claim `retry_after` nanos from now would be admitted.
    Refused { retry_after: u64 },
}

impl Ramp {
    /// Starts a ramp of `length` nanos at `now`, with no credit. The caller
    /// publishes it with the ramping word, after this.
    pub(crate) fn start(&self, now: u64, length: u64) {
        self.from.store(now, Relaxed);
        self.length.store(length.max(1), Relaxed);
        self.credit.store(0, Relaxed);
    }

    /// The share of calls admitted at `now`, in `ONE`s; `None` once the ramp
    /// has run its length. Pure.
    pub(crate) fn share(&self, now: u64) -> Option<u64> {
        share(
            now,
            self.from.load(Relaxed),
            self.length.load(Relaxed).max(1),
        )
    }

    /// The refusal a claim at `now` would meet, without taking credit: `None`
    /// when it would be admitted, else the nanos until a lone claim would be.
    pub(crate) fn refusal(&self, now: u64) -> Option<u64> {
        let from = self.from.load(Relaxed);
        let length = self.length.load(Relaxed).max(1);
        let share = share(now, from, length)?;
        let credit = self.credit.load(Relaxed);
        (!crosses(credit, share)).then(|| retry_after(credit & FRACTION, now, from, length))
    }

    /// What the ramp says to a claim whose share was taken before (by a keyed
    /// group's lookup, which the ramp refused): refused for as long as a lone
    /// claim would be (none, when other claims have brought the credit round
    /// since), or over once the ramp ran its length. Takes no credit.
    pub(crate) fn refused_again(&self, now: u64) -> Admission {
        match self.share(now) {
            None => Admission::Over,
            Some(_) => Admission::Refused {
                retry_after: self.refusal(now).unwrap_or(0),
            },
        }
    }

    /// How long the ramp runs (nanos).
    pub(crate) fn length(&self) -> u64 {
        self.length.load(Relaxed).max(1)
    }

    /// How long the ramp runs, and how far it has come at `now` (at most its
    /// length). Pure.
    pub(crate) fn progress(&self, now: u64) -> (u64, u64) {
        let length = self.length.load(Relaxed).max(1);
        let elapsed = now.saturating_sub(self.from.load(Relaxed)).min(length);
        (length, elapsed)
    }

    /// One claim at `now`: adds its share to the credit and says whether it
    /// is admitted.
    pub(crate) fn admit(&self, now: u64) -> Admission {
        let from = self.from.load(Relaxed);
        let length = self.length.load(Relaxed).max(1);
        let Some(share) = share(now, from, length) else {
            return Admission::Over;
        };
        match take_credit(&self.credit, share) {
            Ok(()) => Admission::Admitted,
            Err(left) => Admission::Refused {
                retry_after: retry_after(left, now, from, length),
            },
        }
    }
}

/// One claim's `share` of a call (in `ONE`s, at most `ONE`) added to `credit`:
/// admitted (`Ok`) when the addition carries the credit past a whole call, else
/// the fraction of a call the credit holds after it. The one rule of every
/// deterministic admission (a ramp's, the adaptive throttle's): of any `n`
/// consecutive claims the number admitted is the sum of their shares rounded
/// down or up, whatever the interleaving.
#[inline]
pub(crate) fn take_credit(credit: &AtomicU64, share: u64) -> Result<(), u64> {
    let before = credit.fetch_add(share, Relaxed);
    if crosses(before, share) {
        return Ok(());
    }
    Err(before.wrapping_add(share) & FRACTION)
}

/// Whether a claim adding `share` to `credit` would be admitted, without taking it.
pub(crate) fn would_take(credit: &AtomicU64, share: u64) -> bool {
    crosses(credit.load(Relaxed), share)
}

/// With `left` (a fraction of a call) in credit, the nanos from `now` until a
/// claim's share covers the rest of a call: the share grows with time, and
/// reaches a whole call by the end of the ramp. Exact: the first moment whose
/// share (rounded down, as [`share`] rounds it) covers the rest is
/// `ceil(needed * length / ONE)` into the ramp, and the moment before does not.
fn retry_after(left: u64, now: u64, from: u64, length: u64) -> u64 {
    let needed = ONE - left;
    let elapsed = (needed as u128 * length as u128).div_ceil(ONE as u128) as u64;
    from.saturating_add(elapsed).saturating_sub(now)
}

/// The curve: `(now - from) / length` in `ONE`s, rounded down, `None` from
/// `from + length` on. A clock that reads before `from` is at the ramp's start.
fn share(now: u64, from: u64, length: u64) -> Option<u64> {
    let elapsed = now.saturating_sub(from);
    if elapsed >= length {
        return None;
    }
    Some((((elapsed as u128) << FRACTION_BITS) / length as u128) as u64)
}

/// Whether adding `share` (at most `ONE`) to `credit` carries it past a whole call.
fn crosses(credit: u64, share: u64) -> bool {
    credit.wrapping_add(share) >> FRACTION_BITS != credit >> FRACTION_BITS
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_share_rises_linearly_from_none_to_every_call() {
        let ramp = Ramp::default();
        ramp.start(1_000, 10_000);
        assert_eq!(ramp.share(1_000), Some(0));
        assert_eq!(ramp.share(500), Some(0), "a clock behind the start");
        assert_eq!(ramp.share(6_000), Some(ONE / 2));
        assert_eq!(ramp.share(3_500), Some(ONE / 4));
        assert_eq!(ramp.share(10_999), Some((9_999 << 32) / 10_000));
        assert_eq!(ramp.share(11_000), None);
        assert_eq!(ramp.share(u64::MAX), None);
    }

    #[test]
    fn of_n_claims_at_one_share_the_count_admitted_is_exact_to_within_one() {
        let ramp = Ramp::default();
        ramp.start(0, 1_000);
        for at in [1, 100, 250, 333, 500, 999] {
            ramp.start(0, 1_000);
            let mut admitted = 0u64;
            for n in 1..=1_000u64 {
                if ramp.admit(at) == Admission::Admitted {
                    admitted += 1;
                }
                let exact = ramp.share(at).unwrap() as u128 * n as u128 / ONE as u128;
                assert!(
                    admitted as u128 == exact || admitted as u128 == exact + 1,
                    "at {at}, {admitted} of {n} admitted, curve says {exact}"
                );
            }
        }
    }

    #[test]
    fn a_refusal_names_the_moment_a_lone_claim_is_admitted() {
        let ramp = Ramp::default();
        ramp.start(0, 1_000);
        // At 10% the first claim is refused: 0.1 of a call in credit (less
        // its rounding), and 0.9 more is the share at 900 (or the nanosecond
        // after, which the rounding may take).
        let Admission::Refused { retry_after } = ramp.admit(100) else {
            panic!("admitted at 10%");
        };
        assert!((800..=801).contains(&retry_after), "{retry_after}");
        let due = 100 + retry_after;
        assert_eq!(ramp.refusal(100), Some(retry_after));
        assert!(ramp.refusal(due - 1).is_some());
        assert_eq!(ramp.refusal(due - 1), Some(1));
        assert!(ramp.refusal(due).is_none());
        assert_eq!(ramp.refusal(due), None);
        assert_eq!(ramp.admit(due), Admission::Admitted);
    }

    #[test]
    fn the_credit_wraps_without_losing_a_call() {
        let ramp = Ramp::default();
        ramp.start(0, 4);
        ramp.credit.store(u64::MAX - ONE / 4, Relaxed);
        // Half a call at 2 of 4: the first claim carries it past the wrap.
        assert_eq!(ramp.admit(2), Admission::Admitted);
        assert!(matches!(ramp.admit(2), Admission::Refused { .. }));
        assert_eq!(ramp.admit(2), Admission::Admitted);
    }
}
